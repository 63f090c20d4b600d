/*
 * check_runner.c: `evident run` end to end on the cpu backend, with real
 * processes and a real store in a temporary directory: the quick protocol
 * completes in under a minute; fault arms give every outcome class and
 * rescue retries exactly the retryable ones; SIGINT stops a run cleanly
 * and --resume finishes it; after the supervisor is SIGKILLed, --resume
 * keeps every committed sample, duplicates none, and records the cut-off
 * attempt as interrupted.
 */
#include <check.h>
#include <sqlite3.h>

#include "progress.h"
#include "run_prog.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <math.h>
#include <sqlite3.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "inputs.h"
#include "plants.h"
#include "json.h"
#include "runner/backend.h"
#include "runner/compile_ahead.h"
#include "runner/ext_binary.h"
#include "runner/ext_compile.h"
#include "runner/plan.h"
#include "runner/protocol.h"
#include "runner/record.h"
#include "runner/sample_rules.h"
#include "runner/snapshot.h"
#include "runner/worker.h"
#include "runner/job.h"
#include "runner/validate.h"
#include "reduce_cpu.h"
#include "model/select.h"
#include "selector.h"
#include "sha256.h"
#include "store/outcome.h"
#include "zipread.h"
#include "store/store.h"

static char dir[256];

/* A fresh temporary directory per test. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/evident-runner-XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

/* Monotonic seconds. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes text to dir/name; returns the path in a static buffer. */
static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    ev_err err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(ev_write_file(path, text, strlen(text), &err), EV_OK);
    return path;
}

/* Runs cmd with sh; its stdout and stderr (the last cap - 1 bytes at most)
 * into out.  Returns its exit status, -1 when it could not be run. */
