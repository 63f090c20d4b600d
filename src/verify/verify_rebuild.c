/*
 * verify_rebuild.c: check 10, "rebuild": the bundle holds the bytes that
 * ran.  For every external kernel's build receipt (proof-receipts.json
 * "external_kernels", the environment records' "kernels" as check 6 holds
 * them; runner/ext_build.h):
 *
 *   - every file its build read under the repository (the receipt's
 *     "deps", the compiler's own dependency list) must be a sources/
 *     member with the SHA-256 recorded: else FAIL, whatever compiler is
 *     here;
 *   - when this host has the same compiler (the same version line), the
 *     same pinned flags and the same toolkit files (each of the receipt's
 *     "toolkit_deps" with its SHA-256), the binary is rebuilt from those
 *     members alone, laid out under their names in an empty temporary
 *     directory, by the runner's own compile (runner/ext_compile.h: the
 *     same command, bounded in address space, file size, time and
 *     messages), and its SHA-256 must be the receipt's: else FAIL.  The
 *     rebuild may read nothing outside the directory and the toolkit;
 *   - otherwise a note says why it was not rebuilt ("not rebuilt: compiler
 *     X absent"), which is not a failure.
 *
 * A Python arm's receipt ("language": "python") names the files its
 * process ran from (the module and what the kernel declares beside it,
 * copied by the run from its snapshot): each must be a member with its
 * SHA-256; there is nothing to rebuild.
 *
 * This is the verifier's one write to disk: the members a build read, in
 * a directory of its own under $TMPDIR (else /tmp), removed afterwards.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "runner/ext_compile.h"
#include "verify_int.h"

/* The verifier's bound on one rebuild's time: shorter than a run's. */
#define VR_REBUILD_WALL_MS 120000

/* nftw callback: removes one entry of the temporary tree. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(path);
    return 0;
}

/* Writes member m's bytes to root/rel, creating its directories.
 * Returns 0, or -1 (errno set). */
static int put_member(const char *root, const char *rel, const vb_member *m)
{
    char path[8192];
    FILE *f;
    int bad;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", root, rel) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *c = path + strlen(root) + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(path, 0700) && errno != EEXIST)
                return -1;
            *c = '/';
        }
    if (!(f = fopen(path, "wx")))
        return -1;
    bad = m->len && fwrite(m->data, 1, m->len, f) != m->len;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* SHA-256 hex of the file at path into hex; -1 when unreadable. */
static int file_sha(const char *path, char hex[65])
{
    ev_buf b = EV_BUF_INIT;
    int rc = ev_read_file(path, &b, NULL) || ev_sha256_hex(b.data ? b.data : "", b.len, hex) ? -1 : 0;
    ev_buf_free(&b);
    return rc;
}

/* One receipt's fields, as check 10 reads them. */
typedef struct vr_receipt {
    const char *name, *source, *compiler, *flags, *include, *binary;
    const cJSON *deps, *toolkit;
} vr_receipt;

/*
 * Holds receipt x's dependency list to the members (FAIL for each file the
 * bundle does not hold as it was read).  Returns the number of files it
 * names, or -1 after a failure.
 */
static long deps_held(vb_bundle *b, ev_vreport *r, const vr_receipt *x)
{
    const cJSON *d;
    long n = 0;
    int bad = 0, tu = 0;
    cJSON_ArrayForEach(d, x->deps)
    {
        const char *p = ev_jr_str(d, "path"), *s = ev_jr_str(d, "sha256");
        char member[EV_NAME_MAX + 16];
        const vb_member *m = NULL;
        if (p && (size_t)snprintf(member, sizeof member, EV_MEMBER_SOURCES "%s", p) < sizeof member)
            m = vb_find(b, member);
        if (!p || !s || !m || strcmp(m->sha_hex, s)) {
            vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                    "kernel %s: its build read %s (sha256 %.16s...), which the bundle does not hold %s",
                    x->name, p ? p : "(no path)", s ? s : "(none)",
                    !m ? "(no such sources/ member)" : "as it was read (the member's bytes differ)");
            bad = 1;
        }
        tu |= p && !strcmp(p, x->source);
        n++;
    }
    if (!bad && !tu) {
        vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                "kernel %s: its dependency list does not name its translation unit %s", x->name, x->source);
        bad = 1;
    }
    return bad ? -1 : n;
}

