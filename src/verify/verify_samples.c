/*
 * verify_samples.c: samples.csv for check 3, "formats": the strict CSV
 * reader with the documented 24-column header, every cell typed, the
 * documented row order, doubles in canonical text, the job-level columns
 * constant over each job's rows and the attempt-level ones over each
 * attempt's.  The rows become the samples table that checks 4 to 6 use.
 *
 * The reference is vf_row, one record of the strict reader at a time.  Two
 * ways make a large file cheap without changing any verdict or message:
 *  - Continuation rows.  In text without '"' (so every LF ends a record),
 *    a row whose first 14 cells (run_id .. outcome) and whose job_key,
 *    attempt_id and attempt_outcome cells are byte for byte those of the
 *    row accepted just before it repeats cells that vf_row has already
 *    checked; only its own cells (timing, sample_index, replays,
 *    ops_per_graph, elapsed_ms, per_op_us, sm_clock_mhz) and its order
 *    after that row are left, and vf_continue checks exactly those.  Any
 *    row it does not accept in full goes to the strict reader and vf_row,
 *    which decide and report as always.
 *  - Streaming.  samples.csv is read by a parser thread while zipread
 *    inflates it, piece by piece, and its text is not kept (vb_sstream
 *    below).  That reading only accepts; on any doubt vb_read_samples
 *    reads the archive again and judges the whole text in one pass, which
 *    reports as always.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "zipread.h"
#include "store/outcome.h"
#include "verify_int.h"
#include "vocab.h"

enum {
    SC_RUN_ID,
    SC_JOB_ID,
    SC_ATTEMPT,
    SC_OP,
    SC_ROWS,
    SC_COLS,
    SC_STRIDE,
    SC_DTYPE,
    SC_DEFAULT_ROWS,
    SC_ROLE,
    SC_ARM,
    SC_PHASE,
    SC_LABEL,
    SC_OUTCOME,
    SC_TIMING,
    SC_SAMPLE_INDEX,
    SC_REPLAYS,
    SC_OPS_PER_GRAPH,
    SC_ELAPSED_MS,
    SC_PER_OP_US,
    SC_JOB_KEY,
    SC_ATTEMPT_ID,
    SC_ATTEMPT_OUTCOME,
    SC_SM_CLOCK
};

/* Failures recorded per member before the rest are only counted. */
#define VF_MAX_ROW_FAILS 50

/* Returns 1 when text is exactly the canonical text of v: the %.17g text
 * that ev_json_format_double and ev_csv_put_double write (vb_format17 gives
 * the same bytes, faster; a test holds them equal). */
static int vf_canonical_double(const char *text, double v)
{
    char buf[32];
    if (vb_format17(v, buf))
        return 0;
    return !strcmp(buf, text);
}

/* Strict decimal integer s[0..n): optional '-', digits, no leading zeros,
 * at most 18 digits, not "-0".  Returns 0 and sets *out, or -1. */
