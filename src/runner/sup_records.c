/*
 * sup_records.c: committing a worker's records to the store, batch by
 * batch, and the sample rules applied to an attempt (sup_int.h).
 */
#include "sup_int.h"

#include "dtype.h"
#include "samples.h"
#include "stats.h"

/* Puts back the state *saved held before a batch whose rows were rolled
 * back, keeping the rule arrays' current storage (their counts go back). */
static void att_restore(att *a, const att *saved)
{
    att now = *a;
    *a = *saved;
    a->steps = now.steps;
    a->hot = now.hot;
    a->cold = now.cold;
    a->cap_steps = now.cap_steps;
    a->cap_hot = now.cap_hot;
    a->cap_cold = now.cap_cold;
}

/* Appends x to the array *v of *n (capacity *cap).  Returns 0, or -1 when
 * out of memory. */
static int grow(void **v, size_t *n, size_t *cap, size_t size, const void *x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        void *p = realloc(*v, c * size);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    memcpy((char *)*v + *n * size, x, size);
    (*n)++;
    return 0;
}

/* Releases what an attempt's rule facts hold. */
void sup_att_free(att *a)
{
    free(a->steps);
    free(a->hot);
    free(a->cold);
    cJSON_Delete(a->hello_rec);
    a->steps = NULL;
    a->hot = a->cold = NULL;
    a->hello_rec = NULL;
}

/* The hot median of attempt a's samples in us per op, or NaN. */
static double att_hot_median(const att *a)
{
    double *v = a->rules.n_hot ? malloc(a->rules.n_hot * sizeof *v) : NULL, med = NAN;
    size_t m = 0;
    for (size_t i = 0; v && i < a->rules.n_hot; i++)
        if (ev_per_op_us(a->hot[i].elapsed_ms, a->hot[i].replays, a->hot[i].ops_per_graph, &v[m]) == EV_OK)
            m++;
    if (!(v && m == a->rules.n_hot && ev_median(v, m, &med) == EV_OK))
        med = NAN;
    free(v);
    return med;
}

/* 1 when j is one of the jobs whose medians are the run's ceilings: the
 * main phase's own ceiling or ceiling-l2 job (this shard's copy), not a
 * retry (sample_rules.h, physical plausibility). */
static int ceiling_job(const jstate *j)
{
    return j->pj.case_index < 0 && j->pj.phase == EV_PHASE_MAIN && j->pj.retry_of < 0 &&
           (ev_is_arm(j->pj.arm, EV_ARM_CEILING) || ev_is_arm(j->pj.arm, EV_ARM_CEILING_L2));
}

/* After job j's attempt a ended with j->outcome: a completed ceiling job
 * gives the run its ceiling (bytes per us: its in_span over its hot
 * median), which bounds every job after it.  Call before a is freed. */
void sup_ceiling_seen(sup *s, const jstate *j, const att *a)
{
    if (!ceiling_job(j) || !j->has_outcome || j->outcome != EV_OUT_COMPLETED)
        return;
    double bpus = ev_rule_ceiling_bpus(a->in_span, att_hot_median(a));
    if (ev_is_arm(j->pj.arm, EV_ARM_CEILING))
        s->ceil_mem_bpus = bpus;
    else
        s->ceil_l2_bpus = bpus;
}

/*
 * Applies the sample rules (sample_rules.h) to an attempt of job j whose
 * process otherwise completed (exit 0, every record well-formed, end seen,
 * not skipped, every validation passed): a breach makes it
 * failed-protocol, the breach its protocol_error; its samples stay as
 * committed.  The verifier applies the same function to the bundle.  So
 * does an attempt without its device record (every worker writes one
 * after the samples).  The plausibility rule bounds it by the run's
 * ceilings known now (measured first: plan.h).
 */