static int sh_said(const char *cmd, char *out, size_t cap)
{
    char full[16384];
    size_t n = 0;
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    out[0] = '\0';
    if (!p)
        return -1;
    for (int c; (c = fgetc(p)) != EOF;) {
        if (n + 1 == cap) { /* keep the end: the verdict is printed last */
            memmove(out, out + cap / 2, n - cap / 2);
            n -= cap / 2;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    int st = pclose(p);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Starts build/evident run with the protocol and the test's store; stderr
 * goes to dir/stderr.txt.  Returns the pid. */
static pid_t start_run_db(const char *protocol, const char *db, int resume);
/* --stage-ahead of the runs start_run starts ("0": the cpu default) */
static const char *g_stage = "0";
static pid_t start_run(const char *protocol, int resume)
{
    char db[512];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    return start_run_db(protocol, db, resume);
}

/* As start_run, with the store at db. */
static pid_t start_run_db(const char *protocol, const char *db, int resume)
{
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    char prog[512], errp[512];
    pid_t pid;

    snprintf(prog, sizeof prog, "%s/evident", build);
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(errp, O_WRONLY | O_CREAT | O_APPEND, 0644);
        int nul = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        if (nul >= 0)
            dup2(nul, 1);
        if (resume)
            execl(prog, prog, "run", "--protocol", protocol, "--db", db, "--resume", "--stage-ahead", g_stage,
                  (char *)NULL);
        else
            execl(prog, prog, "run", "--protocol", protocol, "--db", db, "--stage-ahead", g_stage,
                  (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits for pid; returns its exit code (128 + signal when killed). */
static int wait_exit(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- raw reads of a store ---------------------------------------------
 * The facts some tests check are read with SQLite's own library (linked
 * already: the tests need no sqlite3 program), as an outside party would
 * read them; writes only where a test plays a party that damages a store. */

/* Every row of query sql on the store at path (read-only), each row's
 * columns joined by '|', each row ended by '\n', into out[cap]; aborts
 * the test on an error. */
static void db_rows(const char *path, const char *sql, char *out, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    size_t len = 0;
    int rc;
    ck_assert_msg(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, "open %s", path);
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    out[0] = '\0';
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *v = sqlite3_column_text(st, c);
            int w = snprintf(out + len, cap - len, "%s%s", c ? "|" : "", v ? (const char *)v : "");
            ck_assert_msg(w >= 0 && (size_t)w < cap - len, "rows of %s exceed %zu bytes", sql, cap);
            len += (size_t)w;
        }
        ck_assert_uint_lt(len + 1, cap);
        out[len++] = '\n';
        out[len] = '\0';
    }
    ck_assert_msg(rc == SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The one integer query sql gives on the store at path. */
static long long db_int(const char *path, const char *sql)
{
    char out[64];
    db_rows(path, sql, out, sizeof out);
    ck_assert_msg(out[0] && strchr(out, '\n') == out + strlen(out) - 1, "%s: not one row: %s", sql, out);
    return strtoll(out, NULL, 10);
}

/* Runs sql on the store at path as a raw SQLite session would (the store's
 * triggers apply); aborts the test when SQLite refuses it. */
static void db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    ck_assert_msg(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK, "open %s", path);
    ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
    sqlite3_close(db);
}

/* qsort comparator over C strings. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The planned (not rescue) job keys of the store at path, each without a
 * trailing "/shard-N" (a sharded store's reference arms), sorted, each
 * once, one a line, into out[cap]: the plan a run of the whole protocol
 * has. */
static void plan_keys(const char *path, char *out, size_t cap)
{
    static char rows[65536];
    char *keys[1024];
    size_t n = 0, len = 0;
    db_rows(path, "select job_key from jobs where phase != 'rescue'", rows, sizeof rows);
    for (char *p = rows, *nl; *p && (nl = strchr(p, '\n')); p = nl + 1) {
        char *sh = strstr(p, "/shard-");
        *nl = '\0';
        if (sh && strspn(sh + 7, "0123456789") == strlen(sh + 7))
            *sh = '\0';
        ck_assert_uint_lt(n, 1024);
        keys[n++] = p;
    }
    qsort(keys, n, sizeof *keys, cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(keys[i], keys[i - 1]))
            continue;
        int w = snprintf(out + len, cap - len, "%s\n", keys[i]);
        ck_assert(w >= 0 && (size_t)w < cap - len);
        len += (size_t)w;
    }
}

/* Wall-clock ns (CLOCK_REALTIME: the store's started_ns and ended_ns). */
static long long wall_ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 1 when member of the zip at path holds text (the project's own zip
 * reader: the tests need no unzip program). */
static int zip_member_has(const char *path, const char *member, const char *text)
{
    ev_buf raw = EV_BUF_INIT;
    ev_err err = {{0}};
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    int hit = 0;
    ck_assert_int_eq(ev_read_file(path, &raw, &err), EV_OK);
    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_msg(ev_zip_read_mem(raw.data, raw.len, NULL, &z, pr, &err) == EV_OK, "%s: %s", path, err.msg);
    const ev_zip_member *m = ev_zip_find(z, member);
    hit = m && m->data && memmem(m->data, m->size, text, strlen(text)) != NULL;
    ev_zip_free(z);
    ev_zip_problems_free(pr);
    ev_buf_free(&raw);
    return hit;
}

/* ---- collecting query rows ------------------------------------------- */

typedef struct job_info {
    int64_t job_id;
    char key[96];
    int64_t retry_of;
} job_info;

typedef struct att_info {
    int64_t attempt_id, job_id, attempt;
    int has_process, interrupted;
    ev_process_facts f;
    char skip_reason[256];
    char protocol_error[512];
} att_info;

typedef struct sample_info {
    int64_t attempt_id, index;
    char timing[8];
    double ms;
} sample_info;

typedef struct snap {
    job_info jobs[256];
    size_t n_jobs;
    att_info atts[512];
    size_t n_atts;
    sample_info *samples;
    size_t n_samples, cap_samples;
    int64_t bad_validation[512];
    size_t n_bad;
    int has_status;
    char status[32], rescue[32];
    int64_t fits;
} snap;

static ev_status on_job(void *ctx, const ev_row *r)
{
    snap *s = ctx;
    job_info *j = &s->jobs[s->n_jobs++];
    ck_assert_uint_lt(s->n_jobs, 256);
    j->job_id = ev_row_i64(r, 0);
    snprintf(j->key, sizeof j->key, "%s", ev_row_text(r, 1));
    j->retry_of = ev_row_is_null(r, 6) ? 0 : ev_row_i64(r, 6);
    return EV_OK;
}

static ev_status on_att(void *ctx, const ev_row *r)
{
    snap *s = ctx;
    att_info *a = &s->atts[s->n_atts++];
    ck_assert_uint_lt(s->n_atts, 512);
    memset(a, 0, sizeof *a);
    a->attempt_id = ev_row_i64(r, 0);
    a->job_id = ev_row_i64(r, 1);
    a->attempt = ev_row_i64(r, 2);
    a->has_process = !ev_row_is_null(r, 5) && ev_row_i64(r, 5);
    a->f.has_process = a->has_process;
    if (a->has_process) {
        a->f.has_exit = !ev_row_is_null(r, 7);
        a->f.exit_code = a->f.has_exit ? ev_row_i64(r, 7) : 0;
        a->f.has_signal = !ev_row_is_null(r, 8);
        a->f.signal = a->f.has_signal ? ev_row_i64(r, 8) : 0;
        a->f.timed_out = (int)ev_row_i64(r, 9);
        a->f.interrupted = a->interrupted = (int)ev_row_i64(r, 10);
        a->f.skipped = (int)ev_row_i64(r, 11);
        if (!ev_row_is_null(r, 12))
            snprintf(a->skip_reason, sizeof a->skip_reason, "%s", ev_row_text(r, 12));
        a->f.records_ok = (int)ev_row_i64(r, 14);
        if (!ev_row_is_null(r, 15))
            snprintf(a->protocol_error, sizeof a->protocol_error, "%s", ev_row_text(r, 15));
    }
    return EV_OK;
}

static ev_status on_sample(void *ctx, const ev_row *r)
{
    snap *s = ctx;
    sample_info *x;
    if (s->n_samples == s->cap_samples) {
        s->cap_samples = s->cap_samples ? s->cap_samples * 2 : 256;
        s->samples = realloc(s->samples, s->cap_samples * sizeof *s->samples);
        ck_assert_ptr_nonnull(s->samples);
    }
    x = &s->samples[s->n_samples++];
    x->attempt_id = ev_row_i64(r, 0);
    snprintf(x->timing, sizeof x->timing, "%s", ev_row_text(r, 1));
    x->index = ev_row_i64(r, 2);
    x->ms = ev_row_double(r, 5);
    return EV_OK;
}

static ev_status on_val(void *ctx, const ev_row *r)
{
    snap *s = ctx;
    if (ev_row_i64(r, 2) == 0)
        s->bad_validation[s->n_bad++] = ev_row_i64(r, 0);
    return EV_OK;
}

static ev_status on_status(void *ctx, const ev_row *r)
{
    snap *s = ctx;
    s->has_status = 1;
    snprintf(s->status, sizeof s->status, "%s", ev_row_text(r, 0));
    snprintf(s->rescue, sizeof s->rescue, "%s", ev_row_text(r, 1) ? ev_row_text(r, 1) : "");
    return EV_OK;
}

static ev_status on_fit(void *ctx, const ev_row *r)
{
    (void)r;
    ((snap *)ctx)->fits++;
    return EV_OK;
}

/* Reads run 1 of the test's store into *s (free s->samples); returns 0,
 * or -1 when tolerant and the store cannot be opened yet (being created). */
static int read_snap_db(snap *s, const char *db, int tolerant);
static int read_snap_opt(snap *s, int tolerant)
{
    char db[512];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    return read_snap_db(s, db, tolerant);
}

/* As read_snap_opt, from the store at db. */
static int read_snap_db(snap *s, const char *db, int tolerant)
{
    ev_store *st = NULL;
    ev_err err = {""};

    memset(s, 0, sizeof *s);
    if (ev_store_open(db, EV_STORE_READONLY, &st, &err) != EV_OK) {
        ck_assert_msg(tolerant, "cannot open %s: %s", db, err.msg);
        return -1;
    }
    ck_assert_int_eq(ev_store_query(st, EV_Q_JOBS, 1, on_job, s, &err), EV_OK);
    ck_assert_int_eq(ev_store_query(st, EV_Q_ATTEMPTS, 1, on_att, s, &err), EV_OK);
    ck_assert_int_eq(ev_store_query(st, EV_Q_SAMPLES, 1, on_sample, s, &err), EV_OK);
    ck_assert_int_eq(ev_store_query(st, EV_Q_VALIDATIONS, 1, on_val, s, &err), EV_OK);
    ck_assert_int_eq(ev_store_query(st, EV_Q_RUN_STATUS, 1, on_status, s, &err), EV_OK);
    ck_assert_int_eq(ev_store_query(st, EV_Q_FITS, 1, on_fit, s, &err), EV_OK);
    ev_store_close(st);
    return 0;
}

/* read_snap_opt, not tolerant. */
static void read_snap(snap *s)
{
    read_snap_opt(s, 0);
}

/* The outcome of an attempt, derived as the store's consumers derive it. */
static ev_outcome att_outcome(const snap *s, const att_info *a)
{
    ev_process_facts f = a->f;
    for (size_t i = 0; i < s->n_bad; i++)
        if (s->bad_validation[i] == a->attempt_id)
            f.validation_failed = 1;
    return ev_outcome_derive(&f);
}

/* The last attempt of the job called key (NULL if none); *n_out = attempts. */
static const att_info *last_att(const snap *s, const char *key, int *n_out)
{
    const att_info *last = NULL;
    int64_t id = -1;
    int n = 0;
    for (size_t i = 0; i < s->n_jobs; i++)
        if (!strcmp(s->jobs[i].key, key))
            id = s->jobs[i].job_id;
    for (size_t i = 0; i < s->n_atts; i++)
        if (s->atts[i].job_id == id) {
            n++;
            if (!last || s->atts[i].attempt > last->attempt)
                last = &s->atts[i];
        }
    if (n_out)
        *n_out = n;
    return last;
}

/* Outcome name of the job called key ("none" when never attempted). */
static const char *job_outcome(const snap *s, const char *key)
{
    const att_info *a = last_att(s, key, NULL);
    return a ? ev_outcome_name(att_outcome(s, a)) : "none";
}

/* 1 when attempt a failed a sample rule: failed-protocol with "protocol
 * rule: ..." as its reason.  On a shared VM the host's own timing noise
 * does that now and then (docs/HACKING.md, "Timing noise": a 2-core host runs a plain loop more
 * than 2x slower for stretches of up to 37 ms), and the runner records it
 * honestly and rescues it: a test of something else accepts it. */
static int rule_failed(const snap *s, const att_info *a)
{
    return a && att_outcome(s, a) == EV_OUT_FAILED_PROTOCOL &&
           !strncmp(a->protocol_error, "protocol rule: ", 15);
}

/* 1 when job key completed, or failed a sample rule and its rescue (main
 * and policy jobs have one) completed or failed a rule too; *noise (may be
 * NULL) counts the main and policy jobs that failed a rule (a recheck's
 * failure does not fail the run, so it is not counted). */
static int completed_up_to_noise(const snap *s, const char *key, int *noise)
{
    const att_info *a = last_att(s, key, NULL);
    if (a && att_outcome(s, a) == EV_OUT_COMPLETED)
        return 1;
    if (!rule_failed(s, a))
        return 0;
    if (strncmp(key, "main/", 5) && strncmp(key, "policy/", 7))
        return 1; /* recheck: no rescue, and not part of the run's status (ev_plan_run_status) */
    if (noise)
        (*noise)++;
    char rk[160];
    const char *rest = strchr(key, '/'), *label = strrchr(key, '/') + 1;
    /* "initial" is retried as "retry-1", "round-<r>" as "round-<r>-retry-1" */
    if (!strcmp(label, "initial"))
        snprintf(rk, sizeof rk, "rescue%.*sretry-1", (int)(label - rest), rest);
    else
        snprintf(rk, sizeof rk, "rescue%s-retry-1", rest);
    const att_info *r = last_att(s, rk, NULL);
    return r && (att_outcome(s, r) == EV_OUT_COMPLETED || rule_failed(s, r));
}

/* Hot samples of an attempt. */
static int hot_samples(const snap *s, int64_t attempt_id)
{
    int n = 0;
    for (size_t i = 0; i < s->n_samples; i++)
        n += s->samples[i].attempt_id == attempt_id && !strcmp(s->samples[i].timing, "hot");
    return n;
}

/*
 * What the torch-compile peer must say on this host with the cpu backend,
 * exactly: where `import torch` fails, "torch-compile: " + the last line
 * python3 itself prints for it (the host's own import error); where torch
 * imports (a GPU host, with or without CUDA), the peer's refusal of the
 * cpu backend, naming the torch version python3 reports.  Says once on
 * stderr which of the two cases this host is.  Static buffer.
 */
static const char *torch_reason(void)
{
    static char why[512];
    static int said;
    char line[400] = "", last[400] = "";
    FILE *p = popen("python3 -c 'import torch; print(\"version \" + torch.__version__)' 2>&1", "r");
    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof line, p))
        snprintf(last, sizeof last, "%s", line);
    int st = pclose(p);
    ck_assert_int_ge(st, 0);
    last[strcspn(last, "\n")] = '\0';
    if (st == 0 && !strncmp(last, "version ", 8)) {
        snprintf(why, sizeof why,
                 "torch-compile: RuntimeError: torch %s imported, but this run's backend is cpu: the peer "
                 "measures on cuda only",
                 last + 8);
        if (!said++)
            fprintf(stderr, "check_runner: torch %s imports on this host: expecting the peer's cpu refusal\n",
                    last + 8);
    } else {
        snprintf(why, sizeof why, "torch-compile: %s", last);
        if (!said++)
            fprintf(stderr, "check_runner: torch does not import on this host: expecting its import error\n");
    }
    return why;
}

/* ---- tests ------------------------------------------------------------ */

/* quick.json end to end on cpu: every timed job completes or is rescued
 * (below).  Its wall time is the host's (under ASan beside another suite
 * it took 67 s, 13 s in a lighter run here): printed, never judged; what a run
 * demands and where its wall went are the run's own summary's and
 * docs/runner.md's ("Where a job's time goes, and a run's"). */
START_TEST(test_the_quick_protocol_runs_end_to_end_on_cpu)
{
    double t0 = now_s(), wall;
    pid_t pid = start_run("protocols/quick.json", 0);
    int rc = wait_exit(pid);
    snap s;
    size_t completed = 0, skipped = 0;

    wall = now_s() - t0;
    ck_assert_int_eq(rc, 0);
    printf("check_runner: quick.json took %.1f s here\n", wall);
    read_snap(&s);
    ck_assert(s.has_status);
    int noise = 0;
    for (size_t i = 0; i < s.n_jobs; i++) {
        const att_info *a = last_att(&s, s.jobs[i].key, NULL);
        ev_outcome o;
        ck_assert_ptr_nonnull(a);
        if (!strncmp(s.jobs[i].key, "rescue/", 7))
            continue; /* judged with the job it retries */
        o = att_outcome(&s, a);
        if (o == EV_OUT_COMPLETED || completed_up_to_noise(&s, s.jobs[i].key, &noise)) {
            completed++;
            ck_assert_int_eq(hot_samples(&s, a->attempt_id), 7);
        } else {
            ck_assert_msg(o == EV_OUT_SKIPPED, "%s: %s", s.jobs[i].key, ev_outcome_name(o));
            ck_assert(strstr(s.jobs[i].key, "/cub/") || strstr(s.jobs[i].key, "/torch-compile/"));
            if (strstr(s.jobs[i].key, "/torch-compile/"))
                ck_assert_msg(!strcmp(a->skip_reason, torch_reason()), "%s", a->skip_reason);
            skipped++;
        }
    }
    /* 6 cases x (default rows1 rows2) + short on the one case it fits (130x96
     * fp32) + floor + ceiling + ceiling-l2 + 6 auto + 6 recheck; 6 x (cub torch) skipped */
    ck_assert_uint_eq(completed, 6 * 3 + 1 + 3 + 6 + 6);
    ck_assert_uint_eq(skipped, 12);
    ck_assert_str_eq(s.status, noise ? "failed" : "completed");
    /* a calibration job that broke a sample rule takes its case out of the
     * fit, which may then have too few geometries */
    ck_assert_msg(s.fits == 1 || noise > 0, "%d fits and no noise", (int)s.fits);
    if (noise)
        printf(
            "check_runner: quick.json: %d job(s) failed a sample rule (this host's noise) and were rescued\n",
            noise);
    free(s.samples);
}
END_TEST

/* The target of the real runs whose point is not timing: one replay of
 * 100 ops is longer than 0.001 ms on any host, so every calibration
 * chooses one replay, a sample of one replay is exempt from the upper
 * side of both bands (docs/verify.md, check 5) and no replay is as short
 * as their lower sides: their timed jobs complete whatever the host's
 * load, and the tests hold them to it. */
#define FIXED_TARGET "0.001"

/* The fault arms' protocol.  Real-time priority (where the host grants
 * it) and a 5 ms target keep the overrun fault detectable on a busy host:
 * it needs a chosen count of at least 2 replays (at 1, a longer sample is
 * no breach), which a slow replay at normal priority on a loaded 2-core
 * host did not leave.  The job timeout is the hang arm's: every other job
 * takes well under a second idle, and 10 s is a margin for a busy host
 * (at 2 s, a host at load 5 with three other suites' runs once timed out
 * the auto job's process). */
static const char faults_protocol[] =
    "{\"seed\": 3, \"samples\": 3, \"warmup_ms\": 10, \"target_sample_ms\": 5, \"cold_samples\": 1,\n"
    " \"job_timeout_s\": 10, \"reference_arms\": false, \"cpu_priority\": \"realtime\",\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"fault-exit\", \"fault-signal\", \"fault-hang\", \"fault-garbage\", "
    "\"fault-stop\",\n"
    "          \"fault-wrong\", \"fault-flaky\", \"fault-overrun\", \"cub\"],\n"
    " \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [\n"
    "   {\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3},\n"
    "   {\"name\": \"fault-signal\", \"kind\": \"signal\", \"signal\": 11},\n"
    "   {\"name\": \"fault-hang\", \"kind\": \"hang\"},\n"
    "   {\"name\": \"fault-garbage\", \"kind\": \"garbage\"},\n"
    "   {\"name\": \"fault-stop\", \"kind\": \"stop-after\", \"samples\": 2},\n"
    "   {\"name\": \"fault-wrong\", \"kind\": \"wrong-output\"},\n"
    "   {\"name\": \"fault-flaky\", \"kind\": \"exit\", \"code\": 4, \"when\": \"original\"},\n"
    "   {\"name\": \"fault-overrun\", \"kind\": \"overrun\", \"factor\": 10, \"when\": \"original\"}],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 5, \"cols\": 64, \"dtype\": \"fp32\", \"default_rows\": "
    "4}]}\n";

START_TEST(test_every_outcome_class_is_recorded_and_rescue_retries_only_the_retryable)
{
    const char *proto = write_file("faults.json", faults_protocol);
    static const struct {
        const char *key, *outcome;
    } want[] = {
        {"main/0/default/initial", "completed"},
        {"main/0/fault-exit/initial", "failed-exit"},
        {"main/0/fault-signal/initial", "failed-signal"},
        {"main/0/fault-hang/initial", "failed-timeout"},
        {"main/0/fault-garbage/initial", "failed-protocol"},
        {"main/0/fault-stop/initial", "failed-protocol"},
        {"main/0/fault-wrong/initial", "failed-validation"},
        {"main/0/fault-flaky/initial", "failed-exit"},
        {"main/0/fault-overrun/initial", "failed-protocol"},
        {"main/0/cub/initial", "skipped"},
        {"rescue/0/fault-exit/retry-1", "failed-exit"},
        {"rescue/0/fault-signal/retry-1", "failed-signal"},
        {"rescue/0/fault-hang/retry-1", "failed-timeout"},
        {"rescue/0/fault-garbage/retry-1", "failed-protocol"},
        {"rescue/0/fault-stop/retry-1", "failed-protocol"},
        {"rescue/0/fault-flaky/retry-1", "completed"},
        {"rescue/0/fault-overrun/retry-1", "completed"},
        {"policy/0/auto/initial", "completed"},
        {"recheck/0/default/recheck", "completed"},
    };
    snap s;
    int rc = wait_exit(start_run(proto, 0));

    ck_assert_int_eq(rc, 0);
    read_snap(&s);
    int noise = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int ok = !strcmp(job_outcome(&s, want[i].key), want[i].outcome) ||
                 (!strcmp(want[i].outcome, "completed") && completed_up_to_noise(&s, want[i].key, &noise));
        ck_assert_msg(ok, "%s: %s, want %s", want[i].key, job_outcome(&s, want[i].key), want[i].outcome);
    }
    /* Exactly those seven rescue jobs (and one per job the host's noise
     * failed by a sample rule), each linked to its original. */
    ck_assert_uint_ge(s.n_jobs, 10 + 1 + 1 + 7);
    ck_assert_uint_le(s.n_jobs, 10 + 1 + 1 + 7 + (size_t)noise);
    for (size_t i = 0; i < s.n_jobs; i++) {
        int is_rescue = !strncmp(s.jobs[i].key, "rescue/", 7);
        ck_assert_int_eq(is_rescue, s.jobs[i].retry_of != 0);
        if (is_rescue) {
            char orig[96], porig[128];
            snprintf(orig, sizeof orig, "main/%s", s.jobs[i].key + 7);
            memcpy(strstr(orig, "retry-1"), "initial", 8);
            snprintf(porig, sizeof porig, "policy/%s", orig + 5); /* auto, rescued after the noise */
            for (size_t j = 0; j < s.n_jobs; j++)
                if (s.jobs[j].job_id == s.jobs[i].retry_of)
                    ck_assert_msg(!strcmp(s.jobs[j].key, orig) || !strcmp(s.jobs[j].key, porig),
                                  "%s retries %s", s.jobs[i].key, s.jobs[j].key);
        }
    }
    /* The wrong output kept its timings. */
    ck_assert_int_eq(hot_samples(&s, last_att(&s, "main/0/fault-wrong/initial", NULL)->attempt_id), 3);
    /* The overrun ran ten times the replays it recorded: its first hot
     * sample's op check counts the replays that ran (kernels/plants.h),
     * failed-protocol with both counts as the reason, every sample kept. */
    {
        const att_info *o = last_att(&s, "main/0/fault-overrun/initial", NULL);
        ck_assert_int_eq(hot_samples(&s, o->attempt_id), 3);
        ck_assert_msg((strstr(o->protocol_error, "the op check of hot sample 0 says ") == o->protocol_error &&
                       strstr(o->protocol_error, "replays ran, its samples' records give")) ||
                          (strstr(o->protocol_error, "protocol rule: ") == o->protocol_error &&
                           strstr(o->protocol_error, "outside the wide band")),
                      "%s", o->protocol_error);
    }
    ck_assert(s.has_status);
    ck_assert_str_eq(s.status, "failed");
    ck_assert_str_eq(s.rescue, "failed-after-rescue");
    free(s.samples);
}
END_TEST

/* A supervisor at real-time priority sleeps while it waits for a worker it
 * killed at its job timeout: pinned with that worker to one CPU (both
 * inherit this test's affinity), a run whose hang arm times out ends, its
 * rescue completed.  Before, its poll did not sleep past the deadline, and
 * at a priority above the worker's it kept the killed worker off the CPU
 * it needed to exit, for good.  (Where the host refuses real-time
 * priority, both run at normal priority and the run ends all the same.)
 * Its rescue ends too, completed or, on a slow host, timed out again.
 * The 60 s are a hang guard for the run's 1 s job timeout. */
START_TEST(test_a_realtime_supervisor_pinned_to_one_cpu_with_a_killed_worker_ends_the_run)
{
    static const char proto[] =
        "{\"seed\": 3, \"samples\": 3, \"warmup_ms\": 10, \"target_sample_ms\": " FIXED_TARGET
        ", \"cold_samples\": 1,\n"
        " \"job_timeout_s\": 1, \"reference_arms\": false, \"auto_arm\": false, \"cpu_priority\": "
        "\"realtime\",\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-hang\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-hang\", \"kind\": \"hang\", \"when\": \"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 5, \"cols\": 64, \"dtype\": \"fp32\", "
        "\"default_rows\": 4}]}\n";
    cpu_set_t all, one;
    char db[512];
    int st = 0, ended = 0, c = 0;
    struct timespec ts = {0, 10 * 1000 * 1000};

    ck_assert_int_eq(sched_getaffinity(0, sizeof all, &all), 0);
    while (!CPU_ISSET(c, &all))
        c++;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    snprintf(db, sizeof db, "%s/pinned.db", dir);
    const char *path = write_file("pinned.json", proto);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    pid_t pid = start_run_db(path, db, 0); /* the run, and its workers, on CPU c alone */
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
    for (int i = 0; i < 6000 && !ended; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            ended = 1;
        else
            nanosleep(&ts, NULL);
    }
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    ck_assert_msg(ended, "the run pinned to CPU %d did not end within 60 s of its hang arm's 1 s job timeout",
                  c);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    snap s;
    ck_assert_int_eq(read_snap_db(&s, db, 0), 0);
    ck_assert_str_eq(job_outcome(&s, "main/0/fault-hang/initial"), "failed-timeout");
    /* its rescue ran and ended; whether it finished within the 1 s job
     * timeout depends on how busy the CPU is (an ASan build on a loaded
     * host takes longer), so either ending holds */
    const char *rescue = job_outcome(&s, "rescue/0/fault-hang/retry-1");
    ck_assert_msg(!strcmp(rescue, "completed") || !strcmp(rescue, "failed-timeout"), "the rescue: %s",
                  rescue);
    free(s.samples);
}
END_TEST

/* The kill and lock tests' protocol.  Its sample_band is quick.json's 0.9:
 * on the 2-vCPU VM one process's per-replay time drifts by up to about 1.5x
 * over its 0.75 s of samples (measured 2026-12-01: a job calibrated at 45
 * ms a sample read 41 down to 29 ms), which the default band of 0.5 would
 * record, rightly, as a failed-protocol attempt; these tests are about
 * kills and writers, not about this host's noise.  Two pool threads, as
 * quick.json: on the 16-core GPU host (gVisor) a pool of 16 pinned threads
 * broke the wide band in 4 of 5 of these runs once (docs/HACKING.md, "Timing noise"). */
static const char slow_protocol[] =
    "{\"seed\": 11, \"samples\": 12, \"warmup_ms\": 150, \"target_sample_ms\": 50, \"cold_samples\": 1,\n"
    " \"job_timeout_s\": 60, \"reference_arms\": false, \"tolerances\": {\"sample_band\": 0.9}, "
    "\"host_threads\": 2,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 256, \"dtype\": \"fp16\", "
    "\"default_rows\": 4},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 20, \"cols\": 300, \"dtype\": \"bf16\", \"default_rows\": "
    "8}]}\n";

/* Polls the store until an attempt is running (no process row) that has
 * at least min_samples samples; returns 1, or 0 after 60 s. */
static int wait_running_db(const char *db, int min_samples);
static int wait_running(int min_samples)
{
    char db[512];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    return wait_running_db(db, min_samples);
}

/* As wait_running, for the store at db. */
static int wait_running_db(const char *db, int min_samples)
{
    double t0 = now_s();
    struct timespec ts = {0, 20 * 1000 * 1000};
    while (now_s() - t0 < 60) {
        if (access(db, R_OK) == 0) {
            snap s;
            int found = 0;
            if (read_snap_db(&s, db, 1)) {
                nanosleep(&ts, NULL);
                continue;
            }
            for (size_t i = 0; i < s.n_atts && !found; i++) {
                int n = 0;
                if (s.atts[i].has_process)
                    continue;
                for (size_t k = 0; k < s.n_samples; k++)
                    n += s.samples[k].attempt_id == s.atts[i].attempt_id;
                found = n >= min_samples && s.n_atts >= 2;
            }
            free(s.samples);
            if (found)
                return 1;
        }
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Checks a finished run: every planned job's last attempt completed with
 * 12 hot samples, or failed a sample rule and was rescued (this host's
 * noise); completed unless the noise struck.  Returns the count of
 * interrupted attempts. */
static int check_finished(const snap *s)
{
    int interrupted = 0;
    ck_assert(s->has_status);
    int noise = 0;
    for (size_t i = 0; i < s->n_jobs; i++) {
        const att_info *a = last_att(s, s->jobs[i].key, NULL);
        ck_assert_ptr_nonnull(a);
        if (!strncmp(s->jobs[i].key, "rescue/", 7))
            continue; /* judged with the job it retries */
        ck_assert_msg(completed_up_to_noise(s, s->jobs[i].key, &noise), "%s: %s (%s)", s->jobs[i].key,
                      ev_outcome_name(att_outcome(s, a)), a->protocol_error);
        ck_assert_int_eq(hot_samples(s, a->attempt_id), 12);
    }
    ck_assert_str_eq(s->status, noise ? "failed" : "completed");
    for (size_t i = 0; i < s->n_atts; i++) {
        ck_assert(s->atts[i].has_process);
        if (s->atts[i].interrupted) {
            interrupted++;
            ck_assert_str_eq(ev_outcome_name(att_outcome(s, &s->atts[i])), "interrupted");
        }
    }
    return interrupted;
}

START_TEST(test_sigint_stops_the_run_cleanly_and_resume_finishes_it)
{
    const char *proto = write_file("slow.json", slow_protocol);
    pid_t pid = start_run(proto, 0);
    snap before, after;
    char errp[512];
    ev_buf msg = EV_BUF_INIT;

    ck_assert_msg(wait_running(1), "no running attempt seen");
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    ck_assert_int_eq(wait_exit(pid), 1);
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    ck_assert_int_eq(ev_read_file(errp, &msg, NULL), EV_OK);
    ck_assert_ptr_nonnull(strstr(msg.data, "stopped by a signal"));
    ev_buf_free(&msg);

    read_snap(&before);
    ck_assert(!before.has_status);
    {
        int interrupted = 0;
        for (size_t i = 0; i < before.n_atts; i++) {
            ck_assert_msg(before.atts[i].has_process, "attempt %lld has no process row",
                          (long long)before.atts[i].attempt_id);
            interrupted += before.atts[i].interrupted;
        }
        ck_assert_int_eq(interrupted, 1);
    }

    ck_assert_int_eq(wait_exit(start_run(proto, 1)), 0);
    read_snap(&after);
    ck_assert_int_eq(check_finished(&after), 1);
    /* Completed jobs were not repeated; every earlier sample is still there. */
    for (size_t i = 0; i < before.n_atts; i++) {
        if (before.atts[i].interrupted)
            continue;
        for (size_t j = 0; j < after.n_atts; j++)
            if (after.atts[j].job_id == before.atts[i].job_id)
                ck_assert_int_eq(after.atts[j].attempt, 1);
    }
    for (size_t i = 0; i < before.n_samples; i++) {
        int found = 0;
        for (size_t j = 0; j < after.n_samples; j++)
            found += after.samples[j].attempt_id == before.samples[i].attempt_id &&
                     after.samples[j].index == before.samples[i].index &&
                     !strcmp(after.samples[j].timing, before.samples[i].timing) &&
                     after.samples[j].ms == before.samples[i].ms;
        ck_assert_int_eq(found, 1);
    }
    free(before.samples);
    free(after.samples);
}
END_TEST

/*
 * A run stopped on one host is not resumed on another: its rounds and arms
 * are compared as measured on one host and device.  The slow protocol is
 * stopped by SIGINT; `--resume` in a UTS namespace whose host name differs
 * (unshare, as root) exits 2 naming both host hashes and what to do, and
 * writes nothing (no invocation, attempt or sample); the same resume on
 * this host finishes the run.
 */
START_TEST(test_a_run_is_resumed_only_on_the_host_that_began_it)
{
    const char *proto = write_file("slow.json", slow_protocol);
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    char db[512], cmd[2048], said[4096];
    const char *count =
        "SELECT (SELECT COUNT(*) FROM invocations) * 1000000000 + (SELECT COUNT(*) FROM attempts) "
        "* 100000 + (SELECT COUNT(*) FROM samples)";
    pid_t pid;

    if (geteuid() != 0 ||
        system("unshare --uts sh -c 'echo evident-probe >/proc/sys/kernel/hostname' 2>/dev/null") != 0) {
        fprintf(stderr, "check_runner: no UTS namespace with a host name of its own can be made here (not "
                        "root, no unshare, or no /proc): another host's resume not tested\n");
        return;
    }
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    pid = start_run(proto, 0);
    ck_assert_msg(wait_running(1), "no running attempt seen");
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    ck_assert_int_eq(wait_exit(pid), 1);
    long long before = db_int(db, count);
    snprintf(cmd, sizeof cmd,
             "unshare --uts sh -c 'echo evident-elsewhere >/proc/sys/kernel/hostname && exec %s/evident run "
             "--protocol %s --db %s "
             "--resume --stage-ahead 0'",
             build, proto, db);
    ck_assert_int_eq(sh_said(cmd, said, sizeof said), 2);
    ck_assert_msg(strstr(said, "--resume: run 1 began on another host"), "%s", said);
    ck_assert_msg(strstr(said, "finish it on that host, or start a new run in another store"), "%s", said);
    ck_assert_int_eq(db_int(db, count), before);
    ck_assert_int_eq(wait_exit(start_run(proto, 1)), 0);
    ck_assert_int_gt(db_int(db, count), before);
}
END_TEST

/* The pid of pid's only child (the running worker), or -1. */
static pid_t child_of(pid_t pid)
{
    char path[64], buf[256];
    FILE *f;
    long c = -1;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%ld", &c) != 1)
        c = -1;
    fclose(f);
    return (pid_t)c;
}

/*
 * Starts the slow protocol, SIGKILLs the supervisor (and, with
 * kill_worker, the running worker's process group at the same moment, as
 * a device call's time limit kills everything) while a job has committed
 * samples, then resumes: every committed sample is still there once, the
 * cut-off attempt is interrupted, the run finishes.
 */
static void kill_and_resume(int kill_worker)
{
    const char *proto = write_file("slow.json", slow_protocol);
    pid_t pid = start_run(proto, 0), worker = -1;
    snap before, after;
    int64_t cut = 0;

    ck_assert_msg(wait_running(2), "no running attempt with samples seen");
    if (kill_worker) {
        worker = child_of(pid);
        ck_assert_int_gt(worker, 0);
    }
    ck_assert_int_eq(kill(pid, SIGKILL), 0); /* the supervisor first: it writes nothing more */
    if (kill_worker)
        ck_assert_int_eq(kill(-worker, SIGKILL), 0);
    ck_assert_int_eq(wait_exit(pid), 128 + SIGKILL);
    if (kill_worker) {
        /* the worker's group is gone (no orphan keeps measuring; 60 s: a
         * hang guard for the reaping of the orphan, which a busy host
         * once delayed past 2 s) */
        struct timespec ts = {0, 10 * 1000 * 1000};
        for (int i = 0; i < 6000 && kill(worker, 0) == 0; i++)
            nanosleep(&ts, NULL);
        ck_assert_int_ne(kill(worker, 0), 0);
    }
    read_snap(&before);
    for (size_t i = 0; i < before.n_atts; i++)
        if (!before.atts[i].has_process)
            cut = before.atts[i].attempt_id;
    ck_assert_int_gt(cut, 0);

    ck_assert_int_eq(wait_exit(start_run(proto, 1)), 0);
    read_snap(&after);
    ck_assert_int_eq(check_finished(&after), 1);
    for (size_t i = 0; i < after.n_atts; i++)
        if (after.atts[i].attempt_id == cut)
            ck_assert(after.atts[i].interrupted);
    /* Every committed sample is still there, exactly once, with its value. */
    for (size_t i = 0; i < before.n_samples; i++) {
        int found = 0;
        for (size_t j = 0; j < after.n_samples; j++)
            found += after.samples[j].attempt_id == before.samples[i].attempt_id &&
                     after.samples[j].index == before.samples[i].index &&
                     !strcmp(after.samples[j].timing, before.samples[i].timing) &&
                     after.samples[j].ms == before.samples[i].ms;
        ck_assert_int_eq(found, 1);
    }
    for (size_t i = 0; i < after.n_samples; i++)
        for (size_t j = i + 1; j < after.n_samples; j++)
            ck_assert(!(after.samples[i].attempt_id == after.samples[j].attempt_id &&
                        after.samples[i].index == after.samples[j].index &&
                        !strcmp(after.samples[i].timing, after.samples[j].timing)));
    free(before.samples);
    free(after.samples);
}

START_TEST(test_a_killed_supervisor_resumes_without_losing_or_duplicating_samples)
{
    kill_and_resume(0);
}
END_TEST

START_TEST(test_a_killed_supervisor_and_worker_resume_to_a_consistent_store)
{
    kill_and_resume(1);
}
END_TEST

/* The run's stderr file (every start_run appends to it) into buf[cap]. */
static const char *run_stderr(char *buf, size_t cap)
{
    char errp[512];
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    FILE *f = fopen(errp, "r");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

START_TEST(test_a_second_writer_or_resume_during_a_live_run_is_refused_at_once_and_disturbs_nothing)
{
    const char *proto = write_file("slow.json", slow_protocol);
    pid_t pid = start_run(proto, 0);
    char log[16384], want[64];
    snap s;

    ck_assert_msg(wait_running(1), "no running attempt with samples seen");
    for (int resume = 0; resume < 2; resume++) {
        int st;
        ck_assert_int_eq(wait_exit(start_run(proto, resume)), 2);
        /* at once: refused while the first run still ran (a writer that
         * waited for the lock would have come back after it) */
        ck_assert_msg(waitpid(pid, &st, WNOHANG) == 0,
                      "the second writer was refused only after the run ended");
    }
    snprintf(want, sizeof want, "being written by another run (pid %ld, started ", (long)pid);
    ck_assert_msg(strstr(run_stderr(log, sizeof log), want), "%s", log);
    ck_assert_int_eq(wait_exit(pid), 0);
    read_snap(&s);
    ck_assert_int_eq(check_finished(&s), 0); /* nothing interrupted, every job completed */
    free(s.samples);
}
END_TEST

/* Runs EV_BUILD/<prog> with args (NULL-terminated), stdout and stderr
 * into dir/cmd.txt (read back into log[cap]); returns its exit code. */
static int run_prog(const char *prog, const char *const *args, char *log, size_t cap)
{
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    char bin[512], out[512];
    const char *argv[24];
    size_t n = 0;
    int st;

    snprintf(bin, sizeof bin, "%s/%s", build, prog);
    snprintf(out, sizeof out, "%s/cmd.txt", dir);
    argv[n++] = bin;
    for (; args[n - 1] && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    FILE *f = fopen(out, "r");
    size_t got = f ? fread(log, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    log[got] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char disk_protocol[] =
    "{\"seed\": 12, \"cpu_priority\": \"realtime\", \"samples\": 7, \"warmup_ms\": 5, \"target_sample_ms\": "
    "2, \"cold_samples\": 1,\n"
    " \"tolerances\": {\"sample_band\": 0.9},\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 256, \"dtype\": \"fp16\", "
    "\"default_rows\": 4},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 20, \"cols\": 300, \"dtype\": \"bf16\", \"default_rows\": "
    "8},\n"
    "           {\"op\": \"reduce_sum\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", \"default_rows\": "
    "8}]}\n";

/*
 * A real small filesystem (tmpfs, so root only) fills up mid-run: the run
 * stops with a clear error, no attempt whose records were rolled back
 * counts as completed (its process row says interrupted, with the store's
 * error), and after the filesystem grows, --resume finishes the run and its
 * bundle verifies.  Several sizes put the cut at different points.
 */
START_TEST(test_a_full_disk_mid_run_leaves_no_attempt_completed_without_its_records)
{
    int kib[18];
    for (int k = 0; k < 18; k++)
        kib[k] = 260 + 20 * k; /* the finished store is about 590 KiB */
    const char *proto = write_file("disk.json", disk_protocol);
    char mnt[300], db[340], zip[340], opt[32], log[16384];
    int stopped = 0, trials = 0;

    if (geteuid() != 0) {
        fprintf(stderr, "check_runner: not root: no tmpfs can be mounted; the full-disk test did not run\n");
        return;
    }
    snprintf(mnt, sizeof mnt, "%s/small", dir);
    snprintf(db, sizeof db, "%s/e.db", mnt);
    snprintf(zip, sizeof zip, "%s/e.zip", dir);
    ck_assert_int_eq(mkdir(mnt, 0755), 0);
    for (size_t t = 0; t < sizeof kib / sizeof kib[0]; t++) {
        snprintf(opt, sizeof opt, "size=%dk", kib[t]);
        if (mount("tmpfs", mnt, "tmpfs", 0, opt)) {
            fprintf(stderr, "check_runner: cannot mount a tmpfs (%s); the full-disk test did not run\n",
                    strerror(errno));
            return;
        }
        const char *run[] = {"run", "--protocol", proto, "--db", db, NULL};
        const char *resume[] = {"run", "--protocol", proto, "--db", db, "--resume", NULL};
        const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
        const char *ver[] = {zip, NULL};
        int rc = run_prog("evident", run, log, sizeof log);
        trials++;
        if (rc == 1) {
            stopped++;
            ck_assert_msg(strstr(log, "full"), "%s", log);
        } else {
            ck_assert_msg(rc == 0, "rc %d: %s", rc, log);
        }
        ck_assert_int_eq(mount(NULL, mnt, NULL, MS_REMOUNT, "size=64m"), 0);
        rc = run_prog("evident", resume, log, sizeof log);
        if (rc == 2 && strstr(log, "has no run to resume")) /* full before the run row was made */
            rc = run_prog("evident", run, log, sizeof log);
        ck_assert_msg(rc == 0, "%s: resume: %s", opt, log);
        ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "%s: export: %s", opt, log);
        if (run_prog("verify-bundle", ver, log, sizeof log) != 0) {
            /* the FAIL lines, not the whole report (check refuses a message over 4 KiB) */
            char fails[3000] = "";
            size_t n = 0;
            for (const char *p = log; (p = strstr(p, "FAIL")) && n + 300 < sizeof fails; p += 4) {
                const char *e = strchr(p, '\n');
                int len = e ? (int)(e - p) : (int)strlen(p);
                n += (size_t)snprintf(fails + n, sizeof fails - n, "%.*s\n", len > 280 ? 280 : len, p);
            }
            ck_abort_msg("%s: verify: %s", opt, fails);
        }
        ck_assert_int_eq(umount2(mnt, MNT_DETACH), 0);
    }
    ck_assert_msg(stopped > 0, "no trial filled the filesystem mid-run");
    printf("check_runner: full disk: %d of %d trials stopped mid-run; every one resumed, exported and "
           "verified\n",
           stopped, trials);

    /* The disk fills while a job measures (another process's file) and is
     * freed once the run has stopped: held full until then, so that the
     * supervisor's next commit meets it however long a busy host keeps
     * the supervisor from running (freed after a fixed 0.6 s, a host at
     * load 12 once let the window pass without a commit).  Asserted: the
     * run stops (exit 1), any attempt recorded with the store's error says
     * interrupted, and the resumed run exports and verifies (a completed
     * attempt without its records would FAIL).  Not forced: the window in
     * which a rolled-back batch is followed by a process row that fits; it
     * was never hit here (docs/HACKING.md, "Timing noise"), so this part cannot tell the fix
     * from its absence. */
    const char *slow = write_file("slow.json", slow_protocol);
    char junk[400], chunk[65536];
    int failed_rows = 0;
    snap sn;
    snprintf(junk, sizeof junk, "%s/junk", mnt);
    memset(chunk, 0x5a, sizeof chunk);
    ck_assert_int_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=8m"), 0);
    pid_t pid = start_run_db(slow, db, 0);
    ck_assert_msg(wait_running_db(db, 2), "no running attempt with samples seen");
    int fd = open(junk, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    while (write(fd, chunk, sizeof chunk) > 0)
        ;
    ck_assert_int_eq(errno, ENOSPC);
    int rc = wait_exit(pid);
    close(fd);
    ck_assert_int_eq(unlink(junk), 0);
    ck_assert_msg(rc == 1, "the run went on through a full disk (exit %d)", rc);
    read_snap_db(&sn, db, 0);
    for (size_t i = 0; i < sn.n_atts; i++)
        if (!strncmp(sn.atts[i].protocol_error, "store write failed: ", 20)) {
            failed_rows++;
            ck_assert(sn.atts[i].interrupted);
        }
    free(sn.samples);
    const char *resume2[] = {"run", "--protocol", slow, "--db", db, "--resume", NULL};
    const char *exp2[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver2[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", resume2, log, sizeof log) == 0, "resume: %s", log);
    ck_assert_msg(run_prog("evident", exp2, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver2, log, sizeof log) == 0, "verify: %s", log);
    ck_assert_int_eq(umount2(mnt, MNT_DETACH), 0);
    printf("check_runner: disk full mid-job until the run stopped: %d attempt(s) recorded interrupted with "
           "the store's "
           "error; resumed, exported and verified\n",
           failed_rows);
}
END_TEST

/* What the host cannot run is refused before the store is touched, exit 2,
 * with the reason: a protocol file without end (/dev/zero), a CPU outside
 * this process's affinity, a worker that would hold more than half of the
 * host's memory, cold samples whose flush would not exceed the cache.  No
 * store file is left behind. */
/* Every arm the fit does not read (rows4 here) beside those it does, in
 * three rounds: the run completes (a rows4 job once overran the fit's
 * per-schedule table and crashed the supervisor at the fit), every round
 * of every arm is in the store, and the bundle verifies. */
START_TEST(test_a_three_round_run_with_rows4_completes_exports_and_verifies)
{
    const char *proto = write_file(
        "rounds.json",
        "{\"seed\": 4, \"cpu_priority\": \"realtime\", \"rounds\": 3, \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", "
        "\"cold_samples\": 1, \"host_threads\": 2, \"job_timeout_s\": 30,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"rows4\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp16\", \"default_rows\": 8},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 64, \"dtype\": \"bf16\", \"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 9, \"cols\": 512, \"dtype\": \"fp32\", \"default_rows\": 8,"
        " \"role\": \"holdout\"}]}\n");
    int rc = wait_exit(start_run(proto, 0));
    snap s;
    read_snap(&s);
    ck_assert_msg(rc == 0, "exit %d", rc);
    ck_assert(s.has_status);
    size_t rounds_seen = 0;
    for (size_t i = 0; i < s.n_jobs; i++) {
        if (strncmp(s.jobs[i].key, "rescue/", 7) && strstr(s.jobs[i].key, "/rows4/round-"))
            rounds_seen++; /* round 1 in main, rounds 2 and 3 in policy */
        if (!strncmp(s.jobs[i].key, "rescue/", 7))
            continue;
        const att_info *a = last_att(&s, s.jobs[i].key, NULL);
        ck_assert_ptr_nonnull(a);
        ck_assert_msg(att_outcome(&s, a) == EV_OUT_COMPLETED, "%s: %s (%s)", s.jobs[i].key,
                      ev_outcome_name(att_outcome(&s, a)), a->protocol_error);
    }
    ck_assert_uint_eq(rounds_seen, 4 * 3);
    ck_assert_int_eq((int)s.fits, 1);
    free(s.samples);
    char db[512], zip[512], log[4096];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    snprintf(zip, sizeof zip, "%s/rounds.zip", dir);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
}
END_TEST

/* A protocol declaring model_schedules with rows4 and short (130x96 fp32
 * B8 has short rows: 24 chunks, 16 rows a program; 33x128 fp32 B4 takes
 * rows4 as its default; 9x512 fp32 is too long for short): the run fits
 * over the five schedules, its auto jobs follow the selector over them,
 * the export writes the declared list in model.json, and the bundle
 * verifies (the refit and the selector check both read the mask). */
START_TEST(test_a_run_declaring_rows4_and_short_to_the_model_completes_exports_and_verifies)
{
    const char *proto = write_file(
        "scheds.json",
        "{\"seed\": 5, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", "
        "\"cold_samples\": 1, \"host_threads\": 2, \"job_timeout_s\": 30,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"rows4\", \"short\"],\n"
        " \"model_schedules\": [\"default\", \"rows1\", \"rows2\", \"rows4\", \"short\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", \"default_rows\": 4},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp16\", \"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 9, \"cols\": 512, \"dtype\": \"fp32\", \"default_rows\": 8,"
        " \"role\": \"holdout\"}]}\n");
    int rc = wait_exit(start_run(proto, 0));
    snap s;
    read_snap(&s);
    ck_assert_msg(rc == 0, "exit %d", rc);
    ck_assert(s.has_status);
    size_t n_short = 0, n_auto = 0;
    for (size_t i = 0; i < s.n_jobs; i++) {
        if (!strncmp(s.jobs[i].key, "rescue/", 7))
            continue;
        n_short += strstr(s.jobs[i].key, "/short/") != NULL;
        n_auto += strstr(s.jobs[i].key, "/auto/") != NULL;
        const att_info *a = last_att(&s, s.jobs[i].key, NULL);
        ck_assert_ptr_nonnull(a);
        ck_assert_msg(att_outcome(&s, a) == EV_OUT_COMPLETED, "%s: %s (%s)", s.jobs[i].key,
                      ev_outcome_name(att_outcome(&s, a)), a->protocol_error);
    }
    ck_assert_uint_eq(n_short, 3); /* not on 9x512 fp32 */
    ck_assert_uint_eq(n_auto, 4);
    ck_assert_int_eq((int)s.fits, 1);
    free(s.samples);
    char db[512], zip[512], log[4096];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    snprintf(zip, sizeof zip, "%s/scheds.zip", dir);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    ck_assert_msg(zip_member_has(zip, "model.json", "\"model_schedules\""),
                  "model.json of %s does not declare model_schedules", zip);
}
END_TEST

/* SIGTERM in every phase: before the first job (store creation, the
 * environment probe), during main, the fit and policy, rescue and recheck.
 * Each time the run stops within a few seconds with exit 1 and says how to
 * finish it; --resume finishes it; the bundle verifies. */
/* A stand-in for `python3 peer_torch.py --compile-cases SPEC` (run by
 * /bin/sh): case by case, by the case's rows, it prints a compile time
 * (only with the run's cache and one compile thread in its environment),
 * fails, hangs, or (a case not needed) leaves a marker that it ran. */
static const char fake_compiler[] =
    "while [ $# -gt 0 ]; do [ \"$1\" = --compile-cases ] && spec=$2; shift; done\n"
    "IFS=';'\n"
    "for c in $spec; do\n"
    "  i=${c%%:*}; rows=$(echo \"$c\" | cut -d: -f4)\n"
    "  case $rows in\n"
    "  1) [ \"$TORCHINDUCTOR_CACHE_DIR\" = \"$EV_T_CACHE/inductor\" ] && [ "
    "\"$TORCHINDUCTOR_COMPILE_THREADS\" = 1 ] &&\n"
    "     echo \"{\\\"case\\\": $i, \\\"compile_ns\\\": 1234}\" ;;\n"
    "  2) exit 3 ;;\n"
    "  3) exec sleep 30 ;;\n"
    "  *) touch \"$EV_T_CACHE.ran\" ;;\n"
    "  esac\n"
    "done\n";

/* The compile-ahead step: the needed cases dealt to a few processes (here
 * two: cases 0 and 2 to one, 1 to the other), in the run's cache; a
 * failure or a hang (past job_timeout_s per case) costs that process's
 * remaining cases their figures, never the run or a case already done; a
 * case not needed is not compiled; a stop ends it with EV_EINTR. */
START_TEST(test_compile_ahead_compiles_each_needed_case_and_survives_failures_and_hangs)
{
    static const char pj[] =
        "{\"seed\": 1, \"samples\": 2, \"warmup_ms\": 1, \"target_sample_ms\": 1, \"job_timeout_s\": 1,\n"
        " \"arms\": [\"torch-compile\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 1, \"cols\": 64, \"dtype\": \"fp32\", "
        "\"default_rows\": 1},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 2, \"cols\": 64, \"dtype\": \"fp32\", \"default_rows\": 1},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 3, \"cols\": 64, \"dtype\": \"fp32\", \"default_rows\": 1},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 4, \"cols\": 64, \"dtype\": \"fp32\", \"default_rows\": 1}]}\n";
    ev_protocol p;
    ev_err err = {""};
    ev_ahead_opts o;
    ev_ahead_result r;
    int64_t ns[4];
    int need[4] = {1, 1, 1, 0};
    char cache[512], script[512], marker[600];
    volatile sig_atomic_t stop = 0;
    double t0;

    ck_assert_msg(ev_protocol_parse(pj, strlen(pj), &p, &err) == EV_OK, "%s", err.msg);
    snprintf(script, sizeof script, "%s", write_file("fake_compiler.sh", fake_compiler));
    ev_torch_cache_path(dir, 7, cache, sizeof cache);
    ck_assert_str_eq(cache + strlen(dir), ".torch-cache-run7");
    setenv("EV_T_CACHE", cache, 1);
    memset(&o, 0, sizeof o);
    o.proto = &p;
    o.need = need;
    o.python = "/bin/sh";
    o.script = script;
    o.cache = cache;
    o.parallel = 2;
    o.stop = &stop;
    t0 = now_s();
    ck_assert_int_eq(ev_compile_ahead(&o, ns, &r, &err), EV_OK);
    /* the hung case was cut short: well before its own 30 s sleep ended */
    ck_assert_msg(now_s() - t0 < 25.0, "%.2f s for a 1 s timeout", now_s() - t0);
    ck_assert_int_eq(ns[0], 1234);
    ck_assert_int_eq(ns[1], 0);
    ck_assert_int_eq(ns[2], 0);
    ck_assert_int_eq(ns[3], 0);
    ck_assert_uint_eq(r.cases, 3);
    ck_assert_uint_eq(r.failed, 2);
    ck_assert_msg(strstr(r.first_failure, "case 1: it exited non-zero"), "%s", r.first_failure);
    snprintf(marker, sizeof marker, "%s.ran", cache);
    ck_assert_int_ne(access(marker, F_OK), 0);

    stop = 1;
    ck_assert_int_eq(ev_compile_ahead(&o, ns, &r, &err), EV_EINTR);
    ck_assert_uint_eq(r.cases, 0);
    unsetenv("EV_T_CACHE");
    ev_protocol_free(&p);
}
END_TEST

START_TEST(test_sigterm_is_honoured_in_every_phase_and_resume_finishes_the_run)
{
    static const char *const phases[] = {"setup", "main/", "policy/", "rescue/", "recheck/"};
    /* no reference arms: a loaded host once ran the floor job's empty
     * tasks at 4x an op's time, which verify-bundle rightly FAILs as an
     * impossible op; and normal priority, so that this test, which
     * watches the run to signal it, is not kept off the CPUs while the
     * run measures */
    const char *proto = write_file(
        "sigterm.json",
        "{\"seed\": 9, \"samples\": 3, \"warmup_ms\": 250, \"target_sample_ms\": 5, \"cold_samples\": 1, "
        "\"host_threads\": 2, \"job_timeout_s\": 30, \"reference_arms\": false,\n"
        " \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-flaky\", \"kind\": \"exit\", \"code\": 4, \"when\": "
        "\"original\"}],\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"fault-flaky\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp16\", \"default_rows\": 4},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 64, \"dtype\": \"bf16\", \"default_rows\": "
        "8}]}\n");
    char errp[512];
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    for (size_t ph = 0; ph < sizeof phases / sizeof phases[0]; ph++) {
        char db[512], zip[512], log[4096], pat[32];
        snprintf(db, sizeof db, "%s/sigterm-%zu.db", dir, ph);
        snprintf(zip, sizeof zip, "%s/sigterm-%zu.zip", dir, ph);
        snprintf(pat, sizeof pat, " %s", phases[ph]);
        unlink(errp);
        pid_t pid = start_run_db(proto, db, 0);
        double t0 = now_s();
        if (ph == 0) {
            /* the store exists: the supervisor opened it, after evident run
             * installed its SIGTERM handler (a fixed sleep was too short for
             * a loaded host, where the signal then killed the process) */
            while (access(db, F_OK) != 0) {
                ck_assert_msg(now_s() - t0 < 600, "setup: the store was never created");
                usleep(2000);
            }
        } else {
            /* the first job of the phase has ended: the next is running */
            for (;;) {
                char buf[65536];
                FILE *f = fopen(errp, "r");
                size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
                if (f)
                    fclose(f);
                buf[n] = '\0';
                if (strstr(buf, pat))
                    break;
                /* the run ending first fails at once; the deadline only
                 * guards a hang (a loaded host under ASan took over 60 s to
                 * reach recheck/) */
                int st;
                ck_assert_msg(waitpid(pid, &st, WNOHANG) != pid, "%s: the run ended before the phase: %s",
                              phases[ph], buf);
                ck_assert_msg(now_s() - t0 < 600, "%s: the phase never started: %s", phases[ph], buf);
                usleep(2000);
            }
        }
        double ts = now_s();
        long long sig_ns = wall_ns_now();
        ck_assert_int_eq(kill(pid, SIGTERM), 0);
        int rc = wait_exit(pid);
        double took = now_s() - ts;
        char q[200];
        ck_assert_msg(rc == 1, "%s: exit %d after SIGTERM", phases[ph], rc);
        /* honoured, whatever the host's speed: no job started after the
         * signal but the one the supervisor may have been starting as it
         * came, and every attempt has its process row (the one running
         * says interrupted) */
        snprintf(q, sizeof q, "select count(*) from attempts where started_ns > %lld", sig_ns);
        ck_assert_msg(db_int(db, q) <= 1, "%s: %lld jobs started after SIGTERM", phases[ph], db_int(db, q));
        ck_assert_int_eq(db_int(db,
                                "select count(*) from attempts a left join processes p using (attempt_id) "
                                "where p.attempt_id is null"),
                         0);
        ck_assert_int_le(db_int(db, "select count(*) from processes where interrupted = 1"), 1);
        FILE *f = fopen(errp, "r");
        size_t n = f ? fread(log, 1, sizeof log - 1, f) : 0;
        if (f)
            fclose(f);
        log[n] = '\0';
        ck_assert_msg(strstr(log, "stopped by a signal") && strstr(log, "--resume"), "%s: %s", phases[ph],
                      log);
        ck_assert_msg(wait_exit(start_run_db(proto, db, 1)) == 0, "%s: resume failed", phases[ph]);
        const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
        const char *ver[] = {zip, NULL};
        ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "%s: export: %s", phases[ph], log);
        ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "%s: verify: %s", phases[ph],
                      log);
        printf("check_runner: SIGTERM in %s: stopped in %.2f s, resumed, exported and verified\n", phases[ph],
               took);
    }
}
END_TEST

/*
 * Staged processes on the cpu backend (which does not stage by default:
 * this tests the mechanism, not its speed): the run completes, releases
 * one job at a time (the verifier's check of every started_ns against the
 * ended_ns before it passes), the staged jobs record their wait, and a
 * SIGTERM with jobs staged ends them all, leaves at most the one released
 * job interrupted, and --resume finishes a run that verifies.
 */
START_TEST(test_a_staged_run_releases_one_job_at_a_time_verifies_and_stops_cleanly)
{
    char db[512], zip[512], log[8192];
    /* real-time priority for the run this test only waits for (at normal
     * priority a loaded host once ran the floor job's empty tasks at 4x an
     * op's time, an impossible op to verify-bundle) */
    const char *proto = write_file(
        "staged.json",
        "{\"seed\": 4, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 60, "
        "\"target_sample_ms\": 5, \"cold_samples\": 1, \"host_threads\": 2, \"job_timeout_s\": 30, "
        "\"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"torch-compile\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp16\", \"default_rows\": 4},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 64, \"dtype\": \"bf16\", \"default_rows\": "
        "8}]}\n");
    snprintf(db, sizeof db, "%s/staged.db", dir);
    snprintf(zip, sizeof zip, "%s/staged.zip", dir);
    const char *run[] = {"run", "--protocol", proto, "--db", db, "--stage-ahead", "4", NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    char cmd[1200];
    /* every measured job but the first of each phase was staged (the
     * three torch-compile jobs skip here, without a gate-wait): 14 */
    snprintf(cmd, sizeof cmd,
             "test $(python3 tests/zipcat.py '%s' validation.json | grep -o '\"gate-wait\"' | wc -l) -ge 12",
             zip);
    ck_assert_msg(system(cmd) == 0, "fewer than 12 staged jobs recorded their gate-wait");
    const char *bad[] = {"run", "--protocol", proto, "--db", db, "--stage-ahead", "33", NULL};
    ck_assert_int_eq(run_prog("evident", bad, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "--stage-ahead must be an integer from 0 to 32, not '33'"), "%s", log);

    /* SIGTERM with jobs staged (longer warm-ups: a job is seen running; at
     * normal priority, so that this test sees it, and without reference
     * arms, as the SIGTERM test's protocol) */
    proto = write_file(
        "staged-slow.json",
        "{\"seed\": 4, \"samples\": 3, \"warmup_ms\": 250, \"target_sample_ms\": 5, \"cold_samples\": 1, "
        "\"host_threads\": 2, \"job_timeout_s\": 30, \"reference_arms\": false, \"tolerances\": "
        "{\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"torch-compile\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp16\", \"default_rows\": 4},\n"
        "  {\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 64, \"dtype\": \"bf16\", \"default_rows\": "
        "8}]}\n");
    snprintf(db, sizeof db, "%s/staged-stop.db", dir);
    snprintf(zip, sizeof zip, "%s/staged-stop.zip", dir);
    g_stage = "4";
    pid_t pid = start_run_db(proto, db, 0);
    ck_assert(wait_running_db(db, 1));
    long long sig_ns = wall_ns_now();
    char q[200];
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    ck_assert_int_eq(wait_exit(pid), 1);
    /* no job started after the signal but the one it may have met starting */
    snprintf(q, sizeof q, "select count(*) from attempts where started_ns > %lld", sig_ns);
    ck_assert_int_le(db_int(db, q), 1);
    {
        snap sn;
        int open_atts = 0;
        ck_assert_int_eq(read_snap_db(&sn, db, 0), 0);
        for (size_t i = 0; i < sn.n_atts; i++)
            open_atts += !sn.atts[i].has_process || att_outcome(&sn, &sn.atts[i]) == EV_OUT_INTERRUPTED;
        ck_assert_msg(open_atts <= 1, "%d attempts left open or interrupted by one SIGTERM", open_atts);
        free(sn.samples);
    }
    ck_assert_int_eq(wait_exit(start_run_db(proto, db, 1)), 0);
    g_stage = "0";
    const char *exp2[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver2[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", exp2, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver2, log, sizeof log) == 0, "verify: %s", log);
}
END_TEST

/*
 * Anyone's kernel, on the cpu backend: six declared kernels in one run, in
 * a directory of the build tree given by a relative path.  The good one completes and
 * is validated like ours; one that does not compile fails with the
 * compiler's message; a missing entry point, a crash, a hang and a write
 * past the output each fail their own job (failed-exit with the reason,
 * failed-signal, failed-timeout, failed-exit "wrote outside its output"),
 * and the rest of the run goes on.  The bundle holds every source and the
 * build receipts, and verifies.  A source that is a symlink is refused
 * before the store is touched.
 */
START_TEST(test_external_kernels_run_like_our_arms_and_each_bad_one_fails_only_its_jobs)
{
    char d[300], path[400], db[512], zip[512], log[16384], cmd[8192];
    static const char *const files[][2] = {
        {"ok.c", "#include <stdint.h>\n#include \"evident_kernel.h\"\n"
                 "int k_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride) {\n"
                 "  const float *x = in; float *y = out;\n"
                 "  for (int64_t r = 0; r < rows; r++) { float a = 0; for (int64_t c = 0; c < cols; c++) a "
                 "+= x[r * stride + c]; y[r] = a; }\n"
                 "  return 0; }\n"},
        {"nocompile.c", "int k_sum(void) { return this is not C; }\n"},
        {"noentry.c", "int another_name(void) { return 0; }\n"},
        {"crash.c",
         "#include <stdint.h>\nint k_sum(const void *in, void *out, int64_t r, int64_t c, int64_t s) {\n"
         "  (void)in; (void)out; (void)r; (void)c; (void)s; *(volatile int *)0 = 1; return 0; }\n"},
        {"hang.c",
         "#include <stdint.h>\nint k_sum(const void *in, void *out, int64_t r, int64_t c, int64_t s) {\n"
         "  (void)in; (void)out; (void)r; (void)c; (void)s; for (volatile int i = 0;; i++) ; return 0; }\n"},
        {"oob.c",
         "#include <stdint.h>\nint k_sum(const void *in, void *out, int64_t rows, int64_t c, int64_t s) {\n"
         "  float *y = out; (void)in; (void)c; (void)s;\n"
         "  for (int64_t r = 0; r <= rows; r++) y[r] = 0; return 0; }\n"},
        {"overread.c", "#include <stdint.h>\nint k_sum(const void *in, void *out, int64_t rows, int64_t "
                       "cols, int64_t stride) {\n"
                       "  const float *x = in; float *y = out; (void)cols; (void)stride;\n"
                       "  for (int64_t r = 0; r < rows; r++) y[r] = x[r - 64]; return 0; }\n"},
        {"writesinput.c", "#include <stdint.h>\nint k_sum(const void *in, void *out, int64_t rows, int64_t "
                          "cols, int64_t stride) {\n"
                          "  const float *x = in; float *y = out;\n"
                          "  for (int64_t r = 0; r < rows; r++) { float a = 0; for (int64_t c = 0; c < cols; "
                          "c++) a += x[r * stride + "
                          "c]; y[r] = a; }\n"
                          "  ((float *)in)[0] = 0; return 0; }\n"},
    };
    snprintf(d, sizeof d, "build/ext-test-%d", (int)getpid());
    mkdir("build", 0755);
    ck_assert_int_eq(mkdir(d, 0755), 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", d, files[i][0]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(files[i][1], f);
        fclose(f);
    }
    static const char proto_text[] =
        "{\"seed\": 3, \"samples\": 3, \"warmup_ms\": 40, \"target_sample_ms\": 5, \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"job_timeout_s\": 30, \"retries\": 0, \"reference_arms\": false,\n"
        " \"cpu_priority\": \"realtime\",\n"
        " \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {}},\n"
        " \"arms\": [\"rows1\", \"ext-ok\", \"ext-nocompile\", \"ext-noentry\", \"ext-crash\", \"ext-hang\", "
        "\"ext-oob\", \"ext-overread\", \"ext-writesinput\"],\n"
        " \"kernels\": [\n"
        "  {\"name\": \"ext-ok\", \"sources\": {\"cpu\": \"ok.c\"}, \"entries\": {\"reduce_sum/fp32\": "
        "\"k_sum\"}},\n"
        "  {\"name\": \"ext-nocompile\", \"sources\": {\"cpu\": \"nocompile.c\"}, \"entries\": "
        "{\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-noentry\", \"sources\": {\"cpu\": \"noentry.c\"}, \"entries\": "
        "{\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-crash\", \"sources\": {\"cpu\": \"crash.c\"}, \"entries\": {\"reduce_sum/fp32\": "
        "\"k_sum\"}},\n"
        "  {\"name\": \"ext-hang\", \"sources\": {\"cpu\": \"hang.c\"}, \"entries\": {\"reduce_sum/fp32\": "
        "\"k_sum\"}},\n"
        "  {\"name\": \"ext-oob\", \"sources\": {\"cpu\": \"oob.c\"}, \"entries\": {\"reduce_sum/fp32\": "
        "\"k_sum\"}},\n"
        "  {\"name\": \"ext-overread\", \"sources\": {\"cpu\": \"overread.c\"}, \"entries\": "
        "{\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-writesinput\", \"sources\": {\"cpu\": \"writesinput.c\"}, \"entries\": "
        "{\"reduce_sum/fp32\": \"k_sum\"}}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp32\", \"default_rows\": "
        "4}]}\n";
    snprintf(path, sizeof path, "%s/protocol.json", d);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(proto_text, f);
    fclose(f);
    snprintf(db, sizeof db, "%s/ext.db", dir);
    snprintf(zip, sizeof zip, "%s/ext.zip", dir);
    const char *run[] = {"run", "--protocol", path, "--db", db, NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, "--source-tree", ".", NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, sys\n"
        "v = json.load(sys.stdin)\n"
        "want = {\"ext-ok\": (\"completed\", \"\"), \"ext-nocompile\": (\"failed-exit\", \"error\"),\n"
        "        \"ext-noentry\": (\"failed-exit\", \"defines no entry\"), \"ext-crash\": "
        "(\"failed-exit\", \"faulted (signal 11) at an address outside the shared memory\"),\n"
        "        \"ext-hang\": (\"failed-timeout\", \"\"), \"ext-oob\": (\"failed-exit\", \"wrote "
        "outside its output\"),\n"
        "        \"ext-overread\": [(\"failed-exit\", \"touched the guard page before the inputs\"),\n"
        "                         (\"failed-validation\", \"wrong on a row planted from a secret seed\")],\n"
        "        \"ext-writesinput\": (\"failed-exit\", \"wrote its own input\")}\n"
        "bad = []\n"
        "for j in v[\"jobs\"]:\n"
        "    if j[\"arm\"] not in want or j[\"phase\"] != \"main\":\n"
        "        continue\n"
        "    alts = want[j[\"arm\"]] if isinstance(want[j[\"arm\"]], list) else [want[j[\"arm\"]]]\n"
        "    if j[\"case_index\"] == 1:\n"
        "        alts = [(\"skipped\", \"\")]\n"
        "    p = j[\"attempts\"][-1][\"process\"]\n"
        "    tail = p[\"stderr_tail\"] + (p[\"skip_reason\"] or \"\") + (p[\"protocol_error\"] or \"\")\n"

        "    if not any(j[\"outcome\"] == oc and text in tail for oc, text in alts):\n"
        "        bad.append((j[\"job_key\"], j[\"outcome\"], tail[-300:]))\n"
        "ks = [k for i in v[\"invocations\"] for k in i[\"environment\"].get(\"kernels\", [])]\n"
        "oks = sorted(k[\"name\"] for k in ks if k[\"ok\"])\n"
        "if oks != [\"ext-crash\", \"ext-hang\", \"ext-noentry\", \"ext-ok\", \"ext-oob\", "
        "\"ext-overread\", \"ext-writesinput\"] or len(ks) != 8: bad.append((\"receipts\", oks))\n"
        "print(bad); sys.exit(1 if bad else 0)' && python3 tests/zipcat.py -l '%s' | grep -q "
        "'sources/external/ext-crash/crash.c'",
        zip, zip);
    ck_assert_msg(sh_said(cmd, log, sizeof log) == 0,
                  "the external jobs' outcomes, reasons or receipts are not as declared: %s", log);

    /* a source that is a symlink: refused before the store is touched */
    char target[400], link[400], db2[512];
    snprintf(target, sizeof target, "ok.c");
    snprintf(link, sizeof link, "%s/link.c", d);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(path, sizeof path, "%s/linked.json", d);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(
        "{\"seed\": 3, \"arms\": [\"ext-l\"], \"kernels\": [{\"name\": \"ext-l\", \"sources\": {\"cpu\": "
        "\"link.c\"}, "
        "\"entries\": {\"reduce_sum/fp32\": \"k_sum\"}}], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 3, "
        "\"cols\": 8, \"dtype\": \"fp32\", \"default_rows\": 1}]}\n",
        f);
    fclose(f);
    snprintf(db2, sizeof db2, "%s/ext-link.db", dir);
    const char *lrun[] = {"run", "--protocol", path, "--db", db2, NULL};
    ck_assert_int_eq(run_prog("evident", lrun, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "is a symlink"), "%s", log);
    ck_assert_int_ne(access(db2, F_OK), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The first interpreter that imports numpy (python3 on PATH, then
 * Debian's own, where `make deps` installs python3-numpy), or NULL: a
 * Python arm's tests on cpu need one.  Where none does, they may be left
 * out only on a DEPS= build (a host without a package manager's network),
 * and say so; anywhere else the absence fails them.  Static buffer. */
static const char *numpy_python(void)
{
    static const char *const pys[] = {"python3", "/usr/bin/python3"};
    char cmd[200];
    for (size_t i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s -c 'import numpy' >/dev/null 2>&1", pys[i]);
        if (system(cmd) == 0)
            return pys[i];
    }
    const char *deps = getenv("EV_DEPS");
    ck_assert_msg(deps && *deps,
                  "python3-numpy: neither python3 nor /usr/bin/python3 imports numpy: make deps installs it "
                  "(a Python arm on cpu runs on numpy)");
    printf(
        "check_runner: the Python arm's tests left out: neither python3 nor /usr/bin/python3 imports numpy, "
        "and this build uses DEPS=%s (no package manager here)\n",
        deps);
    return NULL;
}

/*
 * A Python arm on cpu: examples/numpy-sum (a numpy function per op and
 * dtype) runs under the protocol beside our arms, in its own process,
 * through the worker's own protocol: every job completes (a sample rule
 * broken by the host's noise is rescued), its device record names the
 * versions that ran it and how its ops were batched, its module is a
 * bundle member its receipt names, and the bundle verifies against the
 * tree.  The report names the defences a Python arm is not held to.
 */
START_TEST(test_a_numpy_arm_runs_under_the_protocol_and_its_bundle_verifies)
{
    static snap sn;
    char db[512], zip[512], log[16384], cmd[4096], rep[512];
    const char *py = numpy_python();
    if (!py)
        return;
    snprintf(db, sizeof db, "%s/np.db", dir);
    snprintf(zip, sizeof zip, "%s/np.zip", dir);
    snprintf(rep, sizeof rep, "%s/np.md", dir);
    const char *run[] = {"run", "--protocol", "examples/numpy-sum/protocol.json", "--db", db, "--python",
                         py,    NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    read_snap_db(&sn, db, 0);
    for (int c = 0; c < 5; c++) {
        char key[64];
        snprintf(key, sizeof key, "main/%d/ext-numpy/initial", c);
        ck_assert_msg(completed_up_to_noise(&sn, key, NULL), "%s: %s\n%s", key, job_outcome(&sn, key), log);
    }
    free(sn.samples);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, "--source-tree", ".", NULL};
    const char *rp[] = {"report", zip, "--markdown", "--out", rep, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    ck_assert_msg(strstr(log, "kernel ext-numpy: a Python arm, nothing compiled"), "%s", log);
    ck_assert_msg(run_prog("evident", rp, log, sizeof log) == 0, "report: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py -l '%s' | grep -qx 'sources/external/ext-numpy/sum.py' && "
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, sys\n"
        "v = json.load(sys.stdin)\n"
        "bad = []\n"
        "for j in v[\"jobs\"]:\n"
        "    for a in j[\"attempts\"]:\n"
        "        if j[\"arm\"] != \"ext-numpy\" or a[\"outcome\"] != \"completed\": continue\n"
        "        d = a[\"device\"]\n"
        "        if sorted(d[\"versions\"]) != [\"numpy\", \"python\"] or d[\"capture\"] != \"batch\":\n"
        "            bad.append((j[\"job_key\"], d[\"versions\"], d.get(\"capture\")))\n"
        "        c = v[\"cases\"][j[\"case_index\"]]\n"
        "        if [n[\"function\"] for n in a[\"graph_nodes\"]] != [\"%%s_%%s\" %% (c[\"op\"], "
        "c[\"dtype\"])]:\n"
        "            bad.append((j[\"job_key\"], a[\"graph_nodes\"]))\n"
        "ks = [k for i in v[\"invocations\"] for k in i[\"environment\"][\"kernels\"]]\n"
        "if [(k[\"name\"], k[\"language\"], k[\"ok\"], [d[\"path\"] for d in k[\"deps\"]]) for k in ks] != "
        "[(\"ext-numpy\", \"python\", True, [\"external/ext-numpy/sum.py\"])] or not ks[0][\"not_held\"]:\n"
        "    bad.append(ks)\n"
        "print(bad); sys.exit(1 if bad else 0)' && grep -q 'ext-numpy.*not held: .*secret seed' '%s'",
        zip, zip, rep);
    ck_assert_msg(system(cmd) == 0,
                  "the numpy arm's member, receipts, device records or report are not as run");
}
END_TEST

/*
 * Every bad Python arm is a recorded failure with its reason, and the run
 * goes on (our arm and an honest Python arm beside them complete): a
 * function that raises (the traceback's last line), hangs (the watchdog),
 * allocates without bound (killed at its memory limit, saying so), prints
 * to stdout (the records are the worker's; what it printed is named),
 * returns an array or changes its output's shape, writes its input (its
 * view is read-only), names a function its module lacks (the module's
 * functions named) or imports a file of the protocol's directory it does
 * not declare; an off-by-one that leaves the last row unwritten fails
 * validation naming that row.
 */
START_TEST(test_each_bad_python_arm_is_a_recorded_failure_with_its_reason_and_the_run_goes_on)
{
    char d[300], path[400], db[512], zip[512], log[65536], cmd[8192];
    const char *py = numpy_python();
    if (!py)
        return;
    static const char module[] =
        "import numpy as np\n\n\n"
        "def ok(x, out):\n    np.sum(x, axis=1, dtype=np.float32, out=out)\n\n\n"
        "def offbyone(x, out):\n    for r in range(x.shape[0] - 1):\n"
        "        out[r] = np.sum(x[r], dtype=np.float32)\n\n\n"
        "def raises(x, out):\n    return 1 / 0\n\n\n"
        "def hangs(x, out):\n    while True:\n        pass\n\n\n"
        "keep = []\n\n\n"
        "def leaks(x, out):\n    while True:\n        keep.append(np.ones(1 << 21))\n\n\n"
        "def prints(x, out):\n    print('the sum is coming')\n    np.sum(x, axis=1, dtype=np.float32, "
        "out=out)\n\n\n"
        "def returns(x, out):\n    return np.sum(x, axis=1)[:-1]\n\n\n"
        "def reshapes(x, out):\n    out.shape = (1, out.shape[0])\n\n\n"
        "def writesinput(x, out):\n    x[0, 0] = 0\n";
    snprintf(d, sizeof d, "build/py-test-%d", (int)getpid());
    mkdir("build", 0755);
    ck_assert_int_eq(mkdir(d, 0755), 0);
    snprintf(path, sizeof path, "%s/k.py", d);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(module, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/imp.py", d);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("import helper\n\n\ndef ok(x, out):\n    out[:] = 0\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/helper.py", d);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs("X = 1\n", f);
    fclose(f);
    static const char *const arms[] = {"ok",      "offbyone", "raises",      "hangs",  "leaks", "prints",
                                       "returns", "reshapes", "writesinput", "nofunc", NULL};
    char kernels[4096] = "", arm_list[1024] = "\"rows1\", \"ext-imp\"";
    for (size_t i = 0; arms[i]; i++) {
        size_t n = strlen(kernels);
        snprintf(
            kernels + n, sizeof kernels - n,
            "  {\"name\": \"ext-%s\", \"python\": \"k.py\", \"entries\": {\"reduce_sum/fp32\": \"%s\"}%s},\n",
            arms[i], strcmp(arms[i], "nofunc") ? arms[i] : "no_such_function",
            strcmp(arms[i], "leaks") ? "" : ", \"memory_mb\": 64");
        n = strlen(arm_list);
        snprintf(arm_list + n, sizeof arm_list - n, ", \"ext-%s\"", arms[i]);
    }
    snprintf(path, sizeof path, "%s/protocol.json", d);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f,
            "{\"seed\": 3, \"samples\": 3, \"warmup_ms\": 40, \"target_sample_ms\": 5, \"cold_samples\": 1,\n"
            " \"host_threads\": 2, \"job_timeout_s\": 30, \"retries\": 0, \"reference_arms\": false,\n"
            " \"tolerances\": {\"sample_band\": 0.9}, \"reference\": {\"cpu\": {}},\n"
            " \"arms\": [%s],\n"
            " \"kernels\": [\n%s  {\"name\": \"ext-imp\", \"python\": \"imp.py\", \"entries\": "
            "{\"reduce_sum/fp32\": \"ok\"}}],\n"
            " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\", "
            "\"default_rows\": 8},\n"
            "  {\"op\": \"reduce_max\", \"rows\": 17, \"cols\": 256, \"dtype\": \"fp32\", \"default_rows\": "
            "4}]}\n",
            arm_list, kernels);
    fclose(f);
    snprintf(db, sizeof db, "%s/py.db", dir);
    snprintf(zip, sizeof zip, "%s/py.zip", dir);
    const char *run[] = {"run", "--protocol", path, "--db", db, "--python", py, NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    /* the run's summary names the off-by-one's first bad row, its value and what was expected */
    ck_assert_msg(strstr(log,
                         "main/0/ext-offbyone/initial: failed-validation: first stage: 1 of 33 rows wrong; "
                         "the first, row 32, is nan where "),
                  "%s", log);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, "--source-tree", ".", NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, sys\n"
        "v = json.load(sys.stdin)\n"
        "want = {\"rows1\": (\"completed\", \"\"), \"ext-ok\": (\"completed\", \"\"),\n"
        "  \"ext-offbyone\": (\"failed-validation\", \"row 32 holds nan\"),\n"
        "  \"ext-raises\": (\"failed-exit\", \"ext-raises: raises raised ZeroDivisionError: division by zero "
        "during its launch\"),\n"
        "  \"ext-hangs\": (\"failed-timeout\", \"\"),\n"
        "  \"ext-leaks\": (\"failed-exit\", \"ext-leaks: killed its Python process during its launch: its "
        "anonymous resident memory reached\"),\n"
        "  \"ext-prints\": (\"failed-exit\", \"wrote 18 bytes to stdout by the end of its launch (\\\"the "
        "sum is "
        "coming \\\"): a measured function must not print\"),\n"
        "  \"ext-returns\": (\"failed-exit\", \"returns(x, out) returned a ndarray of shape (32,), dtype "
        "float32 "
        "in its launch\"),\n"
        "  \"ext-reshapes\": (\"failed-exit\", \"reshapes changed its output in its launch: out is now shape "
        "(1, "
        "33)\"),\n"
        "  \"ext-writesinput\": (\"failed-exit\", \"writesinput raised ValueError: assignment destination is "
        "read-only\"),\n"
        "  \"ext-nofunc\": (\"failed-exit\", \"k.py defines no function \\x27no_such_function\\x27: it "
        "defines "
        "hangs, leaks, offbyone, ok, prints, raises, reshapes, returns, writesinput\"),\n"
        "  \"ext-imp\": (\"failed-exit\", \"importing imp.py raised ModuleNotFoundError: No module named "
        "\\x27helper\\x27 (a module of the protocol\\x27s directory is importable only when the kernel\\x27s "
        "python list names it\")}\n"
        "bad = []\n"
        "seen = set()\n"
        "for j in v[\"jobs\"]:\n"
        "    if j[\"phase\"] != \"main\" or j[\"arm\"] not in want: continue\n"
        "    oc, text = want[j[\"arm\"]] if j[\"case_index\"] == 0 or j[\"arm\"] == \"rows1\" else "
        "(\"skipped\", \"declares no entry for reduce_max/fp32\")\n"
        "    p = j[\"attempts\"][-1][\"process\"]\n"
        "    tail = p[\"stderr_tail\"] + (p[\"skip_reason\"] or \"\")\n"
        "    seen.add(j[\"arm\"])\n"
        "    noise = j[\"arm\"] in (\"rows1\", \"ext-ok\") and j[\"outcome\"] == \"failed-protocol\" and "
        "p[\"protocol_error\"].startswith(\"protocol rule: \")\n"
        "    if j[\"outcome\"] != oc and not noise or text not in tail:\n"
        "        bad.append((j[\"job_key\"], j[\"outcome\"], tail[-300:]))\n"
        "if seen != set(want): bad.append((\"arms\", sorted(set(want) - seen)))\n"
        "print(bad); sys.exit(1 if bad else 0)'",
        zip);
    ck_assert_msg(sh_said(cmd, log, sizeof log) == 0,
                  "a bad Python arm's outcome or reason is not as it did: %s", log);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The cheat gallery (tests/cheats/cheats.json): every cheating kernel ends
 * as a recorded failure with its symptom in the reason, never a completed
 * job (one caught by the planted checks has a failed op check in its
 * record, and names the op, the row and its expected value); the honest
 * arm beside them does not fail validation, nor does ext-cheat-remap,
 * which answers wrong only where the kernel host let it remap its shared
 * memory; ext-cheat-cold-shift never answers a cold op it summed before
 * the op's request (the host is held stopped between requests);
 * ext-cheat-hog answers wrong only where its process could reserve 64 GiB
 * (not under ASan, whose host is not limited); the bundle records them
 * all and verifies. */
START_TEST(test_every_cheat_of_the_gallery_ends_as_a_recorded_failure)
{
    char db[512], zip[512], log[16384], cmd[8192];
#if defined(__SANITIZE_ADDRESS__)
    int asan = 1; /* the kernel host's address space is not limited there (khost.c): ext-cheat-hog shows it */
    fprintf(stderr,
            "check_runner: ASan build: ext-cheat-hog is held to failing, the host's memory unlimited\n");
#else
    int asan = 0;
#endif
    snprintf(db, sizeof db, "%s/cheats.db", dir);
    snprintf(zip, sizeof zip, "%s/cheats.zip", dir);
    const char *run[] = {"run", "--protocol", "tests/cheats/cheats.json", "--db", db, NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, "--source-tree", ".", NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, re, sys\n"
        "v = json.load(sys.stdin)\n"
        "ASAN = %d\n"
        "P = \"wrong on a row planted from a secret seed\"\n"
        "T = \"tried to block its signals (as pthread_create does to start a thread\"\n"
        "want = {\"ext-cheat-stale\": [(\"failed-validation\", \"\")],\n"
        "        \"ext-cheat-zero-input\": [(\"failed-exit\", \"wrote its own input\")],\n"
        "        \"ext-cheat-spill\": [(\"failed-exit\", \"wrote outside its output\")],\n"
        "        \"ext-cheat-cache\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-batch\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-first-set\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-late\": [(\"failed-exit\", T), (\"failed-validation\", P),\n"
        "                           (\"failed-protocol\", \"outlasted their timed events\")],\n"
        "        \"ext-cheat-late-crowd\": [(\"failed-exit\", T), (\"failed-validation\", P),\n"
        "                                 (\"failed-protocol\", \"outlasted their timed events\")],\n"
        "        \"ext-cheat-partial\": [(\"failed-validation\", \"\")],\n"
        "        \"ext-cheat-last-op\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-fingerprint\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-few-rows\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-fifteen\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-table\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-plant-stop\": [(\"failed-validation\", P)],\n"
        "        \"ext-cheat-undeclared\": [(\"failed-exit\", \"undeclared.c includes undeclared.h, which "
        "\"\n"
        "                                  \"the protocol does not declare\")],\n"
        "        \"ext-cheat-setsid\": [(\"failed-exit\", \"tried to start a process or thread: clone\")],\n"
        "        \"ext-cheat-peek\": [(\"failed-exit\", \"memory: process_vm_readv\")],\n"
        "        \"ext-cheat-fs\": [(\"failed-exit\", \"tried to reach the file system: openat\")]}\n"
        "if ASAN:\n"
        "    want[\"ext-cheat-hog\"] = [(\"failed-validation\", \"\")]\n"
        "seen, bad = set(), []\n"
        "for j in v[\"jobs\"]:\n"
        "    if j[\"arm\"] in want:\n"
        "        seen.add(j[\"arm\"])\n"
        "        a = j[\"attempts\"][-1]\n"
        "        pr = a[\"process\"]\n"
        "        tail = pr[\"stderr_tail\"] + (pr.get(\"protocol_error\") or \"\")\n"
        "        if not any(j[\"outcome\"] == oc and text in tail for oc, text in want[j[\"arm\"]]):\n"
        "            bad.append((j[\"job_key\"], j[\"outcome\"], tail[-200:]))\n"
        "        caught = [c for c in a.get(\"op_checks\", []) if not c[\"passed\"]]\n"
        "        if P in tail and not caught:\n"
        "            bad.append((j[\"job_key\"], \"no failed op check recorded\"))\n"
        "    elif j[\"phase\"] == \"main\" and j[\"outcome\"] not in (\"completed\", \"failed-protocol\"):\n"
        "        bad.append((j[\"job_key\"], \"an honest arm\", j[\"outcome\"]))\n"
        "    if j[\"arm\"] == \"ext-cheat-cold-shift\":\n"
        "        tail = \"\".join(a[\"process\"][\"stderr_tail\"] for a in j[\"attempts\"])\n"
        "        if \"cheat-cold-shift: ahead \" not in tail or re.search(\"ahead [1-9]\", tail):\n"
        "            bad.append((j[\"job_key\"], \"answered a cold op before its request\", tail[-200:]))\n"
        "print(bad); sys.exit(1 if bad or seen != set(want) else 0)'",
        zip, asan);
    ck_assert_msg(sh_said(cmd, log, sizeof log) == 0, "a cheat was not caught as its class says: %s", log);
}
END_TEST

/* Writes text to root/rel, making the directories on the way. */
static void put_in(const char *root, const char *rel, const char *text, size_t len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *c = path + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
            *c = '/';
        }
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* 1 when the file at path holds the bytes of needle. */
static int file_holds(const char *path, const char *needle)
{
    ev_buf b = EV_BUF_INIT;
    int found = 0;
    if (!ev_read_file(path, &b, NULL) && b.len)
        found = memmem(b.data, b.len, needle, strlen(needle)) != NULL;
    ev_buf_free(&b);
    return found;
}

/* The last 3000 bytes of a program's output: what a failed assertion
 * shows (check refuses a longer message). */
static const char *log_tail(const char *log)
{
    size_t n = strlen(log);
    return n > 3000 ? log + n - 3000 : log;
}

/*
 * Rewrites the environment record of store db (a copy the test owns):
 * its first occurrence of from becomes to, and its profile id the SHA-256
 * of the new record, as a runner that lied about it would write them (the
 * append-only trigger dropped).
 */
static void rewrite_environment(const char *db, const char *from, const char *to)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    char *msg = NULL, profile[65];
    ev_buf env = EV_BUF_INIT;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "DROP TRIGGER environments_no_update", NULL, NULL, &msg), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT json FROM environments", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    const char *old = (const char *)sqlite3_column_text(st, 0), *at = strstr(old, from);
    ck_assert_msg(at, "%s not in %s", from, old);
    ck_assert_int_eq(ev_buf_printf(&env, "%.*s%s%s", (int)(at - old), old, to, at + strlen(from)), EV_OK);
    sqlite3_finalize(st);
    ck_assert_int_eq(ev_sha256_hex(env.data, env.len, profile), EV_OK);
    ck_assert_int_eq(
        sqlite3_prepare_v2(h, "UPDATE environments SET json = ?1, profile_id = ?2", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, env.data, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, profile, -1, SQLITE_TRANSIENT);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
    ev_buf_free(&env);
}

/*
 * Your kernel from your own directory: a protocol outside the repository,
 * given by an absolute path, runs the kernels beside it (their files
 * relative to it: a translation unit and the header it includes); the
 * bundle holds them as sources/external/<arm>/<file>, whatever directory
 * they lay in; it verifies with no tree at all and with --kernel-tree of
 * the directory, and a file changed there afterwards FAILs --kernel-tree
 * naming it.  The same kernel off by one (its last column left out) fails
 * validation, and `evident run`'s summary names the stage, the first bad
 * row, the value, the expected value, the error, the bound and how many
 * rows of how many; one that does not compile shows the compiler's first
 * error line; one whose entry is missing names the entries its binary
 * has.  A record of the values the run used (the defaults written out)
 * that protocol.json does not give FAILs check 5, naming the key.  A
 * source that escapes the protocol's directory (by '..', or a directory
 * that is a symbolic link out of it) is refused in one line naming it, and
 * nothing is stored.
 */
START_TEST(test_a_protocol_outside_the_repository_runs_its_kernels_and_says_what_is_wrong)
{
    char proj[400], path[600], db[512], zip[512], log[32768], cmd[2400];
    static const char kc[] =
        "#include <stdint.h>\n#include \"evident_kernel.h\"\n#include \"acc.h\"\n"
        "int k_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride) {\n"
        "  const float *x = in; float *y = out;\n"
        "  for (int64_t r = 0; r < rows; r++) { float a = ACC_ZERO;\n"
        "    for (int64_t c = 0; c < cols; c++) a += x[r * stride + c];\n"
        "    y[r] = a; }\n  return 0; }\n";
    static const char kh[] = "#define ACC_ZERO 0.0f\n";
    static const char proto_text[] =
        "{\"seed\": 5, \"samples\": 2, \"warmup_ms\": 10, \"target_sample_ms\": 2, \"cold_samples\": 1,\n"
        " \"host_threads\": 1, \"job_timeout_s\": 30, \"retries\": 0, \"reference_arms\": false,\n"
        " \"auto_arm\": false, \"tolerances\": {\"sample_band\": 0.9}, \"reference\": {\"cpu\": {}},\n"
        " \"arms\": [\"ext-mine\", \"ext-off\", \"ext-broken\", \"ext-misnamed\"],\n"
        " \"kernels\": [\n"
        "  {\"name\": \"ext-mine\", \"sources\": {\"cpu\": [\"src/k.c\", \"src/acc.h\"]}, "
        "\"entries\": {\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-off\", \"sources\": {\"cpu\": [\"off/k.c\", \"off/acc.h\"]}, "
        "\"entries\": {\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-broken\", \"sources\": {\"cpu\": \"broken.c\"}, "
        "\"entries\": {\"reduce_sum/fp32\": \"k_sum\"}},\n"
        "  {\"name\": \"ext-misnamed\", \"sources\": {\"cpu\": [\"src/k.c\", \"src/acc.h\"]}, "
        "\"entries\": {\"reduce_sum/fp32\": \"k_total\"}}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 128, \"dtype\": \"fp32\"}]}\n";
    char off[sizeof kc + 16];

    /* the user's project: a directory of the temporary one, not the repository */
    snprintf(proj, sizeof proj, "%s/my project", dir);
    put_in(proj, "src/k.c", kc, strlen(kc));
    put_in(proj, "src/acc.h", kh, strlen(kh));
    /* off by one: the loop over columns stops one short */
    const char *at = strstr(kc, "c < cols;");
    ck_assert_ptr_nonnull(at);
    snprintf(off, sizeof off, "%.*sc < cols - 1;%s", (int)(at - kc), kc, at + strlen("c < cols;"));
    put_in(proj, "off/k.c", off, strlen(off));
    put_in(proj, "off/acc.h", kh, strlen(kh));
    put_in(proj, "broken.c", "int k_sum(void) { return this is not C; }\n", 43);
    put_in(proj, "protocol.json", proto_text, strlen(proto_text));
    snprintf(path, sizeof path, "%s/protocol.json", proj);
    ck_assert_msg(path[0] == '/', "the test's directory is not absolute: %s", path);
    snprintf(db, sizeof db, "%s/mine.db", dir);
    snprintf(zip, sizeof zip, "%s/mine.zip", dir);
    const char *run[] = {"run", "--protocol", path, "--db", db, NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log_tail(log));
    /* the summary: each failed job and why */
    ck_assert_msg(strstr(log,
                         "main/0/ext-off/initial: failed-validation: first stage: 33 of 33 rows wrong; the "
                         "first, row 0, is ") &&
                      strstr(log, " is expected (error ") && strstr(log, ", bound "),
                  "the off-by-one kernel's reason does not name its first bad row:\n%s", log_tail(log));
    ck_assert_msg(
        strstr(log, "main/0/ext-broken/initial: failed-exit: exit code 1: ") &&
            strstr(log, "external kernel ext-broken did not compile: external/ext-broken/broken.c:1:") &&
            strstr(log, "error: "),
        "the compile failure's first error line is not in the summary:\n%s", log_tail(log));
    ck_assert_msg(strstr(log, "external kernel ext-misnamed: its source defines no entry 'k_total' (the "
                              "protocol's entry for reduce_sum/fp32); the entries its binary defines: k_sum"),
                  "the missing entry does not name the entries there are:\n%s", log_tail(log));
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log_tail(log));
    snprintf(cmd, sizeof cmd,
             "python3 tests/zipcat.py -l '%s' | grep -qx 'sources/external/ext-mine/src/acc.h' && "
             "python3 tests/zipcat.py -l '%s' | grep -qx 'sources/external/ext-off/off/k.c' && "
             "! python3 tests/zipcat.py -l '%s' | grep -q 'my project'",
             zip, zip, zip);
    ck_assert_msg(system(cmd) == 0, "the kernel files are not the members sources/external/<arm>/<file>");
    /* from the bundle alone (check 10 rebuilds from its members), then
     * against the user's directory */
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log_tail(log));
    ck_assert_msg(strstr(log, "kernel ext-mine: rebuilt from the bundle's 3 members"), "%s", log_tail(log));
    const char *verk[] = {zip, "--kernel-tree", proj, NULL};
    ck_assert_msg(run_prog("verify-bundle", verk, log, sizeof log) == 0, "verify --kernel-tree: %s",
                  log_tail(log));
    ck_assert_msg(strstr(log, "7 kernel files equal the kernel tree's, and protocol.json its protocol file"),
                  "%s", log_tail(log));
    put_in(proj, "src/acc.h", "#define ACC_ZERO 1.0f\n", 23);
    ck_assert_int_eq(run_prog("verify-bundle", verk, log, sizeof log), 1);
    ck_assert_msg(strstr(log,
                         "FAIL sources: sources/external/ext-mine/src/acc.h: differs from the kernel tree's "
                         "src/acc.h"),
                  "%s", log_tail(log));

    /* the values the run used are held to protocol.json: a record that
     * says the run took other samples (its profile id made to match, as a
     * runner that lied would) FAILs check 5, naming the key */
    {
        char db2[560], zip2[560];
        snprintf(db2, sizeof db2, "%s/lie.db", dir);
        snprintf(zip2, sizeof zip2, "%s/lie.zip", dir);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", db, db2);
        ck_assert_int_eq(system(cmd), 0);
        rewrite_environment(db2, "\"protocol_values\":{\"seed\":5,", "\"protocol_values\":{\"seed\":6,");
        const char *exp2[] = {"export", "--db", db2, "--out", zip2, NULL};
        ck_assert_msg(run_prog("evident", exp2, log, sizeof log) == 0, "export: %s", log_tail(log));
        const char *ver2[] = {zip2, NULL};
        ck_assert_int_eq(run_prog("verify-bundle", ver2, log, sizeof log), 1);
        ck_assert_msg(
            strstr(log, "FAIL protocol: validation.json: invocation 1 ran with protocol value 'seed' other "
                        "than protocol.json gives this verifier"),
            "%s", log_tail(log));
    }

    /* escapes: refused in one line naming the file, nothing stored */
    static const char *const escapes[][2] = {
        {"../k.c", "'../k.c' must be a relative path inside the protocol's directory"},
        {"out/k.c", "source out is a symlink"},
    };
    snprintf(cmd, sizeof cmd, "%s/out", proj); /* a directory that leads out of the protocol's */
    ck_assert_int_eq(symlink(dir, cmd), 0);
    for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
        char text[600], esc_db[560];
        snprintf(text, sizeof text,
                 "{\"kernels\": [{\"name\": \"ext-e\", \"sources\": {\"cpu\": \"%s\"}, \"entries\": "
                 "{\"reduce_sum/fp32\": \"k_sum\"}}], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 3, "
                 "\"cols\": 8, \"dtype\": \"fp32\"}]}\n",
                 escapes[i][0]);
        put_in(proj, "escape.json", text, strlen(text));
        snprintf(path, sizeof path, "%s/escape.json", proj);
        snprintf(esc_db, sizeof esc_db, "%s/escape%zu.db", dir, i);
        const char *erun[] = {"run", "--protocol", path, "--db", esc_db, NULL};
        ck_assert_int_eq(run_prog("evident", erun, log, sizeof log), 2);
        ck_assert_msg(strstr(log, escapes[i][1]) && strchr(log, '\n') == log + strlen(log) - 1, "%zu: %s", i,
                      log_tail(log));
        ck_assert_int_ne(access(esc_db, F_OK), 0);
    }
}
END_TEST

/* The build is path-independent: the same kernel files (one of which
 * names its own path, __FILE__) laid out under the same names in two
 * directories of different names and depths compile to one SHA-256, and
 * neither binary holds its directory's name; on cpu, and on cuda where
 * nvcc answers.  The build's command is the one verify-bundle rebuilds
 * with (ext_compile.h). */
START_TEST(test_an_external_kernel_built_in_two_directories_has_one_sha256)
{
    static const char *const src[2][2] = {
        {"cpu", "#include <stdint.h>\n#include \"evident_kernel.h\"\n#include \"k.h\"\n"
                "const char *k_where(void);\nconst char *k_where(void) { return __FILE__ K_TAG; }\n"
                "int k_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride) {\n"
                "  const float *x = in; float *y = out;\n"
                "  for (int64_t r = 0; r < rows; r++) { float a = 0; for (int64_t c = 0; c < cols; c++) a += "
                "x[r * stride + c]; y[r] = a; }\n  return 0; }\n"},
        {"cuda", "#include <stdint.h>\n#include \"evident_kernel.h\"\n#include \"k.h\"\n"
                 "__device__ const char k_where[] = __FILE__ K_TAG;\n"
                 "extern \"C\" __global__ void k_sum(const void *in, void *out, int64_t rows, int64_t cols, "
                 "int64_t stride) {\n  if (rows < 0) ((char *)out)[0] = k_where[threadIdx.x];\n}\n"},
    };
    ev_buf abi = EV_BUF_INIT;
    ck_assert_int_eq(ev_read_file("kernels/evident_kernel.h", &abi, NULL), EV_OK);
    for (int be = 0; be < 2; be++) {
        ev_ext_toolchain t;
        ev_err err = {""};
        char hex[2][65], root[2][600], out[2][700], tu[64];
        ck_assert_int_eq(ev_ext_toolchain_of(src[be][0], &t, &err), EV_OK);
        if (!t.version[0]) {
            ck_assert_msg(be == 1, "no C compiler answers --version");
            ev_ext_toolchain_free(&t);
            continue; /* no nvcc on this host */
        }
        snprintf(tu, sizeof tu, "ext/k/k.%s", be ? "cu" : "c");
        snprintf(root[0], sizeof root[0], "%s/a", dir);
        snprintf(root[1], sizeof root[1], "%s/a-much-longer-directory-name/deeper/still", dir);
        for (int d = 0; d < 2; d++) {
            ev_ext_compiled c;
            ev_buf bin = EV_BUF_INIT;
            put_in(root[d], tu, src[be][1], strlen(src[be][1]));
            put_in(root[d], "ext/k/k.h", "#define K_TAG \" (a tag)\"\n", 26);
            put_in(root[d], "kernels/evident_kernel.h", abi.data, abi.len);
            snprintf(out[d], sizeof out[d], "%s/k%d%s", dir, d, t.suffix);
            ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
            ck_assert_int_eq(ev_ext_compile(&t, root[d], tu, out[d], &lim, &c, &err), EV_OK);
            ck_assert_msg(c.status == 0, "%s: %s", src[be][0], c.msg.data);
            /* the dependency list names the unit, its header and the ABI header, under the root */
            int named = 0;
            for (size_t i = 0; i < c.deps.n; i++) {
                char where[4200];
                ev_ext_dep_kind k = ev_ext_dep_where(&t, root[d], c.deps.v[i], where, sizeof where);
                ck_assert_msg(k != EV_DEP_OUTSIDE, "%s read %s", src[be][0], where);
                named += k == EV_DEP_ROOT && (!strcmp(where, tu) || !strcmp(where, "ext/k/k.h") ||
                                              !strcmp(where, "kernels/evident_kernel.h"));
            }
            ck_assert_int_eq(named, 3);
            ev_ext_compiled_free(&c);
            ck_assert_int_eq(ev_read_file(out[d], &bin, NULL), EV_OK);
            ck_assert_int_eq(ev_sha256_hex(bin.data, bin.len, hex[d]), EV_OK);
            ev_buf_free(&bin);
            ck_assert_msg(!file_holds(out[d], strrchr(dir, '/') + 1), "%s: the binary names its directory",
                          src[be][0]);
        }
        ck_assert_msg(!strcmp(hex[0], hex[1]), "%s: %s in one directory, %s in the other", src[be][0], hex[0],
                      hex[1]);
        ev_ext_toolchain_free(&t);
    }
    ev_buf_free(&abi);
}
END_TEST

/* The entries a built kernel defines, as a job whose declared entry is
 * missing names them: a shared object's exported functions (not its
 * static ones, not what it imports), a cubin's kernels where nvcc answers;
 * a file that is not an ELF object is refused, not read as one. */
START_TEST(test_a_built_kernel_names_the_entries_it_defines)
{
    static const char *const src[2][2] = {
        {"cpu", "#include <string.h>\nstatic int helper(int x) { return x + 1; }\n"
                "int k_sum(const void *in) { return helper(in != 0); }\n"
                "int k_max(const char *s) { return (int)strlen(s); }\n"},
        {"cuda", "#include <stdint.h>\n__device__ float twice(float x) { return 2 * x; }\n"
                 "extern \"C\" __global__ void k_sum(float *o) { o[0] = twice(o[0]); }\n"
                 "extern \"C\" __global__ void k_max(float *o) { o[1] = 0; }\n"},
    };
    for (int be = 0; be < 2; be++) {
        ev_ext_toolchain t;
        ev_err err = {""};
        char root[600], out[700], tu[32];
        ev_ext_compiled c;
        ev_ext_limits lim = EV_EXT_LIMITS_DEFAULT;
        ev_strs names = EV_STRS_INIT;
        ck_assert_int_eq(ev_ext_toolchain_of(src[be][0], &t, &err), EV_OK);
        if (!t.version[0]) {
            ck_assert_msg(be == 1, "no C compiler answers --version");
            ev_ext_toolchain_free(&t);
            continue; /* no nvcc on this host */
        }
        snprintf(root, sizeof root, "%s/entries-%s", dir, src[be][0]);
        snprintf(tu, sizeof tu, "k.%s", be ? "cu" : "c");
        put_in(root, tu, src[be][1], strlen(src[be][1]));
        put_in(root, "kernels/evident_kernel.h", "\n", 1);
        snprintf(out, sizeof out, "%s/k%s", root, t.suffix);
        ck_assert_int_eq(ev_ext_compile(&t, root, tu, out, &lim, &c, &err), EV_OK);
        ck_assert_msg(c.status == 0, "%s: %s", src[be][0], c.msg.data);
        ev_ext_compiled_free(&c);
        ck_assert_msg(ev_ext_binary_entries(out, &names, &err) == EV_OK, "%s", err.msg);
        ck_assert_msg(names.n >= 2 && !strcmp(names.v[0], "k_max") && !strcmp(names.v[1], "k_sum"),
                      "%s: %zu entries, the first %s", src[be][0], names.n, names.n ? names.v[0] : "-");
        for (size_t i = 0; i < names.n; i++)
            ck_assert_msg(strcmp(names.v[i], "helper") && strcmp(names.v[i], "strlen"), "%s: %s listed",
                          src[be][0], names.v[i]);
        ev_strs_free(&names);
        ck_assert_int_eq(ev_ext_binary_entries(root, &names, &err) != EV_OK, 1); /* a directory */
        snprintf(out, sizeof out, "%s/%s", root, tu);
        ck_assert_int_eq(ev_ext_binary_entries(out, &names, &err), EV_EFORMAT);
        ck_assert_uint_eq(names.n, 0);
        ev_ext_toolchain_free(&t);
    }
}
END_TEST

/*
 * Rewrites the environment record of store db (a copy the test owns): the
 * 64 hex digits after the first occurrence of key in it become hex, and
 * its profile id the SHA-256 of the new record, as a runner that lied
 * about its build would write them (the append-only triggers dropped).
 */
static void lie_in_environment(const char *db, const char *key, const char *hex)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    char *msg = NULL, *env, profile[65];
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "DROP TRIGGER environments_no_update", NULL, NULL, &msg), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT json FROM environments", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    env = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    char *at = strstr(env, key);
    ck_assert_msg(at && strlen(at + strlen(key)) > 64, "%s not in %s", key, env);
    memcpy(at + strlen(key), hex, 64);
    ck_assert_int_eq(ev_sha256_hex(env, strlen(env), profile), EV_OK);
    ck_assert_int_eq(
        sqlite3_prepare_v2(h, "UPDATE environments SET json = ?1, profile_id = ?2", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, env, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, profile, -1, SQLITE_TRANSIENT);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(env);
}

/* verify-bundle rebuilds an external kernel's binary from the bundle's
 * members alone (its translation unit, the header it declares, evident's
 * ABI header) and finds the receipt's SHA-256; without the compiler it
 * says so in a note; a receipt whose binary the members do not rebuild,
 * or that names a file read with bytes the bundle does not hold, FAILs
 * check 10 (a runner that measured other bytes than it bundled). */
START_TEST(test_verify_bundle_rebuilds_an_external_kernel_and_fails_a_receipt_its_members_do_not_give)
{
    char d[300], path[400], db[512], db2[512], zip[512], vb[512], log[16384], cmd[2400];
    static const char kc[] =
        "#include <stdint.h>\n#include \"evident_kernel.h\"\n#include \"k.h\"\n"
        "int k_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride) {\n"
        "  const float *x = in; float *y = out;\n"
        "  for (int64_t r = 0; r < rows; r++) { float a = K_ZERO; for (int64_t c = 0; c < "
        "cols; c++) a += x[r * stride + c]; y[r] = a; }\n  return 0; }\n";
    static const char kh[] = "#define K_ZERO 0.0f\n";
    snprintf(d, sizeof d, "build/ext-rebuild-%d", (int)getpid());
    put_in(d, "k.c", kc, strlen(kc));
    put_in(d, "k.h", kh, strlen(kh));
    static const char proto_text[] =
        "{\"seed\": 3, \"samples\": 2, \"warmup_ms\": 10, \"target_sample_ms\": 2, \"cold_samples\": 1,\n"
        " \"host_threads\": 1, \"job_timeout_s\": 20, \"retries\": 0, \"reference_arms\": false,\n"
        " \"tolerances\": {\"sample_band\": 0.9}, \"arms\": [\"rows1\", \"ext-k\"],\n"
        " \"reference\": {\"cpu\": {}},\n"
        " \"kernels\": [{\"name\": \"ext-k\", \"sources\": {\"cpu\": [\"k.c\", \"k.h\"]}, \"entries\": "
        "{\"reduce_sum/fp32\": \"k_sum\"}}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 9, \"cols\": 64, \"dtype\": \"fp32\", "
        "\"default_rows\": "
        "1}]}\n";
    put_in(d, "protocol.json", proto_text, strlen(proto_text));
    snprintf(path, sizeof path, "%s/protocol.json", d);
    /* a relative store: the kernels are built beside it, so the kernel host
     * is given a relative path to its object (ld.so would ask for getcwd) */
    snprintf(db, sizeof db, "%s/k.db", d);
    snprintf(zip, sizeof zip, "%s/k.zip", dir);
    const char *run[] = {"run", "--protocol", path, "--db", db, NULL};
    run_prog("evident", run, log, sizeof log); /* a job failed for load is still a receipt */
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    ck_assert_msg(strstr(log, "10 rebuild   PASS") &&
                      strstr(log, "kernel ext-k: rebuilt from the bundle's 3 members"),
                  "%s", log);
    /* the kernel ran in its process (a load may fail a sample rule, never its process) */
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, sys\n"
        "v = json.load(sys.stdin)\n"
        "o = [(j[\"outcome\"], j[\"attempts\"][-1][\"process\"][\"stderr_tail\"][-300:]) for j in "
        "v[\"jobs\"] "
        "if j[\"arm\"] == \"ext-k\"]\n"
        "print(o); sys.exit(0 if o and all(x[0] in (\"completed\", \"failed-protocol\") for x in o) else 1)'",
        zip);
    ck_assert_msg(system(cmd) == 0, "the external kernel did not run in its process");

    /* no compiler here: a note, not a failure */
    ev_prog_path("verify-bundle", vb, sizeof vb);
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent '%s' '%s' > '%s/nocc.txt' 2>&1", vb, zip, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/nocc.txt", dir);
    ck_assert_msg(file_holds(path, "kernel ext-k: not rebuilt: compiler cc (") &&
                      file_holds(path, "absent (here: none found)"),
                  "no note that the compiler is absent");

    /* the receipt names a binary the members do not give */
    static const char *const lies[][3] = {
        {"\"binary_sha256\":\"", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "kernel ext-k: the binary rebuilt from the bundle's 3 members has SHA-256"},
        {"k.h\",\"sha256\":\"", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
         "/k.h (sha256 bbbbbbbbbbbbbbbb...), which the bundle does not hold as it was read"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        snprintf(db2, sizeof db2, "%s/lie%zu.db", dir, i);
        snprintf(zip, sizeof zip, "%s/lie%zu.zip", dir, i);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", db, db2);
        ck_assert_int_eq(system(cmd), 0);
        lie_in_environment(db2, lies[i][0], lies[i][1]);
        const char *exp2[] = {"export", "--db", db2, "--out", zip, NULL};
        ck_assert_msg(run_prog("evident", exp2, log, sizeof log) == 0, "export: %s", log);
        const char *ver2[] = {zip, NULL};
        ck_assert_int_eq(run_prog("verify-bundle", ver2, log, sizeof log), 1);
        ck_assert_msg(strstr(log, "FAIL rebuild: proof-receipts.json: ") && strstr(log, lies[i][2]),
                      "%zu: %s", i, log);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The pids of processes named comm now running on this host (from
 * /proc) into out[cap]; returns how many. */
static size_t pids_named(const char *comm, int *out, size_t cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        char path[300], name[64] = "", state = 0;
        FILE *f;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        if (fscanf(f, "%*d (%63[^)]) %c", name, &state) == 2 && !strcmp(name, comm) && state != 'Z' &&
            n < cap)
            out[n++] = (int)strtol(e->d_name, NULL, 10);
        fclose(f);
    }
    closedir(d);
    return n;
}

/* A job that leaves a process running after it ends (here a worker's
 * child that starts a session of its own and leaves a grandchild behind,
 * out of the job's process group and parentless before the job ends)
 * fails, naming it: the supervisor, a child subreaper, finds the orphan
 * re-parented to it after the job, kills it and records it in the job's
 * process record (failed-protocol); the other jobs complete, nothing of
 * it survives the run, and the bundle verifies. */
START_TEST(test_a_job_that_leaves_a_process_running_fails_naming_it_and_nothing_survives)
{
    char db[512], zip[512], log[16384], cmd[4096];
    int left[8];
    const char *proto = write_file(
        "orphan.json",
        "{\"seed\": 5, \"samples\": 2, \"warmup_ms\": 10, \"target_sample_ms\": 2, \"cold_samples\": 1,\n"
        " \"host_threads\": 1, \"job_timeout_s\": 20, \"retries\": 0, \"reference_arms\": false, "
        "\"auto_arm\": false,\n"
        " \"tolerances\": {\"sample_band\": 0.9}, \"allow_fault_arms\": true,\n"
        " \"reference\": {\"cpu\": {}},\n"
        " \"fault_arms\": [{\"name\": \"fault-orphan\", \"kind\": \"orphan\"}],\n"
        " \"arms\": [\"rows1\", \"fault-orphan\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 9, \"cols\": 64, \"dtype\": \"fp32\", "
        "\"default_rows\": "
        "1}]}\n");
    ck_assert_uint_eq(pids_named("ev-orphan", left, 8), 0);
    snprintf(db, sizeof db, "%s/orphan.db", dir);
    snprintf(zip, sizeof zip, "%s/orphan.zip", dir);
    const char *run[] = {"run", "--protocol", proto, "--db", db, NULL};
    run_prog("evident", run, log, sizeof log);
    ck_assert_msg(pids_named("ev-orphan", left, 8) == 0, "an orphan of the job survived the run: pid %d",
                  left[0]);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, re, sys\n"
        "v = json.load(sys.stdin)\n"
        "jobs = {j[\"job_key\"]: j for j in v[\"jobs\"]}\n"
        "j = jobs[\"main/0/fault-orphan/initial\"]\n"
        "pr = j[\"attempts\"][-1][\"process\"]\n"
        "why = pr.get(\"protocol_error\") or \"\"\n"
        "ok = j[\"outcome\"] == \"failed-protocol\" and re.search(r\"left running after it ended.*: "
        "ev-orphan \\(pid [0-9]+\\)\", why)\n"
        "ok = ok and jobs[\"main/0/rows1/initial\"][\"outcome\"] in (\"completed\", \"failed-protocol\")\n"
        "ok = ok and \"left running\" not in (jobs[\"main/0/rows1/initial\"][\"attempts\"][-1][\"process\"]"
        ".get(\"protocol_error\") or \"\")\n"
        "print(j[\"outcome\"], why); sys.exit(0 if ok else 1)'",
        zip);
    ck_assert_msg(system(cmd) == 0, "the orphan is not named in the job's process record");
}
END_TEST

/* Foreign CPU time is recorded per sample and shown in the report: with a
 * process spinning on the one CPU a job is pinned to, every attempt's
 * device record names its source and holds one figure per hot and cold
 * sample, the hot samples' foreign time adds up to at least a quarter of
 * their walls (the spinner never sleeps, and the scheduler gives the
 * worker at most its share of the CPU: whatever else runs there only adds
 * to it), no job fails for it, and report.html has its row. */
START_TEST(test_foreign_cpu_time_on_the_measuring_cpu_is_recorded_per_sample_and_reported)
{
    char db[512], zip[512], html[512], log[16384], cmd[4096];
    cpu_set_t one;
    const char *proto = write_file(
        "foreign.json",
        "{\"seed\": 7, \"samples\": 5, \"warmup_ms\": 60, \"target_sample_ms\": 40, \"cold_samples\": 2,\n"
        " \"host_threads\": 1, \"cpu_set\": [0], \"job_timeout_s\": 60, \"retries\": 0, \"reference_arms\": "
        "false,\n"
        " \"auto_arm\": false, \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {}},\n"
        " \"arms\": [\"rows1\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 4096, \"dtype\": \"fp32\", "
        "\"default_rows\": 1}]}\n");
    pid_t hog = fork();
    ck_assert_int_ge(hog, 0);
    if (hog == 0) {
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        if (sched_setaffinity(0, sizeof one, &one))
            _exit(1);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    snprintf(db, sizeof db, "%s/foreign.db", dir);
    snprintf(zip, sizeof zip, "%s/foreign.zip", dir);
    snprintf(html, sizeof html, "%s/foreign.html", dir);
    const char *run[] = {"run", "--protocol", proto, "--db", db, NULL};
    run_prog("evident", run, log, sizeof log);
    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    const char *rep[] = {"report", zip, "--out", html, NULL};
    ck_assert_msg(run_prog("evident", rep, log, sizeof log) == 0, "report: %s", log);
    snprintf(
        cmd, sizeof cmd,
        "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
        "import json, sys\n"
        "v = json.load(sys.stdin)\n"
        "bad, fsum, wsum = [], 0.0, 0.0\n"
        "for j in v[\"jobs\"]:\n"
        "    for a in j[\"attempts\"]:\n"
        "        d = a.get(\"device\") or {}\n"
        "        hot, cold = d.get(\"hot_foreign_ms\"), d.get(\"cold_foreign_ms\")\n"
        "        if d.get(\"foreign_source\") not in (\"schedstat\", \"stat\") or len(hot or []) != 5 or "
        "len(cold or []) != 2 or None in hot:\n"
        "            bad.append((j[\"job_key\"], d.get(\"foreign_source\"), hot, cold))\n"
        "            continue\n"
        "        fsum += sum(hot)\n"
        "        wsum += sum(d[\"hot_wall_ms\"])\n"
        "        if \"foreign\" in (a[\"process\"].get(\"protocol_error\") or \"\"): "
        "bad.append(j[\"job_key\"])\n"
        "print(bad, fsum, wsum)\n"
        "sys.exit(1 if bad or not wsum or fsum < 0.25 * wsum else 0)' && grep -q '<th>foreign CPU</th>' '%s'",
        zip, html);
    ck_assert_msg(system(cmd) == 0, "foreign CPU time is not recorded per sample, or missed the spinner");
}
END_TEST

/* A quick loop: --cases and --arms run a subset as its own protocol; the
 * bundle's protocol.json is the subset (naming the original by id), it
 * verifies, and a bad spec is refused before the store is touched. */
START_TEST(test_a_subset_run_is_its_own_protocol_and_verifies)
{
    char db[512], zip[512], log[4096];
    snprintf(db, sizeof db, "%s/subset.db", dir);
    snprintf(zip, sizeof zip, "%s/subset.zip", dir);
    const char *bad[] = {"run", "--protocol", "protocols/quick.json", "--db", db, "--cases", "0,6", NULL};
    ck_assert_int_eq(run_prog("evident", bad, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "--cases: case 6 is not in the protocol (it has 6 cases: 0-5)"), "%s", log);
    ck_assert_int_ne(access(db, F_OK), 0);
    const char *run[] = {"run",   "--protocol", "protocols/quick.json", "--db", db, "--cases",
                         "0,2-3", "--arms",     "default,rows1,rows2",  NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
    /* no model named: no auto job, and the run says how to get one */
    ck_assert_msg(strstr(log, "subset: auto is not planned"), "%s", log);
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    ev_buf pb = EV_BUF_INIT;
    ev_err err;
    char id[65];
    ck_assert_int_eq(ev_read_file("protocols/quick.json", &pb, &err), EV_OK);
    ck_assert_int_eq(ev_protocol_id(pb.data, pb.len, id), EV_OK);
    ev_buf_free(&pb);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "python3 tests/zipcat.py '%s' protocol.json | grep -q '\"subset_of\":.\"%s\"'",
             zip, id);
    ck_assert_msg(system(cmd) == 0, "protocol.json does not name %s", id);
    snprintf(cmd, sizeof cmd, "python3 tests/zipcat.py '%s' validation.json | grep -q '\"arm\":.\"auto\"'",
             zip);
    ck_assert_msg(system(cmd) != 0, "a subset without --model planned auto");
}
END_TEST

/* Auto in a subset: with --model naming an earlier run's bundle of the
 * whole protocol, the subset's auto jobs use that bundle's coefficients
 * (protocol.json's model_from, with the bundle's SHA-256), and the bundle
 * verifies (the selector check holds auto to those coefficients); a
 * bundle of another protocol, a file that is not a bundle, and --model
 * without a subset are refused before the store is touched. */
START_TEST(test_auto_in_a_subset_uses_the_named_bundles_model_or_is_refused)
{
    char db[512], whole[512], zip[512], sub[512], log[8192], cmd[4096];
    snprintf(db, sizeof db, "%s/whole.db", dir);
    snprintf(whole, sizeof whole, "%s/whole.zip", dir);
    snprintf(sub, sizeof sub, "%s/msub.db", dir);
    snprintf(zip, sizeof zip, "%s/msub.zip", dir);
    const char *run[] = {"run", "--protocol", "protocols/quick.json", "--db", db, NULL};
    const char *exp[] = {"export", "--db", db, "--out", whole, NULL};
    const char *srun[] = {"run", "--protocol", "protocols/quick.json", "--db",    sub,   "--cases",
                          "0,4", "--arms",     "default,rows1",        "--model", whole, NULL};
    /* this host's noise can fail enough calibration jobs that the whole
     * run's fit fails (a bundle --model rightly refuses): run it again */
    for (int tries = 0;; tries++) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'-* '%s' '%s' '%s'-*", db, db, whole, sub, sub);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "%s", log);
        ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
        int rc = run_prog("evident", srun, log, sizeof log);
        if (rc == 2 && strstr(log, "its fit has no coefficients") && tries < 2)
            continue;
        ck_assert_msg(rc == 0, "%s", log);
        break;
    }
    ck_assert_msg(strstr(log, "auto uses the coefficients of bundle"), "%s", log);
    const char *sexp[] = {"export", "--db", sub, "--out", zip, NULL};
    const char *ver[] = {zip, NULL};
    ck_assert_msg(run_prog("evident", sexp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    snprintf(cmd, sizeof cmd,
             "python3 tests/zipcat.py '%s' protocol.json | grep -q \"$(sha256sum '%s' | cut -c1-64)\" && "
             "python3 tests/zipcat.py '%s' validation.json | grep -q '\"arm\":.\"auto\"' && "
             "a0=$(python3 tests/zipcat.py '%s' model.json | grep -o '\"a0\":.[^,]*' | tr -d ' \t') && "
             "python3 tests/zipcat.py '%s' protocol.json | tr -d ' \t' | grep -q \"$a0\"",
             zip, whole, zip, whole, zip);
    ck_assert_msg(system(cmd) == 0,
                  "the subset's protocol.json does not carry the bundle's model and SHA-256");

    char sub2[512];
    snprintf(sub2, sizeof sub2, "%s/msub2.db", dir);
    const char *other[] = {
        "run", "--protocol", "protocols/quick.json", "--db", sub2, "--cases", "0", "--model", zip, NULL};
    ck_assert_int_eq(run_prog("evident", other, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "not") && strstr(log, "the whole protocol this subset is cut from"), "%s", log);
    const char *notzip[] = {"run", "--protocol", "protocols/quick.json", "--db", sub2, "--cases",
                            "0",   "--model",    "protocols/quick.json", NULL};
    ck_assert_int_eq(run_prog("evident", notzip, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "is not a bundle evident can read"), "%s", log);
    const char *nosub[] = {"run", "--protocol", "protocols/quick.json", "--db", sub2, "--model", whole, NULL};
    ck_assert_int_eq(run_prog("evident", nosub, log, sizeof log), 2);
    ck_assert_msg(strstr(log, "--model is for a subset's auto arm"), "%s", log);
    ck_assert_int_ne(access(sub2, F_OK), 0);
}
END_TEST

START_TEST(test_what_this_host_cannot_run_is_refused_before_the_store_is_touched)
{
    char db[400], log[8192], bigcase[1200], cpus[600];
    cpu_set_t set;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int off = -1;

    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    for (int c = 0; c < 1024 && off < 0; c++)
        if (!CPU_ISSET(c, &set))
            off = c;
    snprintf(cpus, sizeof cpus,
             "{\"seed\": 1, \"samples\": 3, \"warmup_ms\": 1, \"target_sample_ms\": 1, \"cpu_set\": [%d],\n"
             " \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 5, \"cols\": 64, "
             "\"dtype\": \"fp32\", \"default_rows\": 4}]}\n",
             off);
    /* An fp32 input of 0.3 x the host's memory: a worker holds it twice
     * (0.6 x, over the half it may have), under the 64 GiB case bound
     * while the host has less than 210 GiB. */
    double mem = (double)pages * (double)psz, want = mem * 0.3 / 4;
    long long cols = 1 << 20, rows = (long long)(want / (double)cols) + 1;
    int big_ok = mem * 0.3 < 63.0 * (1 << 30);
    if (!big_ok)
        fprintf(stderr,
                "check_runner: %.0f GiB of memory: no case under the 64 GiB bound exceeds half of it; that "
                "refusal was not tried\n",
                mem / (1 << 30));
    snprintf(bigcase, sizeof bigcase,
             "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": %lld, "
             "\"cols\": %lld, \"dtype\": \"fp32\", \"default_rows\": 4}]}\n",
             rows, cols);
    const char *pc = strdup(write_file("cpus.json", cpus)), *pb = strdup(write_file("big.json", bigcase));
    /* cold samples after a flush capped at 1 MiB, no more than this host's
     * last-level cache (of 1 MiB or more: every host this runs on) */
    const char *pf = strdup(write_file(
        "flush.json", "{\"seed\": 1, \"samples\": 3, \"warmup_ms\": 1, \"target_sample_ms\": 1, "
                      "\"cold_samples\": 1, \"reference\": {\"cpu\": {\"flush_max_bytes\": 1048576}},\n"
                      " \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 5, \"cols\": "
                      "64, \"dtype\": \"fp32\", \"default_rows\": 4}]}\n"));
    snprintf(db, sizeof db, "%s/never.db", dir);
    struct {
        const char *protocol, *want;
    } cases[] = {
        {"/dev/zero", "is a character device, not a regular file"},
        {pc, "is not available to this process"},
        {pb, "more than half of this host's"},
        {pf, "does not exceed that cache, so the cold samples would not be cold"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *run[] = {"run", "--protocol", cases[i].protocol, "--db", db, NULL};
        if ((i == 1 && off < 0) || (i == 2 && !big_ok) || (i == 3 && ev_cpu_llc_bytes() < ((size_t)1 << 20)))
            continue; /* every CPU is ours; a host too large; a cache under 1 MiB */
        ck_assert_msg(run_prog("evident", run, log, sizeof log) == 2, "%s: %s", cases[i].protocol, log);
        ck_assert_msg(strstr(log, cases[i].want), "%s: %s", cases[i].protocol, log);
        ck_assert_msg(access(db, F_OK) != 0, "%s: a store was created", cases[i].protocol);
    }
    free((void *)pc);
    free((void *)pb);
    free((void *)pf);
}
END_TEST

/* A measured file whose name no bundle could hold (sources/<path>) is
 * refused when the snapshot is taken, before anything is measured. */
START_TEST(test_a_snapshot_file_the_bundle_could_not_name_is_refused_before_measuring)
{
    static const char *const names[] = {"a b.cu", "a+b.cu"};
    char root[400], sub[420], file[460];
    for (size_t i = 0; i < 2; i++) {
        ev_snapshot snap_out;
        ev_err err = {""};
        snprintf(root, sizeof root, "%s/tree%zu", dir, i);
        snprintf(sub, sizeof sub, "%s/kernels", root);
        snprintf(file, sizeof file, "%s/%s", sub, names[i]);
        ck_assert_int_eq(mkdir(root, 0755), 0);
        ck_assert_int_eq(mkdir(sub, 0755), 0);
        FILE *f = fopen(file, "w");
        ck_assert_ptr_nonnull(f);
        fputs("x\n", f);
        fclose(f);
        memset(&snap_out, 0, sizeof snap_out);
        ck_assert_int_eq(ev_snapshot_take(root, &snap_out, &err), EV_EUSAGE);
        ck_assert_msg(strstr(err.msg, names[i]) && strstr(err.msg, "cannot be a bundle member"), "%s",
                      err.msg);
    }
}
END_TEST

/* Writes text to root/rel. */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The snapshot takes what the tree's mk/closure.list names, wherever it
 * lives, and the list, nothing else under the old roots; a listed file
 * the tree lacks stops it, naming the file and what to do; a tree without
 * the list (a commit from before it) is read by the old roots. */
START_TEST(test_the_snapshot_takes_the_files_the_closure_list_names_in_any_folder)
{
    char root[300], cmd[1600];
    ev_snapshot sn;
    ev_err err = {""};

    snprintf(root, sizeof root, "%s/listed", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/mk' '%s/kernels' '%s/src/moved' '%s/src/runner'", root, root,
             root, root);
    ck_assert_int_eq(system(cmd), 0);
    put_file(root, "kernels/a.cu", "a\n");
    put_file(root, "kernels/bench.c", "not measured\n");
    put_file(root, "src/moved/b.h", "b\n");
    put_file(root, "src/runner/supervisor.c", "not measured\n");
    put_file(root, "mk/closure.list", "kernels/a.cu\nsrc/moved/b.h\n");
    memset(&sn, 0, sizeof sn);
    ck_assert_msg(ev_snapshot_take(root, &sn, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(sn.n, 3);
    ck_assert_str_eq(sn.files[0].path, "kernels/a.cu");
    ck_assert_str_eq(sn.files[1].path, "mk/closure.list");
    ck_assert_str_eq(sn.files[2].path, "src/moved/b.h");
    ev_snapshot_free(&sn);

    /* a move the list was not rebuilt for */
    snprintf(cmd, sizeof cmd, "mv '%s/src/moved/b.h' '%s/kernels/b.h'", root, root);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(ev_snapshot_take(root, &sn, &err), EV_EIO);
    ck_assert_msg(strstr(err.msg, "src/moved/b.h: named by mk/closure.list but not in the tree") &&
                      strstr(err.msg, "run make"),
                  "%s", err.msg);

    /* no list: the old roots (kernels/, src/runner/, protocols/, db/schema.sql) */
    snprintf(cmd, sizeof cmd, "rm '%s/mk/closure.list'", root);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(ev_snapshot_take(root, &sn, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(sn.n, 4);
    ck_assert_str_eq(sn.files[0].path, "kernels/a.cu");
    ck_assert_str_eq(sn.files[3].path, "src/runner/supervisor.c");
    ev_snapshot_free(&sn);
}
END_TEST

/* This checkout's committed mk/closure.list is the one this build derives
 * from its dependency files (make writes it: commit it with a change that
 * moves a measured file), and it holds what the worker runs, wherever it
 * lives: the vocabulary, the worker, the kernels and the oracle, the torch
 * peer's script. */
START_TEST(test_the_committed_closure_list_is_what_this_build_derives)
{
    char built[512];
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
    ev_err err = {""};
    snprintf(built, sizeof built, "%s/closure.list", getenv("EV_BUILD") ? getenv("EV_BUILD") : "build");
    ck_assert_msg(ev_read_file(built, &a, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_read_file("mk/closure.list", &b, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(a.len == b.len && !memcmp(a.data, b.data, a.len),
                  "mk/closure.list differs from %s: run make and commit mk/closure.list", built);
    static const char *const must[] = {"src/common/vocab.h\n",    "src/runner/worker.c\n",
                                       "kernels/reduce.cu\n",     "kernels/oracle.c\n",
                                       "kernels/peer_torch.py\n", "db/schema.sql\n"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        ck_assert_msg(strstr(b.data, must[i]), "mk/closure.list lacks %s", must[i]);
    ev_buf_free(&a);
    ev_buf_free(&b);
}
END_TEST

/* Where a run's commit comes from in a copied tree: a stamp written for
 * exactly the measured files (its tree hash is theirs) wins over a stale
 * .git; a stamp for other files loses to git, and without git it gives
 * dirty; `evident stamp` writes one only in a git checkout. */
START_TEST(test_a_stamp_names_the_commit_only_of_the_files_it_was_written_for)
{
    char root[400], sub[420], commit[64], text[400], cmd[1400];
    const char *from;
    int dirty;
    ev_snapshot sn;
    ev_err err = {""};
    static const char c1[] = "1111111111111111111111111111111111111111";

    snprintf(root, sizeof root, "%s/stamped", dir);
    snprintf(sub, sizeof sub, "%s/kernels", root);
    ck_assert_int_eq(mkdir(root, 0755), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    put_file(root, "kernels/a.c", "int a;\n");
    ck_assert_int_eq(ev_snapshot_take(root, &sn, &err), EV_OK);
    snprintf(text, sizeof text, "{\"commit\": \"%s\", \"dirty\": false, \"tree\": \"%s\"}\n", c1,
             sn.tree_hash);
    put_file(root, ".evident-stamp", text);
    ev_git_info_tree(root, sn.tree_hash, commit, &dirty, &from);
    ck_assert_str_eq(from, "stamp");
    ck_assert_str_eq(commit, c1);
    ck_assert_int_eq(dirty, 0);
    ck_assert_int_eq(ev_stamp_write(root, &err), EV_EUSAGE);
    ck_assert_msg(strstr(err.msg, "not a git checkout"), "%s", err.msg);

    /* the files changed since the stamp: no git, so the stamp's commit, dirty */
    put_file(root, "kernels/a.c", "int b;\n");
    ev_snapshot sn2;
    ck_assert_int_eq(ev_snapshot_take(root, &sn2, &err), EV_OK);
    ev_git_info_tree(root, sn2.tree_hash, commit, &dirty, &from);
    ck_assert_str_eq(commit, c1);
    ck_assert_int_eq(dirty, 1);

    /* a git checkout (a stale copy of .git, say) */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && git init -q . && git -c user.email=t@t -c user.name=t add kernels && "
             "git -c user.email=t@t -c user.name=t commit -qm x && git rev-parse HEAD > head.txt",
             root);
    ck_assert_int_eq(system(cmd), 0);
    char head[64] = "";
    {
        char hp[500];
        snprintf(hp, sizeof hp, "%s/head.txt", root);
        FILE *f = fopen(hp, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(head, sizeof head, f));
        fclose(f);
        head[40] = '\0';
    }
    /* the stamp was written for other files: git says where these came from */
    ev_git_info_tree(root, sn2.tree_hash, commit, &dirty, &from);
    ck_assert_str_eq(from, "git");
    ck_assert_str_eq(commit, head);
    /* a stamp for exactly these files wins over the .git beside it */
    snprintf(text, sizeof text, "{\"commit\": \"%s\", \"dirty\": false, \"tree\": \"%s\"}\n", c1,
             sn2.tree_hash);
    put_file(root, ".evident-stamp", text);
    ev_git_info_tree(root, sn2.tree_hash, commit, &dirty, &from);
    ck_assert_str_eq(from, "stamp");
    ck_assert_str_eq(commit, c1);
    ck_assert_int_eq(dirty, 0);
    /* and `evident stamp`'s writer, in the checkout, names HEAD and the hash */
    ck_assert_int_eq(ev_stamp_write(root, &err), EV_OK);
    ev_git_info_tree(root, sn2.tree_hash, commit, &dirty, &from);
    ck_assert_str_eq(from, "stamp");
    ck_assert_str_eq(commit, head);
    ev_snapshot_free(&sn);
    ev_snapshot_free(&sn2);
}
END_TEST

START_TEST(test_resume_refuses_a_different_protocol)
{
    const char *p1 = write_file("a.json", faults_protocol);
    char other[sizeof faults_protocol + 8];
    const char *p2;

    ck_assert_int_eq(wait_exit(start_run(p1, 0)), 0);
    snprintf(other, sizeof other, "%s", faults_protocol);
    other[strlen("{\"seed\": ")] = '4';
    p2 = write_file("b.json", other);
    ck_assert_int_eq(wait_exit(start_run(p2, 1)), 2);
}
END_TEST

/* ---- the worker's backends and peers, without the supervisor ---------- */

static const char unit_protocol[] =
    "{\"seed\": 5, \"samples\": 2, \"warmup_ms\": 1, \"target_sample_ms\": 1, \"cold_samples\": 1,\n"
    " \"host_threads\": 3, \"reference_arms\": false,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\", \"rows4\", \"torch-compile\", \"fault-ws\"],\n"
    " \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [{\"name\": \"fault-ws\", \"kind\": \"wrong-schedule\", \"cases\": [1]}],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", \"default_rows\": "
    "8},\n"
    "           {\"op\": \"reduce_sum\", \"rows\": 37, \"cols\": 257, \"stride\": 260, \"dtype\": \"bf16\", "
    "\"default_rows\": 2},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 3, \"cols\": 8191, \"dtype\": \"bf16\", \"default_rows\": "
    "1}]}\n";

/* Parses unit_protocol into *p. */
static void unit_proto(ev_protocol *p)
{
    ev_err err = {""};
    ck_assert_msg(ev_protocol_parse(unit_protocol, strlen(unit_protocol), p, &err) == EV_OK, "%s", err.msg);
}

/*
 * Binds job on a fresh cpu backend of proto (host_threads 3), launches it,
 * checks the output against the oracle, and captures 100 ops.  OUT: *node
 * (the one receipt) and *threads (the binding's S).
 */
static void cpu_job(const ev_protocol *proto, int64_t ci, ev_backend_job *job, ev_node_receipt *node,
                    int64_t *threads)
{
    ev_backend_config cfg;
    ev_backend_binding b;
    ev_node_receipt *nodes = NULL;
    ev_validation v;
    ev_shape shape;
    size_t n_nodes = 0, len = 0;
    void *impl = NULL, *in = NULL;
    unsigned char *out;
    ev_err err = {""};

    memset(&cfg, 0, sizeof cfg);
    cfg.host_threads = proto->host_threads;
    cfg.ref = proto->ref_cpu;
    ck_assert_int_eq(ev_job_input(proto, ci, &shape, &in, &len, &err), EV_OK);
    job->c = proto->cases[ci];
    job->input = in;
    job->input_len = len;
    /* the plants every job binds with (kernels/plants.h) */
    ev_plant_cfg pc;
    ev_oracle_row *orows = NULL;
    ev_plant_row *prows = malloc((shape.rows > 0 ? (size_t)shape.rows : 1) * sizeof *prows);
    ck_assert_int_eq(ev_job_expect(&shape, in, &orows, &err), EV_OK);
    ck_assert_msg(ev_plant_rows(&shape, proto->sum_depth, proto->sum_bound_factor, EV_PLANT_SITES, orows,
                                prows, &err) == EV_OK,
                  "%s", err.msg);
    ev_plant_config(&pc, 99, &shape,
                    ev_plant_variants((int64_t)len, 1 << 20, proto->ref_cpu.variant_budget_bytes, 100), 100);
    job->plants = &pc;
    job->plant_rows = prows;
    ck_assert_msg(ev_backend_cpu_ops.open(&cfg, &impl, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_backend_cpu_ops.bind(impl, job, &b, &err) == EV_OK, "%s", err.msg);
    out = malloc(b.out_len + 1);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(ev_backend_cpu_ops.poison(impl, 0xff, &err), EV_OK);
    ck_assert_int_eq(ev_backend_cpu_ops.launch(impl, &err), EV_OK);
    ck_assert_int_eq(ev_backend_cpu_ops.read_output(impl, 0, out, b.out_len, &err), EV_OK);
    ev_output_check(proto, &shape, in, NULL, out, &v);
    ck_assert_msg(v.passed, "case %lld arm %s: %lld mismatches", (long long)ci, job->arm,
                  (long long)v.mismatches);
    ck_assert_int_eq(ev_backend_cpu_ops.capture(impl, 100, &nodes, &n_nodes, &err), EV_OK);
    ck_assert_uint_eq(n_nodes, 1);
    *node = nodes[0];
    *threads = b.threads;
    free(orows);
    free(prows);
    free(nodes);
    free(out);
    free(in);
    ev_backend_cpu_ops.close(impl);
}

/* Asserts that node is the launch plan p, field by field. */
static void same_receipt(const ev_node_receipt *node, const ev_launch_plan *p)
{
    ck_assert_str_eq(node->function, p->entry);
    for (int d = 0; d < 3; d++) {
        ck_assert_int_eq(node->grid[d], p->grid[d]);
        ck_assert_int_eq(node->block[d], p->block[d]);
    }
}

START_TEST(test_cpu_receipts_equal_the_selectors_plan_for_every_schedule)
{
    static const char *const arms[] = {"default", "rows1", "rows2", "rows4"};
    ev_protocol proto;

    unit_proto(&proto);
    for (size_t ci = 0; ci < proto.n_cases; ci++)
        for (int k = 0; k < 4; k++) {
            ev_backend_job job;
            ev_node_receipt node;
            ev_launch_plan plan;
            ev_shape shape;
            ev_sched sched;
            int64_t threads;
            ev_err err = {""};
            memset(&job, 0, sizeof job);
            job.kind = EV_ARM_NATIVE;
            job.arm = arms[k];
            cpu_job(&proto, (int64_t)ci, &job, &node, &threads);
            ck_assert_int_eq(threads, 3);
            ck_assert_int_eq(ev_case_shape(&proto.cases[ci], &shape, &err), EV_OK);
            ck_assert_int_eq(ev_sched_parse(arms[k], &sched), 0);
            ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &shape, sched, proto.cases[ci].default_rows,
                                              threads, &plan, &err),
                             EV_OK);
            same_receipt(&node, &plan);
            /* grid = tasks, block = rows per task (docs/runner.md, "Worker records") */
            ck_assert_int_eq(node.block[0], ev_sched_rows(sched, proto.cases[ci].default_rows));
            ck_assert_int_eq(node.grid[0], (shape.rows + node.block[0] - 1) / node.block[0]);
        }
    ev_protocol_free(&proto);
}
END_TEST

START_TEST(test_the_auto_arm_launches_the_selectors_choice_and_the_wrong_schedule_arm_does_not)
{
    static const ev_coef coefs[3] = {{0.9, 0, 1e-4}, {0.1, 2.0, 0}, {0.5, 0.01, 1e-6}};
    ev_protocol proto;
    int differed = 0;

    unit_proto(&proto);
    for (size_t ci = 0; ci < proto.n_cases; ci++)
        for (int k = 0; k < 3; k++) {
            ev_backend_job job;
            ev_node_receipt a, w;
            ev_launch_plan want;
            ev_shape shape;
            int64_t threads;
            ev_err err = {""};
            memset(&job, 0, sizeof job);
            job.kind = EV_ARM_AUTO;
            job.arm = "auto";
            job.coef = &coefs[k];
            job.threshold = 0.05;
            job.scheds = EV_SCHEDS_DEFAULT;
            cpu_job(&proto, (int64_t)ci, &job, &a, &threads);
            ck_assert_int_eq(ev_case_shape(&proto.cases[ci], &shape, &err), EV_OK);
            ck_assert_int_eq(ev_selector_select(EV_SEL_CPU, &shape, proto.cases[ci].default_rows, &coefs[k],
                                                threads, 0.05, EV_SCHEDS_DEFAULT, &want, NULL, &err),
                             EV_OK);
            same_receipt(&a, &want);
            job.arm = "fault-ws";
            job.wrong_schedule = 1;
            cpu_job(&proto, (int64_t)ci, &job, &w, &threads);
            ck_assert_str_ne(w.function, want.entry);
            ck_assert_int_ne(w.block[0], want.block[0]); /* other rows per program, honestly recorded */
            differed++;
        }
    ck_assert_int_eq(differed, 12);
    ev_protocol_free(&proto);
}
END_TEST

START_TEST(test_the_wrong_schedule_fault_arm_is_planned_beside_auto_in_the_policy_phase)
{
    ev_protocol proto;
    ev_plan plan;
    ev_err err = {""};

    unit_proto(&proto);
    ck_assert_int_eq(ev_plan_build(&proto, &plan, &err), EV_OK);
    ck_assert_int_lt(ev_plan_find(&plan, "policy/1/fault-ws/initial"),
                     (ptrdiff_t)(plan.n_main + plan.n_policy));
    ck_assert_int_ge(ev_plan_find(&plan, "policy/1/fault-ws/initial"), (ptrdiff_t)plan.n_main);
    ck_assert_int_eq(ev_plan_find(&plan, "main/1/fault-ws/initial"), -1);
    ck_assert_int_eq(ev_plan_find(&plan, "policy/0/fault-ws/initial"), -1); /* only its cases */
    ck_assert_uint_eq(plan.n_policy, proto.n_cases + 1);
    ck_assert_int_eq(ev_plan_find(&plan, "policy/1/fault-ws/initial"),
                     ev_plan_find(&plan, "policy/1/auto/initial") + 1);
    for (size_t i = plan.n_main; i < plan.n_main + plan.n_policy; i++)
        ck_assert_int_eq(plan.jobs[i].plan_order, (int64_t)(i - plan.n_main));
    ev_plan_free(&plan);
    ev_protocol_free(&proto);
}
END_TEST

/*
 * Runs build/evident-worker on unit_protocol for case ci and arm with the
 * extra arguments (NULL-terminated), records on a pipe.  OUT: *records
 * (the whole stream).  Returns the exit code.
 */
static int run_worker_gated(int64_t ci, const char *arm, const char *const extra[], int gate, size_t *early,
                            ev_buf *records);
static int run_worker(int64_t ci, const char *arm, const char *const extra[], ev_buf *records)
{
    return run_worker_gated(ci, arm, extra, -1, NULL, records);
}

/* Line i (0-based) of the record stream, copied into a static buffer. */
static const char *rec_line(const ev_buf *b, int i)
{
    static char line[8192];
    const char *p = b->data ? b->data : "";
    for (; i > 0 && p; i--) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    ck_assert_ptr_nonnull(p);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
    return line;
}

/* The torch peer spells no op, dtype or arm of its own: it reads them from
 * the vocabulary the C side is built from (src/common/vocab.h), and binds
 * every op and dtype there to torch. */
START_TEST(test_the_torch_peer_reads_the_vocabulary_the_c_side_is_built_from)
{
    char got[1024] = "", want[1024];
    FILE *p = popen("python3 -B -c 'import sys; sys.path.insert(0, \"kernels\"); import peer_torch as t; "
                    "print(\", \".join(t.OP_IDS)); print(\", \".join(t.DTYPE_IDS)); "
                    "print(\" \".join(str(t.DTYPE_BYTES[d]) for d in t.DTYPE_IDS)); print(t.ARM); "
                    "print(all(i in t.TORCH_OPS for i in t.OP_IDS.values()), "
                    "all(i in t.TORCH_DTYPES for i in t.DTYPE_IDS.values()))' 2>&1",
                    "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(got, 1, sizeof got - 1, p);
    got[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    int len = snprintf(want, sizeof want, "%s\n%s\n", ev_op_words(), ev_dtype_words());
    for (int d = 0; d < EV_DTYPE_COUNT; d++)
        len += snprintf(want + len, sizeof want - (size_t)len, "%s%zu", d ? " " : "",
                        ev_dtype_size((ev_dtype)d));
    snprintf(want + len, sizeof want - (size_t)len, "\n%s\nTrue True\n", ev_arm_kind_name(EV_ARM_TORCH));
    ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(test_torch_compile_is_skipped_with_the_hosts_own_import_error)
{
    static const char *const extra[] = {"--python", "python3", "--peer-script", "kernels/peer_torch.py",
                                        NULL};
    ev_buf recs = EV_BUF_INIT;
    char want[600];

    ck_assert_int_eq(run_worker(0, "torch-compile", extra, &recs), 0);
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 0), "\"type\": \"hello\""));
    snprintf(want, sizeof want, "{\"type\": \"skip\", \"reason\": \"%s\"}", torch_reason());
    ck_assert_msg(!strcmp(rec_line(&recs, 1), want), "%s", rec_line(&recs, 1));
    ck_assert_str_eq(rec_line(&recs, 2), "{\"type\":\"end\",\"records\":2}");
    ev_buf_free(&recs);
}
END_TEST

START_TEST(test_an_interpreter_that_cannot_start_is_a_skip_with_its_error)
{
    static const char *const extra[] = {"--python", "/nonexistent/python3", "--peer-script",
                                        "kernels/peer_torch.py", NULL};
    ev_buf recs = EV_BUF_INIT;

    ck_assert_int_eq(run_worker(0, "torch-compile", extra, &recs), 0);
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 0), "\"type\":\"hello\""));
    ck_assert_str_eq(rec_line(&recs, 1), "{\"type\":\"skip\",\"reason\":\"torch-compile: cannot run "
                                         "/nonexistent/python3: No such file or directory\"}");
    ck_assert_str_eq(rec_line(&recs, 2), "{\"type\":\"end\",\"records\":2}");
    ev_buf_free(&recs);
}
END_TEST

/* A stand-in peer's arguments: the ones torch_peer.c passes, parsed into a. */
#define FAKE_PEER_ARGS                                                                                       \
    "p = argparse.ArgumentParser()\n"                                                                        \
    "for k in ('input', 'op', 'dtype', 'rows', 'cols', 'stride', 'job-key', 'record-fd', 'out-first',\n"     \
    "          'out-final', 'ops', 'samples', 'cold-samples', 'warmup-ms', 'target-ms', 'flush-multiple',\n" \
    "          'backend', 'spawn-ns', 'gate-fd', 'compile-ahead-ns', 'plants', 'ops-lib', 'out-kept'):\n"    \
    "    p.add_argument('--' + k)\n"                                                                         \
    "a = p.parse_args()\n"

/* A stand-in peer (this test's own file, used because torch is absent
 * here): records in peer_torch.py's format, then output files of zeros,
 * which a reduce_max of the seeded inputs cannot have produced. */
static const char fake_peer[] =
    "import argparse, os\n" FAKE_PEER_ARGS
    "if a.gate_fd is not None and len(os.read(int(a.gate_fd), 1)) != 1:\n"
    "    os._exit(0)\n"
    "n = int(a.rows) * 4\n"
    "assert os.path.getsize(a.input) == ((int(a.rows) - 1) * int(a.stride) + int(a.cols)) * 4\n"
    "for f in (a.out_first, a.out_final, a.out_kept):\n"
    "    open(f, 'wb').write(bytes(n))\n"
    "w = os.fdopen(int(a.record_fd), 'w')\n"
    "w.write('{\"type\": \"hello\", \"version\": 1, \"pid\": 1, \"job_key\": \"%s\", \"arm\": "
    "\"torch-compile\", "
    "\"affinity\": \"0\"}\\n' % a.job_key)\n"
    "w.write('{\"type\": \"sample\", \"timing\": \"hot\", \"index\": 0, \"replays\": 3, \"ops_per_graph\": "
    "100, "
    "\"elapsed_ms\": 0.30000000000000004}\\n')\n"
    "w.write('{\"type\": \"end\", \"records\": 2}\\n')\n";

/* The data records' one codec (runner/record.h): what the worker encodes
 * the supervisor decodes to the same row; a sample without a clock is
 * null on the wire and -1 again; a mistyped field or a bool that is not
 * one is refused, naming the field. */
START_TEST(test_every_data_record_decodes_to_the_row_it_was_encoded_from)
{
    ev_rec_row in[7], back;
    ev_err e = {{0}};
    memset(in, 0, sizeof in);
    in[0].binding = (ev_binding_row){"reduce_sum", "fp16", 17, 1024, 1024, 34816, 68, 256, 256, 24};
    in[1].calib = (ev_rec_calib){1, 3, 4096, 10.5, 10.0};
    in[2].sample = (ev_sample_row){"hot", 7, 4096, 100, 0.1 + 0.2, -1};
    in[3].validation = (ev_validation_row){"first", 0, 0.25, 0.125, 3, "ab", NULL, 0};
    in[4].check = (ev_sample_check_row){1, -1, 1, 0.5, 0.75, 0, "cd", NULL, 0};
    in[5].opcheck = (ev_op_check_row){"cold", 2, 3, 1, 1, 17, 100, "00ff00ff00ff00ff", 0};
    in[6].opkept = (ev_op_kept_row){41, 99, 1, 0.25, 0.5, 0, "ef", NULL, 0};
    const ev_rec_type types[7] = {EV_REC_BINDING, EV_REC_CALIBRATION, EV_REC_SAMPLE, EV_REC_VALIDATION,
                                  EV_REC_CHECK,   EV_REC_OPCHECK,     EV_REC_OPKEPT};
    for (int k = 0; k < 7; k++) {
        cJSON *r = ev_rec_encode(types[k], &in[k]);
        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(ev_rec_decode(types[k], r, &back, &e), 0);
        /* strings are borrowed from the record: compared before it goes */
        if (types[k] == EV_REC_BINDING)
            ck_assert(!strcmp(back.binding.dtype, "fp16") && back.binding.in_span == 34816 &&
                      back.binding.threads == 24);
        if (types[k] == EV_REC_VALIDATION)
            ck_assert(!strcmp(back.validation.stage, "first") && !back.validation.passed &&
                      back.validation.mismatches == 3 && back.validation.bound == 0.125);
        if (types[k] == EV_REC_CHECK)
            ck_assert(back.check.input_set == 1 && back.check.after_sample == -1 && back.check.passed &&
                      back.check.max_abs_err == 0.5 && !strcmp(back.check.output_sha256, "cd"));
        if (types[k] == EV_REC_OPCHECK)
            ck_assert(!strcmp(back.opcheck.timing, "cold") && back.opcheck.sample_index == 2 &&
                      back.opcheck.replay_end == 3 && back.opcheck.rows == 17 &&
                      back.opcheck.variants == 100 && !strcmp(back.opcheck.tag, "00ff00ff00ff00ff") &&
                      !back.opcheck.passed);
        if (types[k] == EV_REC_OPKEPT)
            ck_assert(back.opkept.op == 41 && back.opkept.replay == 99 && back.opkept.passed &&
                      back.opkept.bound == 0.5 && !strcmp(back.opkept.output_sha256, "ef"));
        cJSON_Delete(r);
    }
    /* numbers and the clock, field by field */
    cJSON *r = ev_rec_encode(EV_REC_SAMPLE, &in[2]);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "sm_clock_mhz")));
    ck_assert_int_eq(ev_rec_decode(EV_REC_SAMPLE, r, &back, &e), 0);
    ck_assert_int_eq(back.sample.sm_clock_mhz, -1);
    ck_assert(back.sample.elapsed_ms == 0.1 + 0.2); /* exact text: the same bits */
    ck_assert_int_eq(back.sample.sample_index, 7);
    cJSON_Delete(r);
    r = ev_rec_encode(EV_REC_CALIBRATION, &in[1]);
    ck_assert_int_eq(ev_rec_decode(EV_REC_CALIBRATION, r, &back, &e), 0);
    ck_assert(back.calib.chosen == 1 && back.calib.step == 3 && back.calib.replays == 4096);
    ck_assert(back.calib.elapsed_ms == 10.5 && back.calib.target_ms == 10.0);
    /* refusals name the field */
    cJSON_ReplaceItemInObjectCaseSensitive(r, "chosen", cJSON_CreateNumber(1));
    ck_assert_int_eq(ev_rec_decode(EV_REC_CALIBRATION, r, &back, &e), -1);
    ck_assert_str_eq(e.msg, "chosen: must be true or false");
    cJSON_Delete(r);
    r = ev_rec_encode(EV_REC_BINDING, &in[0]);
    cJSON_ReplaceItemInObjectCaseSensitive(r, "threads", cJSON_CreateString("many"));
    ck_assert_int_eq(ev_rec_decode(EV_REC_BINDING, r, &back, &e), -1);
    ck_assert_msg(strstr(e.msg, "threads"), "%s", e.msg);
    cJSON_Delete(r);
    /* control records have no codec */
    ck_assert_ptr_null(ev_rec_encode(EV_REC_HELLO, &in[0]));
}
END_TEST

START_TEST(test_the_torch_peers_records_are_relayed_byte_for_byte_and_its_outputs_validated)
{
    char script[512];
    const char *extra[] = {"--python", "python3", "--peer-script", script, NULL};
    ev_buf recs = EV_BUF_INIT;

    snprintf(script, sizeof script, "%s",
             write_file("fake_peer.py", fake_peer)); /* write_file's buffer is reused */
    ck_assert_int_eq(run_worker(1, "torch-compile", extra, &recs), 0);
    ck_assert_str_eq(rec_line(&recs, 0),
                     "{\"type\": \"hello\", \"version\": 1, \"pid\": 1, \"job_key\": "
                     "\"main/x/y/initial\", \"arm\": \"torch-compile\", \"affinity\": \"0\"}");
    ck_assert_str_eq(rec_line(&recs, 1),
                     "{\"type\": \"sample\", \"timing\": \"hot\", \"index\": 0, \"replays\": "
                     "3, \"ops_per_graph\": 100, \"elapsed_ms\": 0.30000000000000004}");
    /* the worker's own share before the peer started */
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 2), "{\"type\":\"cold\",\"name\":\"prep\",\"elapsed_ns\":"));
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 3), "\"stage\":\"first\",\"passed\":false"));
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 3), "\"mismatches\":130"));
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 3), "\"output_hex\":\"0000"));
    /* the kept output, validated against its planted input (kernels/plants.h) */
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 4), "{\"type\":\"opkept\","));
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 4), "\"passed\":false"));
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 5), "\"stage\":\"final\",\"passed\":false"));
    ck_assert_str_eq(rec_line(&recs, 6), "{\"type\":\"end\",\"records\":6}");
    ev_buf_free(&recs);
}
END_TEST