static int vf_parse_int_n(const char *s, size_t n, int64_t *out)
{
    int neg = 0;
    int64_t v = 0;
    size_t i = 0;
    if (n && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (n - i > 18 || n == i || (s[i] == '0' && n - i > 1))
        return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (neg && v == 0)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

/* vf_parse_int_n over a NUL-terminated cell. */
static int vf_parse_int(const char *s, int64_t *out)
{
    return vf_parse_int_n(s, strlen(s), out);
}

/* Typed integer cell col of the current record: EV_OK, or EV_EFORMAT with
 * err naming the line and column. */
static ev_status vf_get_int(ev_csv *c, size_t col, int64_t *out, ev_err *err)
{
    const char *f = ev_csv_field(c, col);
    if (f && !vf_parse_int(f, out))
        return EV_OK;
    return ev_err_set(err, EV_EFORMAT, "line %zu, column %zu (%s): not a decimal integer: \"%.40s\"",
                      ev_csv_line(c), col + 1, ev_samples_columns[col], f ? f : "");
}

/* 1 when s is an op, a dtype, a role or a phase of the vocabulary. */
static int vf_op(const char *s)
{
    ev_op w;
    return !ev_op_parse(s, &w);
}
static int vf_dtype(const char *s)
{
    ev_dtype w;
    return !ev_dtype_parse(s, &w);
}
static int vf_role(const char *s)
{
    ev_role w;
    return !ev_role_parse(s, &w);
}
static int vf_phase(const char *s)
{
    ev_phase w;
    return !ev_phase_parse(s, &w);
}

/* Duplicates s into *slot; 0 ok, -1 on allocation failure. */
static int vf_dup(char **slot, const char *s)
{
    *slot = strdup(s);
    return *slot ? 0 : -1;
}

/* Per-row parse state. */
typedef struct vf_state {
    ev_vreport *r;
    vb_samples *t;   /* the table rows go to */
    int quiet;       /* 1: failures are only counted (the streamed reading) */
    size_t fails;    /* row-level failures so far */
    size_t cap_rows; /* rows allocated in t (vf_row grows it when full) */
    int64_t cur_attempt_id;
    char cur_attempt_outcome[32];
} vf_state;

/* Records a row failure (the first VF_MAX_ROW_FAILS in detail). */
static void vf_row_fail(vf_state *s, size_t line, const char *what)
{
    s->fails++;
    if (!s->quiet && s->fails <= VF_MAX_ROW_FAILS)
        vr_fail(s->r, VR_FORMATS, EV_MEMBER_SAMPLES, "line %zu: %s", line, what);
}

/* Reads an optional integer cell (empty allowed when opt).  Returns 0 and
 * sets *out (INT64_MIN for empty), or -1 with err set. */
static int vf_int_cell(ev_csv *c, size_t col, int opt, int64_t *out, ev_err *err)
{
    const char *f = ev_csv_field(c, col);
    if (opt && f[0] == '\0') {
        *out = INT64_MIN;
        return 0;
    }
    return vf_get_int(c, col, out, err) ? -1 : 0;
}

/* Starts a new job entry from the current row.  Returns 0, or -1 on
 * allocation failure. */
static int vf_new_job(vf_state *s, ev_csv *c, int64_t job_id, const int64_t *ints)
{
    vb_samples *t = s->t;
    if (t->n_jobs == t->cap_jobs) {
        size_t nc = t->cap_jobs ? t->cap_jobs * 2 : 64;
        vb_sjob *p = realloc(t->jobs, nc * sizeof *p);
        if (!p)
            return -1;
        t->jobs = p;
        t->cap_jobs = nc;
    }
    vb_sjob *j = &t->jobs[t->n_jobs];
    memset(j, 0, sizeof *j);
    j->job_id = job_id;
    j->rows = ints[0];
    j->cols = ints[1];
    j->stride = ints[2];
    j->default_rows = ints[3];
    j->first = t->n;
    t->n_jobs++;
    if (vf_dup(&j->op, ev_csv_field(c, SC_OP)) || vf_dup(&j->dtype, ev_csv_field(c, SC_DTYPE)) ||
        vf_dup(&j->role, ev_csv_field(c, SC_ROLE)) || vf_dup(&j->arm, ev_csv_field(c, SC_ARM)) ||
        vf_dup(&j->phase, ev_csv_field(c, SC_PHASE)) || vf_dup(&j->label, ev_csv_field(c, SC_LABEL)) ||
        vf_dup(&j->outcome, ev_csv_field(c, SC_OUTCOME)) || vf_dup(&j->job_key, ev_csv_field(c, SC_JOB_KEY)))
        return -1;
    return 0;
}

/* Returns 1 when the current row's job-level cells equal job j's. */
static int vf_same_job(const vb_sjob *j, ev_csv *c, const int64_t *ints)
{
    return !strcmp(j->op, ev_csv_field(c, SC_OP)) && !strcmp(j->dtype, ev_csv_field(c, SC_DTYPE)) &&
           !strcmp(j->role, ev_csv_field(c, SC_ROLE)) && !strcmp(j->arm, ev_csv_field(c, SC_ARM)) &&
           !strcmp(j->phase, ev_csv_field(c, SC_PHASE)) && !strcmp(j->label, ev_csv_field(c, SC_LABEL)) &&
           !strcmp(j->outcome, ev_csv_field(c, SC_OUTCOME)) &&
           !strcmp(j->job_key, ev_csv_field(c, SC_JOB_KEY)) && j->rows == ints[0] && j->cols == ints[1] &&
           j->stride == ints[2] && j->default_rows == ints[3];
}

/* Parses and checks one record; appends it to the samples table.
 * Returns -1 only on allocation failure. */
static int vf_row(vf_state *s, ev_csv *c)
{
    ev_err err = {{0}};
    size_t line = ev_csv_line(c);
    vb_samples *t = s->t;
    vb_sample row;
    memset(&row, 0, sizeof row);
    int64_t ints[4], sm;

    if (vf_get_int(c, SC_RUN_ID, &row.run_id, &err) || vf_get_int(c, SC_JOB_ID, &row.job_id, &err) ||
        vf_get_int(c, SC_ATTEMPT, &row.attempt, &err) || vf_int_cell(c, SC_ROWS, 1, &ints[0], &err) ||
        vf_int_cell(c, SC_COLS, 1, &ints[1], &err) || vf_int_cell(c, SC_STRIDE, 1, &ints[2], &err) ||
        vf_int_cell(c, SC_DEFAULT_ROWS, 1, &ints[3], &err) ||
        vf_get_int(c, SC_SAMPLE_INDEX, &row.sample_index, &err) ||
        vf_get_int(c, SC_REPLAYS, &row.replays, &err) ||
        vf_get_int(c, SC_OPS_PER_GRAPH, &row.ops_per_graph, &err) ||
        ev_csv_get_double(c, SC_ELAPSED_MS, &row.elapsed_ms, &err) ||
        ev_csv_get_double(c, SC_PER_OP_US, &row.per_op_us, &err) ||
        vf_get_int(c, SC_ATTEMPT_ID, &row.attempt_id, &err) || vf_int_cell(c, SC_SM_CLOCK, 1, &sm, &err)) {
        vf_row_fail(s, line, err.msg);
        return 0;
    }
    ev_outcome oc;
    /* Categorical cells are validated on a job's first row; later rows must
     * equal that row's cells exactly (checked below). */
    int continuing = t->n_jobs > 0 && t->jobs[t->n_jobs - 1].job_id == row.job_id;
    if (!continuing) {
        const char *op = ev_csv_field(c, SC_OP);
        int has_case = op[0] != '\0';
        if (has_case ? (!vf_op(op) || !vf_dtype(ev_csv_field(c, SC_DTYPE)) ||
                        !vf_role(ev_csv_field(c, SC_ROLE)) || ints[0] == INT64_MIN || ints[1] == INT64_MIN ||
                        ints[2] == INT64_MIN || ints[3] == INT64_MIN)
                     : (ev_csv_field(c, SC_DTYPE)[0] || ev_csv_field(c, SC_ROLE)[0] || ints[0] != INT64_MIN ||
                        ints[1] != INT64_MIN || ints[2] != INT64_MIN || ints[3] != INT64_MIN)) {
            vf_row_fail(
                s, line,
                "case cells (op,rows,cols,stride,dtype,default_rows,role) must be all valid or all empty");
            return 0;
        }
        if (!vf_phase(ev_csv_field(c, SC_PHASE)) || !ev_csv_field(c, SC_ARM)[0] ||
            !ev_csv_field(c, SC_LABEL)[0] || !ev_csv_field(c, SC_JOB_KEY)[0]) {
            vf_row_fail(s, line, "phase, arm, label or job_key is empty or unknown");
            return 0;
        }
        if (ev_outcome_parse(ev_csv_field(c, SC_OUTCOME), &oc)) {
            vf_row_fail(s, line, "outcome is not an outcome name");
            return 0;
        }
    }
    if (ev_outcome_parse(ev_csv_field(c, SC_ATTEMPT_OUTCOME), &oc)) {
        vf_row_fail(s, line, "attempt_outcome is not an outcome name");
        return 0;
    }
    const char *timing = ev_csv_field(c, SC_TIMING);
    if (strcmp(timing, "hot") && strcmp(timing, "cold")) {
        vf_row_fail(s, line, "timing is neither hot nor cold");
        return 0;
    }
    row.hot = timing[0] == 'h';
    if (row.attempt < 1 || row.sample_index < 0 || row.replays < 1 || row.ops_per_graph < 1) {
        vf_row_fail(s, line, "attempt, replays or ops_per_graph below 1, or sample_index below 0");
        return 0;
    }
    if (!isfinite(row.elapsed_ms) || !vf_canonical_double(ev_csv_field(c, SC_ELAPSED_MS), row.elapsed_ms) ||
        !isfinite(row.per_op_us) || !vf_canonical_double(ev_csv_field(c, SC_PER_OP_US), row.per_op_us)) {
        vf_row_fail(s, line,
                    "elapsed_ms or per_op_us is not canonical %.17g text of a finite double "
                    "(it would not read back to the bits written)");
        return 0;
    }
    if (signbit(row.elapsed_ms) || signbit(row.per_op_us) || (sm != INT64_MIN && sm < 0)) {
        vf_row_fail(s, line,
                    "elapsed_ms, per_op_us or sm_clock_mhz is negative (or -0): no timer or clock reads so");
        return 0;
    }

    /* Row order: job_id, attempt, timing (cold < hot), sample_index; strictly. */
    if (t->n > 0) {
        const vb_sample *p = &t->rows[t->n - 1];
        int cmp = p->job_id != row.job_id               ? (p->job_id < row.job_id ? -1 : 1)
                  : p->attempt != row.attempt           ? (p->attempt < row.attempt ? -1 : 1)
                  : p->hot != row.hot                   ? (p->hot < row.hot ? -1 : 1)
                  : p->sample_index != row.sample_index ? (p->sample_index < row.sample_index ? -1 : 1)
                                                        : 0;
        if (cmp >= 0) {
            vf_row_fail(s, line,
                        cmp == 0 ? "duplicate row (same job_id, attempt, timing, sample_index)"
                                 : "rows out of order (job_id, attempt, timing, sample_index)");
            return 0;
        }
        if (p->run_id != row.run_id) {
            vf_row_fail(s, line, "run_id differs from the rows above");
            return 0;
        }
    }
    /* Job-level cells repeat unchanged over the job's rows. */
    if (t->n_jobs == 0 || t->jobs[t->n_jobs - 1].job_id != row.job_id) {
        if (vf_new_job(s, c, row.job_id, ints))
            return -1;
    } else if (!vf_same_job(&t->jobs[t->n_jobs - 1], c, ints)) {
        vf_row_fail(s, line, "job-level cells differ from the job's earlier rows");
        return 0;
    }
    /* Attempt-level cells repeat over the attempt's rows. */
    if (t->n > 0 && t->rows[t->n - 1].job_id == row.job_id && t->rows[t->n - 1].attempt == row.attempt) {
        if (s->cur_attempt_id != row.attempt_id ||
            strcmp(s->cur_attempt_outcome, ev_csv_field(c, SC_ATTEMPT_OUTCOME))) {
            vf_row_fail(s, line, "attempt_id or attempt_outcome differs from the attempt's earlier rows");
            return 0;
        }
    } else {
        s->cur_attempt_id = row.attempt_id;
        snprintf(s->cur_attempt_outcome, sizeof s->cur_attempt_outcome, "%s",
                 ev_csv_field(c, SC_ATTEMPT_OUTCOME));
    }
    row.attempt_outcome = (int)oc;
    row.sm_clock = sm;

    if (t->n == s->cap_rows) {
        size_t nc = s->cap_rows ? s->cap_rows * 2 : 4096, bytes;
        if (ev_size_mul(nc, sizeof *t->rows, &bytes))
            return -1;
        vb_sample *p = realloc(t->rows, bytes);
        if (!p)
            return -1;
        t->rows = p;
        s->cap_rows = nc;
    }
    row.job_row = (uint32_t)(t->n_jobs - 1);
    t->rows[t->n++] = row;
    t->jobs[t->n_jobs - 1].count++;
    return 0;
}

/* See verify_int.h. */
int vb_fast_rows = 1;

/* The spans of the last accepted row that a continuation row repeats. */
typedef struct vf_spans {
    const char *pre; /* run_id .. outcome, with the comma after outcome */
    size_t pre_len;
    const char *suf; /* job_key, attempt_id, attempt_outcome, with the comma after */
    size_t suf_len;
} vf_spans;

/* After vf_row accepted the record at line[0..), whose text holds no '"':
 * notes where its repeated cells lie.  0, or -1 when the line does not
 * hold 23 commas before its end (cannot happen for an accepted record). */
static int vf_note_spans(const char *line, const char *end, vf_spans *sp)
{
    const char *q = line, *suf = NULL;
    int commas = 0;
    while (q < end && *q != '\n') {
        if (*q++ != ',')
            continue;
        commas++;
        if (commas == SC_TIMING) {
            sp->pre = line;
            sp->pre_len = (size_t)(q - line);
        } else if (commas == SC_JOB_KEY) {
            suf = q;
        } else if (commas == SC_SM_CLOCK) {
            sp->suf = suf;
            sp->suf_len = (size_t)(q - suf);
        }
    }
    return commas == SC_SM_CLOCK ? 0 : -1;
}

/* Reads the cell at *q up to `stop` (',' or '\n') within end: returns its
 * length and moves *q past the stop byte, or (size_t)-1 when no stop. */
static size_t vf_cell(const char **q, const char *end, char stop)
{
    const char *s = *q, *e = memchr(s, stop, (size_t)(end - s));
    if (!e)
        return (size_t)-1;
    *q = e + 1;
    return (size_t)(e - s);
}

/* The integer cell at *q ending at `stop`, by vf_parse_int_n's rule;
 * moves *q past the stop.  0, or -1 when not such a cell. */
static int vf_next_int(const char **q, const char *end, char stop, int64_t *out)
{
    const char *c = *q;
    size_t len = vf_cell(q, end, stop);
    return len == (size_t)-1 || vf_parse_int_n(c, len, out) ? -1 : 0;
}

/* The double cell at *q ending at ',', when vb_read17 reads it (canonical
 * text); moves *q past the comma.  0, or -1. */
static int vf_next_double(const char **q, const char *end, double *out)
{
    const char *c = *q;
    size_t len = vf_cell(q, end, ',');
    return len == (size_t)-1 || vb_read17(c, len, out) ? -1 : 0;
}

/*
 * The continuation rule: line[0..end) (text without '"') is a row that
 * repeats the repeated cells of the last accepted row (sp) and whose own
 * cells pass every check vf_row makes of them.  Appends it to the table
 * exactly as vf_row would and returns the bytes it took (its LF
 * included); 0 when it is not such a row in full (vf_row decides then).
 */
static size_t vf_continue(vf_state *s, const char *line, const char *end, const vf_spans *sp)
{
    vb_samples *t = s->t;
    const char *q = line;
    size_t avail = (size_t)(end - line), len;
    if (avail <= sp->pre_len + sp->suf_len || memcmp(q, sp->pre, sp->pre_len))
        return 0;
    q += sp->pre_len;
    const vb_sample *prev = &t->rows[t->n - 1];
    vb_sample row = *prev;
    if (end - q > 4 && !memcmp(q, "hot,", 4)) {
        row.hot = 1;
        q += 4;
    } else if (end - q > 5 && !memcmp(q, "cold,", 5)) {
        row.hot = 0;
        q += 5;
    } else {
        return 0;
    }
    if (vf_next_int(&q, end, ',', &row.sample_index) || vf_next_int(&q, end, ',', &row.replays) ||
        vf_next_int(&q, end, ',', &row.ops_per_graph) || vf_next_double(&q, end, &row.elapsed_ms) ||
        vf_next_double(&q, end, &row.per_op_us))
        return 0;
    if ((size_t)(end - q) <= sp->suf_len || memcmp(q, sp->suf, sp->suf_len))
        return 0;
    q += sp->suf_len;
    const char *c = q;
    if ((len = vf_cell(&q, end, '\n')) == (size_t)-1)
        return 0;
    if (len == 0)
        row.sm_clock = INT64_MIN;
    else if (vf_parse_int_n(c, len, &row.sm_clock))
        return 0;
    if (row.sample_index < 0 || row.replays < 1 || row.ops_per_graph < 1)
        return 0;
    if (signbit(row.elapsed_ms) || signbit(row.per_op_us) || (row.sm_clock != INT64_MIN && row.sm_clock < 0))
        return 0; /* the careful path says why */
    /* strictly after the row above: same job and attempt, so (timing, index) */
    if (row.hot < prev->hot || (row.hot == prev->hot && row.sample_index <= prev->sample_index))
        return 0;
    if (t->n == s->cap_rows)
        return 0;
    t->rows[t->n++] = row;
    t->jobs[t->n_jobs - 1].count++;
    return (size_t)(q - line);
}

/*
 * Reads the records of p[0..n) (the header first) into s->t: from byte
 * `start` (a record start, numbered `start_line`) when start > 0, else
 * from the first record after the header.  `plain`: the text holds no '"',
 * so continuation rows may be taken by vf_continue.  Returns EV_OK,
 * EV_ENOMEM, or -1 when a bad header (*header_bad set) or a broken record
 * (quoting, UTF-8, NUL, column count; counted in s->fails) ended reading;
 * *err then says why.
 */
static int vf_parse(vf_state *s, const char *p, size_t n, size_t start, size_t start_line, int plain,
                    int *header_bad, ev_err *err)
{
    ev_csv *c = NULL;
    ev_status rc = ev_csv_open(p, n, ev_samples_columns, ev_samples_ncols, NULL, &c, err);
    *header_bad = rc && rc != EV_ENOMEM;
    if (rc)
        return rc == EV_ENOMEM ? EV_ENOMEM : -1;
    if (start && ev_csv_seek(c, start, start_line)) {
        ev_csv_close(c);
        return EV_ENOMEM; /* cannot happen: start lies within p */
    }
    int out = EV_OK, spans = 0;
    vf_spans sp = {NULL, 0, NULL, 0};
    const char *end = p + n;
    size_t pos = ev_csv_pos(c), line = start ? start_line : 2;
    plain = plain && vb_fast_rows;
    for (;;) {
        if (plain && spans) {
            size_t used;
            while (pos < n && (used = vf_continue(s, p + pos, end, &sp))) {
                pos += used;
                line++;
            }
            ev_csv_seek(c, pos, line);
        }
        int have = 0;
        size_t before = s->t->n, at = pos;
        rc = ev_csv_next(c, &have, err);
        if (rc == EV_ENOMEM) {
            out = EV_ENOMEM;
            break;
        }
        if (rc) {
            /* the reader cannot resynchronise reliably */
            s->fails++;
            out = -1;
            break;
        }
        if (!have)
            break;
        if (vf_row(s, c)) {
            out = EV_ENOMEM;
            break;
        }
        pos = ev_csv_pos(c);
        line++;
        if (plain && s->t->n > before)
            spans = !vf_note_spans(p + at, end, &sp);
    }
    ev_csv_close(c);
    return out;
}

/* Number of line ends in p[0..n). */
static size_t vf_newlines(const char *p, size_t n)
{
    size_t lines = 0;
    for (const char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        lines++;
    return lines;
}

/* See verify_int.h. */
void vb_samples_free_jobs(vb_samples *t)
{
    for (size_t i = 0; i < t->n_jobs; i++) {
        vb_sjob *j = &t->jobs[i];
        free(j->op);
        free(j->dtype);
        free(j->role);
        free(j->arm);
        free(j->phase);
        free(j->label);
        free(j->outcome);
        free(j->job_key);
    }
    free(t->jobs);
    t->jobs = NULL;
    t->n_jobs = t->cap_jobs = 0;
}

/* ---- reading samples.csv while it is inflated ---------------------------- */

/* See verify_int.h. */
int vb_stream_samples = 1;
size_t vb_stream_piece = 0;
size_t vb_stream_rereads = 0;

#define VS_SLOTS 3                 /* pieces queued between the reader and the parser */
#define VS_PIECE ((size_t)1 << 20) /* zipread's largest piece */
#define VS_FRONT ((size_t)1 << 18) /* room before a piece for the header and a carried line */

/*
 * The parser thread's side: pieces arrive in order in slots (each with
 * VS_FRONT bytes of room before it); every piece's complete lines are read
 * behind a copy of the header line and the incomplete line carried from
 * the piece before, by vf_parse with its continuation rule, into one
 * table.  Any '"', any failure, or an incomplete last line gives up
 * ("bail"): then nothing is reported from here, and vb_read_samples reads
 * the whole text again, which decides and reports as always.  So this
 * path only ever accepts, and what it accepts is what the one-pass
 * reading accepts: the same rows, in the same table.
 */
struct vb_sstream {
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *slot[VS_SLOTS]; /* VS_FRONT + min(size, VS_PIECE) bytes each */
    size_t len[VS_SLOTS];
    size_t head, tail; /* pieces taken by the parser, and put by the reader */
    int done;          /* the reader has put its last piece */
    int bail;          /* the parser gave up (the reader then drops pieces) */
    uint64_t size;     /* declared size of samples.csv */
    /* the parser's own */
    vf_state s;
    vb_samples t;
    ev_buf hdr, carry, win;
    size_t line; /* line number of the next record; 0 until the header is whole */
    int accepted;
};

/* The reader's side (ev_zip_stream.put): queues a copy of the piece. */
static void vs_put(void *ctx, const unsigned char *p, size_t n, uint64_t size)
{
    struct vb_sstream *st = ctx;
    pthread_mutex_lock(&st->mu);
    st->size = size;
    while (!st->bail && st->tail - st->head == VS_SLOTS)
        pthread_cond_wait(&st->cv, &st->mu);
    size_t k = st->tail % VS_SLOTS;
    if (!st->bail && !st->slot[k]) /* sized for the member: a small one takes little */
        st->slot[k] = malloc(VS_FRONT + (size < VS_PIECE ? (size_t)size : VS_PIECE));
    if (!st->bail && st->slot[k] && n <= VS_PIECE && n <= size) {
        memcpy(st->slot[k] + VS_FRONT, p, n);
        st->len[st->tail % VS_SLOTS] = n;
        st->tail++;
        pthread_cond_broadcast(&st->cv);
    } else {
        st->bail = 1;
    }
    pthread_mutex_unlock(&st->mu);
}

/* Reads the complete lines of the piece q[0..n) (VS_FRONT bytes of room
 * before q) behind the header and the carried line; keeps the rest as the
 * new carry.  0, or -1 to give up. */
static int vs_piece(struct vb_sstream *st, unsigned char *q, size_t n)
{
    const char *p = (const char *)q;
    if (memchr(p, '"', n))
        return -1;
    if (!st->line) { /* the header line is still being gathered */
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) + 1 : n;
        if (ev_buf_append(&st->hdr, p, take) || st->hdr.len > VS_FRONT / 2)
            return -1;
        if (!nl)
            return 0;
        /* the header is judged now: a body may never bring a line that would */
        ev_csv *c = NULL;
        ev_err err = {{0}};
        if (ev_csv_open(st->hdr.data, st->hdr.len, ev_samples_columns, ev_samples_ncols, NULL, &c, &err))
            return -1;
        ev_csv_close(c);
        p += take;
        n -= take;
        st->line = 2;
    }
    const char *last = n ? memrchr(p, '\n', n) : NULL;
    if (!last) {
        if (ev_buf_append(&st->carry, p, n))
            return -1;
        return 0;
    }
    size_t body = (size_t)(last - p) + 1, hl = st->hdr.len, cl = st->carry.len;
    char *w;
    if (hl + cl <= (size_t)(p - (const char *)q) + VS_FRONT) { /* in the room before the piece */
        w = (char *)p - hl - cl;
        memcpy(w, st->hdr.data, hl);
        if (cl)
            memcpy(w + hl, st->carry.data, cl);
    } else {
        ev_buf_reset(&st->win);
        if (ev_buf_append(&st->win, st->hdr.data, hl) || ev_buf_append(&st->win, st->carry.data, cl) ||
            ev_buf_append(&st->win, p, body))
            return -1;
        w = st->win.data;
    }
    size_t before = st->t.n;
    int header_bad = 0;
    ev_err err = {{0}};
    int rc = vf_parse(&st->s, w, hl + cl + body, hl, st->line, 1, &header_bad, &err);
    if (rc || st->s.fails)
        return -1;
    st->line += st->t.n - before;
    ev_buf_reset(&st->carry);
    return ev_buf_append(&st->carry, p + body, n - body) ? -1 : 0;
}

/* The parser thread. */
static void *vs_run(void *arg)
{
    struct vb_sstream *st = arg;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        while (st->head == st->tail && !st->done)
            pthread_cond_wait(&st->cv, &st->mu);
        if (st->head == st->tail)
            break; /* done, and every piece read */
        size_t k = st->head % VS_SLOTS;
        uint64_t size = st->size;
        pthread_mutex_unlock(&st->mu);
        int bad = 0;
        if (!st->t.rows) { /* a row per 48 bytes, an estimate only (an accepted row is longer); vf_row
                            * grows the array when a text of shorter rows fills it */
            size_t cap = (size_t)(size / 48 + 16), bytes;
            if (ev_size_mul(cap, sizeof *st->t.rows, &bytes) || !(st->t.rows = ev_alloc_big(bytes)))
                bad = 1;
            else
                st->s.cap_rows = cap;
        }
        /* in sub-pieces of vb_stream_piece bytes when the tests ask */
        size_t len = st->len[k], step = vb_stream_piece ? vb_stream_piece : len;
        for (size_t off = 0; !bad && off < len; off += step)
            bad = vs_piece(st, st->slot[k] + VS_FRONT + off, len - off < step ? len - off : step);
        pthread_mutex_lock(&st->mu);
        st->head++;
        if (bad) {
            st->bail = 1;
            pthread_cond_broadcast(&st->cv);
            break;
        }
        pthread_cond_broadcast(&st->cv);
    }
    st->accepted = !st->bail && st->done && st->line && !st->carry.len;
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* See verify_int.h. */
void vb_stream_free(struct vb_sstream *st)
{
    if (!st)
        return;
    for (int k = 0; k < VS_SLOTS; k++)
        free(st->slot[k]);
    vb_samples_free_jobs(&st->t);
    free(st->t.rows);
    ev_buf_free(&st->hdr);
    ev_buf_free(&st->carry);
    ev_buf_free(&st->win);
    if (st->started) {
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->cv);
    }
    free(st);
}

/* See verify_int.h. */
ev_status vb_stream_start(vb_bundle *b, ev_zip_stream *zs)
{
    memset(zs, 0, sizeof *zs);
    if (!vb_stream_samples)
        return EV_OK;
    struct vb_sstream *st = calloc(1, sizeof *st);
    if (!st)
        return EV_ENOMEM;
    /* the slots come with the first pieces (vs_put) */
    st->s.t = &st->t;
    st->s.quiet = 1;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    if (pthread_create(&st->th, NULL, vs_run, st)) {
        pthread_mutex_destroy(&st->mu);
        pthread_cond_destroy(&st->cv);
        vb_stream_free(st);
        return EV_OK; /* no thread: the whole text is kept and read */
    }
    st->started = 1;
    b->sstream = st;
    zs->name = EV_MEMBER_SAMPLES;
    zs->put = vs_put;
    zs->ctx = st;
    return EV_OK;
}

/* See verify_int.h. */
void vb_stream_finish(vb_bundle *b)
{
    struct vb_sstream *st = b->sstream;
    if (!st || !st->started)
        return;
    pthread_mutex_lock(&st->mu);
    st->done = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->th, NULL);
    for (int k = 0; k < VS_SLOTS; k++) {
        free(st->slot[k]);
        st->slot[k] = NULL;
    }
}