void sup_apply_rules(const sup *s, const jstate *j, att *a)
{
    char why[sizeof a->protocol_error];
    const char *arm = j->pj.arm;
    a->rules.arm = arm;
    a->rules.completed = 1;
    a->rules.steps = a->steps;
    a->rules.hot = a->hot;
    a->rules.cold = a->cold;
    a->rules.schema = EV_STORE_VERSION;
    memset(&a->rules.bound, 0, sizeof a->rules.bound);
    if (j->pj.case_index >= 0 && (size_t)j->pj.case_index < s->proto.n_cases) {
        const ev_proto_case *pc = &s->proto.cases[j->pj.case_index];
        ev_dtype dt;
        a->rules.bound.bytes =
            ev_dtype_parse(pc->dtype, &dt) ? 0 : ev_rule_case_bytes(pc->rows, pc->cols, ev_dtype_size(dt));
        a->rules.bound.working_bytes =
            ev_rule_working_bytes(a->variants, a->in_span, a->out_span, s->proto.ops_per_graph);
        a->rules.bound.cache_bytes = a->rules.has_flush ? a->rules.cache_bytes : 0;
        a->rules.bound.memory_bpus = s->ceil_mem_bpus;
        a->rules.bound.l2_bpus = s->ceil_l2_bpus;
    }
    if (ev_rules_reason(&s->proto, s->o->backend, &a->rules, why, sizeof why) > 0)
        sup_proto_err(a, "%s", why);
    if (!a->has_device)
        sup_proto_err(a, "completed without a device record (docs/runner.md, \"Worker records\")");
    {
        /* every validated job checks every op of every replay (kernels/plants.h) */
        ev_arm_kind kind;
        int64_t rpp;
        int64_t want = (int64_t)(a->rules.n_hot + a->rules.n_cold);
        if (!ev_arm_classify(&s->proto, arm, &kind, &rpp) && kind != EV_ARM_FLOOR && kind != EV_ARM_CEILING &&
            kind != EV_ARM_CEILING_L2 && (a->n_opchecks != want || !a->has_kept))
            sup_proto_err(a,
                          "completed with %lld op checks for its %lld samples%s (every sample's replays are "
                          "checked: docs/defenses.md, \"Every op earns its time\")",
                          (long long)a->n_opchecks, (long long)want,
                          a->has_kept ? "" : " and no kept output");
    }
}

/* Records the first protocol error of an attempt. */
void sup_proto_err(att *a, const char *fmt, ...)
{
    va_list ap;
    if (!a->records_ok)
        return;
    a->records_ok = 0;
    va_start(ap, fmt);
    vsnprintf(a->protocol_error, sizeof a->protocol_error, fmt, ap);
    va_end(ap);
}

/* ---- where each data record goes (its fields: record.h, ev_rec_decode) ---- */

/* Stores a decoded row of attempt a and keeps what the sample rules need
 * of it.  Returns the store's status (a constraint refusal becomes the
 * attempt's protocol error), or EV_OK with e set for a record that is
 * malformed beyond its fields. */
typedef ev_status (*put_fn)(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e);

static ev_status put_binding(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    (void)r;
    ev_status rc = ev_store_add_binding(s->st, a->attempt_id, &x->binding, e);
    if (rc == EV_OK) {
        a->in_span = x->binding.in_span;
        a->out_span = x->binding.out_span;
    }
    return rc;
}

/* Decodes record r's output_hex (the output's bytes) into *bytes
 * (malloc'd) and *len; *bytes NULL when it has none.  EV_ENOMEM, or
 * EV_OK with e set for a malformed one. */
static ev_status output_hex(const cJSON *r, unsigned char **bytes, size_t *len, ev_err *e)
{
    const cJSON *oh = cJSON_GetObjectItemCaseSensitive(r, "output_hex");
    size_t n;
    *bytes = NULL;
    *len = 0;
    if (!oh)
        return EV_OK;
    if (!cJSON_IsString(oh) || (n = strlen(oh->valuestring)) % 2) {
        ev_err_set(e, EV_EFORMAT, "output_hex: must be an even-length hex string");
        return EV_OK;
    }
    if (!(*bytes = malloc(n / 2 + 1)))
        return ev_err_set(NULL, EV_ENOMEM, "out of memory");
    if (ev_hex_decode(oh->valuestring, n / 2, *bytes)) {
        free(*bytes);
        *bytes = NULL;
        ev_err_set(e, EV_EFORMAT, "output_hex: not hex");
        return EV_OK;
    }
    *len = n / 2;
    return EV_OK;
}