/* The torch peer's library (build/libevident_ops.so, built where nvcc is):
 * kernels/peer_torch.py loads it with ctypes (its Plants class, importable
 * without torch) and refuses, in one line naming the file, a plants file
 * that is not one; a real plants file (the worker's format) is read as far
 * as the device, which this host may lack (then the refusal names the
 * device).  Skipped where the build has no library (no nvcc). */
START_TEST(test_the_torch_peers_library_loads_and_refuses_a_bad_plants_file)
{
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    char lib[512], cmd[4096];
    snprintf(lib, sizeof lib, "%s/libevident_ops.so", build);
    if (access(lib, R_OK))
        return; /* no nvcc: no library, and no torch peer on cuda either */
    snprintf(
        cmd, sizeof cmd,
        "cd kernels && PYTHONDONTWRITEBYTECODE=1 python3 -c '\n"
        "import os, struct, sys, tempfile\n"
        "import peer_torch\n"
        "lib = os.path.abspath(\"../%s\")\n"
        "d = tempfile.mkdtemp()\n"
        "bad = os.path.join(d, \"bad.bin\")\n"
        "open(bad, \"wb\").write(b\"not plants\")\n"
        "try:\n"
        "    peer_torch.Plants(lib, bad, 0)\n"
        "    sys.exit(\"a bad plants file was accepted\")\n"
        "except RuntimeError as e:\n"
        "    assert \"not a plants file\" in str(e), e\n"
        "good = os.path.join(d, \"good.bin\")\n"
        "rows = 2\n"
        "with open(good, \"wb\") as f:\n"
        "    f.write(b\"EVPLANT1\" + struct.pack(\"<Q7q\", 7, 0, 0, rows, 16, 16, 100, 1 << 30))\n"
        "    f.write(struct.pack(\"<ddii\", 1.0, 0.5, -3, 1) * rows)\n"
        "try:\n"
        "    p = peer_torch.Plants(lib, good, 50 << 20)\n"
        "    assert p.variants == 100 and p.epochs == 1 and p.rows == 2, (p.variants, p.epochs, p.rows)\n"
        "except RuntimeError as e:\n"
        "    assert \"plants on the device\" in str(e), e\n"
        "'",
        lib);
    ck_assert_msg(system(cmd) == 0, "the torch peer's library");
}
END_TEST

