/*
 * supervisor.c: the run (supervisor.h).  One worker process per job,
 * started with fork/exec, pinned to the protocol's CPU set, in its own
 * process group, watched by a deadline; its records arrive on a pipe (fd 3
 * in the child) and are committed one by one; its stderr tail is kept with
 * absolute paths redacted; then the process record is written and the
 * outcome derived from it (ev_outcome_derive).  Resume, attempts and the
 * record format: docs/runner.md.
 */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "json.h"
#include "model/model.h"
#include "plan.h"
#include "proc.h"
#include "protocol.h"
#include "record.h"
#include "reduce_cpu.h"
#include "sample_rules.h"
#include "subset.h"
#include "sha256.h"
#include "compile_ahead.h"
#include "ext_build.h"
#include "model_from.h"
#include "snapshot.h"
#include "store/outcome.h"
#include "store/store.h"

#ifndef EV_BUILD_CFLAGS
#define EV_BUILD_CFLAGS "unknown"
#endif

#define STDERR_TAIL 4096
/* Records of a running worker are committed in batches: when the stream
 * ends, or COMMIT_MS after the oldest uncommitted line arrived, or when
 * COMMIT_BYTES are waiting.  One fsync per batch instead of one per
 * record (a 100 ms sample protocol commits two or three records at a time;
 * a short cpu job's warm-up and samples in one or two batches).  A SIGKILL
 * of the supervisor loses at most COMMIT_MS of records of the attempt then
 * running, which --resume records as interrupted and runs again. */
#define COMMIT_MS    250
#define COMMIT_BYTES ((size_t)1 << 20)
#define MAX_LINE     ((size_t)64 << 20)

/* A started worker process: its pid and the supervisor's ends of its
 * record pipe, stderr pipe and (staged) gate. */
typedef struct wproc {
    const void *job; /* the jstate it runs; NULL for the probe */
    pid_t pid;
    int rp, ep, gate;
} wproc;

/* A planned job as the store knows it. */
typedef struct jstate {
    ev_plan_job pj;
    int64_t job_id;
    int64_t last_attempt; /* 0: never attempted */
    int64_t last_attempt_id;
    int has_outcome;
    ev_outcome outcome;    /* of the last attempt */
    char skip_reason[160]; /* the last attempt's, when it was skipped */
} jstate;

typedef struct sup {
    const ev_run_opts *o;
    ev_run_result *res;
    ev_store *st;
    ev_buf bytes;
    ev_protocol proto;
    ev_plan plan;
    char proto_id[65];
    int64_t run_id, inv_id;
    int memfd;
    jstate *js;
    size_t n_js;
    int64_t sms;
    char host_hash[65];
    ev_coef coef;
    int have_coef;
    int64_t t0;
    size_t done, total;
    double job_s_sum;
    size_t job_s_n;
    int lock_fd; /* ev_store_writer_lock's, for the life of the run */
    /* Staged processes (docs/runner.md, "Staged processes"): started
     * ahead of their turn, waiting at their gate. */
    wproc staged[EV_MAX_STAGE_AHEAD + 1];
    size_t n_staged;
    int64_t *ahead_ns; /* per case: the torch-compile case's ahead-of-time compile (ns), 0: none */
    /* External kernels built for this invocation (ext_build.h). */
    ev_ext_built built[EV_EXT_MAX_KERNELS];
    size_t n_built;
    cJSON *kernel_receipts; /* the builds' receipts, for the environment record */
} sup;

/* The facts and state of one attempt while its worker runs. */
typedef struct att {
    int64_t attempt_id;
    int probe;
    int64_t count;
    int records_ok;
    char protocol_error[512];
    int hello, end;
    int skipped;
    char skip_reason[512];
    char affinity[256];
    int validation_failed;
    int warmup;
    cJSON *hello_rec; /* probe: the hello record */
    /* What the sample rules look at (sample_rules.h), as committed. */
    ev_rule_attempt rules;
    ev_rule_step *steps;
    ev_rule_sample *hot, *cold;
    size_t cap_steps, cap_hot, cap_cold;
    int64_t compile_ns, open_ns; /* its compile-first-call, device-open and cuda-init timings */
    int store_failed;            /* a record batch could not be committed */
    char store_error[512];
} att;

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