/* The optional output_hex (the output's bytes) goes with the row. */
static ev_status put_validation(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    ev_validation_row *v = &x->validation;
    unsigned char *bytes = NULL;
    size_t len = 0;
    ev_status rc = output_hex(r, &bytes, &len, e);
    if (rc || e->msg[0])
        return rc;
    v->output = bytes;
    v->output_len = len;
    if (!v->passed)
        a->validation_failed = 1;
    rc = ev_store_add_validation(s->st, a->attempt_id, v, e);
    free(bytes);
    return rc;
}

/* An output check after a timed sample, with its output_hex, or without
 * it where an earlier check of the set kept the same bytes (the verifier
 * holds it to that). */
static ev_status put_check(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    ev_sample_check_row *c = &x->check;
    unsigned char *bytes = NULL;
    size_t len = 0;
    ev_status rc = output_hex(r, &bytes, &len, e);
    if (rc || e->msg[0])
        return rc;
    c->output = bytes;
    c->output_len = len;
    if (!c->passed)
        a->validation_failed = 1;
    rc = ev_store_add_sample_check(s->st, a->attempt_id, c, e);
    free(bytes);
    return rc;
}

/* A sample's check tag: a failed one fails the attempt's validation; one
 * whose replay_end is not the replays its sample's records give is the
 * attempt's protocol error (ev_rule_replay_end: a harness that ran more
 * replays than it recorded). */
static ev_status put_opcheck(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    const ev_op_check_row *o = &x->opcheck;
    int hot = !strcmp(o->timing, "hot");
    size_t n = hot ? a->rules.n_hot : a->rules.n_cold;
    (void)r;
    if (o->sample_index < 0 || (size_t)o->sample_index >= n) {
        ev_err_set(e, EV_EFORMAT, "an op check of %s sample %lld, before that sample's record", o->timing,
                   (long long)o->sample_index);
        return EV_OK;
    }
    {
        int64_t *reps = malloc((size_t)(o->sample_index + 1) * sizeof *reps), want;
        if (!reps)
            return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        for (int64_t i = 0; hot && i <= o->sample_index; i++)
            reps[i] = a->hot[i].replays;
        /* the re-calibrations so far: every step recorded after the warm-up
         * (the device record that lists them comes last) */
        ev_rule_attempt sofar;
        memset(&sofar, 0, sizeof sofar);
        sofar.steps = a->steps;
        sofar.n_steps = a->rules.n_steps;
        sofar.n_recal = a->rules.n_steps > a->steps_at_warmup;
        sofar.recal_after[0] = -1;
        sofar.recal_first[0] = (int64_t)a->steps_at_warmup;
        want = ev_rule_replay_end(hot, o->sample_index, (int64_t)a->rules.n_cold, a->warmup_replays, reps,
                                  hot ? ev_rule_recal_replays(&sofar, o->sample_index) : 0);
        free(reps);
        if (want != o->replay_end)
            sup_proto_err(
                a,
                "the op check of %s sample %lld says %lld replays ran, its samples' records give %lld "
                "(docs/defenses.md, \"Every op earns its time\")",
                o->timing, (long long)o->sample_index, (long long)o->replay_end, (long long)want);
    }
    if (!o->passed)
        a->validation_failed = 1;
    ev_status rc = ev_store_add_op_check(s->st, a->attempt_id, &x->opcheck, e);
    if (rc == EV_OK)
        a->n_opchecks++;
    return rc;
}

/* The kept output, with its output_hex (required). */
static ev_status put_opkept(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    ev_op_kept_row *k = &x->opkept;
    unsigned char *bytes = NULL;
    size_t len = 0;
    ev_status rc = output_hex(r, &bytes, &len, e);
    if (rc || e->msg[0])
        return rc;
    if (!bytes) {
        ev_err_set(e, EV_EFORMAT, "output_hex: the kept output's bytes are missing");
        return EV_OK;
    }
    k->output = bytes;
    k->output_len = len;
    if (!k->passed)
        a->validation_failed = 1;
    rc = ev_store_add_op_kept(s->st, a->attempt_id, k, e);
    free(bytes);
    if (rc == EV_OK)
        a->has_kept = 1;
    return rc;
}

