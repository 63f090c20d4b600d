/*
 * verify_refit.c: check 6's numbers that have one recipe each, recomputed
 * by that recipe from the bundle's raw members and compared.  The members
 * fill the run's view once (vd_view, model/run_view.h), as the exporter
 * fills its own from the store:
 *
 *  - the model refit: observations of the view (ev_view_observe) as
 *    docs/bundle-format.md ("model.json") says, ev_model_fit, and
 *    ev_fit_to_json's bytes equal model.json (or, failing that, every
 *    double within 1e-12 relative and everything else equal);
 *  - report.html regenerated from the other members equals the member;
 *  - validation.json's figures rebuilt from samples.csv with the
 *    exporter's recipe (src/evidence/figures.h) equal the member.
 */
#include "verify_derive_int.h"

/* Compares two parsed trees; doubles within rel (relative), all else
 * equal.  Writes the first differing path into path.  Returns 1 equal. */
static int vd_tree_equal(const cJSON *a, const cJSON *b, double rel, char *path, size_t cap)
{
    if ((a->type & 0xff) != (b->type & 0xff)) {
        snprintf(path, cap, "%s (type)", a->string ? a->string : "[]");
        return 0;
    }
    if (cJSON_IsNumber(a)) {
        double x = a->valuedouble, y = b->valuedouble;
        if (x == y || fabs(x - y) <= rel * fmax(fabs(x), fabs(y)))
            return 1;
        snprintf(path, cap, "%s: %.17g vs %.17g", a->string ? a->string : "[]", x, y);
        return 0;
    }
    if (cJSON_IsString(a)) {
        if (!strcmp(a->valuestring, b->valuestring))
            return 1;
        snprintf(path, cap, "%s: \"%s\" vs \"%s\"", a->string ? a->string : "[]", a->valuestring,
                 b->valuestring);
        return 0;
    }
    if (cJSON_IsArray(a) || cJSON_IsObject(a)) {
        const cJSON *x = a->child, *y = b->child;
        for (; x && y; x = x->next, y = y->next) {
            if (cJSON_IsObject(a) && strcmp(x->string, y->string)) {
                snprintf(path, cap, "key %s vs %s", x->string, y->string);
                return 0;
            }
            if (!vd_tree_equal(x, y, rel, path, cap))
                return 0;
        }
        if (x || y) {
            snprintf(path, cap, "%s: different lengths", a->string ? a->string : "[]");
            return 0;
        }
    }
    return 1;
}

/* The refit: observations from the recomputed medians, fit, compare. */
void vd_model(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const vb_member *mm = vb_find(b, EV_MEMBER_MODEL);
    ev_view_obs o;
    ev_fit *fit = NULL;
    ev_buf out = EV_BUF_INIT;
    ev_err err = {{0}};
    cJSON *mine = NULL;
    if (!mm || !b->model) {
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_MODEL,
                "cannot be compared: missing or not strict JSON (checks 2, 3)");
        return;
    }
    ev_status rc = ev_view_observe(&x->view, &o, &err);
    if (!rc) {
        ev_fit_input in = ev_view_fit_input(&x->view, &o);
        rc = ev_model_fit(&in, &fit, &err);
    }
    if (rc == EV_ENOMEM) {
        x->r->oom = 1;
        goto out;
    }
    if (rc) {
        /* A failed fit is evidence too: model.json must say so exactly. */
        if (ev_fit_failed_json(rc, err.msg, &out)) {
            x->r->oom = 1;
            goto out;
        }
    } else if ((rc = ev_fit_to_json(fit, &out, &err))) {
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_MODEL, "the refit cannot be written: %s", err.msg);
        goto out;
    }
    if (out.len == mm->len && !memcmp(out.data, mm->data, mm->len)) {
        vr_note(x->r, VR_REDERIVE, EV_MEMBER_MODEL,
                "refit from samples.csv (%zu observations, %zu excluded cases, S = %lld) "
                "equals the member byte for byte",
                o.n_obs, o.n_excluded, (long long)o.sms);
        goto out;
    }
    char path[256] = "";
    if (ev_json_parse(out.data, out.len, 0, &mine, &err) == EV_OK &&
        vd_tree_equal(mine, b->model, 1e-12, path, sizeof path))
        vr_note(x->r, VR_REDERIVE, EV_MEMBER_MODEL,
                "refit equals the member with doubles within 1e-12 relative (bytes differ)");
    else
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_MODEL, "the refit from samples.csv differs (%s)",
                path[0] ? path : "not comparable");
