/*
 * verify_outputs.c: check 6's outputs, validated again.  Every output the
 * bundle holds (an outputs/ member) is validated once more against the
 * FP64 oracle of its case's input, regenerated from protocol.json's seed
 * (kernels/inputs.h, case key = case index) one row at a time, with the
 * protocol's tolerances, by the function the job used
 * (runner/validate.h, ev_output_check): the verdict, max_abs_err and
 * bound (to the bit) and the mismatch count must be the record's.  A
 * runner, or an editor of the bundle, cannot claim a passed validation
 * for an output that does not pass, nor a failure for one that does.
 *
 *  - the first stage's output is stored; the final stage's is the same
 *    bytes when its output_sha256 is the first's (replay determinism),
 *    and is validated again from them;
 *  - a run of store schema 4 or later also holds the output checks after
 *    the timed samples (db/migrate-4.sql): the rotated sample's output,
 *    validated against the oracle of the input its device record's seed
 *    rewrote, and the second input set's, regenerated from the same seed
 *    (ev_inputs_second_row); see vo_checks;
 *  - a run of store schema 5 or later holds the kept output of one op of
 *    the last replay of every completed sample (db/migrate-5.sql): it is
 *    validated again against the oracle of the input that op read, the
 *    case's input with the plants its variant held in that replay,
 *    regenerated from the device record's seed (kernels/plants.h); see
 *    vo_kept.
 */
#include "verify_derive_int.h"

#include "dtype.h"
#include "inputs.h"
#include "plants.h"
#include "runner/validate.h"

/* The oracle's rows of each case, and its input stream at each row's
 * start, made when first needed. */
typedef struct vo_cases {
    ev_oracle_row **rows;      /* per case, NULL until made */
    ev_inputs_stream **starts; /* per case, NULL until made (vo_starts) */
    ev_shape *shape;
    int *bad; /* 1: the case could not be made (reported once) */
    size_t n;
    size_t made;
} vo_cases;

/* The oracle rows of case ci, or NULL (reported; r->oom on no memory). */
static const ev_oracle_row *vo_rows(vo_cases *c, const ev_protocol *p, size_t ci, ev_vreport *r)
{
    ev_err err = {""};
    ev_status rc;
    if (ci >= c->n || c->bad[ci])
        return NULL;
    if (c->rows[ci])
        return c->rows[ci];
    rc = ev_case_oracle_rows(p, ci, &c->shape[ci], &c->rows[ci], &err);
    if (rc == EV_ENOMEM)
        r->oom = 1;
    else if (rc)
        vr_fail(r, VR_REDERIVE, EV_MEMBER_PROTOCOL, "cases[%zu]: its input cannot be regenerated: %s", ci,
                err.msg);
    if (rc) {
        c->bad[ci] = 1;
        return NULL;
    }
    c->made++;
    return c->rows[ci];
}

/* The input stream of case ci (shape s) at the start of each of its rows:
 * the stream draws a row's cols elements row after row (kernels/inputs.h),
 * so row k alone is regenerated from starts[k].  Made once a case, so
 * that a kept output's planted rows are regenerated alone (vo_kept), not
 * the whole input once an attempt (nine tenths of the H100 flagship's
 * verification, 33 s of it on one core).  NULL when out of memory (r->oom). */
static const ev_inputs_stream *vo_starts(vo_cases *c, const ev_protocol *p, size_t ci, const ev_shape *s,
                                         ev_vreport *r)
{
    ev_inputs_stream *st, z;
    if (c->starts[ci])
        return c->starts[ci];
    st = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *st);
    if (!st) {
        r->oom = 1;
        return NULL;
    }
    ev_inputs_stream_init(&z, (uint64_t)p->seed, (uint64_t)ci);
    for (int64_t k = 0; k < s->rows; k++) {
        st[k] = z;
        ev_inputs_stream_skip_row(s, &z);
    }
    return c->starts[ci] = st;
}

/* The record's numbers against v, validated again; one failure naming
 * both when they differ.  what: "the first output", ... */
