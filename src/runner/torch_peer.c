/*
 * torch_peer.c: the torch-compile job inside build/evident-worker
 * (torch_peer.h, ev_worker_torch).  The peer is kernels/peer_torch.py, one
 * python3 process per job, started here as a child in the worker's own
 * process group (the supervisor's watchdog and stop signal reach it), with
 * the same pinning (inherited affinity) and the same input bytes (written
 * to a file from kernels/inputs.h).  Its records are relayed byte for byte
 * (python's repr() number text is kept exactly); its end record is
 * replaced by the worker's own, after the validation records the worker
 * writes from the two output files the peer leaves (--out-first,
 * --out-final), checked by the same FP64 oracle as every other arm.
 * Record order of a measured torch job: the peer's hello, binding, cold,
 * flush, cold samples, calibration, warmup, hot samples, device; then validation
 * first and final; end.  The device record is the one line not relayed
 * byte for byte: the worker fills in what it read of the device through
 * the backend's watch while the peer measured (peer_watch below).
 */
#include "torch_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "job.h"
#include "validate.h"
#include "json.h"
#include "sha256.h"

#define PEER_RECORD_FD 7 /* the peer's --record-fd inside the child */
#define PEER_GATE_FD   8 /* the peer's --gate-fd inside the child (staged jobs) */

int ev_torch_env(const char *cache, const char *backend)
{
    if (cache && !strcmp(backend, "cuda")) {
        /* the run's compile cache: inductor's FX graph and Triton kernel
         * files, shared by the run's torch jobs as files only */
        char ind[4200], tri[4200];
        snprintf(ind, sizeof ind, "%s/inductor", cache);
        snprintf(tri, sizeof tri, "%s/triton", cache);
        mkdir(cache, 0755);
        if (setenv("TORCHINDUCTOR_CACHE_DIR", ind, 1) || setenv("TRITON_CACHE_DIR", tri, 1) ||
            setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1", 1))
            return -1;
    }
    /* python writes no bytecode beside kernels/peer_torch.py: kernels/ is
     * in the measurement closure, so a __pycache__ left there by one run
     * would be in the next run's snapshot (and change its tree hash) */
    if (setenv("PYTHONDONTWRITEBYTECODE", "1", 1))
        return -1;
    /* one reduction to compile: inductor's pool of compile processes costs
     * more to start and stop than it saves (on the H200 host a job's wall
     * went from 20.2-20.9 s to 13.2-14.3 s without it) */
    return setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 1) ? -1 : 0;
}

/* Writes hello, skip (reason) and end: a peer that cannot run here. */
static ev_status skip_job(const ev_worker_args *a, ev_rec_out *out, const char *reason, ev_err *err)
{
    cJSON *h = ev_rec_new(EV_REC_HELLO), *s, *e;
    char aff[1024];
    ev_status rc;

    if (!h)
        return ev_err_set(err, EV_ENOMEM, "hello: out of memory");
    ev_job_affinity(aff, sizeof aff);
    ev_json_add_i64(h, "version", 1);
    ev_json_add_i64(h, "pid", (int64_t)getpid());
    ev_json_add_str(h, "job_key", a->job_key);
    ev_json_add_str(h, "arm", a->arm);
    ev_json_add_str(h, "affinity", aff);
    if ((rc = ev_rec_write(out, h, err)))
        return rc;
    if ((s = ev_rec_new(EV_REC_SKIP)) != NULL)
        ev_json_add_str(s, "reason", reason);
    if ((rc = ev_rec_write(out, s, err)))
        return rc;
    if ((e = ev_rec_new(EV_REC_END)) != NULL)
        ev_json_add_i64(e, "records", out->count);
    return ev_rec_write(out, e, err);
}

/* Writes n bytes to a new file at path.  EV_EIO with the reason. */
static ev_status write_file(const char *path, const void *p, size_t n, ev_err *err)
{
    FILE *f = fopen(path, "wb");
    int bad;

    if (!f)
        return ev_err_set(err, EV_EIO, "torch peer: cannot create the input file: %s", strerror(errno));
    bad = (n && fwrite(p, 1, n, f) != n);
    bad |= fclose(f) != 0;
    return bad ? ev_err_set(err, EV_EIO, "torch peer: cannot write the input file") : EV_OK;
}

