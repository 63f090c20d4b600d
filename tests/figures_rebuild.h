/*
 * figures_rebuild.h: test support (linked into every suite, not into the
 * programs): the figures of a bundle rebuilt from its samples.csv and
 * validation.json by the documented recipe (docs/bundle-format.md,
 * "figures": each job's last-attempt hot and cold per_op_us in samples.csv
 * row order, the run seed) straight from the raw members, and compared
 * with the ones validation.json holds, both canonicalised and printed
 * with ev_json_print(tree, 1).  The verifier's own check is vd_figures
 * (src/verify/verify_derive.c), over the rows it has already parsed; the
 * tests hold the exporter to the recipe with this one.
 */
#ifndef EV_TESTS_FIGURES_REBUILD_H
#define EV_TESTS_FIGURES_REBUILD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"
#include "evidence/member.h"

/*
 * ev_figures_rebuild: OUT: *out, the rebuilt object.  EV_EFORMAT with err
 * naming the member and the row or key when the members cannot be read
 * (missing, not strict JSON or CSV, a job's rows not contiguous).
 * ev_figures_verify: EV_OK when equal; EV_EVERIFY with err naming the
 * first differing line (of the printed objects) when not, or when
 * validation.json has no "figures"; EV_EFORMAT as above.
 */
ev_status ev_figures_rebuild(const ev_member *m, size_t n, cJSON **out, ev_err *err);
ev_status ev_figures_verify(const ev_member *m, size_t n, ev_err *err);

#endif
