/*
 * verify_selector.c: check 6's receipts half: every graph receipt against
 * the plan kernels/selector.h makes for its binding (auto: from model.json's
 * coefficients; native schedules: their own), every external job's nodes
 * against the entry and geometry its protocol declares, and the node count
 * of every completed attempt (verify_derive_int.h).
 */
#include "verify_derive_int.h"

/* Reads an int64 triple [x, y, z] at key of o into v.  Returns 0, or -1
 * when it is not an array of three integers. */
static int vd_triple(const cJSON *o, const char *key, int64_t v[3])
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 3)
        return -1;
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        double d = e->valuedouble;
        if (!cJSON_IsNumber(e) || d != floor(d) || fabs(d) > 9007199254740992.0)
            return -1;
        v[i] = (int64_t)d;
    }
    return 0;
}

/* The coefficients and threshold the policy phase used: model.json's, or
 * protocol.json's model_from.
 * OUT: *have (0: the fit failed, auto runs the default), *c, *thr.
 * Returns -1 (a failure recorded) when model.json says neither. */
static int vd_model_coef(vd_ctx *x, int *have, ev_coef *c, double *thr)
{
    const cJSON *m = x->b->model;
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(m, "coefficients");
    if (x->b->proto && x->b->proto->model_from.set) {
        /* a subset's auto used an earlier run's coefficients (protocol.json's
         * model_from), whatever this run's own fit says */
        c->a0 = x->b->proto->model_from.a0;
        c->aP = x->b->proto->model_from.aP;
        c->aD = x->b->proto->model_from.aD;
        *thr = x->b->proto->decision_threshold;
        *have = 1;
        return 0;
    }
    if (!m) {
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_MODEL,
                "missing or not strict JSON: no selector check (checks 2, 3)");
        return -1;
    }
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "fit")) && !co) {
        *have = 0; /* a failed fit: the runner's auto arm keeps the default */
        *thr = 0.05;
        return 0;
    }
    if (!cJSON_IsObject(co) || ev_jr_dbl(co, "a0", &c->a0) || ev_jr_dbl(co, "aP", &c->aP) ||
        ev_jr_dbl(co, "aD", &c->aD) || ev_jr_dbl(m, "threshold", thr)) {
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_MODEL,
                "no coefficients {a0, aP, aD} and threshold for the selector");
        return -1;
    }
    *have = 1;
    return 0;
}

/* Formats a launch (entry grid block) into buf. */
static void vd_launch_text(char *buf, size_t cap, const char *fn, const int64_t g[3], const int64_t bl[3])
{
    snprintf(buf, cap, "%s grid [%lld, %lld, %lld] block [%lld, %lld, %lld]", fn, (long long)g[0],
             (long long)g[1], (long long)g[2], (long long)bl[0], (long long)bl[1], (long long)bl[2]);
}

/*
 * The number of graph receipts of an attempt of a case's job that launches
 * through the backend (ours, auto, an external kernel): a cuda graph holds
 * one kernel node per op (ops_per_graph of them; a kernel that launched
 * more would show here), a cpu batch records one receipt.  Only completed
 * attempts are held to it: one that stopped before its capture has none.
 * Returns 1 after a FAIL.
 */
static int vd_node_count(vd_ctx *x, const vb_vjob *v, const cJSON *a, const cJSON *nodes, int cuda)
{
    const char *oc = ev_jr_str(a, "outcome");
    int64_t n = cJSON_GetArraySize(nodes), want, att = 0;
    if (!x->b->proto || !oc || strcmp(oc, "completed"))
        return 0; /* the worker fails an attempt whose count is wrong (worker.c); its record stands */
    want = cuda ? x->b->proto->ops_per_graph : 1;
    ev_jr_i64(a, "attempt", &att);
    if (!n || n == want)
        return 0;
    vr_fail(x->r, VR_REDERIVE, VV,
            "job %s attempt %lld: %lld graph nodes, but a %s graph of %lld ops records %lld", v->key,
            (long long)att, (long long)n, cuda ? "cuda" : "cpu", (long long)x->b->proto->ops_per_graph,
            (long long)want);
    return 1;
}

/* An external arm's attempts: each graph node must launch the entry its
 * protocol declares for the case, with the declared geometry evaluated
 * for the case on cuda (one call per op on cpu: grid and block 1). */