static void vo_compare(ev_vreport *r, const char *member, const vb_vjob *j, int64_t att, const char *what,
                       const cJSON *rec, const ev_validation *v)
{
    int passed = -1;
    double mae = NAN, bound = NAN;
    int64_t mism = -1;
    int ok = !ev_jr_bool(rec, "passed", &passed) && !ev_jr_dbl(rec, "max_abs_err", &mae) &&
             !ev_jr_dbl(rec, "bound", &bound) && !ev_jr_i64(rec, "mismatches", &mism);
    ok = ok && passed == v->passed && !memcmp(&mae, &v->max_abs_err, sizeof mae) &&
         !memcmp(&bound, &v->bound, sizeof bound) && mism == v->mismatches;
    if (!ok)
        vr_fail(r, VR_REDERIVE, member,
                "job %s attempt %lld: %s, validated again against the oracle of the input regenerated "
                "from protocol.json's seed, gives %s (max_abs_err %.17g, bound %.17g, %lld mismatches); "
                "validation.json records %s (max_abs_err %.17g, bound %.17g, %lld mismatches)",
                j->key, (long long)att, what, v->passed ? "passed" : "failed", v->max_abs_err, v->bound,
                (long long)v->mismatches,
                passed == 1   ? "passed"
                : passed == 0 ? "failed"
                              : "no verdict",
                mae, bound, (long long)mism);
}

/* The output member a record names with its bytes checked for length
 * against the case's R rows, or NULL (vd_outputs reports a missing or
 * misnamed member). */
static const vb_member *vo_member(vb_bundle *b, ev_vreport *r, const vb_vjob *j, int64_t att,
                                  const cJSON *rec, const ev_shape *s)
{
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(rec, "output_member");
    const vb_member *m = cJSON_IsString(mem) ? vb_find(b, mem->valuestring) : NULL;
    size_t want = (size_t)s->rows * ev_dtype_size(s->dtype);
    if (!m || !ev_member_is_output(m->name))
        return NULL;
    if (m->len != want) {
        vr_fail(r, VR_REDERIVE, m->name,
                "job %s attempt %lld: %zu bytes, but the case's %lld rows of %s are %zu: not this case's "
                "output",
                j->key, (long long)att, m->len, (long long)s->rows, ev_dtype_name(s->dtype), want);
        return NULL;
    }
    return m;
}

/* The (set, after) pairs a completed attempt's checks must be, from its
 * device record: the rotation's sample for both sets, the last for set 1
 * (set 0's last is the final validation).  OUT: want[*n] (at most 3). */
static void vo_wanted(const cJSON *dev, int64_t want[3][2], size_t *n)
{
    const cJSON *rot = cJSON_GetObjectItemCaseSensitive(dev, "rotation");
    int64_t before = -1, sets = 1;
    *n = 0;
    if (cJSON_IsObject(rot) && ev_jr_i64(rot, "before", &before))
        before = -1;
    if (ev_jr_i64(dev, "input_sets", &sets))
        sets = 1;
    if (before >= 0) {
        want[*n][0] = 0;
        want[(*n)++][1] = before;
        if (sets == 2) {
            want[*n][0] = 1;
            want[(*n)++][1] = before;
        }
    }
    if (sets == 2) {
        want[*n][0] = 1;
        want[(*n)++][1] = -1;
    }
}

/* The oracle rows of attempt a's input set `set` after hot sample `after`,
 * regenerated from its device record's seed: set 0 is the case's input
 * with the rotation's rows rewritten (ev_inputs_new_row, seed + k, in
 * order: a row drawn twice holds its last values), set 1 the second input
 * set (ev_inputs_second_row).  OUT: *out (malloc'd, R rows).  Returns 0,
 * 1 when the record names no seed (nothing to regenerate), -1 when out of
 * memory. */