/* Reads the output file at path, which must hold exactly want bytes.
 * OUT: *bytes (malloc'd, at least 1 byte). */
static ev_status read_output(const char *path, size_t want, unsigned char **bytes, ev_err *err)
{
    ev_buf b = EV_BUF_INIT;
    ev_status rc = ev_read_file(path, &b, err);
    unsigned char *p;

    if (rc)
        return ev_err_set(err, EV_EIO, "torch peer: no output file %s", strrchr(path, '/') + 1);
    if (b.len != want) {
        ev_buf_free(&b);
        return ev_err_set(err, EV_EFORMAT, "torch peer: output file %s has %zu bytes, %zu expected",
                          strrchr(path, '/') + 1, b.len, want);
    }
    p = malloc(want ? want : 1);
    if (!p) {
        ev_buf_free(&b);
        return ev_err_set(err, EV_ENOMEM, "torch peer: out of memory");
    }
    if (want)
        memcpy(p, b.data, want);
    ev_buf_free(&b);
    *bytes = p;
    return EV_OK;
}

/*
 * The device's hygiene while the peer measures (docs/defenses.md): the worker
 * holds no context on the device, so it reads NVML through the backend's
 * watch (backend.h) as each of the peer's samples arrives, outside the
 * peer's timing, with the peer as the process whose context NVML lists;
 * the readings replace the unknowns of the peer's device record.  The
 * same rule as every arm's then holds the samples to them
 * (sample_rules.h).  No watch (the cpu backend, no NVML): every fact -1.
 */
typedef struct peer_watch {
    const ev_backend_ops *ops;
    void *w;                        /* the backend's watch, or NULL */
    int opened;                     /* watch_open was called: at the peer's hello, after its gate (before
                                       it nothing of this job touches the driver: "Staged processes") */
    int64_t pid;                    /* the peer's */
    int64_t *other[2], *reasons[2]; /* [0] hot, [1] cold: one per sample relayed */
    size_t n[2], cap[2];
} peer_watch;

/* The device's state now, as the watch reads it. */
static void watch_now(const peer_watch *pw, ev_device_state *st)
{
    if (pw->ops && pw->ops->watch_state)
        pw->ops->watch_state(pw->w, pw->pid, st);
    else
        ev_device_state_unknown(st);
}

/* After sample record r: one reading for its timing's arrays.  EV_ENOMEM. */
static ev_status watch_sample(peer_watch *pw, const cJSON *r, ev_err *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "timing");
    int k = cJSON_IsString(t) && !strcmp(t->valuestring, "cold");
    ev_device_state st;
    if (!cJSON_IsString(t))
        return EV_OK; /* a malformed sample: the supervisor refuses it */
    if (pw->n[k] == pw->cap[k]) {
        size_t cap = pw->cap[k] ? 2 * pw->cap[k] : 16;
        int64_t *o = realloc(pw->other[k], cap * sizeof *o);
        if (o)
            pw->other[k] = o;
        int64_t *q = o ? realloc(pw->reasons[k], cap * sizeof *q) : NULL;
        if (!o || !q)
            return ev_err_set(err, EV_ENOMEM, "torch peer: out of memory");
        pw->reasons[k] = q;
        pw->cap[k] = cap;
    }
    watch_now(pw, &st);
    pw->other[k][pw->n[k]] = st.other_processes;
    pw->reasons[k][pw->n[k]++] = st.throttle_reasons;
    return EV_OK;
}

