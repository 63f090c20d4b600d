/*
 * ext_binary.c: a built kernel's entry points and a failed build's first
 * error lines (ext_binary.h).
 */
#include "ext_binary.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif
/* A cubin marks a kernel's symbol as an entry in st_other (what cuobjdump
 * and readelf show as "other: 0x10"); a __device__ function has no mark. */
#define CUDA_STO_ENTRY 0x10

/* 1 when [off, off + n) lies within a file of len bytes. */
static int in_file(uint64_t off, uint64_t n, size_t len)
{
    return off <= len && n <= len - off;
}

ev_status ev_ext_binary_entries(const char *path, ev_strs *out, ev_err *err)
{
    ev_buf b = EV_BUF_INIT;
    const unsigned char *d;
    const Elf64_Ehdr *eh;
    ev_strs names = EV_STRS_INIT;
    ev_status rc;
    int want = SHT_DYNSYM;

    if ((rc = ev_read_file_max(path, (size_t)256 << 20, &b, err)))
        return rc == EV_ERANGE ? EV_EFORMAT : rc;
    d = (const unsigned char *)b.data;
    eh = (const Elf64_Ehdr *)(const void *)d;
    if (b.len < sizeof *eh || memcmp(d, ELFMAG, SELFMAG) || d[EI_CLASS] != ELFCLASS64 ||
        d[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), b.len)) {
        rc = ev_err_set(err, EV_EFORMAT, "%s: not a 64-bit little-endian ELF file", path);
        goto out;
    }
    {
        /* a shared object's dynamic symbols when it has them, else the symbol table */
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(d + eh->e_shoff);
        int has_dyn = 0;
        for (size_t i = 0; i < eh->e_shnum; i++)
            has_dyn |= sh[i].sh_type == SHT_DYNSYM;
        want = has_dyn ? SHT_DYNSYM : SHT_SYMTAB;
        for (size_t i = 0; i < eh->e_shnum && !rc; i++) {
            const Elf64_Shdr *st = &sh[i], *str;
            if (st->sh_type != (Elf64_Word)want || st->sh_link >= eh->e_shnum ||
                st->sh_entsize != sizeof(Elf64_Sym) || !in_file(st->sh_offset, st->sh_size, b.len))
                continue;
            str = &sh[st->sh_link];
            if (!in_file(str->sh_offset, str->sh_size, b.len))
                continue;
            for (uint64_t k = 0; k < st->sh_size / sizeof(Elf64_Sym) && !rc; k++) {
                const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(d + st->sh_offset) + k;
                const char *name = (const char *)d + str->sh_offset + sym->st_name;
                int bind = ELF64_ST_BIND(sym->st_info);
                if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
                    (bind != STB_GLOBAL && bind != STB_WEAK) || sym->st_name >= str->sh_size ||
                    (eh->e_machine == EM_CUDA && !(sym->st_other & CUDA_STO_ENTRY)) ||
                    !memchr(name, '\0', str->sh_size - sym->st_name) || !*name)
                    continue;
                rc = ev_strs_push(&names, name);
            }
        }
    }
    if (rc) {
        rc = ev_err_set(err, rc, "%s: out of memory", path);
        goto out;
    }
    qsort(names.v, names.n, sizeof *names.v, ev_strs_cmp);
    for (size_t i = 0; i < names.n && !rc; i++)
        if (!i || strcmp(names.v[i], names.v[i - 1]))
            rc = ev_strs_push(out, names.v[i]);
    if (rc)
        rc = ev_err_set(err, rc, "%s: out of memory", path);
out:
    ev_strs_free(&names);
    ev_buf_free(&b);
    return rc;
}

ev_status ev_ext_first_errors(const char *msg, size_t len, ev_buf *out)
{
    const char *pre =
        ev_arm_kind_prefix(EV_ARM_EXTERNAL); /* the build's own lines start with the kernel's name */
    ev_status rc = EV_OK;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the lines that say "error"; pass 1 (none did): the first lines */
        int kept = 0;
        for (size_t i = 0; i < len && kept < EV_EXT_FIRST_ERRORS && !rc;) {
            const char *line = msg + i, *nl = memchr(line, '\n', len - i);
            size_t n = nl ? (size_t)(nl - line) : len - i, lead = 0, tl;
            char text[301];
            i += n + 1;
            while (lead < n && (line[lead] == ' ' || line[lead] == '\t' || line[lead] == '\r'))
                lead++;
            if (!(tl = n - lead))
                continue;
            if (tl > sizeof text - 1)
                tl = sizeof text - 1;
            memcpy(text, line + lead, tl);
            text[tl] = '\0';
            if (!pass && !strstr(text, "error") && strncmp(text, pre, strlen(pre)))
                continue;
            rc = ev_buf_printf(out, "%s%s", kept++ ? " | " : "", text);
        }
        if (kept || rc)
            break;
    }
    return rc;
}
