/*
 * figures_rebuild.h (tests): test support, linked into every suite, not
 * into the programs: the figures validation.json holds, canonicalised and
 * printed with ev_json_print(tree, 1), compared with their rebuild from
 * the raw members (ev_figures_rebuild, src/evidence/figures_rebuild.h).
 */
#ifndef EV_TESTS_FIGURES_REBUILD_H
#define EV_TESTS_FIGURES_REBUILD_H

#include <stddef.h>

#include "status.h"
#include "evidence/figures_rebuild.h"
#include "member.h"

/*
 * EV_OK when equal; EV_EVERIFY with err naming the first differing line
 * (of the printed objects) when not, or when validation.json has no
 * "figures"; EV_EFORMAT as ev_figures_rebuild.
 */
ev_status ev_figures_verify(const ev_member *m, size_t n, ev_err *err);

#endif