/* The first call's compile time and the device's open time are summed
 * for the attempt. */
static ev_status put_cold(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    const ev_rec_cold *c = &x->cold;
    (void)r;
    ev_status rc = ev_store_add_cold_timing(s->st, a->attempt_id, c->name, c->elapsed_ns, e);
    if (!rc && !strcmp(c->name, "compile-first-call"))
        a->compile_ns += c->elapsed_ns;
    else if (!rc && (!strcmp(c->name, "device-open") || !strcmp(c->name, "cuda-init")))
        a->open_ns += c->elapsed_ns;
    return rc;
}

static ev_status put_flush(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    (void)r;
    ev_status rc = ev_store_add_flush(s->st, a->attempt_id, x->flush.flush_bytes, x->flush.cache_bytes, e);
    if (rc == EV_OK) {
        a->rules.has_flush = 1;
        a->rules.flush_bytes = x->flush.flush_bytes;
        a->rules.cache_bytes = x->flush.cache_bytes;
    }
    return rc;
}

/* grid and block are arrays of three integers. */
static ev_status put_node(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    ev_node_row *n = &x->node;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(r, "grid"),
                *b = cJSON_GetObjectItemCaseSensitive(r, "block");
    if (!cJSON_IsArray(g) || !cJSON_IsArray(b) || cJSON_GetArraySize(g) != 3 || cJSON_GetArraySize(b) != 3) {
        ev_err_set(e, EV_EFORMAT, "grid and block: must be arrays of 3 integers");
        return EV_OK;
    }
    for (int d = 0; d < 3; d++) {
        n->grid[d] = (int64_t)cJSON_GetArrayItem(g, d)->valuedouble;
        n->block[d] = (int64_t)cJSON_GetArrayItem(b, d)->valuedouble;
    }
    return ev_store_add_graph_node(s->st, a->attempt_id, n, e);
}

static ev_status put_warmup(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    const ev_rec_warmup *w = &x->warmup;
    (void)r;
    a->warmup = 1;
    a->warmup_replays = w->replays;
    a->steps_at_warmup = a->rules.n_steps;
    ev_status rc = ev_store_add_warmup(s->st, a->attempt_id, w->target_ms, w->elapsed_ms, w->replays, e);
    if (rc == EV_OK) {
        a->rules.has_warmup = 1;
        a->rules.warmup_target_ms = w->target_ms;
        a->rules.warmup_elapsed_ms = w->elapsed_ms;
    }
    return rc;
}

static ev_status put_calibration(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    const ev_rec_calib *c = &x->calib;
    (void)r;
    ev_status rc = ev_store_add_calibration(s->st, a->attempt_id, c->step, c->replays, c->elapsed_ms,
                                            c->chosen, c->target_ms, e);
    if (rc == EV_OK) {
        ev_rule_step st = {c->replays, c->target_ms, c->chosen};
        if (grow((void **)&a->steps, &a->rules.n_steps, &a->cap_steps, sizeof st, &st))
            return ev_err_set(NULL, EV_ENOMEM, "out of memory");
    }
    return rc;
}

static ev_status put_sample(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    const ev_sample_row *y = &x->sample;
    (void)r;
    ev_status rc = ev_store_add_sample(s->st, a->attempt_id, y, e);
    if (rc == EV_OK) {
        ev_rule_sample rs = {y->elapsed_ms, y->replays, y->ops_per_graph, y->sm_clock_mhz, -1, -1, -1};
        int hot = !strcmp(y->timing, "hot");
        if (hot ? grow((void **)&a->hot, &a->rules.n_hot, &a->cap_hot, sizeof rs, &rs)
                : grow((void **)&a->cold, &a->rules.n_cold, &a->cap_cold, sizeof rs, &rs))
            return ev_err_set(NULL, EV_ENOMEM, "out of memory");
    }
    return rc;
}

