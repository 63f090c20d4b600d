/*
 * ext_kernel.h: external kernels in a protocol (docs/external-kernels.md).
 * A protocol's "kernels" array declares each one:
 *
 *   {"name": "ext-mine",
 *    "sources": {"cpu": "mine.c", "cuda": ["mine.cu", "mine.cuh"]},   (one or both)
 *    "entries": {"reduce_sum/fp32": "mine_sum_f32", ...},
 *    "geometry": {"grid": "cdiv(rows, 4)", "block": "128"}}  (cuda)
 *
 * or, for a Python arm, its module instead of sources (a function of it
 * per entry, taking the input view and the output; src/runner/
 * backend_python.h):
 *
 *   {"name": "ext-mine",
 *    "python": "mine.py"  (both backends; or {"cpu": ..., "cuda": ...},
 *                          each a file or a list: the module first, then
 *                          every file of the protocol's directory it imports),
 *    "entries": {"reduce_sum/fp16": "reduce_sum_fp16", ...},
 *    "memory_mb": 4096}   (optional: its process's memory beyond its buffers)
 *
 * and its name is an arm.  Sources are paths relative to the protocol's
 * directory, inside it, wherever on disk that directory is: per backend
 * one file, the translation unit the compiler is given, or a list of
 * files, that unit first and then every file it includes (the build fails
 * naming any other file it reads outside the toolkit's directories and
 * evident's ABI header: ext_build.h).  The ABI is kernels/evident_kernel.h.
 * A declaration names its code by "sources" today; another form of code
 * (a function of another language) would be one more key beside it, with
 * its files named in the bundle by the same rule (ev_ext_member_path).
 * This module
 * parses the declarations (protocol.c calls it), checks the source files
 * before anything runs, and evaluates geometry expressions: integers,
 * rows, cols, stride, + - * / (integer division) %, parentheses and
 * cdiv(a, b) (the quotient rounded up).
 */
#ifndef EV_EXT_KERNEL_H
#define EV_EXT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "status.h"
#include "vocab.h"

struct ev_strs;

#define EV_EXT_MAX_KERNELS 32
#define EV_EXT_MAX_ENTRIES 6 /* 2 ops x 3 dtypes */
#define EV_EXT_PATH_MAX    256
#define EV_EXT_EXPR_MAX    128
#define EV_EXT_MAX_FILES   8   /* per backend: the translation unit and the files it includes */
#define EV_EXT_MEMBER_MAX  600 /* a member path of a kernel's file (ev_ext_member_path) */

typedef struct ev_ext_entry {
    char op[EV_OP_NAME_MAX];       /* an op (src/common/vocab.h) */
    char dtype[EV_DTYPE_NAME_MAX]; /* a dtype */
    char entry[64];                /* a C identifier */
} ev_ext_entry;

typedef struct ev_ext_kernel {
    char name[32]; /* "ext-..." */
    /* files[b][0..n_files[b]) for backend b (0 cpu, 1 cuda), relative to the
     * protocol's directory: the translation unit first, then what it includes */
    char files[2][EV_EXT_MAX_FILES][EV_EXT_PATH_MAX];
    size_t n_files[2];
    ev_ext_entry entries[EV_EXT_MAX_ENTRIES];
    size_t n_entries;
    char grid[EV_EXT_EXPR_MAX], block[EV_EXT_EXPR_MAX]; /* cuda geometry; "" without a cuda source */
    int python;        /* 1: a Python arm: files are its module (then what it imports), entries its
                          functions; nothing is compiled (ext_build.h) */
    int64_t memory_mb; /* its process's memory beyond its buffers, at most (MiB): python, its anonymous
                          resident memory; cpu, the kernel host's address space beyond the shared memory */
} ev_ext_kernel;

/* A kernel's memory_mb when the declaration names none (a Python arm's, and
 * a cpu kernel host's). */
#define EV_EXT_PY_MEMORY_MB 4096

/* Parses the "kernels" array arr into k[0..*n) (at most
 * EV_EXT_MAX_KERNELS).  EV_EFORMAT naming the field and the rule. */
ev_status ev_ext_parse(const cJSON *arr, ev_ext_kernel *k, size_t *n, ev_err *err);

/* The entry of kernel k for op and dtype, or NULL when it implements none. */
const char *ev_ext_entry_for(const ev_ext_kernel *k, const char *op, const char *dtype);

/* The source of k for backend ("cpu" | "cuda"): the translation unit the
 * compiler is given, or NULL when it has none. */
const char *ev_ext_source(const ev_ext_kernel *k, const char *backend);

/* File j of k for backend (j = 0: the translation unit; then the files it
 * includes), or NULL past the last. */
