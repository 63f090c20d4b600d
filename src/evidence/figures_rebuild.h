/*
 * figures_rebuild.h: the figures of a bundle rebuilt from its samples.csv
 * and validation.json by the documented recipe (docs/bundle-format.md,
 * "figures": each job's last-attempt hot and cold per_op_us in samples.csv
 * row order, the run seed) straight from the raw members.  evident compare
 * stands on it (a comparison that an edited validation.json cannot move),
 * and the tests hold the exporter to the recipe with it
 * (tests/figures_rebuild.h).  The verifier's own check is vd_figures
 * (src/verify/verify_refit.c), over the rows it has already parsed.
 */
#ifndef EV_EVIDENCE_FIGURES_REBUILD_H
#define EV_EVIDENCE_FIGURES_REBUILD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"
#include "member.h"

/*
 * OUT: *out, the rebuilt object.  EV_EFORMAT with err naming the member
 * and the row or key when the members cannot be read (missing, not strict
 * JSON or CSV, a job's rows not contiguous).
 */
ev_status ev_figures_rebuild(const ev_member *m, size_t n, cJSON **out, ev_err *err);

#endif