/* A stand-in peer whose device record is peer_torch.py's own
 * (device_record, importable without torch): a cold sample, two hot
 * samples with their walls, then the record. */
static const char fake_peer_device[] =
    "import argparse, json, os, sys\n"
    "sys.path.insert(0, 'kernels')\n"
    "import peer_torch\n" FAKE_PEER_ARGS "for f in (a.out_first, a.out_final, a.out_kept):\n"
    "    open(f, 'wb').write(bytes(int(a.rows) * 4))\n"
    "w = os.fdopen(int(a.record_fd), 'w')\n"
    "def emit(t, **f):\n"
    "    r = {'type': t}\n"
    "    r.update(f)\n"
    "    w.write(json.dumps(r) + '\\n')\n"
    "emit('hello', version=1, pid=1, job_key=a.job_key, arm='torch-compile', affinity='0')\n"
    "emit('sample', timing='cold', index=0, replays=1, ops_per_graph=1, elapsed_ms=0.125)\n"
    "for i in range(2):\n"
    "    emit('sample', timing='hot', index=i, replays=3, ops_per_graph=100, elapsed_ms=0.5)\n"
    "emit('device', **peer_torch.device_record(None, 2, 1, [0.5000000000000001, 0.75]))\n"
    "emit('end', records=5)\n";

