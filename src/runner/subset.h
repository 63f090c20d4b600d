/*
 * subset.h: a quick loop's protocol.  `evident run --cases SPEC --arms
 * LIST` runs a subset of a protocol as a protocol of its own: the derived
 * file keeps every field of the original but the cases and arms chosen,
 * and says what it was cut from ("subset_of": the original's protocol id;
 * "subset_cases": the original case index of each case kept).  The store
 * and the bundle hold the derived bytes, so no bundle of a subset can pass
 * for one of the whole protocol, and the verifier checks it as any other.
 */
#ifndef EV_SUBSET_H
#define EV_SUBSET_H

#include <stddef.h>

#include "buf.h"
#include "protocol.h"
#include "status.h"

/*
 * Derives the subset of protocol bytes p[0..n).  cases: NULL (all) or a
 * list of case indexes and ranges ("0,3,5-7"), each index below the
 * protocol's case count, none twice; arms: NULL (all) or a comma list of
 * the protocol's own arms.  Fault arms not kept are dropped; a kept fault
 * arm's case list is renumbered (an arm left with no case is refused).
 * A subset has too few cases to fit a model of its own: its auto arm uses
 * model (an earlier run's coefficients, model_from.h) as `model_from`, or,
 * with model NULL, is not planned (`auto_arm` false; a wrong-schedule
 * fault arm kept is then refused).
 * OUT: out (appended: the derived protocol, strict JSON).  EV_EFORMAT with
 * err saying what was wrong (a bad spec, an unknown or repeated index or
 * arm, a protocol that is already a subset, a result the parser refuses);
 * EV_ENOMEM.
 */
ev_status ev_protocol_subset(const char *p, size_t n, const char *cases, const char *arms,
                             const ev_proto_model *model, ev_buf *out, ev_err *err);

#endif