/* Checked member by member (sample_rules.h: the verifier reads the
 * bundle's copy with the same function), stored printed without its type;
 * its per-sample facts join the hot samples for the rules. */
static ev_status put_device(sup *s, att *a, ev_rec_row *x, const cJSON *r, ev_err *e)
{
    char why[256];
    ev_buf text = EV_BUF_INIT;
    cJSON *copy;
    (void)x;
    if (a->has_device) {
        sup_proto_err(a, "record %lld: second device record", (long long)a->count);
        return EV_OK;
    }
    if (ev_rule_device_read(r, a->hot, a->rules.n_hot, a->cold, a->rules.n_cold, why, sizeof why)) {
        ev_err_set(e, EV_EFORMAT, "%s", why);
        return EV_OK;
    }
    ev_rule_device_attempt(r, &a->rules); /* its re-calibrations and host facts */
    if (!(copy = cJSON_Duplicate(r, 1)))
        return ev_err_set(NULL, EV_ENOMEM, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "type");
    ev_status rc = ev_json_print(copy, 0, &text);
    cJSON_Delete(copy);
    if (rc) {
        ev_buf_free(&text);
        return ev_err_set(NULL, rc, "out of memory");
    }
    if (text.len && text.data[text.len - 1] == '\n')
        text.data[--text.len] = '\0';
    rc = ev_store_add_device(s->st, a->attempt_id, text.data, e);
    ev_buf_free(&text);
    if (rc == EV_OK) {
        a->has_device = 1;
        a->variants = ev_rule_device_variants(r);
    }
    return rc;
}

/* Where each data record's row goes. */
static const put_fn puts_of[EV_REC_COUNT] = {
    [EV_REC_BINDING] = put_binding,
    [EV_REC_VALIDATION] = put_validation,
    [EV_REC_COLD] = put_cold,
    [EV_REC_FLUSH] = put_flush,
    [EV_REC_NODE] = put_node,
    [EV_REC_WARMUP] = put_warmup,
    [EV_REC_CALIBRATION] = put_calibration,
    [EV_REC_SAMPLE] = put_sample,
    [EV_REC_CHECK] = put_check,
    [EV_REC_OPCHECK] = put_opcheck,
    [EV_REC_DEVICE] = put_device,
    [EV_REC_OPKEPT] = put_opkept,
};

/* The control records (hello, skip, end): the attempt's state, nothing
 * stored.  Returns 1 when t is one (handled; a malformed one sets e). */
static int control(att *a, ev_rec_type t, const cJSON *r, ev_err *e)
{
    const char *str;
    int64_t n;
    switch (t) {
    case EV_REC_HELLO:
        if (a->hello) {
            sup_proto_err(a, "record %lld: second hello", (long long)a->count);
            return 1;
        }
        a->hello = 1;
        if (ev_json_get_str(r, "affinity", &str, e))
            return 1;
        snprintf(a->affinity, sizeof a->affinity, "%s", str);
        if (a->probe)
            a->hello_rec = cJSON_Duplicate(r, 1);
        return 1;
    case EV_REC_SKIP:
        if (ev_json_get_str(r, "reason", &str, e))
            return 1;
        a->skipped = 1;
        snprintf(a->skip_reason, sizeof a->skip_reason, "%s", str);
        return 1;
    case EV_REC_END:
        if (ev_json_get_i64(r, "records", &n, e))
            return 1;
        if (n != a->count - 1)
            sup_proto_err(a, "end says %lld records, %lld came before it", (long long)n,
                          (long long)(a->count - 1));
        else
            a->end = 1;
        return 1;
    default:
        return 0;
    }
}

/*
 * Commits one parsed record of attempt a: a control record changes the
 * attempt's state; a data record is decoded by its codec (ev_rec_decode)
 * and put into the store (puts_of[]).  Returns EV_OK, or a store failure that must stop
 * the run (disk full, I/O); a record the store refuses as a constraint
 * violation, or a malformed one, becomes the attempt's protocol error
 * instead.  A probe stores nothing.
 */