/* The torch peer's device record (docs/runner.md, "Worker records"): peer_torch.py writes its hot
 * samples' walls (the late-work rule's second clock) and -1 for every
 * NVML fact; the worker, which holds no context on the device, fills in
 * one reading of its backend's watch per sample it relayed (the cpu
 * backend has none: -1) and the device's state, keeps the walls to the
 * bit, and the supervisor's reader accepts the record. */
START_TEST(test_the_torch_peers_device_record_gets_the_workers_readings_and_keeps_its_walls)
{
    char script[512];
    const char *extra[] = {"--python", "python3", "--peer-script", script, NULL};
    ev_buf recs = EV_BUF_INIT;
    ev_err e = {{0}};
    cJSON *d = NULL;
    char why[256] = "";
    ev_rule_sample hot[2], cold[1];

    snprintf(script, sizeof script, "%s", write_file("fake_peer_device.py", fake_peer_device));
    /* whatever this host's environment says of bytecode, the worker's must
     * be what keeps kernels/ clean */
    const char *keep = getenv("PYTHONDONTWRITEBYTECODE");
    char saved[16] = "";
    if (keep)
        snprintf(saved, sizeof saved, "%s", keep);
    unsetenv("PYTHONDONTWRITEBYTECODE");
    int wrc = run_worker(1, "torch-compile", extra, &recs);
    if (keep)
        setenv("PYTHONDONTWRITEBYTECODE", saved, 1);
    ck_assert_int_eq(wrc, 0);
    /* the samples go through byte for byte */
    ck_assert_str_eq(rec_line(&recs, 1), "{\"type\": \"sample\", \"timing\": \"cold\", \"index\": 0, "
                                         "\"replays\": 1, \"ops_per_graph\": 1, \"elapsed_ms\": 0.125}");
    const char *dev = strstr(recs.data, "{\"type\":\"device\"");
    ck_assert_ptr_nonnull(dev);
    ck_assert_int_eq(ev_json_parse(dev, strcspn(dev, "\n"), 0, &d, &e), EV_OK);
    ck_assert_msg(ev_rule_device_read(d, hot, 2, cold, 1, why, sizeof why) == 0, "%s", why);
    ck_assert(hot[0].wall_ms == 0.5000000000000001 && hot[1].wall_ms == 0.75);
    ck_assert_int_eq(hot[1].other_processes, -1); /* cpu: no watch */
    ck_assert_int_eq(cold[0].throttle_reasons, -1);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "cold_other_processes")), 1);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "versions")), 0);
    /* the peer imported kernels/peer_torch.py and wrote no bytecode beside
     * it: kernels/ is in the measurement closure (ev_torch_env) */
    ck_assert_msg(access("kernels/__pycache__", F_OK) != 0, "the peer left kernels/__pycache__");
    cJSON_Delete(d);
    ev_buf_free(&recs);
}
END_TEST