static void vd_external(vd_ctx *x, const vb_vjob *v, const ev_ext_kernel *ek, ev_sel_backend be)
{
    vb_bundle *b = x->b;
    /* an external arm launches the entry its protocol declares, with
     * the declared geometry evaluated for the case on cuda (one call
     * per op on cpu: grid and block 1) */
    const cJSON *c = vb_case(b, v->case_index), *a;
    const char *cop = ev_jr_str(c, "op"), *cdt = ev_jr_str(c, "dtype");
    const char *want = cop && cdt ? ev_ext_entry_for(ek, cop, cdt) : NULL;
    int64_t wg[3] = {1, 1, 1}, wb[3] = {1, 1, 1}, crows = 0, ccols = 0, cstride = 0;
    ev_err gerr = {{0}};
    /* as the worker: a kernel that declares no geometry (no cuda
     * source: its jobs are skips) has none to evaluate */
    if (be == EV_SEL_CUDA && want && ek->grid[0] && !ev_jr_i64(c, "rows", &crows) &&
        !ev_jr_i64(c, "cols", &ccols) && !ev_jr_i64(c, "stride", &cstride) && crows > 0 &&
        ev_ext_geometry(ek, crows, ccols, cstride, &wg[0], &wb[0], &gerr)) {
        vr_fail(x->r, VR_REDERIVE, VV, "job %s: %s", v->key, gerr.msg);
        return;
    }
    cJSON_ArrayForEach(a, v->attempts)
    {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(a, "graph_nodes"), *nd;
        int64_t att = 0, i = 0;
        ev_jr_i64(a, "attempt", &att);
        if (vd_node_count(x, v, a, nodes, be == EV_SEL_CUDA))
            continue;
        cJSON_ArrayForEach(nd, nodes)
        {
            const char *fn = ev_jr_str(nd, "function");
            int64_t g[3], bl[3];
            char have[160], wtxt[160];
            if (fn && vd_triple(nd, "grid", g) == 0 && vd_triple(nd, "block", bl) == 0 && want &&
                !strcmp(fn, want) && !memcmp(g, wg, sizeof g) && !memcmp(bl, wb, sizeof bl)) {
                i++;
                continue;
            }
            if (!fn || vd_triple(nd, "grid", g) || vd_triple(nd, "block", bl)) {
                vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: graph node %lld is malformed", v->key,
                        (long long)att, (long long)i);
                break;
            }
            vd_launch_text(have, sizeof have, fn, g, bl);
            vd_launch_text(wtxt, sizeof wtxt, want ? want : "no entry", wg, wb);
            vr_fail(x->r, VR_REDERIVE, VV,
                    "job %s attempt %lld: graph node %lld launches %s, but the protocol declares %s for "
                    "%s/%s",
                    v->key, (long long)att, (long long)i, have, wtxt, cop ? cop : "?", cdt ? cdt : "?");
            break; /* one per attempt: the rest of its nodes say the same */
        }
    }
}

/* An attempt's graph nodes against the selector's plan: each must launch
 * plan's entry, grid and block; the first that does not fails, with the
 * model's predictions when modelled (an auto arm with a fit; is_auto
 * without one: the default kept).  Counts the nodes read in *n_nodes.
 * Returns 1 when a node failed, else 0. */
static int vd_nodes_planned(vd_ctx *x, const vb_vjob *v, int64_t att, const cJSON *nodes,
                            const ev_launch_plan *plan, int modelled, int is_auto, const ev_decision *dec,
                            int64_t th, double thr, size_t *n_nodes)
{
    const cJSON *nd;
    cJSON_ArrayForEach(nd, nodes)
    {
        int64_t g[3], bl[3], idx = -1;
        const char *fn = ev_jr_str(nd, "function");
        (*n_nodes)++;
        ev_jr_i64(nd, "node_index", &idx);
        if (!fn || vd_triple(nd, "grid", g) || vd_triple(nd, "block", bl)) {
            vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: graph node %lld is malformed", v->key,
                    (long long)att, (long long)idx);
            return 0;
        }
        if (!strcmp(fn, plan->entry) && !memcmp(g, plan->grid, sizeof g) &&
            !memcmp(bl, plan->block, sizeof bl))
            continue;
        char have[160], want[160], why[224] = "";
        vd_launch_text(have, sizeof have, fn, g, bl);
        vd_launch_text(want, sizeof want, plan->entry, plan->grid, plan->block);
        if (modelled)
            snprintf(why, sizeof why,
                     " (the model selects %s: predicted default %.6g, rows1 %.6g, rows2 %.6g, rows4 "
                     "%.6g, short %.6g, split %.6g us; S = %lld, threshold %g)",
                     ev_sched_name(dec->selected), dec->predicted[EV_SCHED_DEFAULT],
                     dec->predicted[EV_SCHED_ROWS1], dec->predicted[EV_SCHED_ROWS2],
                     dec->predicted[EV_SCHED_ROWS4], dec->predicted[EV_SCHED_SHORT],
                     dec->predicted[EV_SCHED_SPLIT], (long long)th, thr);
        else if (is_auto)
            snprintf(why, sizeof why, " (model.json has no fit: the default is kept)");
        vr_fail(x->r, VR_REDERIVE, VV,
                "job %s attempt %lld: graph node %lld launches %s, but the selector plans %s%s", v->key,
                (long long)att, (long long)idx, have, want, why);
        return 1; /* one per attempt: the rest of its nodes say the same */
    }
    return 0;
}