static int vo_check_rows(const ev_protocol *p, const ev_shape *s, const ev_oracle_row *case_rows,
                         const cJSON *dev, int64_t set, ev_oracle_row **out)
{
    const cJSON *rot = cJSON_GetObjectItemCaseSensitive(dev, "rotation");
    const char *hex = cJSON_IsObject(rot) ? ev_jr_str(rot, "seed") : NULL;
    uint64_t seed;
    int64_t before, *rows = NULL;
    size_t n = 0, rb = (size_t)s->cols * ev_dtype_size(s->dtype);
    ev_oracle_row *e;
    unsigned char *row;

    *out = NULL;
    if (!hex)
        return 1;
    seed = strtoull(hex, NULL, 16);
    e = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *e);
    row = malloc(rb ? rb : 1);
    if (set == 0) {
        ev_inputs_rotation(seed, p->samples, s->rows, &before, &n, NULL);
        rows = malloc((n ? n : 1) * sizeof *rows);
    }
    if (!e || !row || (set == 0 && !rows)) {
        free(e);
        free(row);
        free(rows);
        return -1;
    }
    if (set == 0) {
        memcpy(e, case_rows, (size_t)s->rows * sizeof *e);
        ev_inputs_rotation(seed, p->samples, s->rows, &before, &n, rows);
        for (size_t k = 0; k < n; k++) {
            ev_inputs_new_row(s, seed + k, rows[k], row);
            ev_oracle_reduce_row(s->op, s->dtype, row, s->cols, &e[rows[k]]);
        }
    } else {
        for (int64_t r = 0; r < s->rows; r++) {
            ev_inputs_second_row(s, seed, r, row);
            ev_oracle_reduce_row(s->op, s->dtype, row, s->cols, &e[r]);
        }
    }
    free(row);
    free(rows);
    *out = e;
    return 0;
}

/* The member of another check of input set `set` in checks whose
 * output_sha256 is check c's: the bytes c did not keep again; NULL when
 * there is none. */
static const vb_member *vo_kept_by(vb_bundle *b, ev_vreport *r, const vb_vjob *j, int64_t att,
                                   const cJSON *checks, const cJSON *c, int64_t set, const ev_shape *s)
{
    const char *sha = ev_jr_str(c, "output_sha256");
    const cJSON *o;
    cJSON_ArrayForEach(o, checks)
    {
        int64_t oset;
        const char *osha = ev_jr_str(o, "output_sha256");
        if (o == c || ev_jr_i64(o, "input_set", &oset) || oset != set || !sha || !osha || strcmp(sha, osha))
            continue;
        const vb_member *m = vo_member(b, r, j, att, o, s);
        if (m)
            return m;
    }
    return NULL;
}

/* Attempt a's output checks after timed samples (schema 4): each one's
 * bytes validated again against its regenerated input; a completed
 * attempt holds exactly the checks its device record calls for.
 * Counts what it validated again in *n_checked, what it could not in
 * *n_unseeded. */
static void vo_checks(vd_ctx *x, const vb_vjob *j, int64_t att, const cJSON *a, const ev_shape *s,
                      const ev_oracle_row *case_rows, size_t *n_checked, size_t *n_unseeded)
{
    vb_bundle *b = x->b;
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(a, "sample_checks"), *c;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(a, "device");
    const char *oc = ev_jr_str(a, "outcome");
    ev_oracle_row *rows[2] = {NULL, NULL};
    int64_t want[3][2];
    size_t n_want = 0;
    unsigned seen = 0; /* bit k: want[k] was seen */

    if (!cJSON_IsArray(checks)) {
        vr_fail(x->r, VR_REDERIVE, VV,
                "job %s attempt %lld: no sample_checks array, in a run stored with schema 4 or later", j->key,
                (long long)att);
        return;
    }
    if (!cJSON_IsObject(dev)) { /* no seed to regenerate from: check 5 judges the missing record */
        *n_unseeded += (size_t)cJSON_GetArraySize(checks);
        return;
    }
    vo_wanted(dev, want, &n_want);
    cJSON_ArrayForEach(c, checks)
    {
        int64_t set, after;
        size_t k = 0;
        char when[48];
        if (ev_jr_i64(c, "input_set", &set) || ev_jr_i64(c, "after_sample", &after) || set < 0 || set > 1) {
            vr_fail(x->r, VR_REDERIVE, VV,
                    "job %s attempt %lld: a sample check lacks input_set or after_sample", j->key,
                    (long long)att);
            continue;
        }
        if (after < 0)
            snprintf(when, sizeof when, "the last sample");
        else
            snprintf(when, sizeof when, "hot sample %lld", (long long)after);
        while (k < n_want && !(want[k][0] == set && want[k][1] == after))
            k++;
        if (k == n_want || (seen & (1u << k))) {
            vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: a check of input set %lld after %s, %s",
                    j->key, (long long)att, (long long)set, when,
                    k == n_want ? "which its device record does not call for" : "twice");
            continue;
        }
        seen |= 1u << k;
        const vb_member *m = vo_member(b, x->r, j, att, c, s);
        if (!m && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(c, "output_member")) &&
            !(m = vo_kept_by(b, x->r, j, att, checks, c, set, s))) {
            vr_fail(x->r, VR_REDERIVE, VV,
                    "job %s attempt %lld: the check of input set %lld after %s keeps no bytes, and no other "
                    "check of the set has its output_sha256",
                    j->key, (long long)att, (long long)set, when);
            continue;
        }
        if (!m)
            continue;
        if (!rows[set]) {
            int rc = vo_check_rows(b->proto, s, case_rows, dev, set, &rows[set]);
            if (rc < 0) {
                x->r->oom = 1;
                break;
            }
            if (rc > 0) {
                (*n_unseeded)++;
                continue;
            }
        }
        char what[96];
        ev_validation v;
        snprintf(what, sizeof what, "the output of input set %lld after %s", (long long)set, when);
        ev_output_check(b->proto, s, NULL, rows[set], m->data, &v);
        vo_compare(x->r, m->name, j, att, what, c, &v);
        (*n_checked)++;
    }
    size_t n_seen = 0;
    for (size_t k = 0; k < n_want; k++)
        n_seen += (seen >> k) & 1u;
    if (oc && !strcmp(oc, "completed") && n_seen != n_want)
        vr_fail(x->r, VR_REDERIVE, VV,
                "job %s attempt %lld (completed): %zu of the %zu output checks its device record calls for "
                "(the rotated sample's output, the second input set's): a check was left out",
                j->key, (long long)att, n_seen, n_want);
    free(rows[0]);
    free(rows[1]);
}