/*
 * Runs one worker job (arm on case ci of unit_protocol, extra arguments).
 * gate -1: no gate; else behind a gate on fd 5: for 300 ms nothing may
 * reach the record pipe, then the gate is released (gate 1) or closed
 * without the byte (gate 0).  OUT: *early (bytes that came before the
 * release; early may be NULL without a gate), records.  Returns the
 * worker's exit code.
 */
/* A command the next run_worker starts the worker through ({"setpriv",
 * ..., NULL}: the worker then runs as that command execs it), or NULL. */
static const char *const *g_worker_wrap = NULL;
/* The protocol run_worker runs (NULL: unit_protocol). */
static const char *g_unit = NULL;

static int run_worker_gated(int64_t ci, const char *arm, const char *const extra[], int gate, size_t *early,
                            ev_buf *records)
{
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    const char *proto = write_file("unit.json", g_unit ? g_unit : unit_protocol);
    char prog[512], case_s[24];
    const char *argv[48];
    int ac = 0, rp[2], gp[2];
    pid_t pid;
    double t0;

    for (int i = 0; g_worker_wrap && g_worker_wrap[i]; i++)
        argv[ac++] = g_worker_wrap[i];
    snprintf(prog, sizeof prog, "%s/evident-worker", build);
    snprintf(case_s, sizeof case_s, "%lld", (long long)ci);
    const char *fixed[] = {
        prog,    "--backend", "cpu",       "--protocol-fd",    "4", "--record-fd", "3", "--case", case_s,
        "--arm", arm,         "--job-key", "main/x/y/initial", NULL};
    for (int i = 0; fixed[i]; i++)
        argv[ac++] = fixed[i];
    if (gate >= 0) {
        argv[ac++] = "--gate-fd";
        argv[ac++] = "5";
    }
    for (int i = 0; extra && extra[i]; i++)
        argv[ac++] = extra[i];
    argv[ac] = NULL;
    ck_assert_int_eq(pipe(rp), 0);
    ck_assert_int_eq(pipe(gp), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int pf = open(proto, O_RDONLY);
        int nul = open("/dev/null", O_WRONLY);
        close(gp[1]);
        if (pf < 0 || dup2(pf, 4) < 0 || dup2(rp[1], 3) < 0 || (gate >= 0 && dup2(gp[0], 5) < 0) ||
            (nul >= 0 && dup2(nul, 1) < 0))
            _exit(126);
        close(gp[0]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(rp[1]);
    close(gp[0]);
    if (early)
        *early = 0;
    t0 = now_s();
    while (gate >= 0 && now_s() - t0 < 0.3) {
        struct pollfd pf = {rp[0], POLLIN, 0};
        char chunk[4096];
        if (poll(&pf, 1, 20) > 0 && (pf.revents & POLLIN)) {
            ssize_t n = read(rp[0], chunk, sizeof chunk);
            if (n > 0) {
                *early += (size_t)n;
                ck_assert_int_eq(ev_buf_append(records, chunk, (size_t)n), EV_OK);
            }
        }
    }
    if (gate > 0)
        ck_assert_int_eq(write(gp[1], "g", 1), 1);
    close(gp[1]);
    for (;;) {
        char chunk[4096];
        ssize_t n = read(rp[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        ck_assert_int_eq(ev_buf_append(records, chunk, (size_t)n), EV_OK);
    }
    close(rp[0]);
    return wait_exit(pid);
}

/* A staged job writes nothing until its release (it prepares and waits;
 * nothing of it reaches the device or the record stream before), then
 * runs its protocol and records how long it waited; a gate closed without
 * the release ends it without a record.  The torch peer waits at the same
 * gate (the worker hands it on). */
START_TEST(test_a_staged_worker_waits_at_its_gate_and_records_nothing_before_its_release)
{
    ev_buf recs = EV_BUF_INIT;
    size_t early = 99;
    char script[512], spawn[32];
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts); /* before the fork: the gate is held 300 ms from after it */
    snprintf(spawn, sizeof spawn, "%lld", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    const char *stamp[] = {"--spawn-ns", spawn, NULL};
    ck_assert_int_eq(run_worker_gated(1, "rows2", stamp, 1, &early, &recs), 0);
    ck_assert_uint_eq(early, 0);
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 0), "\"type\":\"hello\""));
    ck_assert_ptr_nonnull(strstr(recs.data, "\"type\":\"end\""));
    {
        /* it waited at the gate until the release: its start, its
         * preparation and its wait there account for the 300 ms the gate
         * was held, however slowly a busy host started it (the 1 ms: the
         * two statements between its preparation's end and its wait) */
        static const char *const names[] = {"process-start", "prep", "gate-wait"};
        long long sum = 0, ns[3];
        for (int k = 0; k < 3; k++) {
            char key[64];
            snprintf(key, sizeof key, "{\"type\":\"cold\",\"name\":\"%s\",\"elapsed_ns\":", names[k]);
            const char *g = strstr(recs.data, key);
            ck_assert_msg(g != NULL, "no %s record", names[k]);
            ns[k] = strtoll(g + strlen(key), NULL, 10);
            ck_assert_int_ge(ns[k], 0);
            sum += ns[k];
        }
        ck_assert_int_gt(ns[2], 0);
        ck_assert_msg(sum >= 299000000LL, "start %lld + prep %lld + gate-wait %lld ns for a 300 ms gate",
                      ns[0], ns[1], ns[2]);
    }
    ev_buf_reset(&recs);

    ck_assert_int_ne(run_worker_gated(1, "rows2", NULL, 0, &early, &recs), 0);
    ck_assert_uint_eq(recs.len, 0);

    snprintf(script, sizeof script, "%s", write_file("fake_peer.py", fake_peer));
    const char *extra[] = {"--python", "python3", "--peer-script", script, NULL};
    ck_assert_int_eq(run_worker_gated(1, "torch-compile", extra, 1, &early, &recs), 0);
    ck_assert_uint_eq(early, 0);
    ck_assert_ptr_nonnull(strstr(rec_line(&recs, 0), "\"type\": \"hello\""));
    ck_assert_ptr_nonnull(strstr(recs.data, "\"type\":\"end\""));
    ev_buf_free(&recs);
}
END_TEST

/* The device record: one, after the last hot sample, with the plants'
 * secret seed (16 hex digits, never written before the samples) and the
 * plants it makes (variants, rows, epochs, kept op), the cpu backend's
 * facts unknown (-1) and one per-sample fact per hot sample; the
 * supervisor's reader (sample_rules.h) accepts it.  Every cold and hot
 * sample is followed by its op check, whose tag is the seed's for the
 * replays run by then (kernels/plants.h); the kept output follows the
 * device record, before the final validation. */
START_TEST(test_the_worker_writes_its_device_record_and_the_secret_seed_only_after_the_samples)
{
    ev_buf recs = EV_BUF_INIT;
    const char *dev, *last_hot, *seed, *kept;
    ev_err e = {{0}};
    cJSON *d = NULL;

    ck_assert_int_eq(run_worker(0, "default", NULL, &recs), 0);
    dev = strstr(recs.data, "{\"type\":\"device\"");
    ck_assert_ptr_nonnull(dev);
    ck_assert_ptr_null(strstr(dev + 1, "{\"type\":\"device\""));
    seed = strstr(recs.data, "\"seed\":\"");
    ck_assert_ptr_eq(seed, strstr(dev, "\"seed\":\"")); /* the seed appears nowhere before */
    ck_assert_uint_eq(strspn(seed + 8, "0123456789abcdef"), 16);
    last_hot = strstr(recs.data, "\"timing\":\"hot\",\"index\":1,");
    ck_assert_ptr_nonnull(last_hot);
    ck_assert(last_hot < dev);
    kept = strstr(recs.data, "{\"type\":\"opkept\"");
    ck_assert(kept && dev < kept && kept < strstr(recs.data, "\"stage\":\"final\""));
    ck_assert_int_eq(ev_json_parse(dev, strcspn(dev, "\n"), 0, &d, &e), EV_OK);
    ev_rule_sample hot[2];
    char why[256] = "";
    ev_rule_sample cold[1];
    ck_assert_msg(ev_rule_device_read(d, hot, 2, cold, 1, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(cold[0].other_processes, -1);
    ck_assert_int_eq(hot[0].other_processes, -1);
    ck_assert_int_eq(hot[1].throttle_reasons, -1);
    ck_assert_int_eq(ev_rule_device_read(d, hot, 3, cold, 1, why, sizeof why),
                     -1); /* three hot samples: refused */
    ck_assert_msg(strstr(why, "hot_other_processes: must be an array of 3 integers"), "%s", why);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(d, "rotation")));
    cJSON *pl = cJSON_GetObjectItem(d, "plants");
    uint64_t s = strtoull(cJSON_GetObjectItem(pl, "seed")->valuestring, NULL, 16);
    ck_assert_int_eq((int64_t)cJSON_GetObjectItem(pl, "rows")->valuedouble, 17);
    ck_assert_int_eq((int64_t)cJSON_GetObjectItem(pl, "kept_op")->valuedouble, ev_plant_kept_op(s, 100));
    /* every sample's op check: after its sample, its tag the seed's */
    int n_checks = 0;
    for (const char *at = recs.data; (at = strstr(at, "{\"type\":\"opcheck\"")) != NULL; at++) {
        cJSON *o = NULL;
        char want[17];
        ck_assert_int_eq(ev_json_parse(at, strcspn(at, "\n"), 0, &o, &e), EV_OK);
        snprintf(want, sizeof want, "%016llx",
                 (unsigned long long)ev_plant_tag_after(
                     s, (uint64_t)cJSON_GetObjectItem(o, "replay_end")->valuedouble));
        ck_assert_str_eq(cJSON_GetObjectItem(o, "tag")->valuestring, want);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "passed")));
        cJSON_Delete(o);
        n_checks++;
    }
    ck_assert_int_eq(n_checks, 3); /* one cold, two hot samples */
    cJSON_AddItemToObject(cJSON_GetObjectItem(d, "plants"), "extra", cJSON_CreateNumber(1));
    ck_assert_int_eq(ev_rule_device_read(d, hot, 2, cold, 1, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "plants.extra: not a member of the plants"), "%s", why);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d, "plants"), "extra");
    cJSON_AddItemToObject(d, "extra", cJSON_CreateNumber(1));
    ck_assert_int_eq(ev_rule_device_read(d, hot, 2, cold, 1, why, sizeof why),
                     -1); /* an unknown member: refused */
    ck_assert_msg(strstr(why, "extra: not a member"), "%s", why);
    cJSON_Delete(d);
    ev_buf_free(&recs);
}
END_TEST

/* 1 when a child of this process may take SCHED_FIFO (as the worker asks
 * on the cpu backend) and the kernel throttles real-time threads (the
 * worker asks only then: job.h). */
static int may_take_fifo(void)
{
    ev_buf rt = EV_BUF_INIT;
    int throttled = !ev_read_file("/proc/sys/kernel/sched_rt_runtime_us", &rt, NULL) && rt.len &&
                    strncmp(rt.data, "-1", 2);
    ev_buf_free(&rt);
    if (!throttled)
        return 0;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sched_param sp = {.sched_priority = EV_RULE_FIFO_PRIORITY};
        _exit(sched_setscheduler(0, SCHED_FIFO, &sp) == 0 ? 0 : 1);
    }
    return wait_exit(pid) == 0;
}

/* The host facts of the device record of one cpu worker run of case 0.
 * OUT: *h. */
static void worker_host(ev_rule_host *h)
{
    ev_buf recs = EV_BUF_INIT;
    ev_err e = {{0}};
    cJSON *d = NULL;
    ev_rule_sample hot[2], cold[1];
    ev_rule_attempt ra;
    char why[256] = "";

    ck_assert_int_eq(run_worker(0, "default", NULL, &recs), 0);
    const char *dev = strstr(recs.data, "{\"type\":\"device\"");
    ck_assert_ptr_nonnull(dev);
    ck_assert_int_eq(ev_json_parse(dev, strcspn(dev, "\n"), 0, &d, &e), EV_OK);
    ck_assert_msg(ev_rule_device_read(d, hot, 2, cold, 1, why, sizeof why) == 0, "%s", why);
    memset(&ra, 0, sizeof ra);
    ev_rule_device_attempt(d, &ra);
    *h = ra.host;
    cJSON_Delete(d);
    ev_buf_free(&recs);
}

/*
 * A cpu job's device record says what the host was doing and what its
 * measured threads were granted (docs/runner.md, "A busy host"): real-time
 * priority wherever this process may take it, else normal priority and
 * the host's own reason; the load average and the CPUs online.  With the
 * capability taken away (setpriv, as root) the same worker runs at normal
 * priority and says "Operation not permitted".
 */