/* The launch rule the bundle's code plans by: the one its sources/ copy of
 * EV_LAUNCH_RULE_SOURCE declares (ev_launch_rule_declared), 1 for a
 * bundle without that member.  Returns -1 (a failure recorded) where the
 * line is malformed or names a rule this verifier does not know. */
static int vd_launch_rule(vd_ctx *x)
{
    const vb_member *m = vb_find(x->b, "sources/" EV_LAUNCH_RULE_SOURCE);
    int rule = m ? ev_launch_rule_declared((const char *)m->data, m->len) : 1;
    if (rule < 1)
        vr_fail(x->r, VR_REDERIVE, "sources/" EV_LAUNCH_RULE_SOURCE,
                "its EV_LAUNCH_RULE line is not one #define of a positive number: no selector check");
    else if (rule > EV_LAUNCH_RULE)
        vr_fail(
            x->r, VR_REDERIVE, "sources/" EV_LAUNCH_RULE_SOURCE,
            "the bundle's code declares launch rule %d; this verifier knows rules 1 to %d: verify it with "
            "the verify-bundle of that code (or newer)",
            rule, EV_LAUNCH_RULE);
    return rule < 1 || rule > EV_LAUNCH_RULE ? -1 : rule;
}

/*
 * The selector (kernels/selector.h) against every graph receipt: for each
 * attempt of an auto job (and of every other policy-phase job), the plan
 * ev_selector_select makes from model.json's
 * coefficients and threshold and the attempt's recorded binding (S = its
 * threads: worker threads on cpu, SMs on cuda); for each attempt of a
 * native-schedule job (default, rows1, rows2, rows4), ev_selector_plan of
 * that schedule.  Every graph node must launch exactly the planned entry,
 * grid and block, planned by the launch rule the bundle's code declares
 * (vd_launch_rule); a completed attempt of a case with R > 0 must have at
 * least one node; the binding's shape must be the case's.
 */
