/*
 * verify_derive_int.h: what check 6's two files share: the context of the
 * rederive check (the bundle, the report, the medians rebuilt from
 * samples.csv) and the helpers one file calls in the other.
 *   verify_derive.c    check 6: rows, medians, drift, summary, outputs,
 *                      projections, sources
 *   verify_refit.c     the model refit, report.html, the figures
 *   verify_selector.c  the graph receipts against the selector's plans
 *                      (kernels/selector.h) and the declared external entries
 *   verify_outputs.c   every stored output validated again against the oracle
 *                      of its case's input, regenerated from the seed
 * Private to src/verify/.
 */
#ifndef EV_VERIFY_DERIVE_INT_H
#define EV_VERIFY_DERIVE_INT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model/model.h"
#include "model/run_view.h"
#include "runner/plan.h"
#include "runner/protocol.h"
#include "runner/sample_rules.h"
#include "tree_hash.h"
#include "model/select.h"
#include "selector.h"
#include "sha256.h"
#include "stats.h"
#include "store/outcome.h"
#include "verify_int.h"

#include "evidence/figures.h"
#include "evidence/projections.h"
#include "evidence/report.h"

#define VV EV_MEMBER_VALIDATION
#define VS EV_MEMBER_SAMPLES

/* Derived medians per job (parallel to b->vjobs); NaN when none. */
typedef struct vd_ctx {
    vb_bundle *b;
    ev_vreport *r;
    double *hot_median, *cold_median;
    /* the run's view (model/run_view.h), from validation.json's jobs,
     * samples.csv's rows and the protocol (vd_view): the refit's
     * observations and the figures are computed from it */
    ev_run_view view;
    ev_view_job *vjobs;
    ev_view_case *vcases;
    double *vals;
} vd_ctx;

/* verify_refit.c: fills x->view.  Returns -1 on allocation failure. */
int vd_view(vd_ctx *x);
/* verify_refit.c: frees what vd_view allocated. */
void vd_view_free(vd_ctx *x);

/* verify_refit.c: the model refit against model.json. */
void vd_model(vd_ctx *x);
/* verify_refit.c: report.html regenerated from the other members. */
void vd_report(vd_ctx *x);
/* verify_refit.c: validation.json's figures rebuilt from samples.csv. */
void vd_figures(vd_ctx *x);
/* verify_selector.c */
void vd_selector(vd_ctx *x);
/* verify_outputs.c: every stored output validated again from its case's
 * regenerated input. */
void vd_revalidate(vd_ctx *x);

#endif