START_TEST(test_a_cpu_workers_device_record_says_its_priority_and_the_hosts_load)
{
    ev_rule_host h;
    int can = may_take_fifo();
    char rt[sizeof unit_protocol + 64];

    /* a protocol that does not declare it: normal priority, and why */
    worker_host(&h);
    ck_assert_int_eq(h.known, 1);
    ck_assert_int_eq(h.fifo, 0);
    ck_assert_str_eq(h.refused, EV_RULE_NOT_DECLARED);
    /* one that does */
    ck_assert_ptr_nonnull(strstr(unit_protocol, "{\"seed\": 5,"));
    snprintf(rt, sizeof rt, "{\"cpu_priority\": \"realtime\", %s", unit_protocol + 1);
    g_unit = rt;
    worker_host(&h);
    ck_assert_int_eq(h.known, 1);
    ck_assert_int_eq(h.fifo, can);
    ck_assert_int_eq(h.priority, can ? EV_RULE_FIFO_PRIORITY : 0);
    ck_assert_msg(can ? h.refused[0] == '\0' : h.refused[0] != '\0', "refused: '%s'", h.refused);
    ck_assert_int_eq(h.cpus, sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert(h.load_start >= 0 && h.load_end >= 0);
    if (can && geteuid() == 0) {
        static const char *const wrap[] = {"setpriv", "--bounding-set", "-sys_nice", NULL};
        g_worker_wrap = wrap;
        worker_host(&h);
        g_worker_wrap = NULL;
        ck_assert_int_eq(h.fifo, 0);
        ck_assert_int_eq(h.priority, 0);
        ck_assert_msg(!strcmp(h.refused, "sched_setscheduler(SCHED_FIFO): Operation not permitted"), "%s",
                      h.refused);
    }
    g_unit = NULL;
}
END_TEST

/* The host member of a device record is read strictly: its policy, the
 * priority that goes with it, the reason only where refused, loads and
 * CPUs of the documented types; nothing else.  So is the list of
 * re-calibrations (at most EV_RULE_RECAL_MAX). */
START_TEST(test_the_device_records_host_facts_and_recalibrations_are_read_strictly)
{
    static const struct {
        const char *host, *want;
    } t[] = {
        {"{\"scheduler\": \"fifo\", \"priority\": 1, \"refused\": null, \"load_start\": 4.5, \"load_end\": "
         "5, "
         "\"cpus\": 2}",
         NULL},
        {"{\"scheduler\": \"other\", \"priority\": 0, \"refused\": \"sched_setscheduler(SCHED_FIFO): "
         "Operation "
         "not permitted\", \"load_start\": 0, \"load_end\": 0.25, \"cpus\": 16}",
         NULL},
        {"{\"scheduler\": \"rr\", \"priority\": 1, \"refused\": null, \"load_start\": 0, \"load_end\": 0, "
         "\"cpus\": 2}",
         "host.scheduler: must be \"fifo\" or \"other\""},
        {"{\"scheduler\": \"fifo\", \"priority\": 0, \"refused\": null, \"load_start\": 0, \"load_end\": 0, "
         "\"cpus\": 2}",
         "host.priority"},
        {"{\"scheduler\": \"fifo\", \"priority\": 1, \"refused\": \"x\", \"load_start\": 0, \"load_end\": 0, "
         "\"cpus\": 2}",
         "host.refused"},
        {"{\"scheduler\": \"other\", \"priority\": 0, \"refused\": null, \"load_start\": 0, \"load_end\": 0, "
         "\"cpus\": 2}",
         "host.refused"},
        {"{\"scheduler\": \"other\", \"priority\": 0, \"refused\": \"x\", \"load_start\": -1, \"load_end\": "
         "0, "
         "\"cpus\": 2}",
         "host.load_start: must be a number >= 0"},
        {"{\"scheduler\": \"other\", \"priority\": 0, \"refused\": \"x\", \"load_start\": 0, \"load_end\": "
         "0, "
         "\"cpus\": 0}",
         "host.cpus"},
        {"{\"scheduler\": \"other\", \"priority\": 0, \"refused\": \"x\", \"load_start\": 0, \"load_end\": "
         "0, "
         "\"cpus\": 2, \"nice\": 0}",
         "host.nice: not a member"},
    };
    static const struct {
        const char *recal, *want;
    } u[] = {
        {"[{\"after\": 0, \"first_step\": 3}, {\"after\": 2, \"first_step\": 5}]", NULL},
        {"[{\"after\": 0, \"first_step\": 3}, {\"after\": 1, \"first_step\": 4}, {\"after\": 2, "
         "\"first_step\": 5}]",
         "recalibrations: must be an array of at most 2"},
        {"[{\"after\": -1, \"first_step\": 3}]", "recalibrations: each must be"},
        {"[{\"after\": 0, \"first_step\": 0}]", "recalibrations: each must be"},
        {"[{\"after\": 0}]", "recalibrations: each must be"},
    };
    static const char base[] = "{\"type\": \"device\", \"rotation\": null, \"other_processes\": -1, "
                               "\"self_seen\": false, \"throttle_reasons\": -1, \"ecc\": -1, \"mig\": -1, "
                               "\"persistence\": -1, \"persisting_l2_bytes\": -1, \"versions\": {}, "
                               "\"hot_other_processes\": [-1], \"hot_throttle_reasons\": [-1]";
    char text[1024], why[256];
    ev_rule_sample hot[1], cold[1];
    ev_err e = {{0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0] + sizeof u / sizeof u[0]; i++) {
        int is_host = i < sizeof t / sizeof t[0];
        const char *want = is_host ? t[i].want : u[i - sizeof t / sizeof t[0]].want;
        cJSON *d = NULL;
        snprintf(text, sizeof text, "%s, \"%s\": %s}", base, is_host ? "host" : "recalibrations",
                 is_host ? t[i].host : u[i - sizeof t / sizeof t[0]].recal);
        ck_assert_msg(ev_json_parse(text, strlen(text), 0, &d, &e) == EV_OK, "%s", text);
        why[0] = '\0';
        int rc = ev_rule_device_read(d, hot, 1, cold, 0, why, sizeof why);
        if (!want) {
            ck_assert_msg(rc == 0, "%s: %s", text, why);
            ev_rule_attempt ra;
            memset(&ra, 0, sizeof ra);
            ev_rule_device_attempt(d, &ra);
            if (is_host) {
                ck_assert_int_eq(ra.host.known, 1);
                ck_assert_int_eq(ra.host.fifo, i == 0);
                ck_assert_int_eq(ra.host.cpus, i == 0 ? 2 : 16);
                ck_assert(ra.host.load_end == (i == 0 ? 5.0 : 0.25));
            } else {
                ck_assert_uint_eq(ra.n_recal, 2);
                ck_assert_int_eq(ra.recal_after[1], 2);
                ck_assert_int_eq(ra.recal_first[1], 5);
            }
        } else {
            ck_assert_msg(rc == -1 && strstr(why, want), "%s: '%s'", text, why);
        }
        cJSON_Delete(d);
    }
}
END_TEST

/*
 * evident run says why a job broke a sample rule (docs/runner.md, "A busy
 * host"): after its summary and its host line, each such attempt with its
 * rule and figures (the process row's protocol error, every hot sample),
 * and the likely cause and what to do, which is ev_rule_cause of the host
 * facts the attempt recorded: here the late fault arm's main attempt (its
 * last hot sample's wall clock 50 ms past its events: the late-work rule,
 * whatever the host).  (The overrun fault, which breaks the band, is
 * caught earlier now, by its op check's count of the replays that ran.)
 */
START_TEST(test_evident_run_names_each_broken_rule_its_samples_and_the_likely_cause)
{
    static const char proto[] =
        "{\"seed\": 6, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 40, "
        "\"target_sample_ms\": 20, \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false, \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-over\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-over\", \"kind\": \"late\", \"ms\": 50, \"when\": "
        "\"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    char db[512], log[65536], rows[8192], want[9000], cause[600];
    const char *path = write_file("over.json", proto);
    snprintf(db, sizeof db, "%s/over.db", dir);
    const char *run[] = {"run", "--protocol", path, "--db", db, NULL};
    ck_assert_int_eq(run_prog("evident", run, log, sizeof log), 0);
    /* the attempt's own record: its error and its host facts */
    db_rows(
        db,
        "select p.protocol_error, d.json from jobs j join attempts a using (job_id) join processes p using "
        "(attempt_id) join attempt_devices d using (attempt_id) where j.job_key = "
        "'main/0/fault-over/initial'",
        rows, sizeof rows);
    char *bar = strchr(rows, '|'), *nl = strrchr(rows, '\n');
    ck_assert_ptr_nonnull(bar);
    *bar = '\0';
    *nl = '\0';
    ck_assert_msg(!strncmp(rows, "protocol rule: ", 15), "%s", rows);
    cJSON *d = NULL;
    ev_err e = {{0}};
    ev_rule_attempt ra;
    ck_assert_int_eq(ev_json_parse(bar + 1, strlen(bar + 1), 0, &d, &e), EV_OK);
    memset(&ra, 0, sizeof ra);
    ev_rule_device_attempt(d, &ra);
    cJSON_Delete(d);
    ck_assert_int_eq(ra.host.known, 1);
    int fifo = ra.host.fifo;
    char refused[EV_RULE_REFUSED_MAX + 40];
    snprintf(refused, sizeof refused, "at normal priority (%s)", ra.host.refused);
    ev_rule_cause(&ra.host, cause, sizeof cause);
    ck_assert(cause[0]);
    snprintf(want, sizeof want, "  main/0/fault-over/initial attempt 1: %s\n    hot samples (ms): ", rows);
    ck_assert_msg(strstr(log, want), "no line %s in:\n%s", want, log);
    snprintf(want, sizeof want, "\n    %s\n", cause);
    ck_assert_msg(strstr(log, want), "no cause line %s in:\n%s", want, log);
    ck_assert_msg(strstr(log, "\nsample rules broken by ") && strstr(log, "\nhost: "), "%s", log);
    /* the host line as the attempt recorded it: real-time priority where
     * the host granted it, else the host's refusal */
    ck_assert_msg(fifo ? !strstr(log, "normal priority") : strstr(log, refused) != NULL, "%s", log);
}
END_TEST

/* The likely cause of a broken sample rule (ev_rule_cause: the runner's
 * summary and the report say it with it): host load when the load average
 * seen reached the CPUs, with what to do, which depends on the priority
 * the threads had; not host load below that; nothing without host facts. */
START_TEST(test_the_likely_cause_is_host_load_only_when_the_load_reached_the_cpus)
{
    ev_rule_host h;
    char t[600];
    memset(&h, 0, sizeof h);
    ck_assert_int_eq(ev_rule_cause(&h, t, sizeof t), 0);
    ck_assert_str_eq(t, "");
    h.known = 1;
    h.cpus = 2;
    h.load_start = 1.5;
    h.load_end = 2.0;
    snprintf(h.refused, sizeof h.refused, "sched_setscheduler(SCHED_FIFO): Operation not permitted");
    ck_assert_int_eq(ev_rule_cause(&h, t, sizeof t), 1);
    ck_assert_msg(strstr(t, "likely cause: host load (load average 2.00 on 2 CPUs") &&
                      strstr(t, "Operation not permitted") && strstr(t, "run evident as root"),
                  "%s", t);
    h.fifo = 1;
    h.priority = 1;
    h.refused[0] = '\0';
    ck_assert_int_eq(ev_rule_cause(&h, t, sizeof t), 1);
    ck_assert_msg(strstr(t, "even with its threads at real-time priority") && strstr(t, "target_sample_ms"),
                  "%s", t);
    h.load_end = 1.99;
    ck_assert_int_eq(ev_rule_cause(&h, t, sizeof t), 0);
    ck_assert_msg(strstr(t, "not host load") && strstr(t, "load average 1.99 on 2 CPUs"), "%s", t);
}
END_TEST

/* A protocol for the rules' unit tests: 5 samples of 5 ms, band 0.5
 * ([2.5, 7.5] ms; wide [1.25, 20]). */
static const char rules_protocol[] =
    "{\"seed\": 1, \"samples\": 5, \"warmup_ms\": 10, \"target_sample_ms\": 5, \"cold_samples\": 1,\n"
    " \"tolerances\": {\"sample_band\": 0.5},\n"
    " \"arms\": [\"default\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 64, \"dtype\": \"fp32\", "
    "\"default_rows\": 4}]}\n";

/* The protocol text rule_breaches holds an attempt to (NULL:
 * rules_protocol). */
static const char *g_rules_text = NULL;

/* The first breach of attempt a under rules_protocol, as a process row's
 * protocol_error ("" when none), into out[cap]. */
static void rule_breaches(const ev_rule_attempt *a, char *out, size_t cap)
{
    ev_protocol p;
    ev_err e = {{0}};
    const char *t = g_rules_text ? g_rules_text : rules_protocol;
    ck_assert_msg(ev_protocol_parse(t, strlen(t), &p, &e) == EV_OK, "%s", e.msg);
    ck_assert_int_ge(ev_rules_reason(&p, "cpu", a, out, cap), 0);
    ev_protocol_free(&p);
}

/*
 * Re-calibration (sample_rules.h): after a sample that drifted out of the
 * band, the worker calibrates again and the samples after it are at the
 * new count.  The rules hold it to that: the honest attempt passes; the
 * same re-calibration after a sample inside the band, after the last
 * sample, or with no step chosen is a breach; samples after it at the old
 * count are; without the re-calibration the new count is (the rule that
 * every sample is at the count chosen before it).  A sample above the
 * band at one replay is no drift (fewer replays are impossible).
 */
START_TEST(test_a_recalibration_counts_only_after_a_drifted_sample_and_sets_the_count_after_it)
{
    ev_rule_step steps[3] = {{2, 5, 0}, {4, 5, 1}, {2, 5, 1}};
    ev_rule_sample hot[5], cold[1] = {{0.5, 1, 1, -1, -1, -1, -1}};
    static const double ms[5] = {5.0, 12.0, 5.0, 5.5, 4.5};
    static const int64_t reps[5] = {4, 4, 2, 2, 2};
    ev_rule_attempt a;
    char why[400];
    ev_protocol p;
    ev_err e = {{0}};

    for (int i = 0; i < 5; i++)
        hot[i] = (ev_rule_sample){ms[i], reps[i], 100, -1, -1, -1, -1};
    memset(&a, 0, sizeof a);
    a.arm = "default";
    a.completed = 1;
    a.has_warmup = 1;
    a.warmup_target_ms = a.warmup_elapsed_ms = 10;
    a.steps = steps;
    a.n_steps = 3;
    a.hot = hot;
    a.n_hot = 5;
    a.cold = cold;
    a.n_cold = 1;
    a.has_flush = 1;
    a.flush_bytes = 4194304; /* past 2 x the cache: the flush rule holds */
    a.cache_bytes = 1048576;
    a.n_recal = 1;
    a.recal_after[0] = 1; /* 12 ms at 4 replays: above 7.5 */
    a.recal_first[0] = 2;
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(why[0] == '\0', "the honest re-calibration: %s", why);

    ck_assert_int_eq(ev_protocol_parse(rules_protocol, strlen(rules_protocol), &p, &e), EV_OK);
    ck_assert_int_eq(ev_rule_drifted(&p, 12.0, 4), 1);
    ck_assert_int_eq(ev_rule_drifted(&p, 2.0, 4), 1);
    ck_assert_int_eq(ev_rule_drifted(&p, 12.0, 1), 0); /* one replay: a longer sample is kept */
    ck_assert_int_eq(ev_rule_drifted(&p, 7.5, 4), 0);
    ev_protocol_free(&p);

    a.recal_after[0] = 0; /* after 5 ms: inside the band */
    hot[1].replays = 2;
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(strstr(why,
                         "re-calibration 1 after hot sample 0, whose 5 ms at 4 replays is within the band "
                         "[2.5, 7.5] ms: a re-calibration follows only a sample that drifted out of it"),
                  "%s", why);
    hot[1].replays = 4;

    a.recal_after[0] = 4; /* after the last sample */
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(strstr(why, "re-calibration 1 after hot sample 4: not after a later sample"), "%s", why);
    a.recal_after[0] = 1;

    steps[2].chosen = 0; /* the re-calibration chose nothing */
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(strstr(why, "0 calibration steps chosen in re-calibration 1 (after hot sample 1)"), "%s",
                  why);
    steps[2].chosen = 1;

    hot[3].replays = 4; /* a sample after it at the old count */
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(
        strstr(why, "1 hot samples not at the replays chosen by the calibration before them (4, then 2)"),
        "%s", why);
    hot[3].replays = 2;

    a.n_recal = 0; /* the same samples without the re-calibration: two groups' chosen steps */
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(strstr(why, "2 calibration steps chosen, not exactly one"), "%s", why);
    a.n_recal = 1;

    /* real-time priority only where the protocol declares it */
    a.host.known = a.host.fifo = 1;
    a.host.priority = EV_RULE_FIFO_PRIORITY;
    a.host.cpus = 2;
    rule_breaches(&a, why, sizeof why);
    ck_assert_msg(!strcmp(why,
                          "protocol rule: measured at real-time priority (SCHED_FIFO 1), which the protocol "
                          "does not declare (cpu_priority is normal)"),
                  "%s", why);
    char rt[sizeof rules_protocol + 64];
    snprintf(rt, sizeof rt, "{\"cpu_priority\": \"realtime\", %s", rules_protocol + 1);
    g_rules_text = rt;
    rule_breaches(&a, why, sizeof why);
    g_rules_text = NULL;
    ck_assert_msg(why[0] == '\0', "declared: %s", why);
}
END_TEST

/* ---- shards (docs/runner.md, "Shards") ---------------------------------- */

/* A small protocol for the shard tests: 4 cases, 3 arms, the reference
 * arms, short samples. */
static const char shard_protocol[] =
    "{\"seed\": 11, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 4, \"target_sample_ms\": "
    "2, \"cold_samples\": 1,\n"
    " \"host_threads\": 1, \"job_timeout_s\": 60, \"tolerances\": {\"sample_band\": 0.9},\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 4194304}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", \"default_rows\": "
    "8},\n"
    "           {\"op\": \"reduce_sum\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", \"default_rows\": "
    "8},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 37, \"cols\": 257, \"stride\": 260, \"dtype\": \"bf16\",\n"
    "            \"default_rows\": 4, \"role\": \"holdout\"}]}\n";

/* Runs a shell command in dir (E: build/evident, V: build/verify-bundle,
 * P: the shard protocol, D: dir); returns its exit status. */
static int shard_sh(const char *script)
{
    char cwd[1024], e[512], v[512], *cmd;
    size_t n = strlen(script) + 4096;
    int st;
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ev_prog_path("evident", e, sizeof e); /* relative to cwd, where the script runs, or absolute */
    ev_prog_path("verify-bundle", v, sizeof v);
    write_file("p.json", shard_protocol);
    cmd = malloc(n);
    ck_assert_ptr_nonnull(cmd);
    snprintf(cmd, n, "cd '%s' && E='%s' V='%s' P='%s/p.json' D='%s' && { %s ; } >>'%s/sh.log' 2>&1", cwd, e,
             v, dir, dir, script, dir);
    st = system(cmd);
    free(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* 1 when dir/sh.log holds text. */
static int shard_log_has(const char *text)
{
    char path[600];
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    int hit;
    snprintf(path, sizeof path, "%s/sh.log", dir);
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_OK);
    hit = b.data && strstr(b.data, text) != NULL;
    ev_buf_free(&b);
    return hit;
}

/* Both shards' main phase, the merge, both rests, the final merge. */
static const char shard_pipeline[] =
    "for i in 0 1; do $E run --protocol $P --shard $i/2 --phase main --db $D/s$i.db || exit 10; done; "
    "$E merge $D/s0.db $D/s1.db --out $D/main.db || exit 11; "
    "for i in 0 1; do $E run --protocol $P --shard $i/2 --phase rest --main $D/main.db --db $D/s$i.db "
    "|| exit 12; done; "
    "$E merge $D/s0.db $D/s1.db --out $D/all.db || exit 13; "
    "$E export --db $D/all.db --out $D/all.zip || exit 14";

START_TEST(test_a_protocol_run_as_two_shards_merges_to_the_plan_of_one_run_and_verifies)
{
    /* SLURM_ARRAY_TASK_ID names the index when --shard gives only /N */
    char script[4096];
    snprintf(
        script, sizeof script, "%s",
        "for i in 0 1; do $E run --protocol $P --shard $i/2 --phase main --db $D/s$i.db || exit 10; done; "
        "$E merge $D/s0.db $D/s1.db --out $D/main.db || exit 11; "
        "for i in 0 1; do SLURM_ARRAY_TASK_ID=$i $E run --protocol $P --shard /2 --phase rest "
        "--main $D/main.db --db $D/s$i.db || exit 12; done; "
        "$E merge $D/s0.db $D/s1.db --out $D/all.db || exit 13; "
        "$E export --db $D/all.db --out $D/all.zip || exit 14; $V $D/all.zip || exit 15");
    ck_assert_int_eq(shard_sh(script), 0);
    /* the plan equals a one-process run's: the same job keys, the floor and
     * ceiling once per shard */
    char one_db[512], all_db[512], one[8192], all[8192];
    snprintf(one_db, sizeof one_db, "%s/one.db", dir);
    snprintf(all_db, sizeof all_db, "%s/all.db", dir);
    ck_assert_int_eq(shard_sh("$E run --protocol $P --db $D/one.db >/dev/null"), 0);
    plan_keys(one_db, one, sizeof one);
    plan_keys(all_db, all, sizeof all);
    ck_assert_str_eq(all, one);
    ck_assert_int_eq(db_int(all_db, "select count(*) from jobs where arm = 'floor' and phase = 'main'"), 2);
    ck_assert_int_eq(db_int(all_db, "select count(distinct shard_index) from shards"), 2);
    /* every shard's invocations and environments came along */
    ck_assert_int_eq(db_int(all_db, "select count(*) from invocations i join environments e using "
                                    "(invocation_id) join shards s using (invocation_id)"),
                     4);
}
END_TEST

/* Two rounds (rounds > 1: every main job once a round) and a --cases
 * subset, each as two shards: the merged bundle verifies and its plan is
 * a one-process run's of the same protocol and subset (floor and ceiling
 * once a shard); the two-round plan holds round-2 jobs, the subset's
 * three cases (numbered 0-2 in the subset). */
START_TEST(test_two_rounds_and_a_cases_subset_run_as_two_shards_merge_and_verify)
{
    char script[4096], one_db[512], all_db[512], one[8192], all[8192];
    static const char *const variants[][2] = {
        {"s/\"seed\": 11,/\"seed\": 11, \"rounds\": 2,/", ""},
        {"s/x/x/", "--cases 0,2,3"},
    };
    snprintf(one_db, sizeof one_db, "%s/one.db", dir);
    snprintf(all_db, sizeof all_db, "%s/all.db", dir);
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        snprintf(
            script, sizeof script,
            "rm -f $D/*.db* $D/all.zip; sed '%s' $P > $D/p2.json; P=$D/p2.json; C='%s'; "
            "for i in 0 1; do $E run --protocol $P $C --shard $i/2 --phase main --db $D/s$i.db || exit 10; "
            "done; $E merge $D/s0.db $D/s1.db --out $D/main.db || exit 11; "
            "for i in 0 1; do $E run --protocol $P $C --shard $i/2 --phase rest --main $D/main.db "
            "--db $D/s$i.db || exit 12; done; "
            "$E merge $D/s0.db $D/s1.db --out $D/all.db || exit 13; "
            "$E export --db $D/all.db --out $D/all.zip || exit 14; $V $D/all.zip || exit 15; "
            "$E run --protocol $P $C --db $D/one.db >/dev/null || exit 20",
            variants[k][0], variants[k][1]);
        ck_assert_msg(shard_sh(script) == 0, "variant %zu (see %s/sh.log)", k, dir);
        plan_keys(one_db, one, sizeof one);
        plan_keys(all_db, all, sizeof all);
        ck_assert_msg(!strcmp(one, all), "variant %zu: the merged plan differs:\n%s\n---\n%s", k, all, one);
        if (k == 0) {
            ck_assert_msg(strstr(one, "/round-2\n"), "no round-2 job: %s", one);
        } else {
            size_t n_default = 0;
            for (const char *p = one; (p = strstr(p, "/default/")); p++)
                n_default += 1;
            /* main, policy's none (a subset without --model), recheck: 3 of main, 3 of recheck */
            ck_assert_uint_eq(n_default, 6);
            ck_assert_int_eq(
                db_int(one_db, "select count(*) from jobs where phase = 'main' and arm = 'default'"), 3);
        }
    }
}
END_TEST

/* Merging is a function of the shards: the same shards merged twice give
 * the same bundle, byte for byte (no clock of the merge's own in the run's
 * status), and shards on read-only media (no -shm can be made beside them;
 * root cannot write there either) merge to that bundle too. */
START_TEST(test_the_same_shards_merge_to_the_same_root_from_writable_or_read_only_media)
{
    ck_assert_int_eq(shard_sh(shard_pipeline), 0);
    ck_assert_int_eq(shard_sh("$E merge $D/s0.db $D/s1.db --out $D/again.db && $E export --db $D/again.db "
                              "--out $D/again.zip && cmp $D/all.zip $D/again.zip"),
                     0);
    if (geteuid() != 0 || shard_sh("mkdir $D/ro && mount -t tmpfs -o size=64m none $D/ro && cp $D/s0.db "
                                   "$D/s1.db $D/ro/ && mount -o remount,ro $D/ro")) {
        fprintf(stderr, "check_runner: no read-only mount could be made here: read-only shards not tested\n");
        return;
    }
    ck_assert_int_eq(
        shard_sh("$E merge $D/ro/s0.db $D/ro/s1.db --out $D/ro.db; r=$?; umount $D/ro; "
                 "test $r = 0 && $E export --db $D/ro.db --out $D/ro.zip && cmp $D/all.zip $D/ro.zip"),
        0);
}
END_TEST

START_TEST(test_a_bundle_of_one_shard_fails_naming_the_missing_shard_and_its_jobs)
{
    ck_assert_int_eq(shard_sh(shard_pipeline), 0);
    ck_assert_int_eq(shard_sh("$E export --db $D/s0.db --out $D/s0.zip >/dev/null && $V $D/s0.zip"), 1);
    ck_assert(shard_log_has("shard 1 of 2 has no invocation"));
    ck_assert(shard_log_has("planned job main/1/default/initial (shard 1 of 2) is missing"));
    ck_assert(shard_log_has("planned job main/-/floor/initial/shard-1 (shard 1 of 2) is missing"));
}
END_TEST

START_TEST(test_merge_refuses_a_missing_shard_a_shard_twice_a_conflicting_job_and_an_existing_output)
{
    ck_assert_int_eq(
        shard_sh("for i in 0 1; do $E run --protocol $P --shard $i/2 --phase main --db $D/s$i.db "
                 ">/dev/null || exit 10; done"),
        0);
    ck_assert_int_eq(shard_sh("$E merge $D/s0.db --out $D/m.db"), 2);
    ck_assert(shard_log_has("shard 1/2 is missing"));
    ck_assert_int_eq(shard_sh("$E merge $D/s0.db $D/s0.db $D/s1.db --out $D/m.db"), 2);
    ck_assert(shard_log_has("s0.db and ") && shard_log_has("s0.db are both shard 0/2"));
    /* a job of shard 1 written into shard 0's store */
    char s0[512], bad[512];
    snprintf(s0, sizeof s0, "%s/s0.db", dir);
    snprintf(bad, sizeof bad, "%s/bad.db", dir);
    ck_assert_int_eq(shard_sh("cp $D/s0.db $D/bad.db"), 0);
    db_exec(bad, "insert into jobs (run_id, job_key, phase, case_index, arm, label, plan_order) values (1, "
                 "'main/1/rows1/initial', 'main', 1, 'rows1', 'initial', 9999)");
    ck_assert_int_eq(shard_sh("$E merge $D/bad.db $D/s1.db --out $D/m.db"), 2);
    ck_assert(shard_log_has("is shard 1's job: conflicting stores"));
    /* the shard's main phase not ended: its rest is refused; then the merges */
    ck_assert_int_eq(shard_sh("test ! -e $D/m.db && $E merge $D/s0.db $D/s1.db --out $D/m.db"), 0);
    ck_assert_int_eq(shard_sh("$E merge $D/s0.db $D/s1.db --out $D/m.db"), 2);
    ck_assert(shard_log_has("exists: a merge never replaces a store"));
    /* a shard run again continues its store: it appends an invocation, no job twice */
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 0/2 --phase main --db $D/s0.db >/dev/null"), 0);
    ck_assert_int_eq(db_int(s0, "select count(*) from invocations"), 2);
    ck_assert_int_eq(db_int(s0, "select count(*) from shards where phase = 'main'"), 2);
    /* another shard's store, or an unsharded one, is refused */
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 1/2 --phase main --db $D/s0.db"), 2);
    ck_assert(shard_log_has("holds shard 0/2"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 0/2 --phase rest --main $D/s1.db --db $D/s0.db"),
                     2);
    ck_assert(shard_log_has("is not a merge of 2 shards") || shard_log_has("shard 0/2 is not in it"));
}
END_TEST

START_TEST(test_shard_options_are_refused_in_one_line_when_malformed)
{
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 2/2 --phase main --db $D/x.db"), 2);
    ck_assert(shard_log_has("the index must be an integer from 0 to 1, not '2'"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 0/2 --db $D/x.db"), 2);
    ck_assert(shard_log_has("--shard needs --phase main or --phase rest"));
    ck_assert_int_eq(shard_sh("env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX $E run --protocol $P "
                              "--shard /2 --phase main --db $D/x.db"),
                     2);
    ck_assert(shard_log_has("neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set"));
    ck_assert_int_eq(
        shard_sh("JOB_COMPLETION_INDEX=x $E run --protocol $P --shard /2 --phase main --db $D/x.db"), 2);
    ck_assert(shard_log_has("(JOB_COMPLETION_INDEX) must be an integer from 0 to 1, not 'x'"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --shard 0/2 --phase rest --db $D/x.db"), 2);
    ck_assert(shard_log_has("--phase rest needs --main"));
    ck_assert_int_eq(shard_sh("test ! -e $D/x.db"), 0);
}
END_TEST

/* Reads the [attempt start, process end] windows of the store at path
 * into w (pairs), at most cap pairs.  Returns the count. */
static size_t attempt_windows(const char *path, long long *w, size_t cap)
{
    char rows[65536];
    size_t n = 0;
    db_rows(path, "select a.started_ns, p.ended_ns from attempts a join processes p using (attempt_id)", rows,
            sizeof rows);
    for (char *r = rows; *r && n < cap; n++) {
        ck_assert_int_eq(sscanf(r, "%lld|%lld", &w[2 * n], &w[2 * n + 1]), 2);
        r = strchr(r, '\n');
        ck_assert_ptr_nonnull(r);
        r++;
    }
    return n;
}

/* Two runs at once on one host's CPUs (neither declares a cpu_set, so
 * both measure on the same ones): they take turns (docs/runner.md, "Two
 * runs on one host"): both complete and verify, no attempt of one ran
 * while an attempt of the other did, and the waits are in the stores as
 * "cpu-lock" cold timings. */
START_TEST(test_two_runs_at_once_on_one_hosts_cpus_take_turns_and_keep_their_waits)
{
    char d1[512], d2[512];
    long long w1[2 * 200], w2[2 * 200];
    size_t n1, n2, both = 0;
    ck_assert_int_eq(
        shard_sh("$E run --protocol $P --db $D/t1.db >$D/t1.out 2>&1 & p=$!; "
                 "$E run --protocol $P --db $D/t2.db >$D/t2.out 2>&1; r=$?; wait $p && [ $r = 0 ] && "
                 "for i in 1 2; do $E export --db $D/t$i.db --out $D/t$i.zip >/dev/null && $V $D/t$i.zip "
                 ">/dev/null || exit 1; done"),
        0);
    snprintf(d1, sizeof d1, "%s/t1.db", dir);
    snprintf(d2, sizeof d2, "%s/t2.db", dir);
    n1 = attempt_windows(d1, w1, 200);
    n2 = attempt_windows(d2, w2, 200);
    ck_assert(n1 > 10 && n2 > 10);
    for (size_t i = 0; i < n1; i++)
        for (size_t k = 0; k < n2; k++)
            both += w1[2 * i] < w2[2 * k + 1] && w2[2 * k] < w1[2 * i + 1];
    ck_assert_msg(both == 0, "%zu pairs of attempts of the two runs measured at the same time", both);
    ck_assert_int_ge(
        db_int(d1, "select count(*) from cold_timings where name = 'cpu-lock' and elapsed_ns > 0") +
            db_int(d2, "select count(*) from cold_timings where name = 'cpu-lock' and elapsed_ns > 0"),
        1);
}
END_TEST

/* --gpus on the cpu backend: the devices are labels, and what is tested is
 * the orchestration a GPU host runs too: one shard per device at once, on
 * disjoint CPUs, the merges, one bundle that verifies. */
START_TEST(test_gpus_runs_one_shard_per_device_at_once_on_disjoint_cpus_and_the_merge_verifies)
{
    char g[512], rows[1024];
    long long b[2] = {0, 0}, e[2] = {0, 0};
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return; /* two shards need two CPUs (refused on one: the next test) */
    /* 600 ms warm-ups: each shard's main phase measures for at least 8 x
     * 0.6 s, far longer than starting a process takes on a loaded host */
    ck_assert_int_eq(shard_sh("sed 's/\"warmup_ms\": 4,/\"warmup_ms\": 600,/' $P > $D/g.json && "
                              "$E run --protocol $D/g.json --gpus 0,1 --db $D/g.db && $E export --db $D/g.db "
                              "--out $D/g.zip >/dev/null && $V $D/g.zip"),
                     0);
    snprintf(g, sizeof g, "%s/g.db", dir);
    /* each shard's attempts on its own CPUs, and none on the other's */
    ck_assert_int_eq(
        db_int(g, "select count(distinct s.shard_index || ':' || p.affinity) from processes p join "
                  "attempts a using (attempt_id) join shards s on s.invocation_id = a.invocation_id"),
        2);
    ck_assert_int_eq(db_int(g, "select count(distinct p.affinity) from processes p"), 2);
    /* at once: each shard's process started (its invocation) before the
     * other's main phase had ended */
    db_rows(g,
            "select s.shard_index, i.started_ns, max(p.ended_ns) from invocations i join shards s using "
            "(invocation_id) join attempts a on a.invocation_id = i.invocation_id join processes p using "
            "(attempt_id) where s.phase = 'main' group by 1 order by 1",
            rows, sizeof rows);
    ck_assert_int_eq(sscanf(rows, "0|%lld|%lld\n1|%lld|%lld", &b[0], &e[0], &b[1], &e[1]), 4);
    ck_assert_msg(b[0] < e[1] && b[1] < e[0], "the shards ran one after the other: %s", rows);
}
END_TEST

/* A scheduler stops `evident run --gpus` by signalling it: its shards stop
 * with it, SIGKILL included (PR_SET_PDEATHSIG), and SIGTERM is passed on
 * to them; then the same command, run again, continues the shards' stores
 * and finishes the run, whose bundle verifies.  The shards' ends are
 * awaited on their stores' own locks (flock), never on a clock. */
START_TEST(test_gpus_shards_die_with_their_parent_and_a_rerun_finishes_the_run)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return; /* two shards need two CPUs */
    /* slower jobs than the shard protocol's: a shard has work left when its parent goes */
    write_file(
        "slow-gpus.json",
        "{\"seed\": 11, \"samples\": 3, \"warmup_ms\": 150, \"target_sample_ms\": 20, \"cold_samples\": 1,\n"
        " \"host_threads\": 1, \"job_timeout_s\": 120, \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference_arms\": false, \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 37, \"cols\": 257, \"dtype\": \"bf16\", "
        "\"default_rows\": 4}]}\n");
    for (int sig = 0; sig < 2; sig++) {
        char script[3000];
        const char *name = sig ? "KILL" : "TERM";
        snprintf(
            script, sizeof script,
            "rm -f $D/k.db*; $E run --protocol $D/slow-gpus.json --gpus 0,1 --db $D/k.db >$D/k.out 2>&1 & "
            "p=$!; "
            /* both shards have begun a job (an attempt row in each store):
             * they are measuring, each with its phase ahead of it, however
             * unevenly a busy host shares its CPUs between them (waiting
             * for each to end a job once let one finish its phase first) */
            "until python3 -c 'import sqlite3, sys; sys.exit(0 if all(sqlite3.connect(\"file:\" + p + "
            "\"?mode=ro\", uri=True).execute(\"select count(*) from attempts\").fetchone()[0] for p in "
            "sys.argv[1:]) else 1)' $D/k.db.shard-0.db $D/k.db.shard-1.db 2>/dev/null; do kill -0 $p || "
            "exit 20; sleep 0.1; done; "
            "kill -%s $p; wait $p; "
            /* each shard's store lock is free once that shard has ended */
            "flock $D/k.db.shard-0.db true && flock $D/k.db.shard-1.db true || exit 21; "
            /* and it stopped, its phase unfinished */
            "for i in 0 1; do grep -q 'stopped by a signal' $D/k.db.shard-$i.log || exit 22; "
            "! grep -q 'phase main done' $D/k.db.shard-$i.log || exit 23; done; "
            "$E run --protocol $D/slow-gpus.json --gpus 0,1 --db $D/k.db >>$D/k.out 2>&1 || exit 24; "
            "$E export --db $D/k.db --out $D/k.zip >/dev/null && $V $D/k.zip >/dev/null || exit 25",
            name);
        int rc = shard_sh(script);
        ck_assert_msg(rc == 0, "SIG%s: step %d failed (see %s/sh.log, %s/k.out, the shard logs)", name, rc,
                      dir, dir);
    }
}
END_TEST

/* The code a run measures is the code its evident was built from
 * (runner/build_id.h): from a copy of this tree (a GPU host's copy, no
 * .git) the build runs, a protocol of the user's own added to protocols/
 * too; once a measured file there differs (src/runner/ edited after the
 * build, or src/common/vocab.h: the identity is the closure's code,
 * mk/build-id.sh), the run is refused in one line, exit 2, before a store
 * exists. */
START_TEST(test_a_run_from_a_tree_other_than_the_builds_is_refused_before_the_store_is_touched)
{
    char script[3000];
    snprintf(
        script, sizeof script,
        "rm -rf $D/copy && mkdir -p $D/copy && "
        "tar cf - mk/closure.list $(cat mk/closure.list) protocols | (cd $D/copy && tar xf -) && "
        "case $E in /*) ;; *) E=$(pwd)/$E;; esac && "
        "cd $D/copy && "
        "cp $P protocols/mine.json && "
        "$E run --protocol protocols/mine.json --backend cpu --db $D/copy-ok.db >/dev/null || exit 10; "
        "echo '/* edited after the build */' >> src/runner/record.c && "
        "{ $E run --protocol protocols/mine.json --backend cpu --db $D/copy-bad.db 2>$D/bad.err; "
        "test $? = 2 || exit 11; }; test ! -e $D/copy-bad.db || exit 12; "
        "test $(wc -l < $D/bad.err) = 1 && grep -q 'built from other measured code' $D/bad.err || exit 13; "
        /* measured code outside src/runner/ and kernels/: the closure's
         * list names it (the vocabulary the worker is built with) */
        "cp $OLDPWD/src/runner/record.c src/runner/record.c && "
        "$E run --protocol protocols/mine.json --backend cpu --db $D/copy-ok2.db >/dev/null || exit 14; "
        "echo '/* edited after the build */' >> src/common/vocab.h && "
        "{ $E run --protocol protocols/mine.json --backend cpu --db $D/copy-bad2.db 2>$D/bad.err; "
        "test $? = 2 || exit 15; }; test ! -e $D/copy-bad2.db || exit 16");
    int rc = shard_sh(script);
    ck_assert_msg(rc == 0, "step %d (see %s/sh.log, %s/bad.err)", rc, dir, dir);
}
END_TEST

START_TEST(test_gpus_refuses_a_bad_list_too_few_cpus_and_shard_options_in_one_line)
{
    ck_assert_int_eq(shard_sh("$E run --protocol $P --gpus 0,0 --db $D/g.db"), 2);
    ck_assert(shard_log_has("device 0 is named twice"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --gpus 1,x --db $D/g.db"), 2);
    ck_assert(shard_log_has("--gpus must be all or a list of device numbers"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --gpus 0, --db $D/g.db"), 2);
    ck_assert(shard_log_has("a trailing comma"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --gpus $(seq -s, 0 $(nproc)) --db $D/g.db"), 2);
    ck_assert(shard_log_has("for disjoint CPU sets"));
    ck_assert_int_eq(shard_sh("$E run --protocol $P --gpus 0 --shard 0/1 --phase main --db $D/g.db"), 2);
    ck_assert(shard_log_has("--gpus makes its own shards"));
    ck_assert_int_eq(shard_sh("test ! -e $D/g.db && test ! -e $D/g.db.shard-0.db"), 0);
}
END_TEST

/* The partition: by case, every case's jobs in one shard, the reference
 * arms in each; the union of the shards' plans is the whole plan. */
START_TEST(test_the_sharded_plan_partitions_cases_and_copies_the_reference_arms)
{
    ev_protocol p;
    ev_plan one, three, part;
    ev_err err = {""};
    size_t total = 0;

    ck_assert_int_eq(ev_protocol_parse(shard_protocol, strlen(shard_protocol), &p, &err), EV_OK);
    ck_assert_int_eq(ev_plan_build(&p, &one, &err), EV_OK);
    ck_assert_int_eq(ev_plan_build_sharded(&p, 3, &three, &err), EV_OK);
    ck_assert_uint_eq(three.n, one.n + 2 * 3); /* floor, ceiling and ceiling-l2, 2 more copies each */
    for (int64_t k = 0; k < 3; k++) {
        ck_assert_int_eq(ev_plan_build_sharded(&p, 3, &part, &err), EV_OK);
        ev_plan_keep_shard(&part, k);
        for (size_t i = 0; i < part.n; i++) {
            const ev_plan_job *j = &part.jobs[i];
            ck_assert_int_eq(ev_plan_job_shard(j->job_key, j->case_index, 3), k);
            if (j->case_index >= 0)
                ck_assert_int_eq(j->case_index % 3, k);
        }
        total += part.n;
        ev_plan_free(&part);
    }
    ck_assert_uint_eq(total, three.n);
    ck_assert_int_ge(ev_plan_find(&three, "main/-/floor/initial/shard-2"), 0);
    ck_assert_int_lt(ev_plan_find(&three, "main/-/floor/initial"), 0);
    ck_assert_int_eq(ev_plan_shard_of(-1, 3), -1);
    ev_plan_free(&one);
    ev_plan_free(&three);
    ck_assert_int_eq(ev_plan_build_sharded(&p, 1, &one, &err), EV_OK);
    ck_assert_int_ge(ev_plan_find(&one, "main/-/floor/initial"), 0); /* one shard: the unsharded plan */
    ev_plan_free(&one);
    ev_protocol_free(&p);
}
END_TEST

/* Every op of the vocabulary is measured end to end by make check: each
 * one has a case in protocols/quick.json (the seed's sum and max) or
 * protocols/ops-cpu.json (the others), whose run on cpu exports a bundle
 * that verifies (every stored output validated again from its seed, the
 * model refit, the report regenerated). */
START_TEST(test_every_op_of_the_vocabulary_runs_end_to_end_on_cpu_and_verifies)
{
    static const char *const protos[] = {"protocols/quick.json", "protocols/ops-cpu.json"};
    int seen[EV_OP_COUNT] = {0};
    for (size_t k = 0; k < 2; k++) {
        ev_protocol p;
        ev_buf b = EV_BUF_INIT;
        ev_err err;
        ck_assert_int_eq(ev_read_file(protos[k], &b, &err), EV_OK);
        ck_assert_msg(ev_protocol_parse(b.data, b.len, &p, &err) == EV_OK, "%s: %s", protos[k], err.msg);
        for (size_t c = 0; c < p.n_cases; c++) {
            ev_op op;
            ck_assert_int_eq(ev_op_parse(p.cases[c].op, &op), 0);
            seen[op]++;
        }
        ev_protocol_free(&p);
        ev_buf_free(&b);
    }
    for (int op = 0; op < EV_OP_COUNT; op++)
        ck_assert_msg(seen[op] > 0, "op %s has no case in protocols/quick.json or protocols/ops-cpu.json",
                      ev_op_name((ev_op)op));

    char db[512], zip[512], log[8192];
    snprintf(db, sizeof db, "%s/ops.db", dir);
    snprintf(zip, sizeof zip, "%s/ops.zip", dir);
    const char *run[] = {"run", "--protocol", "protocols/ops-cpu.json", "--db", db, NULL};
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    const char *ver[] = {zip, "--source-tree", ".", NULL};
    ck_assert_msg(run_prog("evident", run, log, sizeof log) == 0, "run: %s", log);
    ck_assert_msg(run_prog("evident", exp, log, sizeof log) == 0, "export: %s", log);
    ck_assert_msg(run_prog("verify-bundle", ver, log, sizeof log) == 0, "verify: %s", log);
    /* the ops' native jobs completed (up to this host's noise, rescued) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 tests/zipcat.py '%s' validation.json | python3 -c '\n"
             "import json, sys\n"
             "v = json.load(sys.stdin)\n"
             "ops = {c[\"op\"] for c in v[\"cases\"]}\n"
             "done = [j for j in v[\"jobs\"] if j.get(\"outcome\") == \"completed\" and "
             "isinstance(j.get(\"case_index\"), int) and j[\"case_index\"] >= 0]\n"
             "sys.exit(0 if ops and all(any(v[\"cases\"][j[\"case_index\"]][\"op\"] == o for j in done) for "
             "o in ops) else 1)'",
             zip);
    ck_assert_msg(system(cmd) == 0, "a case op of ops-cpu.json has no completed job in %s", zip);
}
END_TEST

/* Physical plausibility (sample_rules.h): which ceiling bounds a median.
 * On cuda a cold median is bounded by the memory ceiling, a hot one by the
 * L2 ceiling while its working set is within 2 x the cache (between 1 x
 * and 2 x as well) and by the memory ceiling past that; on cpu by the
 * largest ceiling the run measured; no ceiling that applies, no bound. */
START_TEST(test_the_plausibility_rule_picks_the_ceiling_that_applies_to_each_median)
{
    /* 1 MB per op; a cache of 8 MB; ceilings 1000 (memory) and 4000 (l2) bytes per us */
    ev_rule_bound b = {1e6, 12e6, 8000000, 1000, 4000};
    double bound = -1;
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 1, &b, &bound), EV_RULE_CEIL_L2); /* 1.5 x the cache */
    ck_assert(bound == EV_RULE_PLAUSIBLE_MARGIN * 4000);
    b.working_bytes = 16e6; /* exactly 2 x: still the L2's */
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 1, &b, &bound), EV_RULE_CEIL_L2);
    b.working_bytes = 16e6 + 1;
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 1, &b, &bound), EV_RULE_CEIL_MEMORY);
    ck_assert(bound == EV_RULE_PLAUSIBLE_MARGIN * 1000);
    b.working_bytes = 1e6;
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 0, &b, &bound), EV_RULE_CEIL_MEMORY); /* cold */
    ck_assert_int_eq(ev_rule_plausible_bound("cpu", 1, &b, &bound), EV_RULE_CEIL_LARGEST);
    ck_assert(bound == EV_RULE_PLAUSIBLE_MARGIN * 4000);
    ck_assert_int_eq(ev_rule_plausible_bound("cpu", 0, &b, &bound), EV_RULE_CEIL_LARGEST);
    b.l2_bpus = NAN; /* a run without ceiling-l2 (a store before schema 6) */
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 1, &b, &bound), EV_RULE_CEIL_NONE);
    ck_assert(bound == 0);
    ck_assert_int_eq(ev_rule_plausible_bound("cpu", 1, &b, &bound), EV_RULE_CEIL_NONE);
    ck_assert_int_eq(ev_rule_plausible_bound("cpu", 0, &b, &bound), EV_RULE_CEIL_MEMORY);
    b.memory_bpus = NAN; /* the ceiling failed */
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 0, &b, &bound), EV_RULE_CEIL_NONE);
    b.memory_bpus = 1000;
    b.bytes = 0; /* no case */
    ck_assert_int_eq(ev_rule_plausible_bound("cuda", 0, &b, &bound), EV_RULE_CEIL_NONE);

    /* The rule on a median: over margin x the bound fails, naming the rule,
     * the ceiling and the rate; at the bound it holds. */
    ev_rule_bound c = {1e6, 1e9, 8000000, 1000, 4000};
    char why[400] = "";
    ck_assert_int_eq(ev_rule_plausible("cuda", 1, &c, 1e6 / 2000.0, why, sizeof why), 0);
    ck_assert_int_eq(ev_rule_plausible("cuda", 1, &c, 1e6 / 2001.0, why, sizeof why), 1);
    ck_assert_msg(strstr(why, EV_RULE_PLAUSIBLE_NAME ": hot median") == why &&
                      strstr(why, "over 2 x the run's memory ceiling (1 GB/s)"),
                  "%s", why);
    ck_assert_int_eq(ev_rule_plausible("cuda", 1, &c, NAN, why, sizeof why), 0);
    ck_assert(ev_rule_case_bytes(8192, 8192, 4) == (8192.0 * 8192 + 8192) * 4);
    ck_assert(ev_rule_working_bytes(8, 100, 4, 100) == 8 * 100 + 100 * 4);
    ck_assert_str_eq(ev_rule_ceiling_name(EV_RULE_CEIL_LARGEST), "largest");
}
END_TEST

