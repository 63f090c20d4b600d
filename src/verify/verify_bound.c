/*
 * verify_bound.c: the facts of the physical plausibility rule
 * (runner/sample_rules.h) as a bundle gives them, for check 5 (which holds
 * every attempt to the rule, through ev_rules_check) and check 6 (which
 * derives each job's "plausibility" of validation.json again).  The
 * exporter and the supervisor gather the same facts from the store and
 * the worker's records:
 *  - the run's ceilings, per shard: the hot median of the main phase's
 *    original ceiling and ceiling-l2 jobs, when completed, over their
 *    binding's in_span (ev_rule_ceiling_bpus);
 *  - per attempt: its case's bytes (ev_rule_case_bytes), its working set
 *    (its binding's spans, its device record's variants, the protocol's
 *    ops per graph: ev_rule_working_bytes) and its flush record's cache.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "runner/plan.h"
#include "runner/protocol.h"
#include "runner/sample_rules.h"
#include "stats.h"
#include "verify_int.h"

/* The shard count validation.json names (1 unsharded, or when it names
 * none that check 4 accepts). */
static int64_t shard_count(const vb_bundle *b)
{
    const cJSON *shards = cJSON_GetObjectItemCaseSensitive(b->validation, "shards");
    int64_t n = 1;
    if (shards && (ev_jr_i64(shards, "count", &n) || n < 1 || n > EV_PLAN_MAX_SHARDS))
        n = 1; /* check 4 FAILs the listing */
    return n;
}

/* The in_span of attempt a's binding, or -1. */
static int64_t in_span_of(const cJSON *a)
{
    const cJSON *bind = cJSON_GetObjectItemCaseSensitive(a, "binding");
    int64_t n;
    return cJSON_IsObject(bind) && !ev_jr_i64(bind, "in_span", &n) ? n : -1;
}

/* The last attempt object of job v, or NULL. */
static const cJSON *last_attempt(const vb_vjob *v)
{
    int n = cJSON_IsArray(v->attempts) ? cJSON_GetArraySize(v->attempts) : 0;
    return n ? cJSON_GetArrayItem(v->attempts, n - 1) : NULL;
}

/* The median of the hot per_op_us of job v's last attempt, or NaN when it
 * did not complete or has none.  Needs samples_ok. */
static double hot_median(const vb_bundle *b, const vb_vjob *v)
{
    const cJSON *a = last_attempt(v);
    int64_t att;
    size_t first, n_cold, n_hot;
    double med = NAN;
    if (!a || strcmp(v->outcome, "completed") || ev_jr_i64(a, "attempt", &att))
        return NAN;
    vb_rows_of(b, v->job_id, att, &first, &n_cold, &n_hot);
    double *x = n_hot ? malloc(n_hot * sizeof *x) : NULL;
    if (!x)
        return NAN;
    for (size_t i = 0; i < n_hot; i++)
        x[i] = b->samples.rows[first + n_cold + i].per_op_us;
    if (ev_median(x, n_hot, &med) != EV_OK)
        med = NAN;
    free(x);
    return med;
}

int vb_ceilings_get(const vb_bundle *b, vb_ceilings *c)
{
    memset(c, 0, sizeof *c);
    c->n = shard_count(b);
    c->mem = malloc((size_t)c->n * sizeof *c->mem);
    c->l2 = malloc((size_t)c->n * sizeof *c->l2);
    if (!c->mem || !c->l2) {
        vb_ceilings_free(c);
        return -1;
    }
    for (int64_t s = 0; s < c->n; s++)
        c->mem[s] = c->l2[s] = NAN;
    for (size_t k = 0; b->samples_ok && k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        int is_mem = ev_is_arm(v->arm, EV_ARM_CEILING), is_l2 = ev_is_arm(v->arm, EV_ARM_CEILING_L2);
        int64_t s = c->n > 1 ? ev_plan_job_shard(v->key, -1, c->n) : 0;
        if ((!is_mem && !is_l2) || v->case_index >= 0 || v->retry_of ||
            !ev_is_phase(v->phase, EV_PHASE_MAIN) || s < 0 || s >= c->n)
            continue;
        (is_mem ? c->mem : c->l2)[s] = ev_rule_ceiling_bpus(in_span_of(last_attempt(v)), hot_median(b, v));
    }
    return 0;
}

void vb_ceilings_free(vb_ceilings *c)
{
    free(c->mem);
    free(c->l2);
    c->mem = c->l2 = NULL;
    c->n = 0;
}

int vb_bound_of(const vb_bundle *b, const vb_vjob *v, const cJSON *a, const vb_ceilings *c,
                ev_rule_bound *out)
{
    const ev_protocol *p = b->proto;
    int64_t s = c->n > 1 ? ev_plan_shard_of(v->case_index, c->n) : 0, in_span = -1, out_span = -1, cache = 0;
    ev_dtype dt;
    if (!p || v->case_index < 0 || (size_t)v->case_index >= p->n_cases || s < 0 || s >= c->n)
        return 0;
    const ev_proto_case *pc = &p->cases[v->case_index];
    const cJSON *bind = cJSON_GetObjectItemCaseSensitive(a, "binding");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(a, "flush");
    memset(out, 0, sizeof *out);
    out->bytes =
        ev_dtype_parse(pc->dtype, &dt) ? 0 : ev_rule_case_bytes(pc->rows, pc->cols, ev_dtype_size(dt));
    if (cJSON_IsObject(bind) && !ev_jr_i64(bind, "in_span", &in_span) &&
        !ev_jr_i64(bind, "out_span", &out_span))
        out->working_bytes =
            ev_rule_working_bytes(ev_rule_device_variants(cJSON_GetObjectItemCaseSensitive(a, "device")),
                                  in_span, out_span, p->ops_per_graph);
    if (cJSON_IsObject(fl) && !ev_jr_i64(fl, "cache_bytes", &cache))
        out->cache_bytes = cache;
    out->memory_bpus = c->mem[s];
    out->l2_bpus = c->l2[s];
    return 1;
}