static void proto_err(att *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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
static void att_free(att *a)
{
    free(a->steps);
    free(a->hot);
    free(a->cold);
    cJSON_Delete(a->hello_rec);
    a->steps = NULL;
    a->hot = a->cold = NULL;
    a->hello_rec = NULL;
}

/*
 * Applies the sample rules (sample_rules.h) to an attempt whose process
 * otherwise completed (exit 0, every record well-formed, end seen, not
 * skipped, every validation passed): a breach makes it failed-protocol,
 * the breach its protocol_error; its samples stay as committed.  The
 * verifier applies the same function to the bundle.
 */
static void apply_rules(const sup *s, const char *arm, att *a)
{
    char why[sizeof a->protocol_error];
    a->rules.arm = arm;
    a->rules.completed = 1;
    a->rules.steps = a->steps;
    a->rules.hot = a->hot;
    a->rules.cold = a->cold;
    if (ev_rules_reason(&s->proto, s->o->backend, &a->rules, why, sizeof why) > 0)
        proto_err(a, "%s", why);
}

/* Monotonic and wall clocks in ns. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Returns 1 when a stop was requested. */
static int stopping(const sup *s)
{
    return s->o->stop && *s->o->stop;
}

/* Records the first protocol error of an attempt. */
static void proto_err(att *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void proto_err(att *a, const char *fmt, ...)
{
    va_list ap;
    if (!a->records_ok)
        return;
    a->records_ok = 0;
    va_start(ap, fmt);
    vsnprintf(a->protocol_error, sizeof a->protocol_error, fmt, ap);
    va_end(ap);
}

/* Reads an optional boolean member; -1 when missing or not a boolean. */
static int get_bool(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(it) ? cJSON_IsTrue(it) : -1;
}

/*
 * Commits one parsed record of attempt a.  Returns EV_OK, or a store
 * failure that must stop the run (disk full, I/O); a record the store
 * refuses as a constraint violation, or a malformed one, becomes the
 * attempt's protocol error instead.
 */
static ev_status commit(sup *s, att *a, ev_rec_type t, const cJSON *r)
{
    ev_err e = {""};
    ev_status rc = EV_OK;
    int64_t id = a->attempt_id;

    if (!a->hello && t != EV_REC_HELLO) {
        proto_err(a, "record %lld: '%s' before hello", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    if (a->end) {
        proto_err(a, "record %lld: '%s' after end", (long long)a->count, ev_rec_type_name(t));
        return EV_OK;
    }
    switch (t) {
    case EV_REC_HELLO: {
        const char *aff;
        if (a->hello) {
            proto_err(a, "record %lld: second hello", (long long)a->count);
            return EV_OK;
        }
        a->hello = 1;
        if (ev_json_get_str(r, "affinity", &aff, &e))
            break;
        snprintf(a->affinity, sizeof a->affinity, "%s", aff);
        if (a->probe)
            a->hello_rec = cJSON_Duplicate(r, 1);
        return EV_OK;
    }
    case EV_REC_SKIP: {
        const char *why;
        if (ev_json_get_str(r, "reason", &why, &e))
            break;
        a->skipped = 1;
        snprintf(a->skip_reason, sizeof a->skip_reason, "%s", why);
        return EV_OK;
    }
    case EV_REC_END: {
        int64_t n;
        if (ev_json_get_i64(r, "records", &n, &e))
            break;
        if (n != a->count - 1) {
            proto_err(a, "end says %lld records, %lld came before it", (long long)n,
                      (long long)(a->count - 1));
            return EV_OK;
        }
        a->end = 1;
        return EV_OK;
    }
    default:
        break;
    }
    if (e.msg[0]) {
        proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
        return EV_OK;
    }
    if (a->probe)
        return EV_OK;

    switch (t) {
    case EV_REC_BINDING: {
        ev_binding_row b;
        if (ev_json_get_str(r, "op", &b.op, &e) || ev_json_get_str(r, "dtype", &b.dtype, &e) ||
            ev_json_get_i64(r, "rows", &b.rows, &e) || ev_json_get_i64(r, "cols", &b.cols, &e) ||
            ev_json_get_i64(r, "stride", &b.stride, &e) || ev_json_get_i64(r, "in_span", &b.in_span, &e) ||
            ev_json_get_i64(r, "out_span", &b.out_span, &e) ||
            ev_json_get_i64(r, "in_align", &b.in_align, &e) ||
            ev_json_get_i64(r, "out_align", &b.out_align, &e) ||
            ev_json_get_i64(r, "threads", &b.threads, &e))
            break;
        rc = ev_store_add_binding(s->st, id, &b, &e);
        break;
    }
    case EV_REC_VALIDATION: {
        ev_validation_row v;
        const char *hex = NULL;
        unsigned char *bytes = NULL;
        const cJSON *oh = cJSON_GetObjectItemCaseSensitive(r, "output_hex");
        memset(&v, 0, sizeof v);
        v.passed = get_bool(r, "passed");
        if (v.passed < 0) {
            ev_err_set(&e, EV_EFORMAT, "passed: must be true or false");
            break;
        }
        if (ev_json_get_str(r, "stage", &v.stage, &e) ||
            ev_json_get_double(r, "max_abs_err", &v.max_abs_err, &e) ||
            ev_json_get_double(r, "bound", &v.bound, &e) ||
            ev_json_get_i64(r, "mismatches", &v.mismatches, &e) ||
            ev_json_get_str(r, "output_sha256", &v.output_sha256, &e))
            break;
        if (oh) {
            size_t len;
            if (!cJSON_IsString(oh) || (len = strlen(oh->valuestring)) % 2) {
                ev_err_set(&e, EV_EFORMAT, "output_hex: must be an even-length hex string");
                break;
            }
            hex = oh->valuestring;
            bytes = malloc(len / 2 + 1);
            if (!bytes)
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
            if (ev_hex_decode(hex, len / 2, bytes)) {
                free(bytes);
                ev_err_set(&e, EV_EFORMAT, "output_hex: not hex");
                break;
            }
            v.output = bytes;
            v.output_len = len / 2;
        }
        if (!v.passed)
            a->validation_failed = 1;
        rc = ev_store_add_validation(s->st, id, &v, &e);
        free(bytes);
        break;
    }
    case EV_REC_COLD: {
        const char *name;
        int64_t ns;
        if (ev_json_get_str(r, "name", &name, &e) || ev_json_get_i64(r, "elapsed_ns", &ns, &e))
            break;
        rc = ev_store_add_cold_timing(s->st, id, name, ns, &e);
        if (!rc && (!strcmp(name, "compile-first-call")))
            a->compile_ns += ns;
        else if (!rc && (!strcmp(name, "device-open") || !strcmp(name, "cuda-init")))
            a->open_ns += ns;
        break;
    }
    case EV_REC_FLUSH: {
        int64_t fb, cb;
        if (ev_json_get_i64(r, "flush_bytes", &fb, &e) || ev_json_get_i64(r, "cache_bytes", &cb, &e))
            break;
        rc = ev_store_add_flush(s->st, id, fb, cb, &e);
        if (rc == EV_OK) {
            a->rules.has_flush = 1;
            a->rules.flush_bytes = fb;
            a->rules.cache_bytes = cb;
        }
        break;
    }
    case EV_REC_NODE: {
        ev_node_row n;
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(r, "grid"),
                    *b = cJSON_GetObjectItemCaseSensitive(r, "block");
        if (ev_json_get_i64(r, "index", &n.node_index, &e) || ev_json_get_str(r, "function", &n.function, &e))
            break;
        if (!cJSON_IsArray(g) || !cJSON_IsArray(b) || cJSON_GetArraySize(g) != 3 ||
            cJSON_GetArraySize(b) != 3) {
            ev_err_set(&e, EV_EFORMAT, "grid and block: must be arrays of 3 integers");
            break;
        }
        for (int d = 0; d < 3; d++) {
            n.grid[d] = (int64_t)cJSON_GetArrayItem(g, d)->valuedouble;
            n.block[d] = (int64_t)cJSON_GetArrayItem(b, d)->valuedouble;
        }
        rc = ev_store_add_graph_node(s->st, id, &n, &e);
        break;
    }
    case EV_REC_WARMUP: {
        double target, ms;
        int64_t reps;
        if (ev_json_get_double(r, "target_ms", &target, &e) || ev_json_get_double(r, "elapsed_ms", &ms, &e) ||
            ev_json_get_i64(r, "replays", &reps, &e))
            break;
        a->warmup = 1;
        rc = ev_store_add_warmup(s->st, id, target, ms, reps, &e);
        if (rc == EV_OK) {
            a->rules.has_warmup = 1;
            a->rules.warmup_target_ms = target;
            a->rules.warmup_elapsed_ms = ms;
        }
        break;
    }
    case EV_REC_CALIBRATION: {
        int64_t step, reps;
        double ms, target;
        int chosen = get_bool(r, "chosen");
        if (chosen < 0) {
            ev_err_set(&e, EV_EFORMAT, "chosen: must be true or false");
            break;
        }
        if (ev_json_get_i64(r, "step", &step, &e) || ev_json_get_i64(r, "replays", &reps, &e) ||
            ev_json_get_double(r, "elapsed_ms", &ms, &e) || ev_json_get_double(r, "target_ms", &target, &e))
            break;
        rc = ev_store_add_calibration(s->st, id, step, reps, ms, chosen, target, &e);
        if (rc == EV_OK) {
            ev_rule_step st = {reps, target, chosen};
            if (grow((void **)&a->steps, &a->rules.n_steps, &a->cap_steps, sizeof st, &st))
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        }
        break;
    }
    case EV_REC_SAMPLE: {
        ev_sample_row x;
        const cJSON *clk = cJSON_GetObjectItemCaseSensitive(r, "sm_clock_mhz");
        if (ev_json_get_str(r, "timing", &x.timing, &e) || ev_json_get_i64(r, "index", &x.sample_index, &e) ||
            ev_json_get_i64(r, "replays", &x.replays, &e) ||
            ev_json_get_i64(r, "ops_per_graph", &x.ops_per_graph, &e) ||
            ev_json_get_double(r, "elapsed_ms", &x.elapsed_ms, &e))
            break;
        x.sm_clock_mhz = -1;
        if (clk && !cJSON_IsNull(clk) && ev_json_get_i64(r, "sm_clock_mhz", &x.sm_clock_mhz, &e))
            break;
        rc = ev_store_add_sample(s->st, id, &x, &e);
        if (rc == EV_OK) {
            ev_rule_sample rs = {x.elapsed_ms, x.replays, x.ops_per_graph, x.sm_clock_mhz};
            int hot = !strcmp(x.timing, "hot");
            if (hot ? grow((void **)&a->hot, &a->rules.n_hot, &a->cap_hot, sizeof rs, &rs)
                    : grow((void **)&a->cold, &a->rules.n_cold, &a->cap_cold, sizeof rs, &rs))
                return ev_err_set(NULL, EV_ENOMEM, "out of memory");
        }
        break;
    }
    default:
        break;
    }
    if (rc == EV_EDB || rc == EV_EFORMAT || rc == EV_EINVAL) {
        proto_err(a, "record %lld (%s) refused by the store: %s", (long long)a->count, ev_rec_type_name(t),
                  e.msg);
        return EV_OK;
    }
    if (rc)
        return rc; /* store failure: stop the run */
    if (e.msg[0])
        proto_err(a, "record %lld (%s): %s", (long long)a->count, ev_rec_type_name(t), e.msg);
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
        proto_err(a, "record %lld: %s", (long long)a->count, e.msg);
        return EV_OK;
    }
    rc = commit(s, a, t, r);
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
static ev_status on_lines(sup *s, att *a, ev_buf *buf)
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

/* Process outcome facts of a finished child. */
typedef struct child_end {
    pid_t pid;
    int has_exit, has_signal;
    int64_t exit_code, signal;
    int timed_out, interrupted;
    ev_buf err_tail;
    int64_t wall_ns;
} child_end;

/* Closes what the supervisor holds of w. */
static void wproc_close(wproc *w)
{
    if (w->rp >= 0)
        close(w->rp);
    if (w->ep >= 0)
        close(w->ep);
    if (w->gate >= 0)
        close(w->gate);
    w->rp = w->ep = w->gate = -1;
}

/*
 * Starts argv as a worker: records on fd 3, protocol on fd 4, with
 * gated, the gate on fd 5 (argv then carries --gate-fd 5), its own
 * process group, pinned.  OUT: *w.
 */
static ev_status spawn_worker(sup *s, char *const argv[], int gated, wproc *w, ev_err *err)
{
    int rp[2] = {-1, -1}, ep[2] = {-1, -1}, gp[2] = {-1, -1};
    pid_t pid, parent;

    w->pid = -1;
    w->rp = w->ep = w->gate = -1;
    if (pipe2(rp, O_CLOEXEC) || pipe2(ep, O_CLOEXEC) ||
        (gated && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gp))) {
        ev_err_set(err, EV_EPROC, "pipe: %s", strerror(errno));
        goto fail;
    }
    parent = getpid();
    pid = fork();
    if (pid < 0) {
        ev_err_set(err, EV_EPROC, "fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (ev_proc_child_init(parent))
            _exit(125); /* the supervisor is gone: a worker never outlives it */
        if (s->proto.n_cpus) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (size_t i = 0; i < s->proto.n_cpus; i++)
                CPU_SET(s->proto.cpu_set[i], &set);
            if (sched_setaffinity(0, sizeof set, &set)) {
                dprintf(ep[1], "evident-worker: cannot pin to the protocol's cpu_set: %s\n", strerror(errno));
                _exit(126);
            }
        }
        if (dup2(rp[1], 3) < 0 || dup2(s->memfd, 4) < 0 || dup2(ep[1], 2) < 0 || dup2(ep[1], 1) < 0 ||
            (gated && dup2(gp[1], 5) < 0) || (nul >= 0 && dup2(nul, 0) < 0))
            _exit(127);
        execv(argv[0], argv);
        dprintf(2, "evident-worker: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(rp[1]);
    close(ep[1]);
    if (gated)
        close(gp[1]);
    w->pid = pid;
    w->rp = rp[0];
    w->ep = ep[0];
    w->gate = gated ? gp[0] : -1;
    return EV_OK;
fail:
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (ep[i] >= 0)
            close(ep[i]);
        if (gp[i] >= 0)
            close(gp[i]);
    }
    return EV_EPROC;
}

/* Ends a staged process that will not be released: closes its gate (it
 * exits at once), kills its group and reaps it. */
static void wproc_cancel(wproc *w)
{
    int status;
    wproc_close(w);
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    w->pid = -1;
}

/*
 * Watches the started worker w: releases its gate when it has one,
 * streams its records into a, watches the deadline (from now) and the
 * stop request.  OUT: *ce.  Store failures while committing return their
 * status after the child is ended.  Closes w.
 */
static ev_status run_child(sup *s, wproc *w, att *a, child_end *ce, ev_err *err)
{
    ev_buf line = EV_BUF_INIT, tail = EV_BUF_INIT;
    int64_t start = mono_ns();
    int64_t deadline = start + (int64_t)(s->proto.job_timeout_s * 1e9), kill_at = 0;
    int rec_open = 1, err_open = 1, exited = 0, status = 0;
    int64_t pending_since = 0; /* arrival of the oldest uncommitted bytes; 0: none */
    ev_status rc = EV_OK, fatal = EV_OK;
    pid_t pid = w->pid;
    int rp[2] = {w->rp, -1}, ep[2] = {w->ep, -1};

    memset(ce, 0, sizeof *ce);
    a->records_ok = 1;
    ce->pid = pid;
    if (w->gate >= 0) {
        /* the release: a worker that died at its gate is seen below */
        if (send(w->gate, "g", 1, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
            rc = ev_err_set(err, EV_EPROC, "gate: %s", strerror(errno));
        close(w->gate);
        w->gate = -1;
    }
    while (rec_open || err_open || !exited) {
        struct pollfd fds[3];
        int nf = 0, timeout;
        int64_t now = mono_ns();

        if (!exited) {
            pid_t got = waitpid(pid, &status, WNOHANG);
            if (got == pid)
                exited = 1;
        }
        if (exited && !rec_open && !err_open)
            break;
        if (!ce->timed_out && !ce->interrupted && now >= deadline && !exited) {
            ce->timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        if (!ce->interrupted && !ce->timed_out && stopping(s) && !exited) {
            ce->interrupted = 1;
            kill(-pid, SIGTERM);
            kill(pid, SIGTERM);
            kill_at = now + 2000000000;
        }
        if (fatal && !exited && !ce->interrupted && !ce->timed_out) {
            ce->interrupted = 1;
            kill(-pid, SIGKILL);
        }
        if (kill_at && now >= kill_at && !exited) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            kill_at = 0;
        }
        if (exited && (rec_open || err_open) && now > deadline + 2000000000) {
            break; /* a grandchild holds the pipes: give up on them */
        }
        if (rec_open) {
            fds[nf].fd = rp[0];
            fds[nf++].events = POLLIN;
        }
        if (err_open) {
            fds[nf].fd = ep[0];
            fds[nf++].events = POLLIN;
        }
        if (s->o->stop_fd >= 0 && !ce->interrupted) {
            fds[nf].fd = s->o->stop_fd;
            fds[nf++].events = POLLIN;
        }
        if (pending_since && !fatal &&
            (!rec_open || now - pending_since >= (int64_t)COMMIT_MS * 1000000 || line.len >= COMMIT_BYTES)) {
            ev_status c = on_lines(s, a, &line);
            pending_since = line.len ? now : 0;
            if (c) {
                fatal = c;
                ev_err_set(err, c, "store: cannot commit a record");
            }
        }
        timeout = (rec_open || err_open) ? 200 : 5;
        if (!exited && deadline - now < (int64_t)timeout * 1000000)
            timeout = deadline > now ? (int)((deadline - now) / 1000000) + 1 : 0;
        if (poll(fds, (nfds_t)nf, timeout) < 0 && errno != EINTR) {
            rc = ev_err_set(err, EV_EPROC, "poll: %s", strerror(errno));
            kill(-pid, SIGKILL);
        }
        for (int i = 0; i < nf; i++) {
            char chunk[65536];
            ssize_t n;
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (fds[i].fd == s->o->stop_fd)
                continue; /* the flag is checked above */
            n = read(fds[i].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (fds[i].fd == rp[0]) {
                if (n <= 0) {
                    rec_open = 0;
                    continue;
                }
                if (ev_buf_append(&line, chunk, (size_t)n)) {
                    fatal = ev_err_set(err, EV_ENOMEM, "record buffer: out of memory");
                    continue;
                }
                if (!pending_since)
                    pending_since = mono_ns();
                if (line.len > MAX_LINE) {
                    proto_err(a, "record %lld: longer than %zu bytes", (long long)a->count + 1, MAX_LINE);
                    ev_buf_reset(&line);
                }
            } else {
                if (n <= 0) {
                    err_open = 0;
                    continue;
                }
                ev_buf_append(&tail, chunk, (size_t)n);
                if (tail.len > 4 * STDERR_TAIL) {
                    memmove(tail.data, tail.data + tail.len - STDERR_TAIL, STDERR_TAIL);
                    tail.len = STDERR_TAIL;
                    tail.data[tail.len] = '\0';
                }
            }
        }
    }
    if (!exited) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (line.len && !fatal) {
        ev_status c = on_lines(s, a, &line); /* what is left when the loop gave up on the pipes */
        if (c) {
            fatal = c;
            ev_err_set(err, c, "store: cannot commit a record");
        }
    }
    if (line.len)
        proto_err(a, "record %lld: no newline at the end of the stream", (long long)a->count + 1);
    if (WIFEXITED(status)) {
        ce->has_exit = 1;
        ce->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        ce->has_signal = 1;
        ce->signal = WTERMSIG(status);
    }
    if (!a->end)
        proto_err(a, "no end record (%lld records)", (long long)a->count);
    {
        size_t from = tail.len > STDERR_TAIL ? tail.len - STDERR_TAIL : 0;
        ev_redact_paths(tail.data ? tail.data + from : "", tail.len - from, &ce->err_tail);
    }
    ce->wall_ns = mono_ns() - start;
    if (fatal && !rc)
        rc = fatal;
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    w->rp = w->ep = -1;
    w->pid = -1;
    ev_buf_free(&line);
    ev_buf_free(&tail);
    return rc;
}

/* Fills facts for ev_outcome_derive from a process row's values. */
static ev_outcome derive(int has_process, const ev_process_row *p, int validation_failed)
{
    ev_process_facts f;
    memset(&f, 0, sizeof f);
    f.has_process = has_process;
    if (has_process) {
        f.has_exit = p->has_exit;
        f.exit_code = p->exit_code;
        f.has_signal = p->has_signal;
        f.signal = p->signal;
        f.timed_out = p->timed_out;
        f.interrupted = p->interrupted;
        f.skipped = p->skipped;
        f.records_ok = p->records_ok;
        f.validation_failed = validation_failed;
    }
    return ev_outcome_derive(&f);
}

/* Reports progress through the callback. */
static void progress(sup *s, const jstate *j, int ended)
{
    ev_progress p;
    if (!s->o->progress)
        return;
    memset(&p, 0, sizeof p);
    p.phase = ev_phase_name(j->pj.phase);
    p.job_key = j->pj.job_key;
    p.ended = ended;
    p.outcome = ended && j->has_outcome ? ev_outcome_name(j->outcome) : NULL;
    p.done = s->done;
    p.total = s->total;
    p.failures = s->res->failures;
    p.elapsed_s = (double)(mono_ns() - s->t0) / 1e9;
    p.eta_s = s->job_s_n ? s->job_s_sum / (double)s->job_s_n * (double)(s->total - s->done) : -1;
    s->o->progress(s->o->progress_ctx, &p);
}

/* The argument strings of one worker command line. */
typedef struct wargs {
    char *argv[40];
    char case_s[24], coef_s[100], script[4096], cache[4096], spawn_s[24], ahead_s[24];
} wargs;

/* Fills w->argv for job j (gated: with --gate-fd 5). */
static void job_argv(const sup *s, const jstate *j, int gated, wargs *w)
{
    const ev_proto_fault *fault = ev_protocol_fault(&s->proto, j->pj.arm);
    char **argv = w->argv;
    int ac = 0;
    struct timespec now;

    snprintf(w->case_s, sizeof w->case_s, "%lld", (long long)j->pj.case_index);
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(w->spawn_s, sizeof w->spawn_s, "%lld", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    argv[ac++] = (char *)s->o->worker_path;
    argv[ac++] = "--backend";
    argv[ac++] = (char *)s->o->backend;
    argv[ac++] = "--protocol-fd";
    argv[ac++] = "4";
    argv[ac++] = "--record-fd";
    argv[ac++] = "3";
    argv[ac++] = "--case";
    argv[ac++] = w->case_s;
    argv[ac++] = "--arm";
    argv[ac++] = (char *)j->pj.arm;
    argv[ac++] = "--job-key";
    argv[ac++] = (char *)j->pj.job_key;
    argv[ac++] = "--spawn-ns";
    argv[ac++] = w->spawn_s;
    if (gated) {
        argv[ac++] = "--gate-fd";
        argv[ac++] = "5";
    }
    if (j->pj.phase == EV_PHASE_RESCUE)
        argv[ac++] = "--retry";
    if (!strcmp(j->pj.arm, "torch-compile")) {
        snprintf(w->script, sizeof w->script, "%s/kernels/peer_torch.py",
                 s->o->source_root ? s->o->source_root : ".");
        argv[ac++] = "--python";
        argv[ac++] = (char *)(s->o->python ? s->o->python : "python3");
        argv[ac++] = "--peer-script";
        argv[ac++] = w->script;
        /* one compile cache per store: a case compiled once per run, its
         * later rounds load the files (docs/runner.md, "torch-compile") */
        ev_torch_cache_path(s->o->db_path, s->run_id, w->cache, sizeof w->cache);
        argv[ac++] = "--torch-cache";
        argv[ac++] = w->cache;
        if (s->ahead_ns && j->pj.case_index >= 0 && s->ahead_ns[j->pj.case_index] > 0) {
            snprintf(w->ahead_s, sizeof w->ahead_s, "%lld", (long long)s->ahead_ns[j->pj.case_index]);
            argv[ac++] = "--compile-ahead-ns";
            argv[ac++] = w->ahead_s;
        }
    }
    if (ev_protocol_kernel(&s->proto, j->pj.arm)) {
        const ev_ext_built *k = ev_ext_built_of(s->built, s->n_built, j->pj.arm);
        if (k && k->ok) {
            argv[ac++] = "--kernel-lib";
            argv[ac++] = (char *)k->lib;
        } else if (k) {
            argv[ac++] = "--kernel-error";
            argv[ac++] = (char *)k->error;
        }
    }
    /* auto and the wrong-schedule fault arm ask the selector with the fit */
    if ((!strcmp(j->pj.arm, "auto") || (fault && fault->kind == EV_FAULT_WRONG_SCHEDULE)) && s->have_coef) {
        char x[32], y[32], z[32];
        ev_json_format_double(s->coef.a0, x);
        ev_json_format_double(s->coef.aP, y);
        ev_json_format_double(s->coef.aD, z);
        snprintf(w->coef_s, sizeof w->coef_s, "%s,%s,%s", x, y, z);
        argv[ac++] = "--coef";
        argv[ac++] = w->coef_s;
    }
    argv[ac] = NULL;
}

/* The staged process of job j, or NULL. */
static wproc *staged_of(sup *s, const jstate *j)
{
    for (size_t i = 0; i < s->n_staged; i++)
        if (s->staged[i].job == j)
            return &s->staged[i];
    return NULL;
}

/* Removes staged entry w (after it was taken or cancelled). */
static void staged_drop(sup *s, wproc *w)
{
    size_t i = (size_t)(w - s->staged);
    memmove(&s->staged[i], &s->staged[i + 1], (s->n_staged - i - 1) * sizeof *w);
    s->n_staged--;
}

/* Cancels every staged process (the phase ended or the run stops). */
static void unstage_all(sup *s)
{
    for (size_t i = 0; i < s->n_staged; i++)
        wproc_cancel(&s->staged[i]);
    s->n_staged = 0;
}

/* A job whose last attempt is missing or interrupted: the phase runs it. */
static int pending(const jstate *j, ev_phase ph)
{
    return j->pj.phase == ph && (!j->has_outcome || j->outcome == EV_OUT_INTERRUPTED);
}

/*
 * Stages the jobs that follow js[from] in phase ph: the next one, and
 * every torch-compile job among the next stage_ahead (python and torch's
 * import take seconds; a native job's preparation takes milliseconds).
 * A staged process does CPU-only work and waits at its gate; nothing of
 * it touches the device before its release (docs/runner.md).
 */
static void stage_next(sup *s, ev_phase ph, size_t from)
{
    size_t seen = 0;

    if (s->o->stage_ahead <= 0)
        return;
    for (size_t i = from + 1; i < s->n_js && seen < (size_t)s->o->stage_ahead; i++) {
        jstate *j = &s->js[i];
        wargs w;
        ev_err e;
        if (!pending(j, ph))
            continue;
        seen++;
        if (staged_of(s, j) || (seen > 1 && strcmp(j->pj.arm, "torch-compile")))
            continue;
        if (s->n_staged >= EV_MAX_STAGE_AHEAD)
            break;
        job_argv(s, j, 1, &w);
        /* staging only saves time: a process that cannot be started now
         * (fork or pipe refused) is started at its turn, where a failure
         * counts */
        if (spawn_worker(s, w.argv, 1, &s->staged[s->n_staged], &e))
            break;
        s->staged[s->n_staged++].job = j;
    }
}

/* Runs one new attempt of job j (js[index]).  EV_EINTR when the run was
 * stopped during it (recorded interrupted). */
static ev_status run_attempt(sup *s, size_t index, ev_err *err)
{
    jstate *j = &s->js[index];
    wproc proc, *st = staged_of(s, j);
    wargs wa;
    att a;
    child_end ce;
    ev_process_row p;
    ev_status rc;
    int64_t attempt_id, started;

    memset(&a, 0, sizeof a);
    progress(s, j, 0);
    if (st) {
        proc = *st;
        staged_drop(s, st);
    } else {
        job_argv(s, j, 0, &wa);
        if ((rc = spawn_worker(s, wa.argv, 0, &proc, err)))
            return rc;
    }
    started = wall_ns();
    rc = ev_store_add_attempt(s->st, j->job_id, j->last_attempt + 1, s->inv_id, started, &attempt_id, err);
    if (rc) {
        wproc_cancel(&proc);
        return rc;
    }
    j->last_attempt++;
    j->last_attempt_id = attempt_id;
    j->has_outcome = 0;
    s->res->jobs_run++;
    a.attempt_id = attempt_id;
    stage_next(s, j->pj.phase, index);

    rc = run_child(s, &proc, &a, &ce, err);
    if (!rc && a.records_ok && a.end && !a.skipped && !a.validation_failed && ce.has_exit &&
        ce.exit_code == 0 && !ce.timed_out && !ce.interrupted)
        apply_rules(s, j->pj.arm, &a);
    memset(&p, 0, sizeof p);
    p.pid = ce.pid ? ce.pid : -1;
    if (a.store_failed) {
        /* Some of its records are not in the store: never completed. */
        ce.interrupted = 1;
        a.records_ok = 0;
        snprintf(a.protocol_error, sizeof a.protocol_error, "%s", a.store_error);
    }
    p.has_exit = ce.has_exit;
    p.exit_code = ce.exit_code;
    p.has_signal = ce.has_signal;
    p.signal = ce.signal;
    p.timed_out = ce.timed_out;
    p.interrupted = ce.interrupted;
    p.skipped = a.skipped;
    p.skip_reason = a.skipped ? a.skip_reason : NULL;
    p.record_count = a.count;
    p.records_ok = a.records_ok;
    p.protocol_error = a.records_ok ? NULL : a.protocol_error;
    p.affinity = a.affinity;
    p.stderr_tail = ce.err_tail.data ? ce.err_tail.data : "";
    p.ended_ns = wall_ns();
    p.wall_ns = ce.wall_ns;
    {
        ev_err e2;
        ev_status prc = ev_store_add_process(s->st, attempt_id, &p, rc ? &e2 : err);
        if (!rc && prc)
            rc = prc;
    }
    ev_buf_free(&ce.err_tail);
    att_free(&a);
    if (rc)
        return rc;
    j->has_outcome = 1;
    j->outcome = derive(1, &p, a.validation_failed);
    snprintf(j->skip_reason, sizeof j->skip_reason, "%.159s", a.skipped ? a.skip_reason : "");
    s->done++;
    s->job_s_sum += (double)ce.wall_ns / 1e9;
    s->job_s_n++;
    s->res->jobs_s += (double)ce.wall_ns / 1e9;
    s->res->compile_s += (double)a.compile_ns / 1e9;
    s->res->open_s += (double)a.open_ns / 1e9;
    if (a.warmup)
        s->res->demanded_s +=
            (s->proto.warmup_ms + (double)s->proto.samples * s->proto.target_sample_ms) / 1e3;
    if (j->outcome != EV_OUT_COMPLETED && j->outcome != EV_OUT_SKIPPED && j->outcome != EV_OUT_INTERRUPTED)
        s->res->failures++;
    progress(s, j, 1);
    if (ce.interrupted && !ce.timed_out && stopping(s))
        return ev_err_set(err, EV_EINTR, "stopped by a signal");
    return EV_OK;
}

/* Runs every job of a phase whose last attempt is missing or interrupted. */
static ev_status run_phase(sup *s, ev_phase ph, ev_err *err)
{
    for (size_t i = 0; i < s->n_js; i++) {
        ev_status rc;
        if (!pending(&s->js[i], ph))
            continue;
        if (stopping(s)) {
            unstage_all(s);
            return ev_err_set(err, EV_EINTR, "stopped by a signal");
        }
        if ((rc = run_attempt(s, i, err))) {
            unstage_all(s);
            return rc;
        }
    }
    unstage_all(s);
    return EV_OK;
}

/* ---- store state ------------------------------------------------------ */

typedef struct load_ctx {
    sup *s;
    int64_t *bad; /* attempt ids with a failed validation */
    size_t n_bad, cap_bad;
    int64_t *dangling; /* attempt ids without a process row */
    size_t n_dang, cap_dang;
    ev_status oom;
    size_t next;     /* the plan index the next job row is expected at */
    int64_t *by_job; /* (job_id, index into s->js) pairs, sorted by job_id */
    size_t n_by_job;
} load_ctx;

/* Orders int64 values (and pairs by their first member). */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Appends v to a growing array. */
static int push_i64(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        int64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* EV_Q_JOBS row -> jstate (plan order taken from the store). */
static ev_status on_job(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    sup *s = l->s;
    jstate *j;
    const char *key = ev_row_text(r, 1);

    /* Jobs were inserted in plan order, so the next row is almost always
     * the next planned job: looked up by position, by search only when not
     * (a protocol of many cases resumes in linear time). */
    if (l->next < s->n_js && !strcmp(s->js[l->next].pj.job_key, key)) {
        s->js[l->next++].job_id = ev_row_i64(r, 0);
        return EV_OK;
    }
    for (size_t i = 0; i < s->n_js; i++)
        if (!strcmp(s->js[i].pj.job_key, key)) {
            s->js[i].job_id = ev_row_i64(r, 0);
            return EV_OK;
        }
    /* A rescue job (not in the static plan). */
    j = realloc(s->js, (s->n_js + 1) * sizeof *s->js);
    if (!j)
        return EV_ENOMEM;
    s->js = j;
    j = &s->js[s->n_js++];
    memset(j, 0, sizeof *j);
    j->job_id = ev_row_i64(r, 0);
    snprintf(j->pj.job_key, sizeof j->pj.job_key, "%s", key);
    ev_phase_parse(ev_row_text(r, 2), &j->pj.phase);
    j->pj.case_index = ev_row_is_null(r, 3) ? -1 : ev_row_i64(r, 3);
    snprintf(j->pj.arm, sizeof j->pj.arm, "%s", ev_row_text(r, 4));
    snprintf(j->pj.label, sizeof j->pj.label, "%s", ev_row_text(r, 5));
    j->pj.round = ev_plan_label_round(j->pj.label);
    j->pj.plan_order = ev_row_i64(r, 7);
    j->pj.retry_of = -1;
    return EV_OK;
}

/* EV_Q_VALIDATIONS row: remembers failed validations. */
static ev_status on_validation(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    if (ev_row_i64(r, 2) == 0 && push_i64(&l->bad, &l->n_bad, &l->cap_bad, ev_row_i64(r, 0)))
        return EV_ENOMEM;
    return EV_OK;
}

/* EV_Q_ATTEMPTS row: the last attempt of each job and its outcome. */
static ev_status on_attempt(void *ctx, const ev_row *r)
{
    load_ctx *l = ctx;
    sup *s = l->s;
    int64_t aid = ev_row_i64(r, 0), job = ev_row_i64(r, 1);
    int has = !ev_row_is_null(r, 5) && ev_row_i64(r, 5);
    ev_process_row p;
    int bad = 0;

    memset(&p, 0, sizeof p);
    if (has) {
        p.has_exit = !ev_row_is_null(r, 7);
        p.exit_code = p.has_exit ? ev_row_i64(r, 7) : 0;
        p.has_signal = !ev_row_is_null(r, 8);
        p.signal = p.has_signal ? ev_row_i64(r, 8) : 0;
        p.timed_out = (int)ev_row_i64(r, 9);
        p.interrupted = (int)ev_row_i64(r, 10);
        p.skipped = (int)ev_row_i64(r, 11);
        p.records_ok = (int)ev_row_i64(r, 14);
    } else if (push_i64(&l->dangling, &l->n_dang, &l->cap_dang, aid)) {
        return EV_ENOMEM;
    }
    bad = l->n_bad && bsearch(&aid, l->bad, l->n_bad, sizeof *l->bad, cmp_i64) != NULL;
    const int64_t *hit = bsearch(&job, l->by_job, l->n_by_job, 2 * sizeof *l->by_job, cmp_i64);
    if (hit) {
        jstate *j = &s->js[hit[1]];
        j->last_attempt = ev_row_i64(r, 2);
        j->last_attempt_id = aid;
        j->has_outcome = 1;
        j->outcome = derive(has, &p, bad);
        snprintf(j->skip_reason, sizeof j->skip_reason, "%s",
                 has && p.skipped && !ev_row_is_null(r, 12) ? ev_row_text(r, 12) : "");
    }
    return EV_OK;
}

/* Reads jobs and attempts from the store; writes the process row
 * (interrupted) of every attempt a killed supervisor left without one. */
static ev_status load_state(sup *s, ev_err *err)
{
    load_ctx l;
    ev_status rc;

    memset(&l, 0, sizeof l);
    l.s = s;
    if ((rc = ev_store_query(s->st, EV_Q_JOBS, s->run_id, on_job, &l, err)) ||
        (rc = ev_store_query(s->st, EV_Q_VALIDATIONS, s->run_id, on_validation, &l, err)))
        goto out;
    l.by_job = malloc((s->n_js ? s->n_js : 1) * 2 * sizeof *l.by_job);
    if (!l.by_job) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n_js; i++) {
        l.by_job[2 * i] = s->js[i].job_id;
        l.by_job[2 * i + 1] = (int64_t)i;
    }
    l.n_by_job = s->n_js;
    qsort(l.by_job, l.n_by_job, 2 * sizeof *l.by_job, cmp_i64);
    if (l.n_bad)
        qsort(l.bad, l.n_bad, sizeof *l.bad, cmp_i64);
    if ((rc = ev_store_query(s->st, EV_Q_ATTEMPTS, s->run_id, on_attempt, &l, err)))
        goto out;
    for (size_t i = 0; i < l.n_dang; i++) {
        ev_process_row p;
        memset(&p, 0, sizeof p);
        p.pid = -1;
        p.interrupted = 1;
        p.records_ok = 0;
        p.protocol_error = "the supervisor stopped before this attempt ended";
        p.affinity = "";
        p.stderr_tail = "";
        p.ended_ns = wall_ns();
        if ((rc = ev_store_add_process(s->st, l.dangling[i], &p, err)))
            goto out;
    }
out:
    free(l.bad);
    free(l.dangling);
    free(l.by_job);
    return rc;
}

/* ---- run creation ----------------------------------------------------- */

/* Inserts job pj (retry_of: the original's job id or 0).  OUT: *job_id. */
static ev_status add_job(sup *s, const ev_plan_job *pj, int64_t retry_of, int64_t *job_id, ev_err *err)
{
    ev_job_row jr;
    jr.job_key = pj->job_key;
    jr.phase = ev_phase_name(pj->phase);
    jr.case_index = pj->case_index;
    jr.arm = pj->arm;
    jr.label = pj->label;
    jr.retry_of = retry_of;
    jr.plan_order = pj->plan_order;
    return ev_store_add_job(s->st, s->run_id, &jr, job_id, err);
}

/* Records the run, its source snapshot, cases and planned jobs in one
 * transaction, before any measurement. */
static ev_status create_run(sup *s, ev_err *err)
{
    ev_snapshot snap;
    ev_run_row rr;
    char commit_s[64];
    const char *from;
    int dirty;
    ev_status rc;

    {
        char paths[EV_EXT_MAX_KERNELS][600];
        const char *extra[EV_EXT_MAX_KERNELS];
        size_t n_extra = 0;
        for (size_t i = 0; i < s->proto.n_kernels; i++)
            if (ev_ext_closure_file(s->proto.kernels, i, s->o->protocol_path, s->o->backend, paths[n_extra],
                                    sizeof paths[0]))
                extra[n_extra] = paths[n_extra], n_extra++;
        if ((rc = ev_snapshot_take_with(s->o->source_root, extra, n_extra, &snap, err)))
            return rc;
    }
    ev_git_info_tree(s->o->source_root, snap.tree_hash, commit_s, &dirty, &from);
    memset(&rr, 0, sizeof rr);
    rr.protocol_id = s->proto_id;
    rr.protocol_bytes = s->bytes.data;
    rr.protocol_len = s->bytes.len;
    rr.protocol_path = s->o->protocol_path[0] == '/' ? "<path>" : s->o->protocol_path;
    rr.backend = s->o->backend;
    rr.seed = s->proto.seed;
    rr.git_commit = commit_s;
    rr.git_dirty = dirty;
    rr.source_tree_hash = snap.tree_hash;
    rr.created_ns = wall_ns();
    if ((rc = ev_store_begin(s->st, err)))
        goto out;
    if ((rc = ev_store_add_run(s->st, &rr, &s->run_id, err)))
        goto fail;
    for (size_t i = 0; i < snap.n; i++)
        if ((rc = ev_store_add_source(s->st, s->run_id, snap.files[i].path, snap.files[i].sha256,
                                      snap.files[i].bytes ? (void *)snap.files[i].bytes : (void *)"",
                                      snap.files[i].len, err)))
            goto fail;
    for (size_t i = 0; i < s->proto.n_cases; i++) {
        const ev_proto_case *c = &s->proto.cases[i];
        ev_case_row cr = {(int64_t)i, c->op, c->rows, c->cols, c->stride, c->dtype, c->default_rows, c->role};
        if ((rc = ev_store_add_case(s->st, s->run_id, &cr, err)))
            goto fail;
    }
    for (size_t i = 0; i < s->plan.n; i++)
        if ((rc = add_job(s, &s->plan.jobs[i], 0, &s->js[i].job_id, err)))
            goto fail;
    rc = ev_store_commit(s->st, err);
    if (!rc)
        goto out;
fail:
    ev_store_rollback(s->st);
out:
    ev_snapshot_free(&snap);
    return rc;
}

/* EV_Q_RUN row: the protocol id and backend of the run being resumed. */
typedef struct run_ctx {
    char protocol_id[65], backend[8];
} run_ctx;
static ev_status on_run(void *ctx, const ev_row *r)
{
    run_ctx *c = ctx;
    snprintf(c->protocol_id, sizeof c->protocol_id, "%s", ev_row_text(r, 1));
    snprintf(c->backend, sizeof c->backend, "%s", ev_row_text(r, 3));
    return EV_OK;
}
static ev_status on_status(void *ctx, const ev_row *r)
{
    ev_run_result *res = ctx;
    res->finished = 1;
    snprintf(res->status, sizeof res->status, "%s", ev_row_text(r, 0));
    snprintf(res->rescue_status, sizeof res->rescue_status, "%s", ev_row_text(r, 1) ? ev_row_text(r, 1) : "");
    return EV_OK;
}
static ev_status on_count(void *ctx, const ev_row *r)
{
    (void)r;
    (*(int64_t *)ctx)++;
    return EV_OK;
}

/* ---- environment ------------------------------------------------------ */

/* Runs the probe worker; builds the redacted environment record. */
static ev_status environment(sup *s, ev_err *err)
{
    char *argv[] = {(char *)s->o->worker_path,
                    "--backend",
                    (char *)s->o->backend,
                    "--protocol-fd",
                    "4",
                    "--record-fd",
                    "3",
                    "--probe",
                    NULL};
    att a;
    wproc proc;
    child_end ce;
    cJSON *env = NULL, *dev = NULL;
    const cJSON *d;
    ev_buf json = EV_BUF_INIT, mid = EV_BUF_INIT;
    struct utsname u;
    char profile[65], kernel[400], hh[65];
    ev_status rc;

    memset(&a, 0, sizeof a);
    a.probe = 1;
    if ((rc = spawn_worker(s, argv, 0, &proc, err)))
        return rc;
    rc = run_child(s, &proc, &a, &ce, err);
    ev_buf_free(&ce.err_tail);
    if (rc)
        goto out;
    /* a stop during the probe is a stop (the probe was ended for it), not
     * a probe that failed */
    if ((ce.interrupted || !a.end) && stopping(s)) {
        rc = ev_err_set(err, EV_EINTR, "stopped by a signal");
        goto out;
    }
    if (!a.hello_rec || !a.end || !a.records_ok || !ce.has_exit || ce.exit_code) {
        rc = ev_err_set(err, EV_EPROC, "the %s backend's probe failed (%s)", s->o->backend,
                        a.records_ok ? "exit status" : a.protocol_error);
        goto out;
    }
    d = cJSON_GetObjectItemCaseSensitive(a.hello_rec, "device");
    env = cJSON_CreateObject();
    dev = d ? cJSON_Duplicate(d, 1) : cJSON_CreateObject();
    if (!env || !dev) {
        rc = ev_err_set(err, EV_ENOMEM, "environment: out of memory");
        goto out;
    }
    {
        const cJSON *sms = cJSON_GetObjectItemCaseSensitive(dev, "sms");
        const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(dev, "uuid");
        s->sms = cJSON_IsNumber(sms) ? (int64_t)sms->valuedouble : 1;
        if (cJSON_IsString(uuid)) {
            char uh[65];
            if (uuid->valuestring[0]) {
                ev_host_hash(uuid->valuestring, uh);
                cJSON_AddStringToObject(dev, "uuid_hash", uh);
            }
            cJSON_DeleteItemFromObjectCaseSensitive(dev, "uuid");
        }
    }
    uname(&u);
    snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    ev_host_hash(u.nodename, hh);
    ev_json_add_str(env, "backend", s->o->backend);
    ev_json_add_str(env, "host_hash", hh);
    if (!ev_read_file("/etc/machine-id", &mid, NULL) && mid.len) {
        char mh[65];
        mid.data[strcspn(mid.data, "\n")] = '\0';
        ev_host_hash(mid.data, mh);
        ev_json_add_str(env, "machine_id_hash", mh);
    }
    ev_json_add_str(env, "kernel", kernel);
    ev_json_add_str(env, "compiler", __VERSION__);
    ev_json_add_str(env, "cflags", EV_BUILD_CFLAGS);
    ev_json_add_str(env, "affinity", a.affinity);
    if (s->kernel_receipts && cJSON_GetArraySize(s->kernel_receipts)) {
        /* the external kernels built for this invocation (ext_build.h) */
        cJSON_AddItemToObject(env, "kernels", s->kernel_receipts);
        s->kernel_receipts = NULL;
    }
    ev_json_add_i64(env, "threads", s->sms);
    cJSON_AddItemToObject(env, "device", dev);
    dev = NULL;
    if ((rc = ev_json_print(env, 0, &json))) {
        ev_err_set(err, rc, "environment: cannot serialise");
        goto out;
    }
    /* ev_json_print appends "\n": the record is the bytes without it. */
    json.data[--json.len] = '\0';
    {
        ev_buf red = EV_BUF_INIT;
        if ((rc = ev_redact_paths(json.data, json.len, &red))) {
            ev_err_set(err, rc, "environment: out of memory");
            goto out;
        }
        ev_buf_free(&json);
        json = red;
    }
    if ((rc = ev_sha256_hex(json.data, json.len, profile))) {
        ev_err_set(err, rc, "environment: sha256 failed");
        goto out;
    }
    rc = ev_store_add_environment(s->st, s->inv_id, profile, json.data, err);
out:
    cJSON_Delete(a.hello_rec);
    cJSON_Delete(env);
    cJSON_Delete(dev);
    ev_buf_free(&json);
    ev_buf_free(&mid);
    return rc;
}

/* ---- fit -------------------------------------------------------------- */

/*
 * The fit phase: the observations and exclusions are the model's own
 * reading of the store (ev_obs_from_store: main-phase hot medians of
 * default, rows1 and rows2 of every case whose jobs completed; holdout
 * cases carried with their role; S from the bindings), so that `evident
 * run`, `evident fit --db` and the exporter fit the same numbers.  Records
 * the fit once per run.  A failed fit is not a run failure: fit_note says
 * why and auto runs the default schedule.
 */
static ev_status fit_phase(sup *s, ev_err *err)
{
    ev_obs *obs = NULL;
    ev_excluded *ex = NULL;
    size_t n_obs = 0, n_ex = 0;
    int64_t sms = 0, fits = 0;
    ev_fit *fit = NULL;
    ev_fit_input in;
    ev_buf json = EV_BUF_INIT;
    ev_err fe = {""};
    ev_status rc = EV_OK;

    if (ev_obs_from_store(s->st, s->run_id, &obs, &n_obs, &ex, &n_ex, &sms, &fe)) {
        snprintf(s->res->fit_note, sizeof s->res->fit_note,
                 "no fit (observations: %.200s): auto runs the default schedule", fe.msg);
        goto out;
    }
    memset(&in, 0, sizeof in);
    in.obs = obs;
    in.n_obs = n_obs;
    in.excluded = ex;
    in.n_excluded = n_ex;
    in.sms = sms > 0 ? sms : s->sms;
    in.threshold = s->proto.decision_threshold;
    if (ev_model_fit(&in, &fit, &fe)) {
        snprintf(s->res->fit_note, sizeof s->res->fit_note, "no fit (%.200s): auto runs the default schedule",
                 fe.msg);
        goto out;
    }
    s->coef = *ev_fit_coef(fit);
    s->have_coef = 1;
    if ((rc = ev_store_query(s->st, EV_Q_FITS, s->run_id, on_count, &fits, err)))
        goto out;
    if (fits == 0) {
        int64_t fit_id;
        if ((rc = ev_fit_to_json(fit, &json, err)))
            goto out;
        rc = ev_store_add_fit(s->st, s->run_id, wall_ns(), json.data, &fit_id, err);
    }
out:
    if (!rc && s->proto.model_from.set) {
        /* a subset: auto takes the earlier run's coefficients (model_from.h);
         * the run's own fit is still recorded as its fit */
        s->coef.a0 = s->proto.model_from.a0;
        s->coef.aP = s->proto.model_from.aP;
        s->coef.aD = s->proto.model_from.aD;
        s->have_coef = 1;
        snprintf(s->res->fit_note, sizeof s->res->fit_note,
                 "auto uses the coefficients of bundle %.12s... (--model: model_from), not this run's fit",
                 s->proto.model_from.bundle_sha256);
    }
    ev_fit_free(fit);
    ev_buf_free(&json);
    free(obs);
    free(ex);
    return rc;
}

/* ---- rescue and status ------------------------------------------------ */

/* Outcomes of the static plan's jobs (main, policy: final by now). */
static ev_status plan_outcomes(sup *s, ev_outcome **out, ev_err *err)
{
    ev_outcome *o = calloc(s->plan.n ? s->plan.n : 1, sizeof *o);
    if (!o)
        return ev_err_set(err, EV_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->plan.n; i++)
        o[i] = s->js[i].has_outcome ? s->js[i].outcome : EV_OUT_INTERRUPTED;
    *out = o;
    return EV_OK;
}

/* Counts the skipped main and policy jobs into res->skipped and lists
 * each distinct (arm, reason) once in res->skips: a skip never fails the
 * run and is never silent. */
static void skips(sup *s, const ev_outcome *outc)
{
    size_t len = 0, lim = s->plan.n_main + s->plan.n_policy;

    s->res->skipped = 0;
    s->res->skips[0] = '\0';
    for (size_t i = 0; i < lim; i++) {
        int seen = 0;
        if (outc[i] != EV_OUT_SKIPPED)
            continue;
        s->res->skipped++;
        for (size_t k = 0; k < i && !seen; k++)
            seen = outc[k] == EV_OUT_SKIPPED && !strcmp(s->js[k].pj.arm, s->js[i].pj.arm) &&
                   !strcmp(s->js[k].skip_reason, s->js[i].skip_reason);
        if (!seen && len < sizeof s->res->skips) {
            int w = snprintf(s->res->skips + len, sizeof s->res->skips - len, "%s%s: %s", len ? "\n" : "",
                             s->js[i].pj.arm, s->js[i].skip_reason[0] ? s->js[i].skip_reason : "(no reason)");
            len += w > 0 ? (size_t)w : 0;
        }
    }
}

/* Plans the rescue jobs from the outcomes, inserts those not yet in the
 * store, runs them, then recheck, then sets the run status once. */
static ev_status finish(sup *s, ev_err *err)
{
    ev_outcome *outc = NULL, *rout = NULL;
    ev_plan_job *rj = NULL;
    size_t n_r = 0;
    const char *status, *rstatus;
    ev_status rc;

    if ((rc = plan_outcomes(s, &outc, err)) ||
        (rc = ev_plan_rescue(&s->proto, &s->plan, outc, &rj, &n_r, err)))
        goto out;
    s->total += n_r;
    for (size_t k = 0; k < n_r; k++) {
        int found = 0;
        for (size_t i = s->plan.n; i < s->n_js; i++)
            if (!strcmp(s->js[i].pj.job_key, rj[k].job_key))
                found = 1;
        if (!found) {
            jstate *j = realloc(s->js, (s->n_js + 1) * sizeof *s->js);
            if (!j) {
                rc = ev_err_set(err, EV_ENOMEM, "out of memory");
                goto out;
            }
            s->js = j;
            j = &s->js[s->n_js];
            memset(j, 0, sizeof *j);
            j->pj = rj[k];
            if ((rc = add_job(s, &rj[k], s->js[rj[k].retry_of].job_id, &j->job_id, err)))
                goto out;
            s->n_js++;
        }
    }
    if ((rc = run_phase(s, EV_PHASE_RESCUE, err)) || (rc = run_phase(s, EV_PHASE_RECHECK, err)))
        goto out;
    rout = calloc(n_r ? n_r : 1, sizeof *rout);
    if (!rout) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < n_r; k++)
        for (size_t i = s->plan.n; i < s->n_js; i++)
            if (!strcmp(s->js[i].pj.job_key, rj[k].job_key))
                rout[k] = s->js[i].has_outcome ? s->js[i].outcome : EV_OUT_INTERRUPTED;
    ev_plan_run_status(&s->plan, outc, rj, rout, n_r, &status, &rstatus);
    skips(s, outc);
    if ((rc = ev_store_set_run_status(s->st, s->run_id, status, rstatus, wall_ns(), err)))
        goto out;
    s->res->finished = 1;
    snprintf(s->res->status, sizeof s->res->status, "%s", status);
    snprintf(s->res->rescue_status, sizeof s->res->rescue_status, "%s", rstatus ? rstatus : "");
out:
    free(outc);
    free(rout);
    free(rj);
    return rc;
}

/*
 * Refuses, before the store is touched, a protocol this host cannot run:
 * a cpu_set CPU outside this process's affinity (EV_EUSAGE; it would only
 * fail in the probe and leave a run that cannot finish), or a worker that
 * would hold more than half of the host's memory (EV_EUSAGE): its case's
 * input twice (the generated copy and the backend's), its output, and on
 * the cpu backend the flush buffer and the ceiling's buffer, each the
 * protocol's multiple of this host's last-level cache, capped as declared.
 */
/* ---- compile ahead ---------------------------------------------------- */

/* Compiles the torch-compile cases still to run into the run's cache
 * before any job is timed (compile_ahead.h); cuda only. */
static ev_status compile_ahead(sup *s, ev_err *err)
{
    ev_ahead_opts o;
    ev_ahead_result r;
    char script[4096], cache[4096];
    int *need;
    size_t n_need = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    ev_status rc;

    if (strcmp(s->o->backend, "cuda") || !s->proto.n_cases)
        return EV_OK;
    if (!(need = calloc(s->proto.n_cases, sizeof *need)) ||
        !(s->ahead_ns = calloc(s->proto.n_cases, sizeof *s->ahead_ns))) {
        free(need);
        return ev_err_set(err, EV_ENOMEM, "compile ahead: out of memory");
    }
    for (size_t i = 0; i < s->n_js; i++) {
        const jstate *j = &s->js[i];
        if (!strcmp(j->pj.arm, "torch-compile") && j->pj.case_index >= 0 &&
            (size_t)j->pj.case_index < s->proto.n_cases &&
            (!j->has_outcome || j->outcome == EV_OUT_INTERRUPTED) && !need[j->pj.case_index]) {
            need[j->pj.case_index] = 1;
            n_need++;
        }
    }
    if (!n_need) {
        free(need);
        return EV_OK;
    }
    snprintf(script, sizeof script, "%s/kernels/peer_torch.py", s->o->source_root ? s->o->source_root : ".");
    ev_torch_cache_path(s->o->db_path, s->run_id, cache, sizeof cache);
    memset(&o, 0, sizeof o);
    o.proto = &s->proto;
    o.need = need;
    o.python = s->o->python ? s->o->python : "python3";
    o.script = script;
    o.cache = cache;
    /* one compile thread each; half the host's CPUs, at most 16 */
    o.parallel = cpus > 1 ? (int)(cpus / 2 > 16 ? 16 : cpus / 2) : 1;
    o.stop = s->o->stop;
    rc = ev_compile_ahead(&o, s->ahead_ns, &r, err);
    free(need);
    s->res->ahead_s = (double)r.wall_ns / 1e9;
    s->res->ahead_cases = r.cases;
    s->res->ahead_failed = r.failed;
    snprintf(s->res->ahead_note, sizeof s->res->ahead_note, "%s", r.first_failure);
    return rc;
}

static ev_status host_bounds(const ev_protocol *p, const char *backend, ev_err *err)
{
    cpu_set_t set;
    if (p->n_cpus && sched_getaffinity(0, sizeof set, &set) == 0) {
        for (size_t i = 0; i < p->n_cpus; i++)
            if (!CPU_ISSET(p->cpu_set[i], &set))
                return ev_err_set(err, EV_EUSAGE,
                                  "cpu_set[%zu]: CPU %d is not available to this process (%d CPUs are): "
                                  "name CPUs it may run on",
                                  i, p->cpu_set[i], CPU_COUNT(&set));
    }
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return EV_OK;
    double mem = (double)pages * (double)psz, llc = (double)ev_cpu_llc_bytes();
    double flush = 0, ceiling = 0;
    if (!strcmp(backend, "cpu")) {
        flush = (double)p->ref_cpu.flush_cache_multiple * llc;
        if (p->ref_cpu.flush_max_bytes && flush > (double)p->ref_cpu.flush_max_bytes)
            flush = (double)p->ref_cpu.flush_max_bytes;
        ceiling = (double)p->ref_cpu.ceiling_cache_multiple * llc;
        if (p->ref_cpu.ceiling_max_bytes && ceiling > (double)p->ref_cpu.ceiling_max_bytes)
            ceiling = (double)p->ref_cpu.ceiling_max_bytes;
        if (p->reference_arms && ceiling > mem / 2)
            return ev_err_set(err, EV_EUSAGE,
                              "reference.cpu: the ceiling's buffer (%.0f bytes: ceiling_cache_multiple x the "
                              "%.0f-byte cache) is more than half of this host's %.0f bytes of memory: set "
                              "ceiling_max_bytes",
                              ceiling, llc, mem);
    }
    for (size_t i = 0; i < p->n_cases; i++) {
        const ev_proto_case *c = &p->cases[i];
        ev_dtype dt = EV_DTYPE_FP32;
        ev_dtype_parse(c->dtype, &dt); /* the parser accepted it */
        double es = (double)ev_dtype_size(dt);
        double need = 2 * (double)c->rows * (double)c->stride * es + (double)c->rows * es + flush;
        if (need > mem / 2)
            return ev_err_set(
                err, EV_EUSAGE,
                "cases[%zu]: a worker would hold about %.0f bytes (the input twice, the output%s), "
                "more than half of this host's %.0f bytes of memory",
                i, need, flush > 0 ? ", the flush buffer" : "", mem);
    }
    return EV_OK;
}

ev_status ev_run(const ev_run_opts *o, ev_run_result *res, ev_err *err)
{
    sup s;
    ev_status rc;
    char hn[256] = "";
    int64_t t;

    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    s.o = o;
    s.res = res;
    s.memfd = -1;
    s.lock_fd = -1;
    s.t0 = mono_ns();
    res->resumed = o->resume;

    if ((rc = ev_read_file_max(o->protocol_path, EV_PROTO_MAX_BYTES, &s.bytes, err))) {
        rc = EV_EUSAGE;
        goto out;
    }
    if (o->cases || o->arms) {
        /* a quick loop: the subset is the run's protocol, its bytes what
         * the store and the bundle hold */
        ev_buf sub = EV_BUF_INIT;
        ev_proto_model model;
        char whole[65];
        if (o->model_bundle && ((rc = ev_protocol_id(s.bytes.data ? s.bytes.data : "", s.bytes.len, whole)) ||
                                (rc = ev_model_from_bundle(o->model_bundle, whole, o->backend, &model, err))))
            goto out;
        rc = ev_protocol_subset(s.bytes.data ? s.bytes.data : "", s.bytes.len, o->cases, o->arms,
                                o->model_bundle ? &model : NULL, &sub, err);
        if (rc) {
            ev_buf_free(&sub);
            goto out;
        }
        ev_buf_free(&s.bytes);
        s.bytes = sub;
    }
    if ((rc = ev_protocol_parse(s.bytes.data ? s.bytes.data : "", s.bytes.len, &s.proto, err)) ||
        (rc = ev_protocol_id(s.bytes.data ? s.bytes.data : "", s.bytes.len, s.proto_id)) ||
        (rc = ev_plan_build(&s.proto, &s.plan, err)))
        goto out;
    s.js = calloc(s.plan.n + 1, sizeof *s.js);
    if (!s.js) {
        rc = ev_err_set(err, EV_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s.plan.n; i++)
        s.js[i].pj = s.plan.jobs[i];
    s.n_js = s.plan.n;
    s.total = s.plan.n;

    if ((rc = ev_ext_check_sources(o->source_root ? o->source_root : ".", o->protocol_path, s.proto.kernels,
                                   s.proto.n_kernels, o->backend, err)) ||
        (rc = host_bounds(&s.proto, o->backend, err)) ||
        (rc = ev_store_writer_lock(o->db_path, &s.lock_fd, err)) ||
        (rc = ev_store_open(o->db_path, EV_STORE_CREATE, &s.st, err)))
        goto out;
    if (o->resume) {
        run_ctx rcx;
        memset(&rcx, 0, sizeof rcx);
        if (ev_store_last_run(s.st, &s.run_id, err)) {
            rc = ev_err_set(err, EV_EUSAGE, "--resume: the store has no run to resume");
            goto out;
        }
        if ((rc = ev_store_query(s.st, EV_Q_RUN, s.run_id, on_run, &rcx, err)) ||
            (rc = ev_store_query(s.st, EV_Q_RUN_STATUS, s.run_id, on_status, res, err)))
            goto out;
        if (strcmp(rcx.protocol_id, s.proto_id)) {
            rc = ev_err_set(err, EV_EUSAGE,
                            "--resume: run %lld was started with protocol %.12s..., this file is %.12s...",
                            (long long)s.run_id, rcx.protocol_id, s.proto_id);
            goto out;
        }
        if (strcmp(rcx.backend, o->backend)) {
            rc = ev_err_set(err, EV_EUSAGE, "--resume: run %lld uses backend %s, not %s", (long long)s.run_id,
                            rcx.backend, o->backend);
            goto out;
        }
        res->run_id = s.run_id;
        if (res->finished)
            goto out; /* nothing left to do */
    } else if ((rc = create_run(&s, err))) {
        goto out;
    }
    res->run_id = s.run_id;

    gethostname(hn, sizeof hn - 1);
    ev_host_hash(hn, s.host_hash);
    if ((rc = ev_store_add_invocation(s.st, s.run_id, wall_ns(), o->resume, s.host_hash, &s.inv_id, err)))
        goto out;
    s.memfd = memfd_create("evident-protocol", MFD_CLOEXEC);
    if (s.memfd < 0 || write(s.memfd, s.bytes.data, s.bytes.len) != (ssize_t)s.bytes.len) {
        rc = ev_err_set(err, EV_EIO, "memfd: %s", strerror(errno));
        goto out;
    }
    res->n_kernels = s.proto.n_kernels;
    if (s.proto.n_kernels) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s.kernels-run%lld", o->db_path, (long long)s.run_id);
        if ((rc = ev_ext_build_all(&s.proto, o->protocol_path, o->source_root ? o->source_root : ".",
                                   o->backend, dir, s.built, &s.n_built, &s.kernel_receipts, err)))
            goto out;
    }
    t = mono_ns();
    rc = environment(&s, err);
    res->env_s = (double)(mono_ns() - t) / 1e9;
    if (rc || (rc = load_state(&s, err)))
        goto out;
    for (size_t i = 0; i < s.n_js; i++)
        if (s.js[i].has_outcome && s.js[i].outcome != EV_OUT_INTERRUPTED)
            s.done++;
    if ((rc = compile_ahead(&s, err)) || (rc = run_phase(&s, EV_PHASE_MAIN, err)))
        goto out;
    t = mono_ns();
    rc = fit_phase(&s, err);
    res->fit_s = (double)(mono_ns() - t) / 1e9;
    if (rc || (rc = run_phase(&s, EV_PHASE_POLICY, err)) || (rc = finish(&s, err)))
        goto out;
out:
    res->wall_s = (double)(mono_ns() - s.t0) / 1e9;
    if (s.memfd >= 0)
        close(s.memfd);
    ev_store_close(s.st);
    ev_store_writer_unlock(s.lock_fd);
    ev_plan_free(&s.plan);
    ev_protocol_free(&s.proto);
    ev_buf_free(&s.bytes);
    free(s.js);
    free(s.ahead_ns);
    cJSON_Delete(s.kernel_receipts);
    return rc;
}

int ev_run_stage_default(const char *backend)
{
    return backend && !strcmp(backend, "cuda") ? 12 : 0;
}
