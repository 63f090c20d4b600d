/*
 * model_from.h: auto in a quick loop.  A subset (runner/subset.h) has too
 * few cases for a fit of its own, so its auto arm takes the coefficients
 * of an earlier run of the whole protocol: `evident run --cases ... --model
 * BUNDLE` reads BUNDLE's model.json and writes its coefficients, with the
 * SHA-256 of the BUNDLE file, into the subset's protocol as `model_from`
 * (protocol.h).  Anyone holding both files can check the one against the
 * other; the verifier holds the subset's auto jobs to those coefficients.
 */
#ifndef EV_MODEL_FROM_H
#define EV_MODEL_FROM_H

#include "protocol.h"
#include "status.h"

/*
 * Reads the bundle at path (the hardened zip reader) and takes its model:
 * its run must have measured the protocol whose id is protocol_id (the
 * whole protocol the subset is cut from) on backend, and its fit must have
 * coefficients.  OUT: *m (set).  EV_EUSAGE with err saying what was wrong
 * and what to do (not a bundle, another protocol or backend, a failed
 * fit); EV_EIO when it cannot be read; EV_ENOMEM.
 */
ev_status ev_model_from_bundle(const char *path, const char *protocol_id, const char *backend,
                               ev_proto_model *m, ev_err *err);

#endif