/* Sets o[key] to v, in place where the key is there. */
static void put_item(cJSON *o, const char *key, cJSON *v)
{
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

/* An array of n integers (NULL when out of memory). */
static cJSON *int_array(const int64_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        if (ev_json_push_i64(a, v[i])) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* The peer's device record d with the watch's readings in place of its
 * unknowns: the device's state now, and one reading per sample. */
static void watch_device(const peer_watch *pw, cJSON *d)
{
    ev_device_state st;
    watch_now(pw, &st);
    put_item(d, "other_processes", ev_json_i64(st.other_processes));
    put_item(d, "self_seen", cJSON_CreateBool(st.self_seen));
    put_item(d, "throttle_reasons", ev_json_i64(st.throttle_reasons));
    put_item(d, "ecc", ev_json_i64(st.ecc));
    put_item(d, "mig", ev_json_i64(st.mig));
    put_item(d, "persistence", ev_json_i64(st.persistence));
    put_item(d, "hot_other_processes", int_array(pw->other[0], pw->n[0]));
    put_item(d, "hot_throttle_reasons", int_array(pw->reasons[0], pw->n[0]));
    put_item(d, "cold_other_processes", int_array(pw->other[1], pw->n[1]));
    put_item(d, "cold_throttle_reasons", int_array(pw->reasons[1], pw->n[1]));
}

/* What the relay holds the peer's plants to (kernels/plants.h): the
 * attempt's plants (their configuration made at the peer's hello, from
 * its device's cache), the input's bytes, the protocol. */
typedef struct peer_plants {
    ev_job_plants *pl;
    const ev_protocol *p;
    const ev_shape *s;
    size_t in_len;
    int configured;    /* the hello's cache size made pl->cfg */
    int failed;        /* an op check the peer reported failed */
    uint64_t last_hot; /* the last hot sample's replay_end: the kept output's replay */
} peer_plants;

/* The peer's hello: its device's cache (L2) makes V and the plants'
 * configuration, as the worker's own jobs make them. */
static void plants_hello(peer_plants *pp, const cJSON *r)
{
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(r, "device");
    int64_t cache = 0;
    ev_err e;
    if (ev_json_get_i64(dev, "cache_bytes", &cache, &e))
        cache = 0;
    ev_plant_config(&pp->pl->cfg, pp->pl->seed, pp->s,
                    ev_plant_variants((int64_t)pp->in_len, cache, pp->p->ref_cuda.variant_budget_bytes,
                                      pp->p->ops_per_graph),
                    pp->p->ops_per_graph);
    pp->configured = 1;
}

/* An op check of the peer's: its tag must be the seed's for its
 * replay_end exactly when it says passed (the peer reads the check state
 * through its library; the worker holds it to the seed it drew).
 * EV_EVERIFY naming the sample when it is not. */
static ev_status plants_opcheck(peer_plants *pp, const cJSON *r, ev_err *err)
{
    ev_rec_row x;
    ev_err e = {""};
    char want[17];
    if (ev_rec_decode(EV_REC_OPCHECK, r, &x, &e))
        return EV_OK; /* malformed: the supervisor refuses it */
    snprintf(want, sizeof want, "%016llx",
             (unsigned long long)ev_job_plants_want(pp->pl, (uint64_t)x.opcheck.replay_end));
    if (!pp->configured || x.opcheck.passed != !strcmp(x.opcheck.tag, want) ||
        x.opcheck.variants != pp->pl->cfg.variants || x.opcheck.rows != pp->pl->cfg.m)
        return ev_err_set(
            err, EV_EVERIFY,
            "torch peer: its op check of %s sample %lld (tag %s, passed %s, %lld variants) is not "
            "the seed's (tag %s after %lld replays, %lld variants)",
            x.opcheck.timing, (long long)x.opcheck.sample_index, x.opcheck.tag,
            x.opcheck.passed ? "true" : "false", (long long)x.opcheck.variants, want,
            (long long)x.opcheck.replay_end, (long long)pp->pl->cfg.variants);
    if (!x.opcheck.passed)
        pp->failed = 1;
    if (!strcmp(x.opcheck.timing, "hot"))
        pp->last_hot = (uint64_t)x.opcheck.replay_end;
    return EV_OK;
}

/*
 * Reads the peer's record stream from fd until EOF, relaying every line
 * but its end record, byte for byte, except its device record, which goes
 * out with the watch's readings (watch_device) and the plants' seed and
 * shape (ev_job_plants_json); its op checks are held to the seed
 * (plants_opcheck).  OUT: *ended (an end record with the right count came
 * last), *skipped (a skip record came).  EV_EIO when the relay fails;
 * EV_EVERIFY for an op check that is not the seed's.
 */
static ev_status relay(int fd, peer_watch *pw, peer_plants *pp, ev_rec_out *out, int *ended, int *skipped,
                       ev_err *err)
{
    ev_buf line = EV_BUF_INIT;
    char chunk[65536];
    int64_t relayed = 0;
    ev_status rc = EV_OK;

    *ended = *skipped = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        char *nl;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (ev_buf_append(&line, chunk, (size_t)n)) {
            rc = ev_err_set(err, EV_ENOMEM, "torch peer: out of memory");
            goto out;
        }
        while (line.len && (nl = memchr(line.data, '\n', line.len)) != NULL) {
            size_t len = (size_t)(nl - line.data);
            cJSON *r = NULL;
            ev_rec_type t;
            ev_err pe;
            if (ev_rec_parse(line.data, len, &r, &t, &pe) == EV_OK && t == EV_REC_END) {
                int64_t cnt;
                *ended = !ev_json_get_i64(r, "records", &cnt, &pe) && cnt == relayed;
            } else {
                cJSON *d = r && t == EV_REC_DEVICE ? cJSON_Duplicate(r, 1) : NULL;
                if (r && t == EV_REC_SKIP)
                    *skipped = 1;
                if (*ended)
                    *ended = 0; /* something after end: the stream is broken */
                if (d) {
                    watch_device(pw, d);
                    cJSON_DeleteItemFromObjectCaseSensitive(d, "plants");
                    ev_job_plants_json(d, pp->pl);
                    rc = ev_rec_write(out, d, err);
                } else {
                    rc = ev_rec_relay(out, line.data, len, err);
                }
                if (!rc && r && t == EV_REC_SAMPLE)
                    rc = watch_sample(pw, r, err);
                if (!rc && r && t == EV_REC_HELLO && !pp->configured)
                    plants_hello(pp, r);
                if (!rc && r && t == EV_REC_OPCHECK)
                    rc = plants_opcheck(pp, r, err);
                if (!rc && r && t == EV_REC_HELLO && !pw->opened) {
                    ev_err ignored;
                    pw->opened = 1;
                    if (pw->ops->watch_open && pw->ops->watch_open(0, &pw->w, &ignored) != EV_OK)
                        pw->w = NULL; /* nothing to watch: every fact unknown */
                }
                relayed++;
            }
            cJSON_Delete(r);
            memmove(line.data, nl + 1, line.len - len - 1);
            line.len -= len + 1;
            if (rc)
                goto out;
        }
    }
    if (line.len) { /* a last line without its newline: relay it as it is */
        rc = ev_rec_relay(out, line.data, line.len, err);
        *ended = 0;
    }
out:
    ev_buf_free(&line);
    return rc;
}

/* The peer's library of plants and checks, build/libevident_ops.so,
 * beside this worker's executable (make builds it with the cuda backend;
 * make install puts it beside the installed worker).  OUT: path[cap].  On
 * the cpu backend the peer skips before it loads anything: "".  EV_EPROC
 * when it is not there. */
static ev_status ops_lib(char *path, size_t cap, const char *backend, ev_err *err)
{
    char self[4001];
    ssize_t n;
    char *slash;
    path[0] = '\0';
    if (strcmp(backend, "cuda"))
        return EV_OK;
    if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) <= 0)
        return ev_err_set(err, EV_EPROC, "torch peer: cannot find this worker's own path");
    self[n] = '\0';
    if ((slash = strrchr(self, '/')) != NULL)
        *slash = '\0';
    if ((size_t)snprintf(path, cap, "%.4000s/libevident_ops.so", self) >= cap || access(path, R_OK))
        return ev_err_set(
            err, EV_EPROC,
            "torch peer: %s is missing: the torch-compile arm runs under the same plants and checks "
            "as every arm (build it with nvcc: make)",
            path);
    return EV_OK;
}

