/*
 * fuzz_samples.c: differential libFuzzer target for samples.csv in the
 * verifier (src/verify/verify_samples.c).  Every input is judged three
 * ways, which must agree exactly:
 *   1. the reference: the whole text, every record by the strict reader
 *      and vf_row (vb_fast_rows = 0);
 *   2. the whole text with continuation rows (vb_fast_rows = 1);
 *   3. streamed to the parser thread in pieces (their size from the first
 *      input byte), as zipread would hand them over, then judged by
 *      vb_read_samples (which reads the whole text again when the stream
 *      did not accept it).
 * Agree means: the same check-3 verdict, the same failures word for word
 * and, when accepted, the same table (every row and job).  Any difference
 * aborts (FUZZ_SAMPLES_SHOW=1 in the environment prints both judgements
 * first).  The second input byte's low bit puts samples.csv's header line
 * in front of the rest (so the fuzzer spends its time on records).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_int.h"
#include "zipread.h"

/* One judgement: the report's check-3 part and the table. */
typedef struct judged {
    ev_vreport *r;
    vb_bundle *b;
} judged;

/* A bundle holding only samples.csv = p[0..n). */
static vb_bundle *one_member(const unsigned char *p, size_t n)
{
    vb_bundle *b = calloc(1, sizeof *b);
    if (!b || !(b->m = calloc(1, sizeof *b->m)))
        abort();
    b->m[0].name = "samples.csv";
    b->m[0].data = p;
    b->m[0].len = n;
    b->n = 1;
    return b;
}

/* Judges p[0..n) one way (mode 0, 1, 2 as in the header). */
static judged judge(const unsigned char *p, size_t n, int mode, size_t piece)
{
    judged j;
    if (vr_new("fuzz", &j.r))
        abort();
    vr_use(j.r, VR_FORMATS);
    j.b = one_member(p, n);
    vb_fast_rows = mode > 0;
    if (mode == 2) {
        ev_zip_stream zs;
        if (vb_stream_start(j.b, &zs))
            abort();
        for (size_t at = 0; zs.put && at < n; at += piece)
            zs.put(zs.ctx, p + at, n - at < piece ? n - at : piece, n);
        vb_stream_finish(j.b);
    }
    vb_read_samples(j.b, j.r);
    vb_fast_rows = 1;
    return j;
}

/* Prints one judgement's check-3 part (before an abort). */
static void show(const char *what, const judged *j)
{
    const vr_check *x = &j->r->checks[VR_FORMATS];
    fprintf(stderr, "%s: verdict %d, %zu failures, not run: %s, samples_ok %d, rows %zu\n", what,
            (int)x->verdict, x->n_fails_total, x->not_run_reason ? x->not_run_reason : "-", j->b->samples_ok,
            j->b->samples.n);
    for (size_t i = 0; i < x->n_fails; i++)
        fprintf(stderr, "  %s: %s\n", x->fails[i].member, x->fails[i].text);
}

/* Aborts (after showing both) unless a and b judged alike. */
static void same(const judged *a, const judged *b)
{
    if (getenv("FUZZ_SAMPLES_SHOW")) {
        show("first", a);
        show("second", b);
    }
    const vr_check *x = &a->r->checks[VR_FORMATS], *y = &b->r->checks[VR_FORMATS];
    if (x->verdict != y->verdict || x->n_fails_total != y->n_fails_total || x->n_fails != y->n_fails ||
        (!x->not_run_reason) != (!y->not_run_reason) ||
        (x->not_run_reason && strcmp(x->not_run_reason, y->not_run_reason)) || a->r->oom != b->r->oom)
        abort();
    for (size_t i = 0; i < x->n_fails; i++)
        if (strcmp(x->fails[i].member, y->fails[i].member) || strcmp(x->fails[i].text, y->fails[i].text))
            abort();
    const vb_samples *s = &a->b->samples, *t = &b->b->samples;
    if (a->b->samples_ok != b->b->samples_ok)
        abort();
    if (!a->b->samples_ok)
        return;
    if (s->n != t->n || s->n_jobs != t->n_jobs)
        abort();
    for (size_t i = 0; i < s->n; i++) {
        const vb_sample *u = &s->rows[i], *v = &t->rows[i];
        if (u->run_id != v->run_id || u->job_id != v->job_id || u->attempt != v->attempt ||
            u->sample_index != v->sample_index || u->replays != v->replays ||
            u->ops_per_graph != v->ops_per_graph || u->attempt_id != v->attempt_id ||
            memcmp(&u->elapsed_ms, &v->elapsed_ms, sizeof u->elapsed_ms) ||
            memcmp(&u->per_op_us, &v->per_op_us, sizeof u->per_op_us) || u->sm_clock != v->sm_clock ||
            u->hot != v->hot || u->attempt_outcome != v->attempt_outcome || u->job_row != v->job_row)
            abort();
    }
    for (size_t i = 0; i < s->n_jobs; i++) {
        const vb_sjob *u = &s->jobs[i], *v = &t->jobs[i];
        if (u->job_id != v->job_id || strcmp(u->op, v->op) || strcmp(u->dtype, v->dtype) ||
            strcmp(u->role, v->role) || strcmp(u->arm, v->arm) || strcmp(u->phase, v->phase) ||
            strcmp(u->label, v->label) || strcmp(u->outcome, v->outcome) || strcmp(u->job_key, v->job_key) ||
            u->rows != v->rows || u->cols != v->cols || u->stride != v->stride ||
            u->default_rows != v->default_rows || u->first != v->first || u->count != v->count)
            abort();
    }
}

static void release(judged *j)
{
    j->b->m[0].data = NULL; /* the input's, not ours */
    vb_free(j->b);
    ev_vreport_free(j->r);
}

/* libFuzzer's entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char header[] =
        "run_id,job_id,attempt,op,rows,cols,stride,dtype,default_rows,role,arm,phase,"
        "label,outcome,timing,sample_index,replays,ops_per_graph,elapsed_ms,"
        "per_op_us,job_key,attempt_id,attempt_outcome,sm_clock_mhz\n";
    if (size < 2)
        return 0;
    size_t piece = data[0] % 64 ? data[0] % 64 : ((size_t)1 << 20);
    size_t pre = (data[1] & 1) ? sizeof header - 1 : 0, n = pre + size - 2;
    unsigned char *text = malloc(n + 1); /* + the NUL a member has after it */
    if (!text)
        return 0;
    memcpy(text, header, pre);
    memcpy(text + pre, data + 2, size - 2);
    text[n] = 0;
    judged ref = judge(text, n, 0, 0), fast = judge(text, n, 1, 0), streamed = judge(text, n, 2, piece);
    same(&ref, &fast);
    same(&ref, &streamed);
    release(&ref);
    release(&fast);
    release(&streamed);
    free(text);
    return 0;
}