/*
 * Attempt a's kept output (schema 5): its op must be the one the seed
 * keeps and its replay the last hot sample's last; its bytes, validated
 * again against the oracle of the input that op read in that replay (the
 * case's input regenerated row by row, each row its variant held planted
 * in that epoch reduced with its plant: ev_plant_put_row, the worker's own
 * rule), must give the record's numbers.  Counts it in *n_kept.
 */
static void vo_kept(vd_ctx *x, const vb_vjob *j, int64_t att, const cJSON *a, const ev_shape *s,
                    const ev_oracle_row *case_rows, const ev_inputs_stream *starts, size_t *n_kept)
{
    vb_bundle *b = x->b;
    const ev_protocol *p = b->proto;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(a, "op_kept"), *o;
    const vb_member *m;
    ev_plant_cfg c;
    ev_plant_row *prow = NULL;
    ev_oracle_row *rows = NULL;
    unsigned char *row = NULL;
    int64_t op, replay, last = -1, e, jv;
    ev_err err = {""};
    char why[512];

    if (!cJSON_IsObject(k) || vp_config(b, j, a, &c, why, sizeof why) != 1)
        return; /* check 5 says why, where it matters */
    if (ev_jr_i64(k, "op", &op) || ev_jr_i64(k, "replay", &replay)) {
        vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: the kept output lacks op or replay", j->key,
                (long long)att);
        return;
    }
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(a, "op_checks"))
    {
        int64_t rend;
        const char *t = ev_jr_str(o, "timing");
        if (t && !strcmp(t, "hot") && !ev_jr_i64(o, "replay_end", &rend) && rend > last)
            last = rend;
    }
    if (op != c.kept_op || replay != last) {
        vr_fail(
            x->r, VR_REDERIVE, VV,
            "job %s attempt %lld: the kept output is op %lld of replay %lld, where the seed keeps op %lld of "
            "the last replay (%lld)",
            j->key, (long long)att, (long long)op, (long long)replay, (long long)c.kept_op, (long long)last);
        return;
    }
    if (!(m = vo_member(b, x->r, j, att, k, s)))
        return;
    prow = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *prow);
    rows = malloc((s->rows > 0 ? (size_t)s->rows : 1) * sizeof *rows);
    row = malloc((size_t)s->cols * ev_dtype_size(s->dtype));
    if (!prow || !rows || !row) {
        x->r->oom = 1;
        goto out;
    }
    if (ev_plant_rows(s, p->sum_depth, p->sum_bound_factor, c.sites, case_rows, prow, &err)) {
        vr_fail(x->r, VR_REDERIVE, VV, "job %s attempt %lld: its case cannot be planted: %s", j->key,
                (long long)att, err.msg);
        goto out;
    }
    if (s->rows > 0)
        memcpy(rows, case_rows, (size_t)s->rows * sizeof *rows);
    e = op / c.variants;
    jv = op % c.variants;
    /* a row holds a plant only where one of its stratum's plant's sites
     * is (kernels/plants.h): each planted row alone, regenerated from its
     * start, planted and reduced again (a row visited twice gives the same) */
    for (int64_t pk = 0; pk < c.m; pk++) {
        ev_plant pl;
        if (!ev_plant_make(&c, prow, (uint64_t)replay, e, jv, pk, NULL, &pl))
            continue;
        for (int32_t i = 0; i < pl.n; i++) {
            ev_inputs_stream z;
            int64_t r = pl.row[i];
            if (pl.own[i] != 1 || r < 0 || r >= s->rows)
                continue;
            z = starts[r];
            ev_inputs_stream_row(s, &z, row);
            if (ev_plant_put_row(&c, &pl, r, row))
                ev_oracle_reduce_row(s->op, s->dtype, row, s->cols, &rows[r]);
        }
    }
    {
        char what[96];
        ev_validation v;
        snprintf(what, sizeof what, "the kept output (op %lld of replay %lld, on its planted input)",
                 (long long)op, (long long)replay);
        ev_output_check(p, s, NULL, rows, m->data, &v);
        vo_compare(x->r, m->name, j, att, what, k, &v);
        (*n_kept)++;
    }