out:
    cJSON_Delete(mine);
    ev_buf_free(&out);
    ev_fit_free(fit);
    ev_view_obs_free(&o);
}

/* report.html regenerated from the other members: from the trees check 3
 * parsed (each member is parsed once), a member that did not parse
 * standing absent. */
void vd_report(vd_ctx *x)
{
    const vb_member *h = vb_find(x->b, EV_MEMBER_REPORT);
    if (!h)
        return; /* check 2 reported it */
    vb_bundle *b = x->b;
    ev_member *ms = calloc(b->n ? b->n : 1, sizeof *ms);
    ev_buf out = EV_BUF_INIT;
    ev_err err = {{0}};
    size_t n = 0;
    if (!ms) {
        x->r->oom = 1;
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        ms[n].name = b->m[i].name;
        ms[n].data = b->m[i].data;
        ms[n].len = b->m[i].len;
        n++;
    }
    ev_status rc = ev_report_html_trees(b->validation, b->model, b->provenance, ms, n, &out, &err);
    if (rc == EV_ENOMEM)
        x->r->oom = 1;
    else if (rc)
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_REPORT, "cannot be regenerated: %s", err.msg);
    else if (out.len != h->len || memcmp(out.data, h->data, h->len)) {
        size_t i = 0;
        while (i < out.len && i < h->len && out.data[i] == (char)h->data[i])
            i++;
        vr_fail(x->r, VR_REDERIVE, EV_MEMBER_REPORT,
                "differs from the report regenerated from the other members "
                "(first difference at byte %zu)",
                i);
    }
    ev_buf_free(&out);
    free(ms);
}

/*
 * validation.json's "figures" (src/evidence/figures.h) rebuilt with the exporter's own
 * ev_figures_build (src/evidence/figures.h: same recipe, same seed, same
 * bits) and compared byte for byte once both are printed canonically.  The
 * input is the run's view (vd_view, docs/bundle-format.md "figures"): per
 * job, in job_id order, the per_op_us of its last attempt's hot and cold
 * rows in samples.csv order, taken from the rows this verifier already
 * parsed strictly (check 3), so samples.csv is read once.
 */
void vd_figures(vd_ctx *x)
{
    vb_bundle *b = x->b;
    int64_t seed = 0;
    cJSON *rebuilt = NULL;
    ev_buf pb = EV_BUF_INIT;
    ev_err err = {{0}};
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(b->validation, "jobs"), *jo;
    if (ev_jr_i64(run, "seed", &seed)) {
        vr_fail(x->r, VR_REDERIVE, VV, "figures: run.seed is not an integer");
        goto out;
    }
    size_t k = 0;
    cJSON_ArrayForEach(jo, jobs)
    {
        int64_t id;
        if (k >= b->n_vjobs || ev_jr_i64(jo, "job_id", &id) || id != b->vjobs[k].job_id) {
            vr_fail(x->r, VR_REDERIVE, VV, "figures: jobs are not in job_id order");
            goto out;
        }
        k++;
    }
    ev_status rc = ev_figures_build(&x->view, &rebuilt, &err);
    if (rc == EV_ENOMEM) {
        x->r->oom = 1;
        goto out;
    }
    if (rc) {
        vr_fail(x->r, VR_REDERIVE, VV, "figures cannot be rebuilt: %s", err.msg);
        goto out;
    }
    const cJSON *held_tree = cJSON_GetObjectItemCaseSensitive(b->validation, "figures");
    if (!cJSON_IsObject(held_tree)) {
        vr_fail(x->r, VR_REDERIVE, VV, "no \"figures\" object");
        goto out;
    }
    if (ev_json_print(rebuilt, 1, &pb)) {
        x->r->oom = 1;
        goto out;
    }
    /* the member's figures compared as they would print (canonical
     * numbers) with the rebuild's text: no copy of the member's tree */
    size_t at = 0;
    if (!ev_json_print_equals(held_tree, pb.data, pb.len, &at)) {
        size_t line = 1, i = 0;
        for (; i < at && i < pb.len; i++)
            line += pb.data[i] == '\n';
        size_t e = i, s0 = i;
        while (e < pb.len && pb.data[e] != '\n' && e - i < 120)
            e++;
        while (s0 > 0 && pb.data[s0 - 1] != '\n' && i - s0 < 120)
            s0--;
        vr_fail(x->r, VR_REDERIVE, VV,
                "figures differ from their rebuild from samples.csv at line %zu of the object: the rebuild "
                "reads '%.*s'",
                line, (int)(e - s0), pb.data + s0);
    } else {
        vr_note(x->r, VR_REDERIVE, VV,
                "figures (bootstrap intervals, Mann-Whitney p-values, tails, across-case summaries) rebuilt "
                "from samples.csv equal the member");
    }
out:
    ev_buf_free(&pb);
    cJSON_Delete(rebuilt);
}