/* Why this host cannot rebuild x (a note), or "" when it can: the same
 * compiler version line, flags and include directory, and every toolkit
 * file the build read here with its bytes. */
static void cannot(const ev_ext_toolchain *t, const vr_receipt *x, char *why, size_t cap)
{
    const cJSON *d;
    why[0] = '\0';
    if (!t->version[0] || strcmp(t->version, x->compiler)) {
        snprintf(why, cap, "not rebuilt: compiler %s absent (here: %s)", x->compiler,
                 t->version[0] ? t->version : "none found");
        return;
    }
    if (strcmp(t->flags, x->flags) || strcmp(EV_EXT_INCLUDE, x->include)) {
        snprintf(why, cap, "not rebuilt: built with flags '%s' -I %s; this verifier builds with '%s' -I %s",
                 x->flags, x->include, t->flags, EV_EXT_INCLUDE);
        return;
    }
    cJSON_ArrayForEach(d, x->toolkit)
    {
        /* recorded relative to / (under /usr or /opt), or "?/name" elsewhere */
        const char *p = ev_jr_str(d, "path"), *s = ev_jr_str(d, "sha256");
        char here[65], abs[4200];

        if (!p || !s || !strncmp(p, "?/", 2) || p[0] == '/' ||
            (size_t)snprintf(abs, sizeof abs, "/%s", p) >= sizeof abs) {
            snprintf(
                why, cap,
                "not rebuilt: the toolkit's %.200s lies outside /usr and /opt (its path is not recorded)",
                p ? p : "(no path)");
            return;
        }
        if (file_sha(abs, here) || strcmp(here, s)) {
            snprintf(why, cap, "not rebuilt: the toolkit's %.300s is %s here", abs,
                     file_sha(abs, here) ? "absent" : "not the one the build read");
            return;
        }
    }
}

/* Rebuilds x from the members in a temporary directory (the receipt's
 * files are held: deps_held).  A difference, a failed compile or a read
 * outside the directory and the toolkit is a failure; equal is a note. */
static void rebuild(vb_bundle *b, ev_vreport *r, const ev_ext_toolchain *t, const vr_receipt *x, long n)
{
    const char *tmp = getenv("TMPDIR");
    char top[4096], root[4200], out[4300], hex[65];
    ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
    ev_ext_compiled c;
    ev_err e;
    const cJSON *d;

    memset(&c, 0, sizeof c);
    lim.wall_ms = VR_REBUILD_WALL_MS;
    snprintf(top, sizeof top, "%s/evident-rebuild-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(top)) {
        vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: not rebuilt: no temporary directory (%s)",
                x->name, strerror(errno));
        return;
    }
    snprintf(root, sizeof root, "%s/root", top);
    snprintf(out, sizeof out, "%s/%s%s", top, x->name, t->suffix);
    if (mkdir(root, 0700)) {
        vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: not rebuilt: %s", x->name, strerror(errno));
        goto out;
    }
    cJSON_ArrayForEach(d, x->deps)
    {
        const char *p = ev_jr_str(d, "path");
        char member[EV_NAME_MAX + 16];
        snprintf(member, sizeof member, EV_MEMBER_SOURCES "%s", p);
        if (put_member(root, p, vb_find(b, member))) {
            vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: not rebuilt: cannot write %s: %s", x->name, p,
                    strerror(errno));
            goto out;
        }
    }
    if (ev_ext_compile(t, root, x->source, out, &lim, &c, &e)) {
        vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: not rebuilt: %s", x->name, e.msg);
        goto out;
    }
    if (c.status != 0) {
        vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                "kernel %s: the rebuild from the bundle's %ld members failed (status %d%s): %.300s", x->name,
                n, c.status, c.timed_out ? ", stopped at its time bound" : "", c.msg.data ? c.msg.data : "");
        goto out;
    }
    for (size_t i = 0; i < c.deps.n; i++) {
        char where[4200];
        if (ev_ext_dep_where(t, root, c.deps.v[i], where, sizeof where) == EV_DEP_OUTSIDE) {
            vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                    "kernel %s: the rebuild read %s, outside the bundle's members and the toolkit", x->name,
                    where);
            goto out;
        }
    }
    if (file_sha(out, hex))
        vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: the rebuild wrote no binary", x->name);
    else if (strcmp(hex, x->binary))
        vr_fail(
            r, VR_REBUILD, EV_MEMBER_PROOF,
            "kernel %s: the binary rebuilt from the bundle's %ld members has SHA-256 %s; the receipt says %s "
            "(the bytes measured are not the bytes the bundle holds)",
            x->name, n, hex, x->binary);
    else
        vr_note(
            r, VR_REBUILD, EV_MEMBER_PROOF,
            "kernel %s: rebuilt from the bundle's %ld members with %s: SHA-256 %.16s... as the receipt says",
            x->name, n, t->version, hex);
