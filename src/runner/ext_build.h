/*
 * ext_build.h: building a protocol's external kernels (ext_kernel.h) for
 * the run's backend, once per invocation, before the environment record
 * and before any job, each by ev_ext_compile (ext_compile.h: cpu `cc` into
 * a shared object the kernel host loads, cuda `nvcc` into a cubin, device
 * code only, that the cuda backend loads and launches itself).
 *
 * Wherever the protocol lies, a kernel is built in a directory of its own
 * laid out as the bundle names its files: evident's ABI header at
 * kernels/evident_kernel.h (from evident's tree or installation) and each
 * declared file at external/<arm>/<file> (from the protocol's directory;
 * ev_ext_member_path), and nothing else.  The compiler is given relative
 * paths only, so the binary is the same on every host and verify-bundle
 * can rebuild it from the bundle's members.
 *
 * The bundle holds the bytes that ran: every file the compiler read
 * (its dependency list) outside the toolkit's directories must be a file
 * of the run's snapshot, with the snapshot's bytes, and either one the
 * kernel declares (its sources) or the ABI header; otherwise the build
 * fails naming the file.  An include the compiler cannot find that lies
 * beside the kernel's files is named as undeclared.  Each build leaves a
 * receipt (the compiler's version line, the flags, the translation unit,
 * the SHA-256 of the binary, the dependency list: each file read under the
 * root with its SHA-256, each toolkit file with its own, its outcome and
 * the compiler's message, paths redacted) that goes into the invocation's
 * environment record, and so into validation.json and proof-receipts.json,
 * where verify-bundle rebuilds the binary from the bundle's members alone
 * (src/verify/verify_rebuild.c).  A kernel that does not build is not a
 * failure of the run: its jobs fail (failed-exit) with the compiler's
 * first error lines (ext_binary.h, ev_ext_first_errors).
 */
#ifndef EV_EXT_BUILD_H
#define EV_EXT_BUILD_H

#include <cjson/cJSON.h>

#include "tree_hash.h"
#include "ext_compile.h"
#include "protocol.h"
#include "status.h"

typedef struct ev_ext_built {
    char name[32];
    int ok;
    char lib[4200];   /* the built binary (ok: cpu a shared object, cuda a cubin), else "" */
    char error[4200]; /* a file holding the reason it did not build (not ok), else "" */
} ev_ext_built;

/*
 * Builds each kernel of p that has a source for backend ("cpu" | "cuda")
 * into dir, its files read from proto_dir (the protocol's directory) and
 * the ABI header from root (evident's tree), holding what it read to the
 * run's snapshot snap[0..n_snap) (sorted by path, as the store keeps it).
 * OUT: b[0..*n) (at most EV_EXT_MAX_KERNELS), *receipts (a cJSON array the
 * caller owns, one object per build).  EV_EIO / EV_ENOMEM when the step
 * itself cannot run (a build that fails is a receipt, not an error).
 */
ev_status ev_ext_build_all(const ev_protocol *p, const char *proto_dir, const char *root, const char *backend,
                           const char *dir, const ev_source_file *snap, size_t n_snap, ev_ext_built *b,
                           size_t *n, cJSON **receipts, ev_err *err);

/* The built kernel named name in b[0..n), or NULL. */
const ev_ext_built *ev_ext_built_of(const ev_ext_built *b, size_t n, const char *name);

#endif
