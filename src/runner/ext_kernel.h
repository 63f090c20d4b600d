/*
 * ext_kernel.h: external kernels in a protocol (docs/external-kernels.md).
 * A protocol's "kernels" array declares each one:
 *
 *   {"name": "ext-mine",
 *    "sources": {"cpu": "mine.c", "cuda": "mine.cu"},   (one or both)
 *    "entries": {"reduce_sum/fp32": "mine_sum_f32", ...},
 *    "geometry": {"grid": "cdiv(rows, 4)", "block": "128"}}  (cuda)
 *
 * and its name is an arm.  Sources are paths relative to the protocol's
 * directory, inside it; the ABI is kernels/evident_kernel.h.  This module
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

#define EV_EXT_MAX_KERNELS 16
#define EV_EXT_MAX_ENTRIES 6 /* 2 ops x 3 dtypes */
#define EV_EXT_PATH_MAX    256
#define EV_EXT_EXPR_MAX    128

typedef struct ev_ext_entry {
    char op[EV_OP_NAME_MAX];       /* an op (src/common/vocab.h) */
    char dtype[EV_DTYPE_NAME_MAX]; /* a dtype */
    char entry[64];                /* a C identifier */
} ev_ext_entry;

typedef struct ev_ext_kernel {
    char name[32];                    /* "ext-..." */
    char source_cpu[EV_EXT_PATH_MAX]; /* relative to the protocol's directory; "" none */
    char source_cuda[EV_EXT_PATH_MAX];
    ev_ext_entry entries[EV_EXT_MAX_ENTRIES];
    size_t n_entries;
    char grid[EV_EXT_EXPR_MAX], block[EV_EXT_EXPR_MAX]; /* cuda geometry; "" without a cuda source */
} ev_ext_kernel;

/* Parses the "kernels" array arr into k[0..*n) (at most
 * EV_EXT_MAX_KERNELS).  EV_EFORMAT naming the field and the rule. */
ev_status ev_ext_parse(const cJSON *arr, ev_ext_kernel *k, size_t *n, ev_err *err);

/* The entry of kernel k for op and dtype, or NULL when it implements none. */
const char *ev_ext_entry_for(const ev_ext_kernel *k, const char *op, const char *dtype);

/* The source of k for backend ("cpu" | "cuda"), or NULL when it has none. */
const char *ev_ext_source(const ev_ext_kernel *k, const char *backend);

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
 * The repository path of source src of a protocol at protocol_path (both
 * relative, '/'-separated): dirname(protocol_path)/src.  OUT: out[cap].
 * Returns -1 when it does not fit.
 */
int ev_ext_repo_path(const char *protocol_path, const char *src, char *out, size_t cap);

/*
 * The measurement closure's share of a protocol's kernels: kernel i's
 * source for backend, as a repository path (ev_ext_repo_path).  The runner
 * snapshots it beside the closure's directories and the verifier's source
 * check walks it: one rule for both.  Returns 1 and fills out[cap], or 0
 * when kernel i has no source for backend (or the path does not fit).
 */
int ev_ext_closure_file(const ev_ext_kernel *k, size_t i, const char *protocol_path, const char *backend,
                        char *out, size_t cap);

/*
 * Checks, before anything runs, that every declared source of backend
 * exists under root as a regular file, not a symlink (nor under one), so
 * the bytes the bundle holds are the bytes that ran.  EV_EUSAGE naming the
 * kernel and the path.
 */
ev_status ev_ext_check_sources(const char *root, const char *protocol_path, const ev_ext_kernel *k, size_t n,
                               const char *backend, ev_err *err);

#endif