out:
    ev_ext_compiled_free(&c);
    nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void vc_rebuild(vb_bundle *b, ev_vreport *r)
{
    const cJSON *ext = b->proof ? cJSON_GetObjectItemCaseSensitive(b->proof, "external_kernels") : NULL;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run"), *inv, *k;
    const char *backend = ev_jr_str(run, "backend");
    ev_ext_toolchain t;
    int have_t = 0;
    ev_strs done = EV_STRS_INIT;

    if (!cJSON_IsArray(ext) || !ext->child)
        return;
    vr_use(r, VR_REBUILD);
    memset(&t, 0, sizeof t);
    cJSON_ArrayForEach(inv, ext)
    {
        cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(inv, "builds"))
        {
            vr_receipt x = {ev_jr_str(k, "name"),
                            ev_jr_str(k, "source"),
                            ev_jr_str(k, "compiler"),
                            ev_jr_str(k, "flags"),
                            ev_jr_str(k, "include"),
                            ev_jr_str(k, "binary_sha256"),
                            cJSON_GetObjectItemCaseSensitive(k, "deps"),
                            cJSON_GetObjectItemCaseSensitive(k, "toolkit_deps")};
            char key[200], why[600];
            int seen = 0;
            long n;
            const char *lang = ev_jr_str(k, "language");
            if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(k, "ok")))
                continue; /* it did not build: its jobs failed with the reason */
            if (lang && !strcmp(lang, "python")) {
                /* a Python arm: nothing compiled; the files its process
                 * could import from the protocol's directory (the run
                 * copied only these) must be members as they ran */
                if (!x.name || !x.source || !cJSON_IsArray(x.deps)) {
                    vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                            "a Python arm's receipt lacks its name, source or files (deps)");
                    continue;
                }
                if (deps_held(b, r, &x) >= 0)
                    vr_note(r, VR_REBUILD, EV_MEMBER_PROOF,
                            "kernel %s: a Python arm, nothing compiled: the files it ran from are members "
                            "with the SHA-256 its receipt records",
                            x.name);
                continue;
            }
            if (lang) {
                vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: a receipt of language '%.20s'",
                        x.name ? x.name : "?", lang);
                continue;
            }
            if (!x.name || !x.source || !x.compiler || !x.flags || !x.binary) {
                vr_fail(r, VR_REBUILD, EV_MEMBER_PROOF,
                        "a build receipt lacks its name, source, compiler, flags or binary_sha256");
                continue;
            }
            if (!cJSON_IsArray(x.deps) || !cJSON_IsArray(x.toolkit) || !x.include) {
                vr_note(
                    r, VR_REBUILD, EV_MEMBER_PROOF,
                    "kernel %s: not rebuilt: its receipt records no dependency list (built before evident "
                    "recorded one)",
                    x.name);
                continue;
            }
            snprintf(key, sizeof key, "%.60s %.70s", x.name, x.binary);
            for (size_t i = 0; i < done.n && !seen; i++)
                seen = !strcmp(done.v[i], key);
            if (seen)
                continue; /* another invocation's build of the same bytes */
            if (ev_strs_push(&done, key)) {
                r->oom = 1;
                break;
            }
            if ((n = deps_held(b, r, &x)) < 0)
                continue;
            if (!have_t) {
                ev_err e;
                if (!backend || ev_ext_toolchain_of(backend, &t, &e)) {
                    vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "not rebuilt: backend %s has no toolchain here",
                            backend ? backend : "(none)");
                    break;
                }
                have_t = 1;
            }
            cannot(&t, &x, why, sizeof why);
            if (why[0])
                vr_note(r, VR_REBUILD, EV_MEMBER_PROOF, "kernel %s: %s", x.name, why);
            else
                rebuild(b, r, &t, &x, n);
        }
    }
    ev_strs_free(&done);
    ev_ext_toolchain_free(&t);
}
