/*
 * ext_binary.h: what an external kernel's build left, read for a job's
 * reason (ext_build.h builds it; the worker runs it): the entry points a
 * binary defines, so a job whose declared entry is missing names the ones
 * there are, and the compiler's first error lines, so a job whose kernel
 * did not compile says why in one line.  Linked into the worker, which
 * reads nothing else of the build.
 */
#ifndef EV_EXT_BINARY_H
#define EV_EXT_BINARY_H

#include <stddef.h>

#include "buf.h"
#include "status.h"
#include "strs.h"

/*
 * The entry points binary file path defines: the names of its global or
 * weak, defined function symbols, sorted bytewise, each once (a shared
 * object's dynamic symbols, what dlsym finds; a cubin's symbols marked
 * as entries, its kernels), so a job whose declared entry is missing can name the
 * ones there are.  Read by hand, bounded (a 64-bit little-endian ELF of
 * at most 256 MiB; every offset checked).  OUT: pushed to *out.
 * EV_EFORMAT for a file it cannot read as one; EV_EIO; EV_ENOMEM.
 */
ev_status ev_ext_binary_entries(const char *path, ev_strs *out, ev_err *err);

/* The most error lines ev_ext_first_errors keeps. */
#define EV_EXT_FIRST_ERRORS 3

/*
 * The first error lines of a failed build's message msg[0..len): the
 * first EV_EXT_FIRST_ERRORS lines that are the build's own (they start
 * with the kernel's name, "ext-...: ", and come first: an undeclared
 * include, a file it could not read) or say "error" (the compiler's
 * "error:", "fatal error:", nvcc's "catastrophic error"), else its first lines,
 * each trimmed to 300 bytes, joined by " | ", in one line (what a failed
 * job's reason and `evident run`'s summary show; the whole message is in
 * the build receipt).  OUT: appended to out.  EV_ENOMEM.
 */
ev_status ev_ext_first_errors(const char *msg, size_t len, ev_buf *out);

#endif