/* The files a torch job shares with its peer, in a directory of its own
 * under $TMPDIR (else /tmp): the input, the plants, and the outputs the
 * peer writes (the first launch's, the final one's, the kept op's). */
typedef struct peer_files {
    char dir[512], in[600], first[600], final[600], plants[600], kept[600];
    int made; /* dir exists: remove it and its files */
} peer_files;

/* Makes the job's directory and names its files.  EV_EIO. */
static ev_status peer_files_make(peer_files *f, ev_err *err)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(f->dir, sizeof f->dir, "%s/evident-torch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(f->dir))
        return ev_err_set(err, EV_EIO, "torch peer: mkdtemp: %s", strerror(errno));
    f->made = 1;
    snprintf(f->in, sizeof f->in, "%s/input.bin", f->dir);
    snprintf(f->first, sizeof f->first, "%s/out-first.bin", f->dir);
    snprintf(f->final, sizeof f->final, "%s/out-final.bin", f->dir);
    snprintf(f->plants, sizeof f->plants, "%s/plants.bin", f->dir);
    snprintf(f->kept, sizeof f->kept, "%s/out-kept.bin", f->dir);
    return EV_OK;
}

/* Removes the job's files and directory, where made. */
static void peer_files_remove(const peer_files *f)
{
    if (!f->made)
        return;
    unlink(f->in);
    unlink(f->first);
    unlink(f->final);
    unlink(f->plants);
    unlink(f->kept);
    rmdir(f->dir);
}