/* The text of samples.csv when it was streamed: the archive read again
 * without streaming.  NULL when that fails (out of memory). */
static const vb_member *vs_text(vb_bundle *b, vb_member *hold)
{
    const vb_member *m = vb_find(b, EV_MEMBER_SAMPLES);
    if (!m || m->data)
        return m;
    vb_stream_rereads++;
    ev_zip_problems *probs = NULL;
    ev_err err = {{0}};
    if (!b->zip2 && (ev_zip_problems_new(&probs) ||
                     ev_zip_read_mem(b->raw ? b->raw : "", b->raw_n, NULL, &b->zip2, probs, &err))) {
        ev_zip_problems_free(probs);
        return NULL;
    }
    ev_zip_problems_free(probs);
    const ev_zip_member *zm = ev_zip_find(b->zip2, EV_MEMBER_SAMPLES);
    if (!zm)
        return NULL;
    *hold = *m;
    hold->data = zm->data;
    return hold;
}

/* See verify_int.h. */
void vb_read_samples(vb_bundle *b, ev_vreport *r)
{
    struct vb_sstream *st = b->sstream;
    if (st && st->accepted && vb_find(b, EV_MEMBER_SAMPLES)) {
        b->samples = st->t;
        memset(&st->t, 0, sizeof st->t);
        b->samples_ok = 1;
        return;
    }
    vb_member hold;
    const vb_member *m = vb_find(b, EV_MEMBER_SAMPLES);
    ev_err err = {{0}};
    vf_state s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.t = &b->samples;
    if (!m) {
        vr_not_run(r, VR_FORMATS, "samples.csv is missing (check 2)");
        return;
    }
    if (!(m = vs_text(b, &hold))) {
        r->oom = 1;
        return;
    }
    if (m->len == 0 || m->data[m->len - 1] != '\n')
        vr_fail(r, VR_FORMATS, EV_MEMBER_SAMPLES, "does not end with a newline");
    /* One allocation for every row: count the line ends first. */
    size_t lines = vf_newlines((const char *)m->data, m->len) + 1, bytes;
    if (ev_size_mul(lines, sizeof *b->samples.rows, &bytes) || !(b->samples.rows = ev_alloc_big(bytes))) {
        r->oom = 1;
        return;
    }
    s.cap_rows = lines;
    int header_bad = 0;
    int plain = !memchr(m->data, '"', m->len);
    int rc = vf_parse(&s, (const char *)m->data, m->len, 0, 0, plain, &header_bad, &err);
    if (rc == EV_ENOMEM)
        r->oom = 1;
    else if (header_bad) {
        vr_fail(r, VR_FORMATS, EV_MEMBER_SAMPLES, "header: %s", err.msg);
        return;
    } else if (rc)
        vr_fail(r, VR_FORMATS, EV_MEMBER_SAMPLES, "%s", err.msg);
    if (s.fails > VF_MAX_ROW_FAILS)
        vr_fail(r, VR_FORMATS, EV_MEMBER_SAMPLES, "%zu bad rows in all", s.fails);
    b->samples_ok = s.fails == 0 && !r->oom;
}