out:
    free(prow);
    free(rows);
    free(row);
}

int vb_regen_allowed(const vb_bundle *b, ev_vreport *r, int c, double elements, const char *what)
{
    if (elements <= b->regen_limit)
        return 1;
    vr_fail(r, c, c == VR_PROTOCOL ? EV_MEMBER_PROTOCOL : EV_MEMBER_OUTPUTS,
            "%s would regenerate up to %.4g input elements from the seeds, more than this verifier's limit "
            "of %.4g: not done (pass verify-bundle --regenerate-limit N to allow it)",
            what, elements, b->regen_limit);
    return 0;
}

/* The input elements vd_revalidate regenerates: each case with a stored
 * output once, and each attempt with sample checks its second set (and
 * the rotated rows) once more.  -1 when out of memory. */
static double vo_demand(const vb_bundle *b, int64_t schema)
{
    const ev_protocol *p = b->proto;
    unsigned char *seen = calloc(p->n_cases ? p->n_cases : 1, 1);
    double n = 0;
    if (!seen)
        return -1;
    for (size_t k = 0; k < b->n_vjobs; k++) {
        const vb_vjob *j = &b->vjobs[k];
        const cJSON *a;
        if (j->case_index < 0 || (size_t)j->case_index >= p->n_cases)
            continue;
        const ev_proto_case *pc = &p->cases[j->case_index];
        double rn = (double)pc->rows * (double)pc->cols;
        cJSON_ArrayForEach(a, j->attempts)
        {
            const cJSON *checks = cJSON_GetObjectItemCaseSensitive(a, "sample_checks");
            if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "validations")))
                continue;
            if (!seen[j->case_index]) {
                seen[j->case_index] = 1;
                n += rn;
            }
            if (schema >= 4 && cJSON_GetArraySize(checks) > 0)
                n += 2 * rn; /* the second set, and at most as many rotated rows again */
            if (schema >= 5 && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(a, "op_kept")))
                n += rn; /* the kept output's planted input */
        }
    }
    free(seen);
    return n;
}