/* The rule inside ev_rules_check, the one function the supervisor and the
 * verifier apply: a completed attempt whose hot median moves its bytes
 * past 2 x the ceiling that applies breaks it (and only a completed one:
 * an attempt that did not complete claims no median); one at the bound
 * holds.  From store schema 6 a cold sample's flush must exceed the cache
 * (an older bundle is not held to it). */
START_TEST(test_ev_rules_check_holds_a_completed_attempt_to_physical_plausibility)
{
    static const char proto[] = "{\"seed\": 1, \"samples\": 3, \"warmup_ms\": 10, \"target_sample_ms\": 5, "
                                "\"cold_samples\": 1, \"arms\": [\"rows1\"], \"cases\": [{\"op\": "
                                "\"reduce_sum\", \"rows\": 64, \"cols\": 4096, \"dtype\": \"fp32\", "
                                "\"default_rows\": 4}]}";
    ev_protocol p;
    ev_err err = {""};
    char why[512];
    ck_assert_msg(ev_protocol_parse(proto, strlen(proto), &p, &err) == EV_OK, "%s", err.msg);
    /* hot samples of 5 ms at R replays of 100 ops: 50 / R us per op; a cold one of 100 us */
    ev_rule_sample hot[3], cold[1] = {{0.1, 1, 1, -1, -1, -1, -1}};
    ev_rule_step step = {1, 5.0, 1};
    ev_rule_attempt a;
    memset(&a, 0, sizeof a);
    a.arm = "rows1";
    a.completed = 1;
    a.has_warmup = 1;
    a.warmup_target_ms = 10;
    a.warmup_elapsed_ms = 11;
    a.steps = &step;
    a.n_steps = 1;
    a.hot = hot;
    a.n_hot = 3;
    a.cold = cold;
    a.n_cold = 1;
    a.has_flush = 1;
    a.flush_bytes = 16 << 20;
    a.cache_bytes = 8 << 20;
    a.schema = EV_STORE_VERSION;
    /* 1e6 bytes per op, a working set past 2 x the cache: the memory ceiling,
     * 1e4 bytes per us (bound 2e4): R = 1 moves 2e4 bytes per us */
    a.bound = (ev_rule_bound){1e6, 1e9, 8 << 20, 1e4, 1e5};
    for (int64_t R = 1; R <= 2; R++) {
        step.replays = R;
        for (int i = 0; i < 3; i++)
            hot[i] = (ev_rule_sample){5.0, R, 100, -1, -1, -1, -1};
        int n = ev_rules_reason(&p, "cuda", &a, why, sizeof why);
        if (R == 1) {
            ck_assert_msg(n == 0, "%s", why);
        } else {
            ck_assert_int_eq(n, 1);
            ck_assert_msg(strstr(why, EV_RULE_PREFIX EV_RULE_PLAUSIBLE_NAME ": hot median 25 us per op"),
                          "%s", why);
        }
    }
    a.completed = 0;
    ck_assert_int_eq(ev_rules_reason(&p, "cuda", &a, why, sizeof why), 0);
    a.completed = 1;
    /* the cold median (1 us per op) against the memory ceiling: 1e6 bytes per us, over 2e4 */
    cold[0].elapsed_ms = 0.001;
    a.bound.memory_bpus = 1e5;
    step.replays = 1;
    for (int i = 0; i < 3; i++)
        hot[i] = (ev_rule_sample){5.0, 1, 100, -1, -1, -1, -1};
    ck_assert_int_eq(ev_rules_reason(&p, "cuda", &a, why, sizeof why), 1);
    ck_assert_msg(strstr(why, EV_RULE_PLAUSIBLE_NAME ": cold median 1 us per op"), "%s", why);
    cold[0].elapsed_ms = 0.1;
    ck_assert_int_eq(ev_rules_reason(&p, "cuda", &a, why, sizeof why), 0);
    /* a flush no larger than the cache: cold samples that were not cold
     * (and, below 2 x the cache, the protocol's multiple not kept) */
    a.flush_bytes = a.cache_bytes;
    ck_assert_int_eq(ev_rules_reason(&p, "cuda", &a, why, sizeof why), 2);
    ck_assert_msg(
        strstr(why, "does not exceed the 8388608-byte cache: the cold samples were not cold (1 more)"), "%s",
        why);
    a.schema = EV_RULE_COLD_FLUSH_SINCE - 1; /* an older bundle: the multiple only */
    ck_assert_int_eq(ev_rules_reason(&p, "cuda", &a, why, sizeof why), 1);
    ck_assert_msg(strstr(why, "is below 2 x the 8388608-byte cache"), "%s", why);
    ev_protocol_free(&p);
}
END_TEST

/* A test case whose tests each run in a fresh directory (setup,
 * teardown), with a hang guard of timeout_s seconds. */
static TCase *runs_case(const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, timeout_s);
    return tc;
}

int main(void)
{
    Suite *s = suite_create("runner");
    /* three test cases of whole runs (tools/gpu/host-check.sh runs each
     * test case as a process of its own, within its 10 minutes); 900 s, a
     * hang guard: real runs at load 8 (4x slower), ASan margin */
    TCase *tc = runs_case("end-to-end", 900);
    int failed;

    tcase_add_test(tc, test_the_quick_protocol_runs_end_to_end_on_cpu);
    tcase_add_test(tc, test_every_op_of_the_vocabulary_runs_end_to_end_on_cpu_and_verifies);
    tcase_add_test(tc, test_every_outcome_class_is_recorded_and_rescue_retries_only_the_retryable);
    tcase_add_test(tc, test_a_realtime_supervisor_pinned_to_one_cpu_with_a_killed_worker_ends_the_run);
    tcase_add_test(tc, test_what_this_host_cannot_run_is_refused_before_the_store_is_touched);
    tcase_add_test(tc, test_a_snapshot_file_the_bundle_could_not_name_is_refused_before_measuring);
    suite_add_tcase(s, tc);
    tc = runs_case("stop-and-resume", 900);
    tcase_add_test(tc, test_sigint_stops_the_run_cleanly_and_resume_finishes_it);
    tcase_add_test(tc, test_a_run_is_resumed_only_on_the_host_that_began_it);
    tcase_add_test(tc, test_a_killed_supervisor_resumes_without_losing_or_duplicating_samples);
    tcase_add_test(tc, test_a_killed_supervisor_and_worker_resume_to_a_consistent_store);
    tcase_add_test(tc,
                   test_a_second_writer_or_resume_during_a_live_run_is_refused_at_once_and_disturbs_nothing);
    tcase_add_test(tc, test_a_full_disk_mid_run_leaves_no_attempt_completed_without_its_records);
    tcase_add_test(tc, test_resume_refuses_a_different_protocol);
    tcase_add_test(tc, test_sigterm_is_honoured_in_every_phase_and_resume_finishes_the_run);
    suite_add_tcase(s, tc);
    tc = runs_case("rounds-and-subsets", 900);
    tcase_add_test(tc, test_a_three_round_run_with_rows4_completes_exports_and_verifies);
    tcase_add_test(tc, test_a_run_declaring_rows4_and_short_to_the_model_completes_exports_and_verifies);
    tcase_add_test(tc, test_a_subset_run_is_its_own_protocol_and_verifies);
    tcase_add_test(tc, test_auto_in_a_subset_uses_the_named_bundles_model_or_is_refused);
    tcase_add_test(tc, test_a_staged_run_releases_one_job_at_a_time_verifies_and_stops_cleanly);
    suite_add_tcase(s, tc);
    tc = runs_case("external", 900); /* its stores in a fresh directory, not in / */
    tcase_add_test(tc, test_external_kernels_run_like_our_arms_and_each_bad_one_fails_only_its_jobs);
    tcase_add_test(tc, test_every_cheat_of_the_gallery_ends_as_a_recorded_failure);
    suite_add_tcase(s, tc);
    tc = runs_case("python", 600);
    tcase_add_test(tc, test_a_numpy_arm_runs_under_the_protocol_and_its_bundle_verifies);
    tcase_add_test(tc, test_each_bad_python_arm_is_a_recorded_failure_with_its_reason_and_the_run_goes_on);
    suite_add_tcase(s, tc);
    tc = runs_case("ext-yours", 600);
    tcase_add_test(tc, test_a_protocol_outside_the_repository_runs_its_kernels_and_says_what_is_wrong);
    suite_add_tcase(s, tc);
    tc = runs_case("ext-build", 300);
    tcase_add_test(tc, test_an_external_kernel_built_in_two_directories_has_one_sha256);
    tcase_add_test(tc, test_a_built_kernel_names_the_entries_it_defines);
    tcase_add_test(
        tc, test_verify_bundle_rebuilds_an_external_kernel_and_fails_a_receipt_its_members_do_not_give);
    suite_add_tcase(s, tc);
    tc = runs_case("isolation", 300);
    tcase_add_test(tc, test_a_job_that_leaves_a_process_running_fails_naming_it_and_nothing_survives);
    tcase_add_test(tc, test_foreign_cpu_time_on_the_measuring_cpu_is_recorded_per_sample_and_reported);
    suite_add_tcase(s, tc);
    tc = runs_case("shards", 900);
    tcase_add_test(tc, test_the_sharded_plan_partitions_cases_and_copies_the_reference_arms);
    tcase_add_test(tc, test_two_runs_at_once_on_one_hosts_cpus_take_turns_and_keep_their_waits);
    tcase_add_test(tc, test_shard_options_are_refused_in_one_line_when_malformed);
    tcase_add_test(tc, test_a_protocol_run_as_two_shards_merges_to_the_plan_of_one_run_and_verifies);
    tcase_add_test(tc, test_two_rounds_and_a_cases_subset_run_as_two_shards_merge_and_verify);
    tcase_add_test(tc, test_a_bundle_of_one_shard_fails_naming_the_missing_shard_and_its_jobs);
    tcase_add_test(tc,
                   test_merge_refuses_a_missing_shard_a_shard_twice_a_conflicting_job_and_an_existing_output);
    tcase_add_test(tc, test_gpus_runs_one_shard_per_device_at_once_on_disjoint_cpus_and_the_merge_verifies);
    tcase_add_test(tc, test_the_same_shards_merge_to_the_same_root_from_writable_or_read_only_media);
    tcase_add_test(tc, test_gpus_shards_die_with_their_parent_and_a_rerun_finishes_the_run);
    tcase_add_test(tc, test_a_run_from_a_tree_other_than_the_builds_is_refused_before_the_store_is_touched);
    tcase_add_test(tc, test_gpus_refuses_a_bad_list_too_few_cpus_and_shard_options_in_one_line);
    suite_add_tcase(s, tc);

    tc = runs_case("worker", 240);
    tcase_add_test(tc, test_cpu_receipts_equal_the_selectors_plan_for_every_schedule);
    tcase_add_test(tc, test_the_auto_arm_launches_the_selectors_choice_and_the_wrong_schedule_arm_does_not);
    tcase_add_test(tc, test_the_wrong_schedule_fault_arm_is_planned_beside_auto_in_the_policy_phase);
    tcase_add_test(tc, test_torch_compile_is_skipped_with_the_hosts_own_import_error);
    tcase_add_test(tc, test_the_torch_peer_reads_the_vocabulary_the_c_side_is_built_from);
    tcase_add_test(tc, test_an_interpreter_that_cannot_start_is_a_skip_with_its_error);
    tcase_add_test(tc, test_the_torch_peers_records_are_relayed_byte_for_byte_and_its_outputs_validated);
    tcase_add_test(tc, test_the_torch_peers_device_record_gets_the_workers_readings_and_keeps_its_walls);
    tcase_add_test(tc, test_every_data_record_decodes_to_the_row_it_was_encoded_from);
    tcase_add_test(tc, test_the_torch_peers_library_loads_and_refuses_a_bad_plants_file);
    tcase_add_test(tc, test_the_worker_writes_its_device_record_and_the_secret_seed_only_after_the_samples);
    tcase_add_test(tc, test_a_cpu_workers_device_record_says_its_priority_and_the_hosts_load);
    tcase_add_test(tc, test_the_device_records_host_facts_and_recalibrations_are_read_strictly);
    tcase_add_test(tc, test_the_likely_cause_is_host_load_only_when_the_load_reached_the_cpus);
    tcase_add_test(tc, test_evident_run_names_each_broken_rule_its_samples_and_the_likely_cause);
    tcase_add_test(tc, test_a_recalibration_counts_only_after_a_drifted_sample_and_sets_the_count_after_it);
    tcase_add_test(tc, test_a_staged_worker_waits_at_its_gate_and_records_nothing_before_its_release);
    tcase_add_test(tc, test_a_stamp_names_the_commit_only_of_the_files_it_was_written_for);
    tcase_add_test(tc, test_the_snapshot_takes_the_files_the_closure_list_names_in_any_folder);
    tcase_add_test(tc, test_the_committed_closure_list_is_what_this_build_derives);
    tcase_add_test(tc, test_compile_ahead_compiles_each_needed_case_and_survives_failures_and_hangs);
    tcase_add_test(tc, test_the_plausibility_rule_picks_the_ceiling_that_applies_to_each_median);
    tcase_add_test(tc, test_ev_rules_check_holds_a_completed_attempt_to_physical_plausibility);
    suite_add_tcase(s, tc);
    failed = ev_check_suite(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