const char *ev_ext_file(const ev_ext_kernel *k, const char *backend, size_t j);

/*
 * Evaluates geometry expression e for a case of rows x cols with stride.
 * OUT: *v.  EV_EFORMAT with the reason: malformed, a division by zero, an
 * overflow, or a value below 1.
 */
ev_status ev_ext_eval(const char *e, int64_t rows, int64_t cols, int64_t stride, int64_t *v, ev_err *err);

/* The limits every CUDA device evident runs on has (compute capability
 * 3.0 and later): threads per block and blocks in x. */
#define EV_EXT_MAX_BLOCK 1024
#define EV_EXT_MAX_GRID  2147483647LL

/*
 * Kernel k's grid and block for a case of rows x cols with stride (rows
 * >= 1): both expressions evaluated, each within 1..EV_EXT_MAX_GRID and
 * 1..EV_EXT_MAX_BLOCK.  The protocol parser checks every case a kernel
 * has an entry for (before anything runs), the worker launches with these
 * values and the verifier holds each graph node to them: one rule.
 * OUT: *grid, *block.  EV_EFORMAT naming the kernel, the expression, the
 * shape and why.
 */
ev_status ev_ext_geometry(const ev_ext_kernel *k, int64_t rows, int64_t cols, int64_t stride, int64_t *grid,
                          int64_t *block, ev_err *err);

/*
 * Where a kernel's files live in a bundle, whatever directory they came
 * from: file f of kernel `name` (a path relative to the protocol's
 * directory) is the member sources/EV_EXT_MEMBER_DIR/<name>/<f>, and the
 * build lays it out under that name (less "sources/") beside evident's ABI
 * header (EV_EXT_ABI_HEADER), so the binary, the receipt and verify-
 * bundle's rebuild name the same paths on every host.  The runner's
 * snapshot, the build, the verifier's plan check, its --kernel-tree check
 * and the rebuild all name them by ev_ext_member_path: one rule.
 */
#define EV_EXT_MEMBER_DIR "external"
/* evident's ABI header (kernels/evident_kernel.h), the one file of
 * evident's own a kernel's build may read: a member of the closure. */
#define EV_EXT_ABI_HEADER "kernels/evident_kernel.h"

/* The member path (less "sources/") of file f of kernel name:
 * EV_EXT_MEMBER_DIR "/" name "/" f.  OUT: out[cap].  Returns -1 when it
 * does not fit. */
int ev_ext_member_path(const char *name, const char *f, char *out, size_t cap);

/*
 * The directory of the protocol at protocol_path (as given on the command
 * line: relative to the working directory, or absolute): every kernel
 * file is relative to it.  "." for a bare file name.  OUT: out[cap].
 * Returns -1 when it does not fit.
 */
int ev_ext_protocol_dir(const char *protocol_path, char *out, size_t cap);

/*
 * The protocol path a run records (the store's runs.protocol_path, the
 * bundle's run.protocol_path): a relative one as given; an absolute one
 * as "<path>/" and its file name, so no directory of the user's is
 * recorded and verify-bundle --kernel-tree can still find the file.
 * OUT: out[cap] (truncated to fit).
 */
void ev_ext_protocol_recorded(const char *protocol_path, char *out, size_t cap);

/*
 * The bundle's share of a protocol's kernels k[0..n): every declared file
 * of every kernel for backend, as a member path (ev_ext_member_path), in
 * declaration order; with disk (non-NULL) the same files on disk, the
 * protocol's directory dir joined to each (parallel to out).  The runner
 * snapshots them, the verifier's plan check requires each as a member
 * and its --kernel-tree check compares each with the file of the user's
 * tree: one rule for all.  A path that does not fit is left out (the
 * parser bounds them).  OUT: *out, *disk (pushed; the caller frees).
 * EV_ENOMEM.
 */
ev_status ev_ext_closure(const ev_ext_kernel *k, size_t n, const char *backend, const char *dir,
                         struct ev_strs *out, struct ev_strs *disk);

/*
 * 1 when member path rel (less "sources/") is one of kernel k's declared
 * files for backend, else 0: what its build may read besides the ABI
 * header and the toolkit (ext_build.h).
 */
int ev_ext_declares(const ev_ext_kernel *k, const char *backend, const char *rel);

/*
 * Checks, before anything runs, that every declared file of backend
 * exists under dir (the protocol's directory) as a regular file, with no
 * symbolic link between dir and it, so the bytes the bundle holds are the
 * bytes that ran and no file outside dir is reached through a link.
 * EV_EUSAGE naming the kernel and the path.
 */
ev_status ev_ext_check_sources(const char *dir, const ev_ext_kernel *k, size_t n, const char *backend,
                               ev_err *err);

#endif