void vd_revalidate(vd_ctx *x)
{
    vb_bundle *b = x->b;
    const ev_protocol *p = b->proto;
    vo_cases c;
    size_t n_checked = 0, n_after = 0, n_unseeded = 0, n_kept = 0;
    int64_t schema = 0;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(b->validation, "run");

    if (!p || !b->vjobs)
        return; /* checks 3 and 4 said why */
    if (ev_jr_i64(run, "store_schema", &schema))
        schema = 0; /* before schema 3's device records: no sample checks either */
    double demand = vo_demand(b, schema);
    if (demand < 0) {
        x->r->oom = 1;
        return;
    }
    if (!vb_regen_allowed(b, x->r, VR_REDERIVE, demand, "validating the outputs again"))
        return;
    memset(&c, 0, sizeof c);
    c.n = p->n_cases;
    c.rows = calloc(c.n ? c.n : 1, sizeof *c.rows);
    c.starts = calloc(c.n ? c.n : 1, sizeof *c.starts);
    c.shape = calloc(c.n ? c.n : 1, sizeof *c.shape);
    c.bad = calloc(c.n ? c.n : 1, sizeof *c.bad);
    if (!c.rows || !c.starts || !c.shape || !c.bad) {
        x->r->oom = 1;
        goto out;
    }
    for (size_t k = 0; k < b->n_vjobs && !x->r->oom; k++) {
        const vb_vjob *j = &b->vjobs[k];
        const cJSON *a;
        if (j->case_index < 0 || (size_t)j->case_index >= c.n)
            continue;
        cJSON_ArrayForEach(a, j->attempts)
        {
            const cJSON *vals = cJSON_GetObjectItemCaseSensitive(a, "validations"), *val, *first = NULL;
            const vb_member *m = NULL;
            const ev_oracle_row *rows;
            const ev_shape *s;
            int64_t att;
            if (ev_jr_i64(a, "attempt", &att) || !cJSON_GetArraySize(vals))
                continue;
            if (!(rows = vo_rows(&c, p, (size_t)j->case_index, x->r)))
                break;
            s = &c.shape[j->case_index];
            if (schema >= 4)
                vo_checks(x, j, att, a, s, rows, &n_after, &n_unseeded);
            if (schema >= 5) {
                const ev_inputs_stream *starts = vo_starts(&c, p, (size_t)j->case_index, s, x->r);
                if (!starts)
                    break;
                vo_kept(x, j, att, a, s, rows, starts, &n_kept);
            }
            cJSON_ArrayForEach(val, vals)
            {
                const char *st = ev_jr_str(val, "stage");
                if (st && !strcmp(st, "first"))
                    first = val;
            }
            if (!first || !(m = vo_member(b, x->r, j, att, first, s)))
                continue;
            ev_validation v;
            ev_output_check(p, s, NULL, rows, m->data, &v);
            vo_compare(x->r, m->name, j, att, "the first output", first, &v);
            n_checked++;
            /* the final stage's output is the first's bytes when its hash is */
            cJSON_ArrayForEach(val, vals)
            {
                const char *st = ev_jr_str(val, "stage"), *sha = ev_jr_str(val, "output_sha256");
                if (st && !strcmp(st, "final") && sha && !strcmp(sha, m->sha_hex))
                    vo_compare(x->r, m->name, j, att, "the final output (the first's bytes)", val, &v);
            }
        }
    }
    if (n_checked)
        vr_note(x->r, VR_REDERIVE, EV_MEMBER_OUTPUTS,
                "%zu outputs of %zu cases validated again against the FP64 oracle of inputs regenerated from "
                "protocol.json's seed: every verdict, max_abs_err, bound and mismatch count is the record's",
                n_checked, c.made);
    if (n_after)
        vr_note(x->r, VR_REDERIVE, EV_MEMBER_OUTPUTS,
                "%zu output checks after timed samples validated again against the inputs their attempts' "
                "secret seeds made (the rotated rows, the second input set), regenerated from the device "
                "records: each is the record's",
                n_after);
    if (n_kept)
        vr_note(
            x->r, VR_REDERIVE, EV_MEMBER_OUTPUTS,
            "%zu kept outputs (one op of the last replay of each attempt) validated again against the input "
            "that op read, the case's input with the plants of its attempt's secret seed, regenerated from "
            "the device records: each is the record's",
            n_kept);
    if (n_unseeded)
        vr_note(x->r, VR_REDERIVE, EV_MEMBER_OUTPUTS,
                "%zu output checks not validated again: their attempts have no device record, or one that "
                "names no seed (fewer than two hot samples: no rotation)",
                n_unseeded);
out:
    for (size_t i = 0; c.rows && i < c.n; i++)
        free(c.rows[i]);
    for (size_t i = 0; c.starts && i < c.n; i++)
        free(c.starts[i]);
    free(c.rows);
    free(c.starts);
    free(c.shape);
    free(c.bad);
}
