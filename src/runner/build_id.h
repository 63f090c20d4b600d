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

/* The measured code at build time: its files (the measurement closure's
 * under kernels/, src/runner/ and db/schema.sql; sorted bytewise,
 * NULL-terminated), their tree hash (ev_tree_hash), the commit built
 * ("unknown" without git or a stamp) and whether those files differed
 * from it. */
extern const char *const ev_build_files[];
extern const char ev_build_tree[];
extern const char ev_build_commit[];
extern const int ev_build_dirty;

/*
 * Compares the build's identity with the measured code under root: the
 * same paths (ev_build_files) read there, hashed as the build hashed
 * them.  EV_OK when the tree hashes are equal; EV_EUSAGE, err saying both
 * and what to do, when they differ or a file is not there (the run is
 * refused before anything is written); EV_ENOMEM.  Protocols, and external
 * kernels kept outside kernels/ and src/runner/, are not part of it: a
 * user's own may be added without rebuilding evident.
 */
ev_status ev_build_check(const char *root, ev_err *err);

#endif