/* The peer's command line (kernels/peer_torch.py's options), its strings
 * kept here, and when it was spawned. */
typedef struct peer_cmd {
    char lib[4096];
    char rows[24], cols[24], stride[24], ops[24], samples[24], cold[24], warm[40], target[40], flush[24],
        fd[8], spawn[32], gate[8], ahead[24];
    char *argv[48];
    struct timespec t_spawn; /* CLOCK_REALTIME */
} peer_cmd;

/* Fills c->argv for the job a on shape s with the files f (c->lib already
 * holds the ops library's path), and notes the spawn time it passes. */
static void peer_argv(peer_cmd *c, const ev_worker_args *a, const ev_shape *s, const peer_files *f)
{
    const ev_protocol *p = a->proto;
    char **v = c->argv;
    int ac = 0;

    snprintf(c->rows, sizeof c->rows, "%lld", (long long)s->rows);
    snprintf(c->cols, sizeof c->cols, "%lld", (long long)s->cols);
    snprintf(c->stride, sizeof c->stride, "%lld", (long long)s->stride);
    snprintf(c->ops, sizeof c->ops, "%lld", (long long)p->ops_per_graph);
    snprintf(c->samples, sizeof c->samples, "%lld", (long long)p->samples);
    snprintf(c->cold, sizeof c->cold, "%lld", (long long)p->cold_samples);
    snprintf(c->warm, sizeof c->warm, "%.17g", p->warmup_ms);
    snprintf(c->target, sizeof c->target, "%.17g", p->target_sample_ms);
    snprintf(c->flush, sizeof c->flush, "%lld", (long long)p->ref_cuda.flush_cache_multiple);
    snprintf(c->fd, sizeof c->fd, "%d", PEER_RECORD_FD);
    v[ac++] = (char *)(a->python ? a->python : "python3");
    v[ac++] = (char *)a->peer_script;
    v[ac++] = "--backend";
    v[ac++] = (char *)a->ops->name;
    v[ac++] = "--input";
    v[ac++] = (char *)f->in;
    v[ac++] = "--op";
    v[ac++] = (char *)ev_op_name(s->op);
    v[ac++] = "--dtype";
    v[ac++] = (char *)ev_dtype_name(s->dtype);
    v[ac++] = "--rows";
    v[ac++] = c->rows;
    v[ac++] = "--cols";
    v[ac++] = c->cols;
    v[ac++] = "--stride";
    v[ac++] = c->stride;
    v[ac++] = "--job-key";
    v[ac++] = (char *)a->job_key;
    v[ac++] = "--record-fd";
    v[ac++] = c->fd;
    v[ac++] = "--out-first";
    v[ac++] = (char *)f->first;
    v[ac++] = "--out-final";
    v[ac++] = (char *)f->final;
    v[ac++] = "--ops";
    v[ac++] = c->ops;
    v[ac++] = "--samples";
    v[ac++] = c->samples;
    v[ac++] = "--cold-samples";
    v[ac++] = c->cold;
    v[ac++] = "--warmup-ms";
    v[ac++] = c->warm;
    v[ac++] = "--target-ms";
    v[ac++] = c->target;
    v[ac++] = "--flush-multiple";
    v[ac++] = c->flush;
    v[ac++] = "--plants";
    v[ac++] = (char *)f->plants;
    v[ac++] = "--ops-lib";
    v[ac++] = c->lib;
    v[ac++] = "--out-kept";
    v[ac++] = (char *)f->kept;
    if (a->gate_fd >= 0) {
        snprintf(c->gate, sizeof c->gate, "%d", PEER_GATE_FD);
        v[ac++] = "--gate-fd";
        v[ac++] = c->gate;
    }
    if (a->compile_ahead_ns > 0) {
        snprintf(c->ahead, sizeof c->ahead, "%lld", (long long)a->compile_ahead_ns);
        v[ac++] = "--compile-ahead-ns";
        v[ac++] = c->ahead;
    }
    clock_gettime(CLOCK_REALTIME, &c->t_spawn);
    snprintf(c->spawn, sizeof c->spawn, "%lld",
             (long long)c->t_spawn.tv_sec * 1000000000LL + c->t_spawn.tv_nsec);
    v[ac++] = "--spawn-ns";
    v[ac++] = c->spawn;
    v[ac] = NULL;
}

