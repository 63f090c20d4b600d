/*
 * build_id.h: the identity of the measured code a build was made from,
 * compiled into every binary (mk/build-id.sh generates its definitions at
 * build time), and the run-start check that the code a run is about to
 * measure is that code (docs/runner.md, "Provenance").  Without it, a
 * binary built from another commit and run from this checkout would record
 * this checkout's commit and tree while measuring its own.
 */
#ifndef EV_BUILD_ID_H
#define EV_BUILD_ID_H

#include <stddef.h>

#include "status.h"

/* The tree hash of the measurement closure's code at build time
 * (ev_tree_hash over its files without protocols/: mk/closure.list and
 * what it names, or the legacy roots), the commit built ("unknown" without git or a stamp) and
 * whether those files differed from it. */
extern const char ev_build_tree[];
extern const char ev_build_commit[];
extern const int ev_build_dirty;

/* 1 when path (relative, '/'-separated), a file of the closure, is
 * measured code: any but protocols/ (data a run declares). */
int ev_build_code_path(const char *path);

/*
 * Compares the build's identity with the measured code under root (its
 * closure's regular files that ev_build_code_path names).  EV_OK when the
 * tree hashes are equal; EV_EUSAGE, err saying both and what to do, when
 * they differ (the run is refused before anything is written);
 * EV_EIO / EV_ENOMEM when root cannot be read.  Protocols, and external
 * kernels outside the closure, are not part of it: a user's own may be
 * added without rebuilding evident.
 */
ev_status ev_build_check(const char *root, ev_err *err);

#endif