/* Fills view job j from job v's last attempt: its binding, how its graph
 * was made, its rows' values (appended to x->vals at *used) and clocks. */
static void view_attempt(vd_ctx *x, const vb_vjob *v, ev_view_job *j, size_t *used)
{
    const vb_bundle *b = x->b;
    int64_t last = 0;
    int last_null = 1;
    size_t first = 0, n_cold = 0, n_hot = 0;
    if (ev_jr_i64_null(v->j, "last_attempt", &last, &last_null) || last_null)
        return;
    const cJSON *a = vb_attempt(v, last);
    const cJSON *bind = cJSON_GetObjectItemCaseSensitive(a, "binding");
    j->has_binding = cJSON_IsObject(bind);
    if (j->has_binding && ev_jr_i64(bind, "threads", &j->threads))
        j->threads = 0; /* malformed: the binding checks say so */
    ev_view_capture(j, cJSON_GetObjectItemCaseSensitive(a, "device"));
    vb_rows_of(b, v->job_id, last, &first, &n_cold, &n_hot);
    if (n_cold + n_hot > b->samples.n - *used)
        return; /* rows claimed twice: check 4 refused the jobs (unique job_ids), never reached */
    j->cold = x->vals + *used;
    j->n_cold = n_cold;
    for (size_t i = first; i < first + n_cold; i++)
        x->vals[(*used)++] = b->samples.rows[i].per_op_us;
    j->hot = x->vals + *used;
    j->n_hot = n_hot;
    for (size_t i = first + n_cold; i < first + n_cold + n_hot; i++) {
        const vb_sample *s = &b->samples.rows[i];
        x->vals[(*used)++] = s->per_op_us;
        if (s->sm_clock != INT64_MIN)
            ev_view_clock(j, s->sm_clock);
    }
}

/* The run's view from the members check 3 parsed: validation.json's jobs
 * (their last attempts' samples.csv rows: samples.csv is read once), the
 * protocol's cases, schedules and threshold, run.seed (0 when it is not
 * an integer: vd_figures says so). */
int vd_view(vd_ctx *x)
{
    const vb_bundle *b = x->b;
    const ev_protocol *p = b->proto;
    size_t n_cases = p ? p->n_cases : 0, used = 0;
    x->vjobs = calloc(b->n_vjobs + 1, sizeof *x->vjobs);
    x->vcases = calloc(n_cases + 1, sizeof *x->vcases);
    x->vals = calloc(b->samples.n + 1, sizeof *x->vals);
    if (!x->vjobs || !x->vcases || !x->vals)
        return -1;
    for (size_t i = 0; i < n_cases; i++) {
        const ev_proto_case *c = &p->cases[i];
        x->vcases[i] = (ev_view_case){(int64_t)i,
                                      c->op,
                                      c->dtype,
                                      c->rows,
                                      c->cols,
                                      c->default_rows,
                                      ev_is_role(c->role, EV_ROLE_HOLDOUT)};
    }
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *v = &b->vjobs[k];
        ev_view_job *j = &x->vjobs[k];
        j->job_key = v->key;
        j->phase = v->phase;
        j->arm = v->arm;
        j->round = ev_plan_label_round(v->label);
        j->case_index = v->case_index;
        j->retry = v->retry_of != NULL;
        j->outcome = v->outcome;
        view_attempt(x, v, j, &used);
    }
    x->view.cases = x->vcases;
    x->view.n_cases = n_cases;
    x->view.jobs = x->vjobs;
    x->view.n_jobs = b->n_vjobs;
    if (ev_jr_i64(cJSON_GetObjectItemCaseSensitive(b->validation, "run"), "seed", &x->view.seed))
        x->view.seed = 0;
    x->view.scheds = p ? p->model_schedules : EV_SCHEDS_DEFAULT;
    x->view.threshold = p ? p->decision_threshold : 0.05;
    return 0;
}

void vd_view_free(vd_ctx *x)
{
    free(x->vjobs);
    free(x->vcases);
    free(x->vals);
    x->vjobs = NULL;
    x->vcases = NULL;
    x->vals = NULL;
    memset(&x->view, 0, sizeof x->view);
}
