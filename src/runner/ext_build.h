/*
 * ext_build.h: building a protocol's external kernels (ext_kernel.h) for
 * the run's backend, once per invocation, before the environment record
 * and before any job.  cpu: `cc` with the pinned flags EV_EXT_CPU_FLAGS
 * into a shared object the cpu backend loads.  cuda: `nvcc` with
 * EV_EXT_CUDA_FLAGS and -arch=EV_EXT_CUDA_ARCH (the architecture our own
 * kernels are built for) into a cubin, device code only, that the cuda
 * backend loads and launches itself.  nvcc is $EVIDENT_NVCC, else the one
 * the build found (EV_NVCC), else `nvcc` on PATH.  Each build leaves a receipt
 * (the compiler's version line, the flags, the SHA-256 of the source and
 * of the binary, its outcome and the compiler's message, paths redacted)
 * that goes into the invocation's environment record, and so into the
 * bundle.  A kernel that does not compile is not a failure of the run: its
 * jobs fail (failed-exit) with the compiler's message.
 */
#ifndef EV_EXT_BUILD_H
#define EV_EXT_BUILD_H

#include <cjson/cJSON.h>

#include "protocol.h"
#include "status.h"

#define EV_EXT_CPU_FLAGS  "-O2 -std=c11 -fPIC -shared -Wall"
#define EV_EXT_CUDA_FLAGS "-cubin -O3 -std=c++17"
#ifndef EV_EXT_CUDA_ARCH
#define EV_EXT_CUDA_ARCH "sm_90"
#endif
#ifndef EV_NVCC
#define EV_NVCC ""
#endif

typedef struct ev_ext_built {
    char name[32];
    int ok;
    char lib[4200];   /* the built binary (ok: cpu a shared object, cuda a cubin), else "" */
    char error[4200]; /* a file holding the compiler's message (not ok), else "" */
} ev_ext_built;

/*
 * Builds each kernel of p that has a source for backend ("cpu" | "cuda")
 * into dir, from root/<its repository path>
 * (the protocol at protocol_path; ev_ext_repo_path).  OUT: b[0..*n) (at
 * most EV_EXT_MAX_KERNELS), *receipts (a cJSON array the caller owns, one
 * object per build).  EV_EIO / EV_ENOMEM when the step itself cannot run
 * (a build that fails is a receipt, not an error).
 */
ev_status ev_ext_build_all(const ev_protocol *p, const char *protocol_path, const char *root,
                           const char *backend, const char *dir, ev_ext_built *b, size_t *n, cJSON **receipts,
                           ev_err *err);

/* The built kernel named name in b[0..n), or NULL. */
const ev_ext_built *ev_ext_built_of(const ev_ext_built *b, size_t n, const char *name);

#endif