ev_status sup_commit(sup *s, att *a, ev_rec_type t, const cJSON *r)
{
    ev_err e = {""};
    ev_status rc = EV_OK;
    ev_rec_row row;

    if (!a->hello && t != EV_REC_HELLO) {
        sup_proto_err(a, "record %lld: '%s' before hello", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    if (a->end) {
        sup_proto_err(a, "record %lld: '%s' after end", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    if (control(a, t, r, &e)) {
        if (e.msg[0])
            sup_proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
        return EV_OK;
    }
    if (a->probe || (unsigned)t >= EV_REC_COUNT || !puts_of[t])
        return EV_OK;
    if (!ev_rec_decode(t, r, &row, &e))
        rc = puts_of[t](s, a, &row, r, &e);
    if (rc == EV_EDB || rc == EV_EFORMAT || rc == EV_EINVAL) {
        sup_proto_err(a, "record %lld (%s) refused by the store: %s", (long long)a->count,
                      ev_rec_type_name(t), e.msg);
        return EV_OK;
    }
    if (rc)
        return rc; /* store failure: stop the run */
    if (e.msg[0])
        sup_proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
    return EV_OK;
}

/* Handles one complete line of the record stream. */
static ev_status on_line(sup *s, att *a, const char *line, size_t n)
{
    cJSON *r = NULL;
    ev_rec_type t;
    ev_err e = {""};
    ev_status rc;

    a->count++;
    if (ev_rec_parse(line, n, &r, &t, &e)) {
        sup_proto_err(a, "record %lld: %s", (long long)a->count, e.msg);
        return EV_OK;
    }
    rc = sup_commit(s, a, t, r);
    cJSON_Delete(r);
    return rc;
}

/* Handles lines [0, n) of buf (complete lines, newline-terminated). */
static ev_status each_line(sup *s, att *a, const char *p, size_t n)
{
    ev_status rc = EV_OK;
    while (n && !rc) {
        const char *nl = memchr(p, '\n', n);
        size_t len = (size_t)(nl - p);
        rc = on_line(s, a, p, len);
        n -= len + 1;
        p = nl + 1;
    }
    return rc;
}

/*
 * Commits every complete line now in buf as one transaction (records that
 * arrive together are committed together: one fsync, not one per record),
 * then removes them from buf.  When the store refuses a row of the group
 * (a constraint: a hostile worker's duplicate), the group was rolled back
 * whole: its lines are committed again one by one, so only the refused
 * record is lost and becomes the attempt's protocol error.  Returns a store
 * failure that must stop the run.
 */
ev_status sup_on_lines(sup *s, att *a, ev_buf *buf)
{
    const char *last = NULL;
    size_t n;
    att saved = *a;
    ev_err e = {""};
    ev_status rc;

    for (const char *p = buf->data; p && (p = memchr(p, '\n', buf->len - (size_t)(p - buf->data))); p++)
        last = p;
    if (!last)
        return EV_OK;
    n = (size_t)(last - buf->data) + 1;
    if (a->probe || memchr(buf->data, '\n', n - 1) == NULL) {
        rc = each_line(s, a, buf->data, n); /* one record: its own transaction */
    } else if ((rc = ev_store_begin(s->st, &e)) == EV_OK) {
        rc = each_line(s, a, buf->data, n);
        if (rc) {
            ev_store_rollback(s->st);
            att_restore(a, &saved);
        } else if ((rc = ev_store_commit(s->st, &e)) != EV_OK &&
                   (rc == EV_EDB || rc == EV_EINVAL || rc == EV_EFORMAT)) {
            att_restore(a, &saved); /* each line again, alone: the refused one becomes the protocol error */
            rc = each_line(s, a, buf->data, n);
        } else if (rc) {
            att_restore(a, &saved);
        }
    }
    if (rc && !a->store_failed) {
        /* The records of this batch are not in the store (rolled back, or
         * the one record refused): the attempt can never count as
         * completed; its process row says interrupted, so --resume runs
         * it again. */
        a->store_failed = 1;
        snprintf(a->store_error, sizeof a->store_error, "store write failed: %s: %.400s", ev_strerror(rc),
                 e.msg);
    }
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
    buf->data[buf->len] = '\0';
    return rc;
}
