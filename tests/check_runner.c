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
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "store/outcome.h"
#include "store/store.h"

static char dir[256];

/* A fresh temporary directory per test. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/evident-runner-XXXXXX");
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

/* Starts build/evident run with the protocol and the test's store; stderr
 * goes to dir/stderr.txt.  Returns the pid. */
static pid_t start_run(const char *protocol, int resume)
{
    const char *build = getenv("EV_BUILD") ? getenv("EV_BUILD") : "build";
    char prog[512], db[512], errp[512];
    pid_t pid;

    snprintf(prog, sizeof prog, "%s/evident", build);
    snprintf(db, sizeof db, "%s/evidence.db", dir);
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
            execl(prog, prog, "run", "--protocol", protocol, "--db", db, "--resume", (char *)NULL);
        else
            execl(prog, prog, "run", "--protocol", protocol, "--db", db, (char *)NULL);
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

/* Opens the test's store read-only. */
static ev_store *open_store(void)
{
    char db[512];
    ev_store *s = NULL;
    ev_err err = {""};
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    ck_assert_msg(ev_store_open(db, EV_STORE_READONLY, &s, &err) == EV_OK, "%s", err.msg);
    return s;
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
        a->f.records_ok = (int)ev_row_i64(r, 14);
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
static int read_snap_opt(snap *s, int tolerant)
{
    ev_store *st = NULL;
    ev_err err = {""};
    char db[512];

    memset(s, 0, sizeof *s);
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    if (tolerant && ev_store_open(db, EV_STORE_READONLY, &st, &err) != EV_OK)
        return -1;
    if (!st)
        st = open_store();
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

/* Hot samples of an attempt. */
static int hot_samples(const snap *s, int64_t attempt_id)
{
    int n = 0;
    for (size_t i = 0; i < s->n_samples; i++)
        n += s->samples[i].attempt_id == attempt_id && !strcmp(s->samples[i].timing, "hot");
    return n;
}

/* ---- tests ------------------------------------------------------------ */

START_TEST(test_the_quick_protocol_runs_end_to_end_on_cpu_in_under_a_minute)
{
    double t0 = now_s(), wall;
    pid_t pid = start_run("protocols/quick.json", 0);
    int rc = wait_exit(pid);
    snap s;
    size_t completed = 0, skipped = 0;

    wall = now_s() - t0;
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(wall < 60, "quick.json took %.1f s", wall);
    read_snap(&s);
    ck_assert(s.has_status);
    ck_assert_str_eq(s.status, "completed");
    ck_assert_int_eq(s.fits, 1);
    for (size_t i = 0; i < s.n_jobs; i++) {
        const att_info *a = last_att(&s, s.jobs[i].key, NULL);
        ev_outcome o;
        ck_assert_ptr_nonnull(a);
        o = att_outcome(&s, a);
        if (o == EV_OUT_COMPLETED) {
            completed++;
            ck_assert_int_eq(hot_samples(&s, a->attempt_id), 7);
        } else {
            ck_assert_msg(o == EV_OUT_SKIPPED, "%s: %s", s.jobs[i].key, ev_outcome_name(o));
            ck_assert(strstr(s.jobs[i].key, "/cub/") || strstr(s.jobs[i].key, "/torch-compile/"));
            skipped++;
        }
    }
    /* 6 cases x (default rows1 rows2) + floor + ceiling + 6 auto + 6 recheck; 6 x (cub torch) skipped */
    ck_assert_uint_eq(completed, 6 * 3 + 2 + 6 + 6);
    ck_assert_uint_eq(skipped, 12);
    free(s.samples);
}
END_TEST

static const char faults_protocol[] =
    "{\"seed\": 3, \"samples\": 3, \"warmup_ms\": 2, \"target_sample_ms\": 1, \"cold_samples\": 1,\n"
    " \"job_timeout_s\": 2, \"reference_arms\": false,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576, \"flush_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"fault-exit\", \"fault-signal\", \"fault-hang\", \"fault-garbage\", "
    "\"fault-stop\",\n"
    "          \"fault-wrong\", \"fault-flaky\", \"cub\"],\n"
    " \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [\n"
    "   {\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3},\n"
    "   {\"name\": \"fault-signal\", \"kind\": \"signal\", \"signal\": 11},\n"
    "   {\"name\": \"fault-hang\", \"kind\": \"hang\"},\n"
    "   {\"name\": \"fault-garbage\", \"kind\": \"garbage\"},\n"
    "   {\"name\": \"fault-stop\", \"kind\": \"stop-after\", \"samples\": 2},\n"
    "   {\"name\": \"fault-wrong\", \"kind\": \"wrong-output\"},\n"
    "   {\"name\": \"fault-flaky\", \"kind\": \"exit\", \"code\": 4, \"when\": \"original\"}],\n"
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
        {"main/0/cub/initial", "skipped"},
        {"rescue/0/fault-exit/retry-1", "failed-exit"},
        {"rescue/0/fault-signal/retry-1", "failed-signal"},
        {"rescue/0/fault-hang/retry-1", "failed-timeout"},
        {"rescue/0/fault-garbage/retry-1", "failed-protocol"},
        {"rescue/0/fault-stop/retry-1", "failed-protocol"},
        {"rescue/0/fault-flaky/retry-1", "completed"},
        {"policy/0/auto/initial", "completed"},
        {"recheck/0/default/recheck", "completed"},
    };
    snap s;
    int rc = wait_exit(start_run(proto, 0));

    ck_assert_int_eq(rc, 0);
    read_snap(&s);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(!strcmp(job_outcome(&s, want[i].key), want[i].outcome), "%s: %s, want %s", want[i].key,
                      job_outcome(&s, want[i].key), want[i].outcome);
    /* Exactly those six rescue jobs, each linked to its original. */
    ck_assert_uint_eq(s.n_jobs, 9 + 1 + 1 + 6);
    for (size_t i = 0; i < s.n_jobs; i++) {
        int is_rescue = !strncmp(s.jobs[i].key, "rescue/", 7);
        ck_assert_int_eq(is_rescue, s.jobs[i].retry_of != 0);
        if (is_rescue) {
            char orig[96];
            snprintf(orig, sizeof orig, "main/%s", s.jobs[i].key + 7);
            memcpy(strstr(orig, "retry-1"), "initial", 8);
            for (size_t j = 0; j < s.n_jobs; j++)
                if (s.jobs[j].job_id == s.jobs[i].retry_of)
                    ck_assert_str_eq(s.jobs[j].key, orig);
        }
    }
    /* The wrong output kept its timings. */
    ck_assert_int_eq(hot_samples(&s, last_att(&s, "main/0/fault-wrong/initial", NULL)->attempt_id), 3);
    ck_assert(s.has_status);
    ck_assert_str_eq(s.status, "failed");
    ck_assert_str_eq(s.rescue, "failed-after-rescue");
    free(s.samples);
}
END_TEST

static const char slow_protocol[] =
    "{\"seed\": 11, \"samples\": 5, \"warmup_ms\": 150, \"target_sample_ms\": 20, \"cold_samples\": 1,\n"
    " \"job_timeout_s\": 60, \"reference_arms\": false,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576, \"flush_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 33, \"cols\": 256, \"dtype\": \"fp16\", "
    "\"default_rows\": 4},\n"
    "           {\"op\": \"reduce_max\", \"rows\": 20, \"cols\": 300, \"dtype\": \"bf16\", \"default_rows\": "
    "8}]}\n";

/* Polls the store until an attempt is running (no process row) that has
 * at least min_samples samples; returns 1, or 0 after 60 s. */
static int wait_running(int min_samples)
{
    double t0 = now_s();
    struct timespec ts = {0, 20 * 1000 * 1000};
    char db[512];
    snprintf(db, sizeof db, "%s/evidence.db", dir);
    while (now_s() - t0 < 60) {
        if (access(db, R_OK) == 0) {
            snap s;
            int found = 0;
            if (read_snap_opt(&s, 1)) {
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

/* Checks a finished run: completed, every job's last attempt completed
 * with 5 hot samples; returns the count of interrupted attempts. */
static int check_finished(const snap *s)
{
    int interrupted = 0;
    ck_assert(s->has_status);
    ck_assert_str_eq(s->status, "completed");
    for (size_t i = 0; i < s->n_jobs; i++) {
        const att_info *a = last_att(s, s->jobs[i].key, NULL);
        ck_assert_ptr_nonnull(a);
        ck_assert_str_eq(ev_outcome_name(att_outcome(s, a)), "completed");
        ck_assert_int_eq(hot_samples(s, a->attempt_id), 5);
    }
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

START_TEST(test_a_killed_supervisor_resumes_without_losing_or_duplicating_samples)
{
    const char *proto = write_file("slow.json", slow_protocol);
    pid_t pid = start_run(proto, 0);
    snap before, after;
    int64_t cut = 0;

    ck_assert_msg(wait_running(2), "no running attempt with samples seen");
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(wait_exit(pid), 128 + SIGKILL);
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

int main(void)
{
    Suite *s = suite_create("runner");
    TCase *tc = tcase_create("end-to-end");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300); /* real runs on a shared machine, ASan margin */
    tcase_add_test(tc, test_the_quick_protocol_runs_end_to_end_on_cpu_in_under_a_minute);
    tcase_add_test(tc, test_every_outcome_class_is_recorded_and_rescue_retries_only_the_retryable);
    tcase_add_test(tc, test_sigint_stops_the_run_cleanly_and_resume_finishes_it);
    tcase_add_test(tc, test_a_killed_supervisor_resumes_without_losing_or_duplicating_samples);
    tcase_add_test(tc, test_resume_refuses_a_different_protocol);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