void vd_selector(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const char *backend = ev_jr_str(run, "backend");
    ev_sel_backend be;
    ev_coef coef = {0, 0, 0};
    int have_coef = 0;
    double thr = 0.05;
    size_t n_checked = 0, n_nodes = 0, n_auto = 0, n_bad = 0;
    if (backend && !strcmp(backend, "cpu"))
        be = EV_SEL_CPU;
    else if (backend && !strcmp(backend, "cuda"))
        be = EV_SEL_CUDA;
    else {
        vr_fail(x->r, VR_REDERIVE, VV, "run.backend is neither cpu nor cuda: no selector check");
        return;
    }
    int rule = vd_launch_rule(x);
    if (rule < 0 || vd_model_coef(x, &have_coef, &coef, &thr))
        return;
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        /* The jobs that launch what the selector decides: the auto arm,
         * and any arm the protocol declares as deciding like it (a
         * wrong-schedule fault arm must be caught here, not trusted).
         * Native schedule arms (in main, or in a policy round) launch
         * their own schedule's plan. */
        const ev_proto_fault *ft = b->proto ? ev_protocol_fault(b->proto, v->arm) : NULL;
        int is_auto = ev_is_arm(v->arm, EV_ARM_AUTO) || (ft && ft->kind == EV_FAULT_WRONG_SCHEDULE);
        ev_sched sched = EV_SCHED_DEFAULT;
        const ev_ext_kernel *ek = b->proto ? ev_protocol_kernel(b->proto, v->arm) : NULL;
        if (ek) {
            vd_external(x, v, ek, be);
            continue;
        }
        if (!is_auto && ev_sched_parse(v->arm, &sched))
            continue; /* peers, reference and fault arms: not the selector's */
        const cJSON *c = vb_case(b, v->case_index), *a;
        int64_t B;
        if (!c || ev_jr_i64(c, "default_rows", &B)) {
            vr_fail(x->r, VR_REDERIVE, VV, "job %s: no case with default_rows for the selector", v->key);
            continue;
        }
        n_auto += is_auto;
        cJSON_ArrayForEach(a, v->attempts)
        {
            const cJSON *bind = cJSON_GetObjectItemCaseSensitive(a, "binding");
            const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(a, "graph_nodes");
            const char *aoc = ev_jr_str(a, "outcome"), *bop = ev_jr_str(bind, "op"),
                       *bdt = ev_jr_str(bind, "dtype");
            const char *cop = ev_jr_str(c, "op"), *cdt = ev_jr_str(c, "dtype");
            int64_t att = 0, th = 0, crows = 0, ccols = 0, cstride = 0;
            ev_shape sh;
            ev_launch_plan plan;
            ev_decision dec;
            ev_err err = {{0}};
            ev_status rc;
            ev_jr_i64(a, "attempt", &att);
            if (!cJSON_IsArray(nodes)) {
                vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: graph_nodes is not an array", v->key,
                        (long long)att);
                continue;
            }
            if (cJSON_IsNull(bind) || !bind) {
                if (nodes->child)
                    vr_fail(x->r, VR_REDERIVE, VV,
                            "job %s attempt %lld: graph receipts without a binding to plan them from", v->key,
                            (long long)att);
                else if (aoc && !strcmp(aoc, "completed"))
                    vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: completed without a binding", v->key,
                            (long long)att);
                continue;
            }
            memset(&sh, 0, sizeof sh);
            if (!bop || !bdt || ev_op_parse(bop, &sh.op) || ev_dtype_parse(bdt, &sh.dtype) ||
                ev_jr_i64(bind, "rows", &sh.rows) || ev_jr_i64(bind, "cols", &sh.cols) ||
                ev_jr_i64(bind, "stride", &sh.stride) || ev_jr_i64(bind, "threads", &th)) {
                vr_fail(x->r, VR_REDERIVE, VV,
                        "job %s attempt %lld: binding lacks op, dtype, shape or threads", v->key,
                        (long long)att);
                continue;
            }
            if (!cop || !cdt || strcmp(cop, bop) || strcmp(cdt, bdt) || ev_jr_i64(c, "rows", &crows) ||
                ev_jr_i64(c, "cols", &ccols) || ev_jr_i64(c, "stride", &cstride) || crows != sh.rows ||
                ccols != sh.cols || cstride != sh.stride) {
                vr_fail(x->r, VR_REDERIVE, VV,
                        "job %s attempt %lld: binding %s %s %lldx%lld stride %lld is not its case's shape",
                        v->key, (long long)att, bop, bdt, (long long)sh.rows, (long long)sh.cols,
                        (long long)sh.stride);
                continue;
            }
            memset(&dec, 0, sizeof dec);
            /* the decision (rule-free), then its plan by the bundle's rule */
            rc = is_auto ? ev_selector_select(be, &sh, B, have_coef ? &coef : NULL, th, thr,
                                              b->proto ? b->proto->model_schedules : EV_SCHEDS_DEFAULT, &plan,
                                              &dec, &err)
                         : EV_OK;
            if (!rc)
                rc = ev_selector_plan_rule(rule, be, &sh, is_auto ? dec.selected : sched, B, th, &plan, &err);
            if (rc) {
                vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: the selector cannot plan it: %s", v->key,
                        (long long)att, err.msg);
                continue;
            }
            n_checked++;
            if (!nodes->child && sh.rows > 0 && aoc && !strcmp(aoc, "completed"))
                vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: completed, yet no graph receipt", v->key,
                        (long long)att);
            if (vd_node_count(x, v, a, nodes, be == EV_SEL_CUDA))
                continue;
            n_bad += vd_nodes_planned(x, v, att, nodes, &plan, is_auto && have_coef, is_auto, &dec, th, thr,
                                      &n_nodes);
        }
    }
    if (!n_bad)
        vr_note(x->r, VR_REDERIVE, VV,
                "selector: %zu attempts (%zu auto jobs) planned by kernels/selector.h (launch rule %d) on %s "
                "equal their %zu graph receipts",
                n_checked, n_auto, rule, backend, n_nodes);
}
