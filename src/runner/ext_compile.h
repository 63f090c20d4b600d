/*
 * ext_compile.h: compiling one external kernel (ext_kernel.h), the one way
 * the runner builds it (ext_build.h) and verify-bundle rebuilds it from a
 * bundle's members (src/verify/verify_rebuild.c).
 *
 * A build runs in a root directory whose layout is the bundle's: each file
 * at its member name less "sources/" (the repository path today:
 * examples/ext-simple/simple.c, kernels/evident_kernel.h).  The compiler is
 * started in that root and given only relative paths (the translation
 * unit, -I kernels), so nothing of the root's own name reaches the binary:
 * the same files give the same bytes in any directory (tested by building
 * in two), and a kernel kept elsewhere can be built the same way once its
 * files are laid out under the names the bundle will give them.  The
 * compiler writes its real dependency list (-MD -MT evident-kernel -MF):
 * every file it read, each classified by ev_ext_dep_where as the
 * toolkit's (the compiler's and the CUDA toolkit's include directories,
 * /usr/include; never /usr/local/include, a host's own additions) or a
 * file under the root (which the caller requires to be a member).
 *
 * The compiler runs under bounds (ev_ext_limits: address space, file size,
 * wall-clock time, message size), in its own process group, killed with
 * its group when the time runs out: a source made to hang or flood the
 * compiler cannot stall a run or a verification.
 */
#ifndef EV_EXT_COMPILE_H
#define EV_EXT_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"
#include "strs.h"

#define EV_EXT_CPU_FLAGS  "-O2 -std=c11 -fPIC -shared -Wall"
#define EV_EXT_CUDA_FLAGS "-cubin -O3 -std=c++17"
#ifndef EV_EXT_CUDA_ARCH
#define EV_EXT_CUDA_ARCH "sm_90"
#endif
#ifndef EV_NVCC
#define EV_NVCC ""
#endif

/* The include directory every build is given, relative to the root:
 * evident's ABI header (kernels/evident_kernel.h) is found there. */
#define EV_EXT_INCLUDE "kernels"

/* The target name of the dependency list (-MT): fixed, so the list never
 * names the output's path. */
#define EV_EXT_DEP_TARGET "evident-kernel"

/* How one backend's kernels are built. */
typedef struct ev_ext_toolchain {
    char backend[8];     /* "cpu" | "cuda" */
    char compiler[4200]; /* what is run: "cc", or nvcc ($EVIDENT_NVCC, the build's, "nvcc") */
    char flags[160];     /* the pinned flags, one space between words (the receipt's "flags") */
    char version[256];   /* the compiler's version line; "" when it cannot be run */
    const char *suffix;  /* of the binary: ".so" (a shared object) | ".cubin" (device code) */
    ev_strs toolkit;     /* the toolkit's include directories, real paths (ev_ext_toolchain_free) */
} ev_ext_toolchain;

/*
 * The toolchain of backend on this host: the compiler (cc; for cuda
 * $EVIDENT_NVCC, else the nvcc the build found, else `nvcc` on PATH), its
 * pinned flags (cuda: with -arch=EV_EXT_CUDA_ARCH), its version line
 * (`compiler --version`: the line naming a release, else the first) and
 * the toolkit's include directories (the host C and C++ compilers' system
 * directories as `-E -v` lists them, /usr/include, and for cuda the
 * toolkit's root, the directory above nvcc's bin/; /usr/local/include is
 * never one).  OUT: *t.  EV_EUNSUPPORTED for a backend without one;
 * EV_ENOMEM.
 */
ev_status ev_ext_toolchain_of(const char *backend, ev_ext_toolchain *t, ev_err *err);
void ev_ext_toolchain_free(ev_ext_toolchain *t); /* NULL-safe */

/* What a compile may use. */
typedef struct ev_ext_limits {
    uint64_t as_bytes;   /* RLIMIT_AS of the compiler's processes */
    uint64_t file_bytes; /* RLIMIT_FSIZE: the binary, the dependency list, nvcc's temporaries */
    int64_t wall_ms;     /* then its process group is killed */
    size_t msg_bytes;    /* of its messages kept (the rest is counted, not kept) */
} ev_ext_limits;

/* The runner's and the verifier's bounds: 4 GiB of address space (nvcc 13
 * compiles examples/ext-simple in under 2), 256 MiB per file, 300 s,
 * 64 KiB of messages. */
#define EV_EXT_LIMITS_DEFAULT                                                                                \
    {                                                                                                        \
        (uint64_t)4 << 30, (uint64_t)256 << 20, 300000, 65536                                                \
    }

/* What one compile did. */
typedef struct ev_ext_compiled {
    int status;    /* exit status; 128 + signal when killed; -1 when it could not start */
    int timed_out; /* killed at the wall-clock bound */
    ev_buf msg;    /* its stdout and stderr (at most msg_bytes) */
    ev_strs deps;  /* the dependency list, each path as the compiler wrote it, in its order */
} ev_ext_compiled;

/*
 * Compiles translation unit tu (a path relative to root) with toolchain t
 * in root: `compiler FLAGS -I kernels -MD -MT evident-kernel -MF OUT.d tu
 * -o OUT`, the compiler's working directory root, under lim.  out_path
 * (absolute, or relative to the caller's directory) is the binary; the
 * dependency list is written beside it (out_path + ".d") and read back
 * into res->deps when the compile succeeded.  OUT: *res
 * (ev_ext_compiled_free), also when the compile failed (its status and
 * message).  EV_EIO / EV_ENOMEM only when the step itself cannot run.
 */
ev_status ev_ext_compile(const ev_ext_toolchain *t, const char *root, const char *tu, const char *out_path,
                         const ev_ext_limits *lim, ev_ext_compiled *res, ev_err *err);
void ev_ext_compiled_free(ev_ext_compiled *c); /* NULL-safe */

/* Where a file a compile read lies. */
typedef enum ev_ext_dep_kind {
    EV_DEP_TOOLKIT, /* under one of the toolkit's directories */
    EV_DEP_ROOT,    /* under the build's root: rel is its path there */
    EV_DEP_OUTSIDE  /* anywhere else (another directory, /usr/local/include, ...) */
} ev_ext_dep_kind;

/*
 * Classifies dependency dep (as the compiler wrote it: relative to root,
 * or absolute) of a build in root: the file's real path (symbolic links
 * resolved) under a toolkit directory of t, under root's real path, or
 * elsewhere.  OUT: rel[cap] (EV_DEP_ROOT: the path under the root, '/'
 * separated; otherwise the real path, or dep itself when it cannot be
 * resolved).
 */
ev_ext_dep_kind ev_ext_dep_where(const ev_ext_toolchain *t, const char *root, const char *dep, char *rel,
                                 size_t cap);

#endif
