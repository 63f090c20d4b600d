/*
 * verify_stubs.c: checks not written yet (temporary): each says NOT RUN so
 * a bundle can never PASS on a check that did not run.
 */
#include "verify_int.h"

void vc_compare(vb_bundle *a, vb_bundle *b, ev_vreport *r)
{
    (void)a;
    (void)b;
    vr_not_run(r, VR_COMPARE, "not implemented yet");
}