/* What running the peer gave. */
typedef struct peer_ran {
    int status;            /* as waitpid gives it */
    int exec_errno;        /* the exec's failure, 0 when it ran */
    int ended, skipped;    /* relay's */
    struct timespec t_end; /* CLOCK_MONOTONIC: its stream's end */
} peer_ran;

/* Spawns the peer (c->argv): it never outlives this worker, writes its
 * records only to its own pipe and holds the gate; relays its records
 * (relay) until its stream ends, then reaps it.  OUT: *r.  EV_EPROC for a
 * pipe or fork that failed; relay's failures. */
static ev_status peer_run(const ev_worker_args *a, ev_rec_out *out, peer_cmd *c, peer_watch *pw,
                          peer_plants *pp, peer_ran *r, ev_err *err)
{
    int rp[2] = {-1, -1}, xp[2] = {-1, -1};
    pid_t pid, parent;
    ev_status rc = EV_OK;

    if (pipe2(rp, O_CLOEXEC) || pipe2(xp, O_CLOEXEC)) {
        rc = ev_err_set(err, EV_EPROC, "torch peer: pipe: %s", strerror(errno));
        goto out;
    }
    parent = getpid();
    pid = fork();
    if (pid < 0) {
        rc = ev_err_set(err, EV_EPROC, "torch peer: fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int e;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
            _exit(125); /* the peer never outlives its worker */
        if (out->fd != PEER_RECORD_FD)
            close(out->fd); /* the peer writes only to its own pipe */
        if (rp[1] == PEER_RECORD_FD ? fcntl(rp[1], F_SETFD, 0) < 0 : dup2(rp[1], PEER_RECORD_FD) < 0)
            _exit(127); /* (dup2 onto itself would leave close-on-exec set) */
        if (a->gate_fd >= 0 && (a->gate_fd == PEER_GATE_FD ? fcntl(a->gate_fd, F_SETFD, 0) < 0
                                                           : dup2(a->gate_fd, PEER_GATE_FD) < 0))
            _exit(127);
        if (ev_torch_env(a->torch_cache, a->ops->name))
            _exit(127);
        execvp(c->argv[0], c->argv);
        e = errno;
        if (write(xp[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(rp[1]);
    close(xp[1]);
    rp[1] = xp[1] = -1;
    if (a->gate_fd >= 0)
        close(a->gate_fd); /* the peer holds the gate now */
    if (read(xp[0], &r->exec_errno, sizeof r->exec_errno) != (ssize_t)sizeof r->exec_errno)
        r->exec_errno = 0; /* the exec succeeded (the pipe closed on exec) */
    if (!r->exec_errno) {
        pw->ops = a->ops;
        pw->pid = (int64_t)pid;
        rc = relay(rp[0], pw, pp, out, &r->ended, &r->skipped, err);
    }
    clock_gettime(CLOCK_MONOTONIC, &r->t_end);
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
out:
    for (int i = 0; i < 2; i++) {
        if (rp[i] >= 0)
            close(rp[i]);
        if (xp[i] >= 0)
            close(xp[i]);
    }
    return rc;
}

/* How the peer ended: its teardown time in the job's stderr tail (where a
 * torch job's time goes, docs/runner.md), then EV_EPROC unless it exited 0
 * after an end record with the right count. */
static ev_status peer_exit(const peer_cmd *c, const peer_ran *r, ev_err *err)
{
    struct timespec t_exit, rt;

    clock_gettime(CLOCK_MONOTONIC, &t_exit);
    clock_gettime(CLOCK_REALTIME, &rt);
    fprintf(stderr,
            "evident-worker: the torch peer was started at %s ns and exited at %lld ns, %.3f s after its "
            "last "
            "record\n",
            c->spawn, (long long)rt.tv_sec * 1000000000LL + rt.tv_nsec,
            (double)(t_exit.tv_sec - r->t_end.tv_sec) + (double)(t_exit.tv_nsec - r->t_end.tv_nsec) / 1e9);
    if (WIFSIGNALED(r->status))
        return ev_err_set(err, EV_EPROC, "torch peer killed by signal %d", WTERMSIG(r->status));
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
        return ev_err_set(err, EV_EPROC, "torch peer exited with status %d", WEXITSTATUS(r->status));
    if (!r->ended)
        return ev_err_set(err, EV_EPROC,
                          "torch peer: its record stream did not end with a correct end record");
    return EV_OK;
}

/* The peer's outputs validated as every arm's are: its first launch's,
 * then (unless an op check failed: the job fails there) its kept op's on
 * the planted input, then its final launch's, whose hash must equal the
 * first's (replay determinism). */
static ev_status peer_outputs(const ev_worker_args *a, ev_rec_out *out, const peer_files *f,
                              const ev_shape *shape, const void *input, const ev_oracle_row *expect,
                              ev_job_plants *pl, const peer_plants *pp, size_t out_len, ev_err *err)
{
    const ev_protocol *p = a->proto;
    unsigned char *o1 = NULL, *o2 = NULL, *o3 = NULL;
    ev_validation v1, v2;
    char h1[65], h2[65];
    int stop = pp->failed;
    ev_status rc;

    if ((rc = read_output(f->first, out_len, &o1, err)))
        goto out;
    ev_output_check(p, shape, input, expect, o1, &v1);
    if ((rc = ev_job_validation(out, "first", &v1, o1, out_len, 1, h1, err)))
        goto out;
    if (stop) { /* an op check failed (the peer said what on stderr): the job fails there */
        ev_validation bad = {0, 0.0, 0.0, 1, 0};
        if ((rc = ev_job_validation(out, "final", &bad, o1, out_len, 0, h2, err)))
            goto out;
    } else if ((rc = read_output(f->kept, out_len, &o3, err)) ||
               (rc = ev_job_kept(out, p, a->arm, pl, shape, input, expect, o3, out_len, pp->last_hot, &stop,
                                 err))) {
        goto out;
    }
    if (!stop) {
        if ((rc = read_output(f->final, out_len, &o2, err)))
            goto out;
        ev_output_check(p, shape, input, expect, o2, &v2);
        if ((rc = ev_sha256_hex(o2, out_len, h2)))
            goto out;
        if (strcmp(h1, h2))
            v2.passed = 0; /* replay determinism broken */
        rc = ev_job_validation(out, "final", &v2, o2, out_len, 0, h2, err);
    }
out:
    free(o1);
    free(o2);
    free(o3);
    return rc;
}

/* A torch-compile job (torch_peer.h): the input, the oracle and the
 * plants prepared here (CPU only, before the gate: the peer runs under the
 * plants and checks every arm runs under), the peer run and its records
 * relayed, then its exit, the worker's own share of the job's time, and
 * its outputs validated. */
ev_status ev_worker_torch(const ev_worker_args *a, ev_rec_out *out, ev_err *err)
{
    const ev_protocol *p = a->proto;
    peer_files f;
    peer_cmd c;
    peer_ran r;
    ev_shape shape;
    void *input = NULL;
    ev_oracle_row *expect = NULL;
    size_t in_len = 0, out_len;
    peer_watch pw;
    ev_job_plants pl;
    peer_plants pp;
    ev_status rc;

    memset(&f, 0, sizeof f);
    memset(&r, 0, sizeof r);
    memset(&pw, 0, sizeof pw);
    memset(&pl, 0, sizeof pl);
    memset(&pp, 0, sizeof pp);
    if ((rc = ev_job_input(p, a->case_index, &shape, &input, &in_len, err)))
        return rc;
    out_len = (size_t)shape.rows * ev_dtype_size(shape.dtype);
    if ((rc = ev_job_expect(&shape, input, &expect, err)) ||
        (rc = ev_job_plants_prepare(&pl, p, &shape, expect, err)))
        goto out;
    pl.on = 1;
    pp.pl = &pl;
    pp.p = p;
    pp.s = &shape;
    pp.in_len = in_len;
    if ((rc = peer_files_make(&f, err)) || (rc = write_file(f.in, input, in_len, err)) ||
        (rc = ev_job_plants_file(f.plants, &pl, &shape, p->ops_per_graph, p->ref_cuda.variant_budget_bytes,
                                 err)) ||
        (rc = ops_lib(c.lib, sizeof c.lib, a->ops->name, err)))
        goto out;
    peer_argv(&c, a, &shape, &f);
    if (!a->peer_script) {
        char why[160];
        snprintf(why, sizeof why, "%s: no peer script given to the worker", a->arm);
        rc = skip_job(a, out, why, err);
        goto out;
    }
    if ((rc = peer_run(a, out, &c, &pw, &pp, &r, err)))
        goto out;
    if (r.exec_errno) {
        char why[512];
        snprintf(why, sizeof why, "%s: cannot run %s: %s", a->arm, c.argv[0], strerror(r.exec_errno));
        rc = skip_job(a, out, why, err);
        goto out;
    }
    if ((rc = peer_exit(&c, &r, err)))
        goto out;
    if (!r.skipped) {
        /* the worker's own share before the peer started (process start,
         * the input bytes and their file) */
        int64_t spawned = (int64_t)c.t_spawn.tv_sec * 1000000000LL + c.t_spawn.tv_nsec;
        if ((a->spawn_ns > 0 && a->entered_ns >= a->spawn_ns &&
             (rc = ev_job_cold(out, "process-start", a->entered_ns - a->spawn_ns, err))) ||
            (a->entered_ns > 0 && (rc = ev_job_cold(out, "prep", spawned - a->entered_ns, err))) ||
            (rc = peer_outputs(a, out, &f, &shape, input, expect, &pl, &pp, out_len, err)))
            goto out;
    }
    {
        cJSON *e = ev_rec_new(EV_REC_END);
        if (e)
            ev_json_add_i64(e, "records", out->count);
        rc = ev_rec_write(out, e, err);
    }
out:
    peer_files_remove(&f);
    if (pw.ops && pw.ops->watch_close)
        pw.ops->watch_close(pw.w);
    for (int k = 0; k < 2; k++) {
        free(pw.other[k]);
        free(pw.reasons[k]);
    }
    free(input);
    free(expect);
    free(pl.rows);
    return rc;
}
