/*
 * check_bundle.c: tests of the bundle module (src/bundle/): the
 * deterministic zip writer, the exporter over a real store built through
 * the store API in a temporary directory, the report, and the two
 * commands (build/evident export and report, run as real processes).
 *
 * The fixture store holds a small run: four calibration cases (two
 * geometries) and one holdout case, arms default/rows1/rows2 in the main
 * phase, auto in the policy phase, a recheck per case, the floor and
 * ceiling reference arms, one skipped peer, one job that fails with an
 * exit code and is rescued, one job interrupted and then resumed, and one
 * job whose output fails validation.
 */
#include <check.h>

#include "progress.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "names.h"
#include "samples.h"
#include "buf.h"
#include "csv.h"
#include "json.h"
#include "sha256.h"
#include "stats.h"
#include "bundle/export.h"
#include "evidence/figures.h"
#include "figures_rebuild.h"
#include "run_prog.h"
#include "member.h"
#include "evidence/report.h"
#include "bundle/zipwrite.h"
#include "store/store.h"

/* ---- fixture ---------------------------------------------------------------- */

static char tmpdir[256];
static char dbpath[300];

/* The number of samples the fixture stored, and of output members. */
static int64_t fixture_samples;
static int64_t fixture_outputs;

static const char protocol_text[] =
    "{\n  \"name\": \"bundle test\",\n  \"seed\": 7,\n  \"decision_threshold\": 0.05\n}\n";

static const char kernel_text[] = "/* reduce.c: a kernel as snapshotted */\nint k(void) { return 1; }\n";
static const char buildmk_text[] = "KERNEL_CFLAGS := -O3\n";
static const char default_text[] = "/* reduce_default.cuh: the default entry as snapshotted */\n";

#define CHK(expr)                                                                                            \
    do {                                                                                                     \
        ev_status rc_ = (expr);                                                                              \
        ck_assert_msg(rc_ == EV_OK, "%s: %s (%s)", #expr, ev_strerror(rc_), err.msg);                        \
    } while (0)

/* Per-case medians (us per op) the fixture's hot samples centre on. */
typedef struct fcase {
    const char *op, *dtype, *role;
    int64_t rows, cols, B;
    double us[3]; /* default, rows1, rows2 */
} fcase;

static const fcase fcases[] = {
    {"reduce_sum", "fp16", "calibration", 17, 1024, 4, {2.1989, 0.9235, 1.3005}},
    {"reduce_max", "fp16", "calibration", 17, 1024, 4, {2.1641, 0.9298, 1.4173}},
    {"reduce_sum", "fp16", "calibration", 65, 2048, 8, {6.3262, 1.1212, 2.4183}},
    {"reduce_max", "fp16", "calibration", 65, 2048, 8, {6.3705, 1.1252, 2.4180}},
    {"reduce_sum", "bf16", "holdout", 128, 2048, 8, {1.6550, 1.3524, 1.4814}},
};
#define N_FCASES (sizeof fcases / sizeof fcases[0])

/* How a fixture attempt ends. */
typedef enum fend { END_OK, END_EXIT, END_SKIP, END_INTERRUPTED, END_BADOUT } fend;

/* Adds one attempt of job_id with its process record and, unless it
 * failed early, every receipt and 7 hot + 3 cold samples centred on us. */
static void add_attempt(ev_store *s, int64_t job_id, int64_t attempt, int64_t inv, const fcase *c, double us,
                        fend end, uint64_t salt)
{
    ev_err err = {{0}};
    int64_t aid;
    CHK(ev_store_add_attempt(s, job_id, attempt, inv, 1000000000 + (int64_t)salt, &aid, &err));
    ev_process_row p;
    memset(&p, 0, sizeof p);
    p.pid = 4000 + (int64_t)salt;
    p.has_exit = 1;
    p.exit_code = 0;
    p.record_count = 30;
    p.records_ok = 1;
    p.affinity = "0-3";
    p.stderr_tail = "";
    p.ended_ns = 2000000000 + (int64_t)salt;
    p.wall_ns = 123456789;
    if (end == END_SKIP) {
        p.skipped = 1;
        p.skip_reason = "cub: no CUDA device on this host (/usr/local/cuda/lib64/libcudart.so)";
        p.record_count = 3; /* hello, skip, end (store/outcome.h, ev_record_count_problem) */
        CHK(ev_store_add_process(s, aid, &p, &err));
        return;
    }
    if (end == END_EXIT) {
        p.exit_code = 3;
        p.record_count = 4;
        p.records_ok = 0;
        p.protocol_error = "no end record";
        p.stderr_tail = "worker: failed at /home/builder/evident/src/runner/worker.c:10";
    }
    if (end == END_INTERRUPTED) {
        p.interrupted = 1;
        p.has_exit = 0;
        p.has_signal = 1;
        p.signal = 2;
    }
    if (c) {
        ev_binding_row b = {c->op,       c->dtype, c->rows, c->cols, c->cols, c->rows * c->cols * 2,
                            c->rows * 2, 256,      256,     4};
        CHK(ev_store_add_binding(s, aid, &b, &err));
    }
    CHK(ev_store_add_warmup(s, aid, 500.0, 512.25, 1234, &err));
    CHK(ev_store_add_calibration(s, aid, 0, 10, 1.5, 0, 100.0, &err));
    CHK(ev_store_add_calibration(s, aid, 1, 700, 99.75, 1, 100.0, &err));
    CHK(ev_store_add_cold_timing(s, aid, "first-launch", 1500000 + (int64_t)salt, &err));
    CHK(ev_store_add_flush(s, aid, 64 << 20, 32 << 20, &err));

    /* output bytes: deterministic per attempt */
    unsigned char out[64];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (unsigned char)(i * 7 + salt);
    char hex[65];
    CHK(ev_sha256_hex(out, sizeof out, hex));
    ev_validation_row v = {
        "first", end != END_BADOUT, end == END_BADOUT ? 0.5 : 0.0, 1e-3, end == END_BADOUT ? 3 : 0, hex,
        out,     sizeof out};
    CHK(ev_store_add_validation(s, aid, &v, &err));
    fixture_outputs++;
    if (end == END_EXIT || end == END_INTERRUPTED) {
        CHK(ev_store_add_process(s, aid, &p, &err));
        if (end == END_INTERRUPTED) {
            ev_sample_row r = {"hot", 0, 700, 100, us * 70.0 * (1.0 + 1e-3), -1};
            CHK(ev_store_add_sample(s, aid, &r, &err));
            fixture_samples++;
        }
        return;
    }
    ev_node_row n = {0, "ev_reduce_sum_rows", {4, 1, 1}, {c ? c->B : 1, 1, 1}};
    CHK(ev_store_add_graph_node(s, aid, &n, &err));
    for (int i = 0; i < 7; i++) {
        /* elapsed_ms for 700 replays x 100 ops = us * 70 ms, jittered */
        double jitter = 1.0 + 0.001 * (double)((i * 3 + (int)salt) % 7 - 3);
        ev_sample_row r = {"hot", i, 700, 100, us * 70.0 * jitter, i == 0 ? -1 : 1755};
        CHK(ev_store_add_sample(s, aid, &r, &err));
        fixture_samples++;
    }
    for (int i = 0; i < 3; i++) {
        ev_sample_row r = {"cold", i, 1, 1, us * 1e-3 * (2.0 + 0.1 * i), -1};
        CHK(ev_store_add_sample(s, aid, &r, &err));
        fixture_samples++;
    }
    ev_validation_row f = {
        "final", end != END_BADOUT, end == END_BADOUT ? 0.5 : 0.0, 1e-3, end == END_BADOUT ? 3 : 0, hex, NULL,
        0};
    CHK(ev_store_add_validation(s, aid, &f, &err));
    /* hello and end, and one record per row: binding, warm-up, two
     * calibrations, a cold timing, a flush, two validations, a node, 7 hot
     * and 3 cold samples (store/outcome.h, ev_record_count_problem) */
    p.record_count = 2 + (c ? 1 : 0) + 18;
    CHK(ev_store_add_process(s, aid, &p, &err));
}

/* Adds a job and returns its id. */
static int64_t add_job(ev_store *s, int64_t run, const char *phase, int64_t case_index, const char *arm,
                       const char *label, int64_t retry_of, int64_t order)
{
    ev_err err = {{0}};
    char key[96];
    if (case_index >= 0)
        snprintf(key, sizeof key, "%s/%" PRId64 "/%s/%s", phase, case_index, arm, label);
    else
        snprintf(key, sizeof key, "%s/-/%s/%s", phase, arm, label);
    ev_job_row j = {key, phase, case_index, arm, label, retry_of, order};
    int64_t id;
    CHK(ev_store_add_job(s, run, &j, &id, &err));
    return id;
}

/* Builds the fixture store at dbpath. */
static void build_store(void)
{
    ev_err err = {{0}};
    ev_store *s = NULL;
    fixture_samples = 0;
    fixture_outputs = 0;
    CHK(ev_store_open(dbpath, EV_STORE_CREATE, &s, &err));
    char pid[65];
    CHK(ev_sha256_hex(protocol_text, strlen(protocol_text), pid));
    ev_run_row run = {pid,
                      protocol_text,
                      strlen(protocol_text),
                      "/home/builder/evident/protocols/test.json",
                      "cpu",
                      7,
                      "0123456789abcdef0123456789abcdef01234567",
                      0,
                      "recorded-tree-hash",
                      1700000000123456789};
    int64_t run_id, inv1, inv2;
    CHK(ev_store_add_run(s, &run, &run_id, &err));
    CHK(ev_store_add_invocation(s, run_id, 1700000000200000000, 0, "hosthash-1", &inv1, &err));
    const char *env = "{\"backend\":\"cpu\",\"compiler\":\"gcc 12.2.0\",\"cflags\":\"-O2\",\"threads\":4,"
                      "\"default_entry_source\":\"kernels/reduce.c\",\"device\":{\"name\":\"cpu\",\"sms\":4,"
                      "\"cache_bytes\":1048576,\"clock_ghz\":0.1,\"driver_version\":\"\"}}";
    char prof[65];
    CHK(ev_sha256_hex(env, strlen(env), prof));
    CHK(ev_store_add_environment(s, inv1, prof, env, &err));

    char h1[65], h2[65];
    CHK(ev_sha256_hex(kernel_text, strlen(kernel_text), h1));
    CHK(ev_sha256_hex(buildmk_text, strlen(buildmk_text), h2));
    CHK(ev_store_add_source(s, run_id, "kernels/reduce.c", h1, kernel_text, strlen(kernel_text), &err));
    CHK(ev_store_add_source(s, run_id, "kernels/build.mk", h2, buildmk_text, strlen(buildmk_text), &err));
    char h3[65];
    CHK(ev_sha256_hex(default_text, strlen(default_text), h3));
    CHK(ev_store_add_source(s, run_id, "kernels/reduce_default.cuh", h3, default_text, strlen(default_text),
                            &err));

    for (size_t i = 0; i < N_FCASES; i++) {
        const fcase *c = &fcases[i];
        ev_case_row cr = {(int64_t)i, c->op, c->rows, c->cols, c->cols, c->dtype, c->B, c->role};
        CHK(ev_store_add_case(s, run_id, &cr, &err));
    }
    static const char *const arms[3] = {"default", "rows1", "rows2"};
    int64_t order = 0;
    uint64_t salt = 1;
    int64_t failed_job = 0, interrupted_job = 0;
    for (size_t i = 0; i < N_FCASES; i++) {
        for (int k = 0; k < 3; k++) {
            int64_t id = add_job(s, run_id, "main", (int64_t)i, arms[k], "initial", 0, order++);
            fend end = END_OK;
            if (i == 2 && k == 1)
                end = END_EXIT; /* rescued below */
            if (i == 1 && k == 2)
                end = END_INTERRUPTED; /* resumed below */
            if (end == END_EXIT)
                failed_job = id;
            if (end == END_INTERRUPTED)
                interrupted_job = id;
            add_attempt(s, id, 1, inv1, &fcases[i], fcases[i].us[k], end, salt++);
        }
        int64_t cub = add_job(s, run_id, "main", (int64_t)i, "cub", "initial", 0, order++);
        add_attempt(s, cub, 1, inv1, &fcases[i], 0, END_SKIP, salt++);
    }
    int64_t floor_id = add_job(s, run_id, "main", -1, "floor", "initial", 0, order++);
    add_attempt(s, floor_id, 1, inv1, NULL, 0.5, END_OK, salt++);
    int64_t ceil_id = add_job(s, run_id, "main", -1, "ceiling", "initial", 0, order++);
    add_attempt(s, ceil_id, 1, inv1, NULL, 900.0, END_OK, salt++);

    /* resume: a second invocation finishes the interrupted job */
    CHK(ev_store_add_invocation(s, run_id, 1700000000300000000, 1, "hosthash-1", &inv2, &err));
    CHK(ev_store_add_environment(s, inv2, prof, env, &err));
    add_attempt(s, interrupted_job, 2, inv2, &fcases[1], fcases[1].us[2], END_OK, salt++);

    for (size_t i = 0; i < N_FCASES; i++) {
        int64_t id = add_job(s, run_id, "policy", (int64_t)i, "auto", "initial", 0, (int64_t)i);
        add_attempt(s, id, 1, inv2, &fcases[i], fcases[i].us[1] * 1.01, i == 4 ? END_BADOUT : END_OK, salt++);
    }
    int64_t retry = add_job(s, run_id, "rescue", 2, "rows1", "retry-1", failed_job, 0);
    add_attempt(s, retry, 1, inv2, &fcases[2], fcases[2].us[1], END_OK, salt++);
    for (size_t i = 0; i < N_FCASES; i++) {
        int64_t id = add_job(s, run_id, "recheck", (int64_t)i, "default", "recheck", 0, (int64_t)i);
        add_attempt(s, id, 1, inv2, &fcases[i], fcases[i].us[0] * 1.002, END_OK, salt++);
    }
    CHK(ev_store_set_run_status(s, run_id, "failed", "failed-after-rescue", 1700000000900000000, &err));
    ev_store_close(s);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/check_bundle.XXXXXX", ev_test_tmp());
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(dbpath, sizeof dbpath, "%s/evidence.db", tmpdir);
    build_store();
}

static void teardown(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* ---- helpers -------------------------------------------------------------------- */

/* Builds the bundle of the newest run of the fixture store. */
static ev_bundle *export_fixture(void)
{
    ev_err err = {{0}};
    ev_store *s = NULL;
    ev_bundle *b = NULL;
    CHK(ev_store_open(dbpath, EV_STORE_READONLY, &s, &err));
    CHK(ev_export_build(s, 0, &b, &err));
    ev_store_close(s);
    return b;
}

/* The member called name of b (fails the test when absent). */
static const ev_member *member(const ev_bundle *b, const char *name)
{
    size_t n;
    const ev_member *m = ev_bundle_members(b, &n);
    const ev_member *x = ev_member_find(m, n, name);
    ck_assert_msg(x != NULL, "member %s missing", name);
    return x;
}

/* Parses a JSON member strictly and canonically. */
static cJSON *parse_member(const ev_bundle *b, const char *name)
{
    ev_err err = {{0}};
    const ev_member *x = member(b, name);
    cJSON *t = NULL;
    CHK(ev_json_parse(x->data, x->len, EV_JSON_CANONICAL, &t, &err));
    return t;
}

/* Reads a whole file into buf. */
static void slurp(const char *path, ev_buf *buf)
{
    ev_err err = {{0}};
    ev_buf_free(buf); /* ev_read_file fills a new buffer */
    CHK(ev_read_file(path, buf, &err));
}

/* Exports the fixture to path through the library (the command's path). */
static void export_to(const char *path, char root[65])
{
    ev_err err = {{0}};
    CHK(ev_export_file(dbpath, 0, path, root, &err));
}

/* Counts the lines of text[0..n). */
static size_t count_lines(const char *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += p[i] == '\n';
    return k;
}

/* The job object with job_key key in validation.json's jobs. */
static const cJSON *job_by_key(const cJSON *val, const char *key)
{
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(val, "jobs"))
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "job_key");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, key))
            return j;
    }
    ck_abort_msg("job %s not in validation.json", key);
    return NULL;
}

/* Runs the built program argv[0] ("evident") with argv (run_prog.h;
 * stdout into out when non-NULL); returns its exit status. */
static int run_cmd(char *const argv[], ev_buf *out)
{
    ev_ran x;
    ev_prog_run(tmpdir, argv, 0, &x);
    ck_assert_msg(x.rc >= 0 && x.rc < 128, "%s exited with %d: %s", argv[0], x.rc, x.err.data);
    if (out)
        ck_assert_int_eq(ev_buf_append(out, x.out.data, x.out.len), EV_OK);
    ev_ran_free(&x);
    return x.rc;
}

/* ---- tests: the zip writer -------------------------------------------------------- */

START_TEST(test_zip_writer_refuses_bad_and_duplicate_names)
{
    ev_err err = {{0}};
    ev_buf out = EV_BUF_INIT;
    static const char *const bad[] = {"",     "/abs", "a/../b", "..",  "a//b",
                                      "a\\b", "a b",  "a/",     "./a", "x\001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ev_member m = {bad[i], "x", 1};
        ck_assert_int_eq(ev_zip_build(&m, 1, &out, &err), EV_EINVAL);
        ck_assert_uint_eq(out.len, 0);
    }
    ev_member dup[2] = {{"a.txt", "x", 1}, {"a.txt", "y", 1}};
    ck_assert_int_eq(ev_zip_build(dup, 2, &out, &err), EV_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate"));
    ev_buf_free(&out);
}
END_TEST

/* Little-endian readers over the archive bytes. */
static unsigned rd16(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}
static unsigned long rd32(const unsigned char *p)
{
    return (unsigned long)rd16(p) | (unsigned long)rd16(p + 2) << 16;
}

START_TEST(test_zip_entries_have_fixed_time_attributes_method_and_sorted_names)
{
    ev_err err = {{0}};
    ev_buf out = EV_BUF_INIT;
    ev_member m[3] = {{"z.txt", "zzzz", 4}, {"a/b.txt", "hello hello hello", 17}, {"empty", NULL, 0}};
    CHK(ev_zip_build(m, 3, &out, &err));
    const unsigned char *p = (const unsigned char *)out.data;
    ck_assert_uint_ge(out.len, 22);
    const unsigned char *eocd = p + out.len - 22;
    ck_assert_uint_eq(rd32(eocd), 0x06054b50ul); /* no archive comment */
    ck_assert_uint_eq(rd16(eocd + 10), 3);
    unsigned long cd = rd32(eocd + 16);
    static const char *const want[3] = {"a/b.txt", "empty", "z.txt"};
    for (int i = 0; i < 3; i++) {
        const unsigned char *e = p + cd;
        ck_assert_uint_eq(rd32(e), 0x02014b50ul);
        ck_assert_uint_eq(rd16(e + 10), 8);               /* deflate */
        ck_assert_uint_eq(rd16(e + 12), EV_ZIP_DOS_TIME); /* 00:00:00 */
        ck_assert_uint_eq(rd16(e + 14), EV_ZIP_DOS_DATE); /* 1980-01-01 */
        ck_assert_uint_eq(e[5], 3);                       /* made by: Unix */
        ck_assert_uint_eq(rd32(e + 38), (unsigned long)EV_ZIP_MODE << 16);
        unsigned nl = rd16(e + 28), xl = rd16(e + 30), cl = rd16(e + 32);
        ck_assert_uint_eq(xl, 0); /* no extra fields */
        ck_assert_uint_eq(cl, 0); /* no comment */
        ck_assert_uint_eq(nl, strlen(want[i]));
        ck_assert(!memcmp(e + 46, want[i], nl));
        /* the local header agrees on time, date and carries no extra field */
        const unsigned char *l = p + rd32(e + 42);
        ck_assert_uint_eq(rd32(l), 0x04034b50ul);
        ck_assert_uint_eq(rd16(l + 10), EV_ZIP_DOS_TIME);
        ck_assert_uint_eq(rd16(l + 12), EV_ZIP_DOS_DATE);
        ck_assert_uint_eq(rd16(l + 28), 0);
        cd += 46 + nl + xl + cl;
    }
    ev_buf_free(&out);
}
END_TEST

START_TEST(test_zip_writer_gives_the_same_bytes_whatever_the_input_order_and_time_zone)
{
    ev_err err = {{0}};
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
    ev_member m1[2] = {{"b", "two", 3}, {"a", "one", 3}};
    ev_member m2[2] = {{"a", "one", 3}, {"b", "two", 3}};
    setenv("TZ", "UTC", 1);
    tzset();
    CHK(ev_zip_build(m1, 2, &a, &err));
    setenv("TZ", "America/New_York", 1);
    tzset();
    CHK(ev_zip_build(m2, 2, &b, &err));
    unsetenv("TZ");
    tzset();
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(!memcmp(a.data, b.data, a.len));
    ev_buf_free(&a);
    ev_buf_free(&b);
}
END_TEST

/* ---- tests: the export ------------------------------------------------------------ */

START_TEST(test_every_required_member_is_present_and_nothing_else)
{
    ev_bundle *b = export_fixture();
    size_t n;
    const ev_member *m = ev_bundle_members(b, &n);
    static const char *const req[] = {"model.json",
                                      "proof-receipts.json",
                                      "protocol.json",
                                      "provenance.json",
                                      "receipts.json",
                                      "report.html",
                                      "samples.csv",
                                      "validation.json",
                                      "sources/kernels/build.mk",
                                      "sources/kernels/reduce.c",
                                      "sources/kernels/reduce_default.cuh"};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
        member(b, req[i]);
    size_t outputs = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(m[i].name, "outputs/", 8)) {
            outputs++;
            continue;
        }
        int known = 0;
        for (size_t k = 0; k < sizeof req / sizeof req[0]; k++)
            known |= !strcmp(m[i].name, req[k]);
        ck_assert_msg(known, "unexpected member %s", m[i].name);
        if (i)
            ck_assert_int_lt(strcmp(m[i - 1].name, m[i].name), 0);
    }
    ck_assert_uint_eq(outputs, (size_t)fixture_outputs);
    /* the protocol byte for byte */
    const ev_member *p = member(b, "protocol.json");
    ck_assert_uint_eq(p->len, strlen(protocol_text));
    ck_assert(!memcmp(p->data, protocol_text, p->len));
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_samples_csv_has_the_documented_header_and_one_row_per_stored_sample)
{
    ev_bundle *b = export_fixture();
    const ev_member *s = member(b, "samples.csv");
    static const char header[] =
        "run_id,job_id,attempt,op,rows,cols,stride,dtype,default_rows,role,arm,phase,label,outcome,timing,"
        "sample_index,replays,ops_per_graph,elapsed_ms,per_op_us,job_key,attempt_id,attempt_outcome,sm_clock_"
        "mhz\n";
    ck_assert_uint_ge(s->len, strlen(header));
    ck_assert(!memcmp(s->data, header, strlen(header)));
    ck_assert_uint_eq(count_lines(s->data, s->len), (size_t)fixture_samples + 1);
    ck_assert_int_eq(((const char *)s->data)[s->len - 1], '\n');

    /* the reference arm rows carry empty case columns; the interrupted
     * attempt's row carries the job's outcome and its own */
    ck_assert_ptr_nonnull(strstr(s->data, ",,,,,,,floor,main,initial,completed,hot,"));
    ck_assert_ptr_nonnull(strstr(s->data, ",rows2,main,initial,completed,hot,0,700,100,"));
    ck_assert_ptr_nonnull(strstr(s->data, ",main/1/rows2/initial,"));
    ck_assert_ptr_nonnull(strstr(s->data, ",interrupted,\n"));
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_per_op_us_is_computed_in_double_from_the_stored_value)
{
    ev_bundle *b = export_fixture();
    const ev_member *s = member(b, "samples.csv");
    char *text = strndup(s->data, s->len);
    size_t rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (rows++ == 0)
            continue;
        char *cols[24];
        size_t k = 0;
        char *p = line;
        while (k < 24) {
            cols[k++] = p;
            char *c = strchr(p, ',');
            if (!c)
                break;
            *c = '\0';
            p = c + 1;
        }
        ck_assert_uint_eq(k, 24);
        double elapsed = strtod(cols[18], NULL), per = strtod(cols[19], NULL);
        int64_t replays = strtoll(cols[16], NULL, 10), ops = strtoll(cols[17], NULL, 10);
        double want = elapsed * 1000.0 / (double)(replays * ops);
        ck_assert_msg(memcmp(&per, &want, sizeof per) == 0, "row %zu: %s != %.17g", rows, cols[19], want);
        char t[32];
        snprintf(t, sizeof t, "%.17g", per);
        ck_assert_str_eq(t, cols[19]);
    }
    ck_assert_uint_eq(rows, (size_t)fixture_samples + 1);
    free(text);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_validation_json_derives_outcomes_and_only_completed_jobs_claim_medians)
{
    ev_bundle *b = export_fixture();
    cJSON *val = parse_member(b, "validation.json");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(val, "run");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(run, "status")->valuestring, "failed");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(run, "rescue_status")->valuestring,
                     "failed-after-rescue");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(run, "protocol_path")->valuestring,
                     "<redacted>/test.json");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(run, "created_ns")));

    const cJSON *failed = job_by_key(val, "main/2/rows1/initial");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(failed, "outcome")->valuestring, "failed-exit");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(failed, "median_us")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(failed, "median_us_reason")->valuestring,
                     "failed-exit");
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(failed, "attempts"), 0), "process");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(fp, "stderr_tail")->valuestring,
                     "worker: failed at <redacted>/worker.c:10");

    const cJSON *bad = job_by_key(val, "policy/4/auto/initial");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(bad, "outcome")->valuestring, "failed-validation");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(bad, "median_us")));

    const cJSON *skip = job_by_key(val, "main/0/cub/initial");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(skip, "outcome")->valuestring, "skipped");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(skip, "median_us")));

    const cJSON *resumed = job_by_key(val, "main/1/rows2/initial");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(resumed, "outcome")->valuestring, "completed");
    const cJSON *atts = cJSON_GetObjectItemCaseSensitive(resumed, "attempts");
    ck_assert_int_eq(cJSON_GetArraySize(atts), 2);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(atts, 0), "outcome")->valuestring,
                     "interrupted");
    /* its median is over the last attempt's 7 hot samples only */
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(resumed, "hot_samples")->valueint, 7);
    double med = cJSON_GetObjectItemCaseSensitive(resumed, "median_us")->valuedouble;
    ck_assert_double_eq_tol(med, fcases[1].us[2], fcases[1].us[2] * 0.004);

    const cJSON *retry = job_by_key(val, "rescue/2/rows1/retry-1");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(retry, "retry_of")->valuestring,
                     "main/2/rows1/initial");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(retry, "median_us")));

    /* every completed job with hot samples has a median; no other job does */
    const cJSON *j;
    int completed = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(val, "jobs"))
    {
        int is_done = !strcmp(cJSON_GetObjectItemCaseSensitive(j, "outcome")->valuestring, "completed");
        ck_assert_int_eq(is_done, cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "median_us")));
        completed += is_done;
    }
    ck_assert_int_gt(completed, 10);

    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(val, "summary");
    ck_assert_int_eq((int64_t)cJSON_GetObjectItemCaseSensitive(sum, "samples")->valuedouble, fixture_samples);
    ck_assert_int_eq((int64_t)cJSON_GetObjectItemCaseSensitive(sum, "outputs")->valuedouble, fixture_outputs);

    /* drift: one per case, recheck / main - 1 */
    const cJSON *drift =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(val, "drift"), "cases");
    ck_assert_int_eq(cJSON_GetArraySize(drift), (int)N_FCASES);
    const cJSON *d0 = cJSON_GetArrayItem(drift, 0);
    double m0 = cJSON_GetObjectItemCaseSensitive(d0, "main_median_us")->valuedouble;
    double r0 = cJSON_GetObjectItemCaseSensitive(d0, "recheck_median_us")->valuedouble;
    double dv = cJSON_GetObjectItemCaseSensitive(d0, "drift")->valuedouble;
    double want = r0 / m0 - 1.0;
    ck_assert(memcmp(&dv, &want, sizeof dv) == 0);

    /* the environment: its record verbatim, hashing to the profile id */
    const cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(val, "invocations"), 0);
    const char *rec = cJSON_GetObjectItemCaseSensitive(inv, "environment_record")->valuestring;
    char hex[65];
    ck_assert_int_eq(ev_sha256_hex(rec, strlen(rec), hex), EV_OK);
    ck_assert_str_eq(hex, cJSON_GetObjectItemCaseSensitive(inv, "profile_id")->valuestring);
    cJSON_Delete(val);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_outputs_are_present_for_validated_attempts_and_hash_to_their_receipts)
{
    ev_bundle *b = export_fixture();
    cJSON *val = parse_member(b, "validation.json");
    const cJSON *j, *a, *v;
    int seen = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(val, "jobs"))
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(a, "validations"))
            {
                const cJSON *om = cJSON_GetObjectItemCaseSensitive(v, "output_member");
                const char *stage = cJSON_GetObjectItemCaseSensitive(v, "stage")->valuestring;
                if (strcmp(stage, "first")) {
                    ck_assert(cJSON_IsNull(om));
                    continue;
                }
                ck_assert(cJSON_IsString(om));
                const ev_member *m = member(b, om->valuestring);
                char hex[65];
                ck_assert_int_eq(ev_sha256_hex(m->data, m->len, hex), EV_OK);
                ck_assert_str_eq(hex, cJSON_GetObjectItemCaseSensitive(v, "output_sha256")->valuestring);
                seen++;
            }
        }
    }
    ck_assert_int_eq(seen, fixture_outputs);
    cJSON_Delete(val);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_receipts_list_every_other_member_and_hash_to_the_root)
{
    ev_bundle *b = export_fixture();
    size_t n;
    const ev_member *m = ev_bundle_members(b, &n);
    cJSON *rec = parse_member(b, "receipts.json");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(rec, "members"), *e;
    ck_assert_int_eq(cJSON_GetArraySize(list), (int)n - 1);
    size_t i = 0;
    cJSON_ArrayForEach(e, list)
    {
        if (!strcmp(m[i].name, "receipts.json"))
            i++;
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, m[i].name);
        ck_assert_int_eq((int64_t)cJSON_GetObjectItemCaseSensitive(e, "size")->valuedouble,
                         (int64_t)m[i].len);
        char hex[65];
        ck_assert_int_eq(ev_sha256_hex(m[i].data, m[i].len, hex), EV_OK);
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(e, "sha256")->valuestring, hex);
        i++;
    }
    const ev_member *r = member(b, "receipts.json");
    char root[65];
    ck_assert_int_eq(ev_sha256_hex(r->data, r->len, root), EV_OK);
    ck_assert_str_eq(root, ev_bundle_root(b));
    cJSON_Delete(rec);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_provenance_source_tree_hash_is_the_runners_hash_of_the_snapshot)
{
    ev_bundle *b = export_fixture();
    cJSON *prov = parse_member(b, "provenance.json");
    char h1[65], h2[65], h3[65], want[65];
    ck_assert_int_eq(ev_sha256_hex(buildmk_text, strlen(buildmk_text), h1), EV_OK);
    ck_assert_int_eq(ev_sha256_hex(kernel_text, strlen(kernel_text), h2), EV_OK);
    ck_assert_int_eq(ev_sha256_hex(default_text, strlen(default_text), h3), EV_OK);
    /* "<path>\0<sha256 hex>\n" per file, sorted by path (src/runner/snapshot.h) */
    char text[600];
    int len = snprintf(text, sizeof text,
                       "kernels/build.mk%c%s\nkernels/reduce.c%c%s\nkernels/reduce_default.cuh%c%s\n", 0, h1,
                       0, h2, 0, h3);
    ck_assert_int_eq(ev_sha256_hex(text, (size_t)len, want), EV_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(prov, "source_tree_hash")->valuestring, want);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(prov, "recorded_source_tree_hash")->valuestring,
                     "recorded-tree-hash");
    char pid[65];
    ck_assert_int_eq(ev_sha256_hex(protocol_text, strlen(protocol_text), pid), EV_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(prov, "protocol_id")->valuestring, pid);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(prov, "git_dirty")));

    /* the sources are the snapshot's bytes, and proof-receipts bind them */
    const ev_member *k = member(b, "sources/kernels/reduce.c");
    ck_assert_uint_eq(k->len, strlen(kernel_text));
    ck_assert(!memcmp(k->data, kernel_text, k->len));
    cJSON *proof = parse_member(b, "proof-receipts.json");
    const cJSON *des = cJSON_GetObjectItemCaseSensitive(proof, "default_entry_source");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(des, "path")->valuestring,
                     "kernels/reduce_default.cuh");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(des, "sha256")->valuestring, h3);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(proof, "build"), "compiler")
            ->valuestring,
        "gcc 12.2.0");
    const cJSON *build = cJSON_GetObjectItemCaseSensitive(proof, "build");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(build, "nvcc")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(build, "device_name")->valuestring, "cpu");
    cJSON_Delete(proof);
    cJSON_Delete(prov);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_model_json_is_the_refit_of_the_exported_medians)
{
    ev_bundle *b = export_fixture();
    cJSON *model = parse_member(b, "model.json");
    /* the fixture has two calibration geometries and a failed rows1 job in
     * the third case: the fit runs, and that case is excluded with its reason */
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(model, "fit_reason");
    ck_assert_msg(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(model, "coefficients")), "fit failed: %s",
                  cJSON_IsString(why) ? why->valuestring : "?");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(model, "excluded");
    ck_assert_int_eq(cJSON_GetArraySize(ex), 1);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ex, 0), "reason")->valuestring,
                     "rows1: failed-exit");
    ck_assert_int_eq((int64_t)cJSON_GetObjectItemCaseSensitive(model, "sms")->valuedouble, 4);
    cJSON_Delete(model);
    ev_bundle_free(b);
}
END_TEST

START_TEST(test_two_exports_of_one_store_are_byte_identical_in_any_time_zone)
{
    char a[400], c[400], ra[65], rc_[65];
    ev_buf x = EV_BUF_INIT, y = EV_BUF_INIT;
    snprintf(a, sizeof a, "%s/a.zip", tmpdir);
    snprintf(c, sizeof c, "%s/b.zip", tmpdir);
    setenv("TZ", "UTC", 1);
    tzset();
    export_to(a, ra);
    setenv("TZ", "America/New_York", 1);
    tzset();
    umask(077);
    export_to(c, rc_);
    umask(022);
    unsetenv("TZ");
    tzset();
    ck_assert_str_eq(ra, rc_);
    slurp(a, &x);
    slurp(c, &y);
    ck_assert_uint_gt(x.len, 0);
    ck_assert_uint_eq(x.len, y.len);
    ck_assert(!memcmp(x.data, y.data, x.len));
    ev_buf_free(&x);
    ev_buf_free(&y);
}
END_TEST

/* Reads every member of the zip file at path back with libzip (CRC checked). */
static ev_member *read_back(const char *path, size_t *n_out)
{
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    ck_assert_ptr_nonnull(za);
    zip_int64_t n = zip_get_num_entries(za, 0);
    ev_member *m = calloc((size_t)n, sizeof *m);
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t st;
        ck_assert_int_eq(zip_stat_index(za, (zip_uint64_t)i, 0, &st), 0);
        char *d = malloc(st.size + 1);
        zip_file_t *f = zip_fopen_index(za, (zip_uint64_t)i, 0);
        ck_assert_ptr_nonnull(f);
        zip_int64_t got = 0, r;
        while ((r = zip_fread(f, d + got, st.size + 1 - (zip_uint64_t)got)) > 0)
            got += r;
        ck_assert_int_eq(r, 0);
        ck_assert_int_eq(got, (zip_int64_t)st.size);
        zip_fclose(f);
        m[i].name = strdup(st.name);
        m[i].data = d;
        m[i].len = (size_t)st.size;
    }
    zip_discard(za);
    *n_out = (size_t)n;
    return m;
}

START_TEST(test_report_regenerated_from_the_archived_members_equals_the_exported_one)
{
    char a[400], root[65];
    snprintf(a, sizeof a, "%s/a.zip", tmpdir);
    export_to(a, root);
    size_t n;
    ev_member *m = read_back(a, &n);
    const ev_member *html = ev_member_find(m, n, "report.html");
    ck_assert_ptr_nonnull(html);
    /* the other members only: drop report.html and receipts.json */
    ev_member *others = calloc(n, sizeof *others);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].name, "report.html") && strcmp(m[i].name, "receipts.json"))
            others[k++] = m[i];
    ev_err err = {{0}};
    ev_buf again = EV_BUF_INIT;
    CHK(ev_report_html(others, k, &again, &err));
    ck_assert_uint_eq(again.len, html->len);
    ck_assert(!memcmp(again.data, html->data, html->len));
    /* it shows failures first and the case medians */
    ck_assert_ptr_nonnull(strstr(again.data, "failed-exit"));
    ck_assert_ptr_nonnull(strstr(again.data, "Hot medians per case"));
    ck_assert_ptr_null(strstr(again.data, "<script"));
    ck_assert_ptr_null(strstr(again.data, "/home/"));
    /* a member the report reads, changed, changes the report */
    for (size_t i = 0; i < k; i++) {
        if (strcmp(others[i].name, "validation.json"))
            continue;
        char *copy = malloc(others[i].len + 1); /* a member's bytes end in a NUL (member.h) */
        memcpy(copy, others[i].data, others[i].len);
        copy[others[i].len] = '\0';
        char *p = strstr(copy, "\"failed-after-rescue\"");
        ck_assert_ptr_nonnull(p);
        memcpy(p, "\"FAILED-after-rescue\"", 21);
        others[i].data = copy;
        ev_buf_reset(&again);
        CHK(ev_report_html(others, k, &again, &err));
        ck_assert(again.len != html->len || memcmp(again.data, html->data, html->len));
        free(copy);
    }
    ev_buf_free(&again);
    free(others);
    for (size_t i = 0; i < n; i++) {
        free((void *)m[i].name);
        free((void *)m[i].data);
    }
    free(m);
}
END_TEST

/* A validation.json of three cases written by hand for the markdown
 * table: case 0 auto beats cub (the best peer), case 1 auto loses to cub
 * while torch-compile failed, case 2 has no completed peer; floor 0.5 us,
 * ceiling 2 us over 1000000 bytes. */
static const char md_validation[] =
    "{\"run\":{\"run_id\":3,\"backend\":\"cuda\",\"protocol_path\":\"protocols/t.json\","
    "\"status\":\"completed\",\"rescue_status\":null},"
    "\"cases\":["
    "{\"case_index\":0,\"op\":\"reduce_sum\",\"rows\":4,\"cols\":8,\"stride\":8,\"dtype\":\"fp32\","
    "\"default_rows\":4,\"role\":\"calibration\"},"
    "{\"case_index\":1,\"op\":\"reduce_max\",\"rows\":2,\"cols\":9,\"stride\":12,\"dtype\":\"fp16\","
    "\"default_rows\":8,\"role\":\"holdout\"},"
    "{\"case_index\":2,\"op\":\"reduce_sum\",\"rows\":1,\"cols\":5,\"stride\":5,\"dtype\":\"bf16\","
    "\"default_rows\":4,\"role\":\"holdout\"}],"
    "\"jobs\":["
    "{\"job_key\":\"main/0/default/initial\",\"phase\":\"main\",\"case_index\":0,\"arm\":\"default\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":2.0,\"attempts\":[]},"
    "{\"job_key\":\"main/0/cub/initial\",\"phase\":\"main\",\"case_index\":0,\"arm\":\"cub\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":2.0,\"attempts\":[]},"
    "{\"job_key\":\"main/0/torch-compile/initial\",\"phase\":\"main\",\"case_index\":0,"
    "\"arm\":\"torch-compile\",\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":4.0,\"attempts\":[]}"
    ","
    "{\"job_key\":\"main/1/default/initial\",\"phase\":\"main\",\"case_index\":1,\"arm\":\"default\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":3.5,\"attempts\":[]},"
    "{\"job_key\":\"main/1/cub/initial\",\"phase\":\"main\",\"case_index\":1,\"arm\":\"cub\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":1.5,\"attempts\":[]},"
    "{\"job_key\":\"main/1/torch-compile/initial\",\"phase\":\"main\",\"case_index\":1,"
    "\"arm\":\"torch-compile\",\"retry_of\":null,\"outcome\":\"failed-validation\",\"median_us\":null,"
    "\"attempts\":[]},"
    "{\"job_key\":\"main/2/default/initial\",\"phase\":\"main\",\"case_index\":2,\"arm\":\"default\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":1.25,\"attempts\":[]},"
    "{\"job_key\":\"main/2/cub/initial\",\"phase\":\"main\",\"case_index\":2,\"arm\":\"cub\","
    "\"retry_of\":null,\"outcome\":\"skipped\",\"median_us\":null,\"attempts\":[]},"
    "{\"job_key\":\"main/-/ceiling/initial\",\"phase\":\"main\",\"case_index\":null,\"arm\":\"ceiling\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":2.0,"
    "\"attempts\":[{\"attempt\":1,\"binding\":{\"op\":\"ceiling\",\"in_span\":1000000}}]},"
    "{\"job_key\":\"main/-/floor/initial\",\"phase\":\"main\",\"case_index\":null,\"arm\":\"floor\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":0.5,\"attempts\":[]},"
    "{\"job_key\":\"policy/0/auto/initial\",\"phase\":\"policy\",\"case_index\":0,\"arm\":\"auto\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":1.0,\"attempts\":[]},"
    "{\"job_key\":\"policy/1/auto/initial\",\"phase\":\"policy\",\"case_index\":1,\"arm\":\"auto\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":3.0,\"attempts\":[]},"
    "{\"job_key\":\"policy/2/auto/initial\",\"phase\":\"policy\",\"case_index\":2,\"arm\":\"auto\","
    "\"retry_of\":null,\"outcome\":\"completed\",\"median_us\":1.0,\"attempts\":[]}]}\n";

START_TEST(test_markdown_names_the_best_peer_and_counts_auto_wins_and_losses_against_it)
{
    ev_member m[1] = {{"validation.json", md_validation, sizeof md_validation - 1}};
    ev_err err = {{0}};
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
    CHK(ev_report_markdown(m, 1, &a, &err));
    /* header: run, floor, ceiling as bytes per second (1e6 bytes / 2 us) */
    ck_assert_ptr_nonnull(strstr(a.data, "Run 3 (backend cuda, protocol protocols/t.json): status completed, "
                                         "rescue status none."));
    ck_assert_ptr_nonnull(
        strstr(a.data, "\n- floor (an empty kernel node, the per-op launch floor): 0.5000 us\n"));
    ck_assert_ptr_nonnull(
        strstr(a.data, "\n- ceiling (a streaming read): 2.0000 us for 1000000 bytes per op = 500.0 GB/s\n"));
    ck_assert_ptr_nonnull(strstr(a.data,
                                 "| Operation / shape / storage / B | Role | default | auto | cub | "
                                 "torch-compile | Best peer | auto / best peer | auto / floor | Recheck |"));
    /* cub 2.0 beats torch-compile 4.0: auto 1.0 / 2.0, and 1.0 / floor 0.5 */
    ck_assert_ptr_nonnull(strstr(a.data,
                                 "\n| reduce_sum 4x8 fp32 B4 | calibration | 2.0000 | 1.0000 | 2.0000 | "
                                 "4.0000 | cub | 0.500 not replicated | 2.000 | - | - | - |\n"));
    /* a failed peer enters no ratio: cub is the best peer, auto loses */
    ck_assert_ptr_nonnull(strstr(a.data,
                                 "\n| reduce_max 2x9 stride 12 fp16 B8 | holdout | 3.5000 | 3.0000 | 1.5000 "
                                 "| failed-validation | cub | 2.000 not replicated | 6.000 | - | - | - |\n"));
    /* no completed peer: no best peer and no ratio to it, the floor ratio stays */
    ck_assert_ptr_nonnull(strstr(a.data,
                                 "\n| reduce_sum 1x5 bf16 B4 | holdout | 1.2500 | 1.0000 | skipped | - | - "
                                 "| - | 2.000 | - | - | - |\n"));
    /* without figures no ratio has an interval, and without a recheck the
     * run measured no noise floor: one round, neither 0.5 nor 2.0 is a win
     * or a loss (not replicated); geometric mean sqrt(0.5 x 2) = 1 */
    ck_assert_ptr_nonnull(
        strstr(a.data, "\nauto against the best peer: 0 wins / 0 losses / 0 n.s. / 0 inconclusive / "
                       "2 not replicated over the 2 of 3 cases where both completed; geometric "
                       "mean of auto / best peer 1.000; one round: not replicated, called only "
                       "beyond the noise floor.\n"));
    /* the same members give the same bytes */
    CHK(ev_report_markdown(m, 1, &b, &err));
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(!memcmp(a.data, b.data, a.len));
    ev_buf_free(&a);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_markdown_of_a_run_without_peers_or_ceiling_bytes_says_so)
{
    ev_bundle *bd = export_fixture();
    ev_member m[1] = {*member(bd, "validation.json")};
    ev_err err = {{0}};
    ev_buf a = EV_BUF_INIT;
    CHK(ev_report_markdown(m, 1, &a, &err));
    ck_assert_ptr_nonnull(strstr(a.data, "status failed, rescue status failed-after-rescue."));
    ck_assert_ptr_nonnull(
        strstr(a.data, "\n- floor (an empty kernel node, the per-op launch floor): 0.5000 us\n"));
    /* the fixture's ceiling has no binding: its time, but no bytes per second */
    ck_assert_ptr_nonnull(strstr(a.data, "\n- ceiling (a streaming read): 900.0000 us\n"));
    /* every cub job was skipped: no best peer anywhere */
    ck_assert_ptr_nonnull(strstr(a.data, "| skipped | - | - | "));
    ck_assert_ptr_nonnull(
        strstr(a.data, "\nauto against the best peer: 0 wins / 0 losses / 0 n.s. / 0 inconclusive / "
                       "0 not replicated over the 0 of 5 cases where both completed; no geometric "
                       "mean; one round: not replicated, called only beyond the noise floor.\n"));
    /* without validation.json there is no table */
    ev_buf_reset(&a);
    ck_assert_int_eq(ev_report_markdown(m, 0, &a, &err), EV_EFORMAT);
    ck_assert_uint_eq(a.len, 0);
    ev_buf_free(&a);
    ev_bundle_free(bd);
}
END_TEST

START_TEST(test_redaction_replaces_absolute_paths_and_is_idempotent)
{
    static const char *const cases[][2] = {
        {"/usr/bin/nvcc failed", "<redacted>/nvcc failed"},
        {"at /home/a/b.c:10", "at <redacted>/b.c:10"},
        {"path='/tmp/x/'", "path='<redacted>/x'"},
        {"ratio 1/2 and a/b", "ratio 1/2 and a/b"},
        {"(/opt/cuda/lib64/libcudart.so.12)", "(<redacted>/libcudart.so.12)"},
        {"<redacted>/nvcc", "<redacted>/nvcc"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT;
        ck_assert_int_eq(ev_buf_puts(&a, ""), EV_OK);
        ck_assert_int_eq(ev_bundle_redact(cases[i][0], &a), EV_OK);
        ck_assert_str_eq(a.data, cases[i][1]);
        ck_assert_int_eq(ev_buf_puts(&b, ""), EV_OK);
        ck_assert_int_eq(ev_bundle_redact(a.data, &b), EV_OK);
        ck_assert_str_eq(b.data, a.data);
        ev_buf_free(&a);
        ev_buf_free(&b);
    }
}
END_TEST

START_TEST(test_per_op_us_refuses_counts_beyond_two_to_the_53)
{
    double v = 0;
    ck_assert_int_eq(ev_per_op_us(1.0, 0, 100, &v), EV_ERANGE);
    ck_assert_int_eq(ev_per_op_us(1.0, INT64_C(1) << 40, INT64_C(1) << 14, &v), EV_ERANGE);
    ck_assert_int_eq(ev_per_op_us(70.0, 700, 100, &v), EV_OK);
    ck_assert(v == 70.0 * 1000.0 / 70000.0);
}
END_TEST

START_TEST(test_an_unfinished_run_exports_without_a_status_and_explains_its_failed_fit)
{
    ev_err err = {{0}};
    char path[400];
    snprintf(path, sizeof path, "%s/small.db", tmpdir);
    ev_store *s = NULL;
    CHK(ev_store_open(path, EV_STORE_CREATE, &s, &err));
    char pid[65];
    CHK(ev_sha256_hex(protocol_text, strlen(protocol_text), pid));
    ev_run_row run = {pid, protocol_text, strlen(protocol_text), "p.json", "cpu", 7, "unknown", 1, "h", 5};
    int64_t run_id, inv;
    CHK(ev_store_add_run(s, &run, &run_id, &err));
    CHK(ev_store_add_invocation(s, run_id, 6, 0, "hh", &inv, &err));
    ev_case_row cr = {0, "reduce_sum", 17, 1024, 1024, "fp16", 4, "calibration"};
    CHK(ev_store_add_case(s, run_id, &cr, &err));
    int64_t j = add_job(s, run_id, "main", 0, "default", "initial", 0, 0);
    add_attempt(s, j, 1, inv, &fcases[0], fcases[0].us[0], END_OK, 3);
    add_job(s, run_id, "main", 0, "rows1", "initial", 0, 1); /* planned, never started */
    ev_store_close(s);

    ev_bundle *b = NULL;
    CHK(ev_store_open(path, EV_STORE_READONLY, &s, &err));
    CHK(ev_export_build(s, 0, &b, &err));
    ev_store_close(s);
    cJSON *val = parse_member(b, "validation.json");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(val, "run");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "status")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "status_reason")->valuestring, "run not finished");
    const cJSON *never = job_by_key(val, "main/0/rows1/initial");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(never, "outcome")->valuestring, "interrupted");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(never, "last_attempt")));
    const cJSON *inv0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(val, "invocations"), 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(inv0, "environment_reason")->valuestring,
                     "no environment record");
    cJSON *model = parse_member(b, "model.json");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(model, "fit")));
    /* the only case lacks its rows1 (interrupted): no observation, no geometry */
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItemCaseSensitive(model, "fit_reason")->valuestring,
                                 "fewer than two calibration geometries"));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(model, "status")->valuestring, ev_strerror(EV_EFORMAT));
    cJSON *proof = parse_member(b, "proof-receipts.json");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(proof, "build")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(proof, "build_reason")->valuestring,
                     "no environment record");
    /* the report still renders, and says so */
    const ev_member *html = member(b, "report.html");
    ck_assert_ptr_nonnull(strstr(html->data, "run not finished"));
    ck_assert_ptr_nonnull(strstr(html->data, "The fit failed"));
    cJSON_Delete(proof);
    cJSON_Delete(model);
    cJSON_Delete(val);
    ev_bundle_free(b);
}
END_TEST

/* ---- tests: figures ----------------------------------------------------------------- */

START_TEST(test_mann_whitney_p_is_exact_for_small_samples)
{
    double u = 0, p = 0;
    const double a2[2] = {1, 2}, b2[2] = {3, 4};
    ck_assert_int_eq(ev_fig_mann_whitney(a2, 2, b2, 2, &u, &p), EV_OK);
    ck_assert(u == 4.0 && p == 2.0 / 6.0);

    double a[7], b[7];
    for (int i = 0; i < 7; i++) {
        a[i] = 1.0 + i;
        b[i] = 100.0 + i;
    }
    ck_assert_int_eq(ev_fig_mann_whitney(a, 7, b, 7, &u, &p), EV_OK);
    ck_assert(u == 49.0 && p == 2.0 / 3432.0);
    ck_assert_int_eq(ev_fig_mann_whitney(b, 7, a, 7, &u, &p), EV_OK);
    ck_assert(u == 0.0 && p == 2.0 / 3432.0);
    ck_assert_int_eq(ev_fig_mann_whitney(a, 7, a, 7, &u, &p), EV_OK);
    ck_assert(u == 24.5 && p == 1.0);

    /* against brute force: every split of 11 distinct values into 5 + 6 */
    const double x[5] = {0.3, 1.7, 2.2, 5.1, 9.0}, y[6] = {0.9, 2.0, 3.3, 4.4, 6.6, 7.7};
    double all[11];
    memcpy(all, x, sizeof x);
    memcpy(all + 5, y, sizeof y);
    ck_assert_int_eq(ev_fig_mann_whitney(x, 5, y, 6, &u, &p), EV_OK);
    double le = 0, ge = 0, tot = 0;
    for (unsigned mask = 0; mask < (1u << 11); mask++) {
        if (__builtin_popcount(mask) != 5)
            continue;
        double uu = 0;
        for (int i = 0; i < 11; i++)
            for (int j = 0; j < 11; j++)
                if ((mask >> i & 1) && !(mask >> j & 1) && all[i] < all[j])
                    uu += 1;
        tot += 1;
        le += uu <= u;
        ge += uu >= u;
    }
    double want = 2.0 * (le < ge ? le : ge) / tot;
    ck_assert(p == (want > 1.0 ? 1.0 : want));

    double big[26] = {0};
    ck_assert_int_eq(ev_fig_mann_whitney(big, 26, big, 25, &u, &p), EV_ERANGE);
    ck_assert_int_eq(ev_fig_mann_whitney(big, 0, big, 5, &u, &p), EV_ERANGE);
}
END_TEST

/* The value of a number node, built (raw exact text) or parsed. */
static double num(const cJSON *n)
{
    ck_assert(cJSON_IsRaw(n) || cJSON_IsNumber(n));
    return cJSON_IsRaw(n) ? strtod(n->valuestring, NULL) : n->valuedouble;
}

/* The exact law of a bootstrap median's ranks equals brute-force
 * enumeration of all n^n resamples for n = 1..7. */
START_TEST(test_bootstrap_median_rank_law_equals_enumeration_of_every_resample)
{
    for (size_t n = 1; n <= 7; n++) {
        double p[49], q[49] = {0};
        size_t total = 1, k1 = (n - 1) / 2, k2 = n / 2;
        for (size_t i = 0; i < n; i++)
            total *= n;
        ck_assert_int_eq(ev_fig_median_dist(n, p), EV_OK);
        for (size_t code = 0; code < total; code++) {
            size_t cnt[7] = {0}, c = code, cum = 0, x1 = n, x2 = n;
            for (size_t d = 0; d < n; d++, c /= n)
                cnt[c % n]++;
            for (size_t r = 0; r < n; r++) {
                cum += cnt[r];
                if (x1 == n && cum > k1)
                    x1 = r;
                if (x2 == n && cum > k2)
                    x2 = r;
            }
            q[x1 * n + x2] += 1.0 / (double)total;
        }
        double sum = 0;
        for (size_t i = 0; i < n * n; i++) {
            ck_assert_msg(fabs(p[i] - q[i]) < 1e-12, "n=%zu cell %zu: %.17g vs %.17g", n, i, p[i], q[i]);
            sum += p[i];
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-12);
    }
    double one;
    ck_assert_int_eq(ev_fig_median_dist(0, &one), EV_ERANGE);
}
END_TEST

/* splitmix64 for the Monte Carlo check below (its own copy). */
static uint64_t mc_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* For larger n (40, 41, 1000) the exact law agrees with plain resampling
 * (n draws with replacement, the middle order statistics): the CDF of
 * X1 + X2 over 40,000 resamples is within 0.015 everywhere (DKW: a miss
 * has probability below 1e-7). */
START_TEST(test_bootstrap_median_rank_law_agrees_with_plain_resampling)
{
    static const size_t ns[] = {40, 41, 1000};
    for (size_t t = 0; t < 3; t++) {
        size_t n = ns[t], k1 = (n - 1) / 2, k2 = n / 2, reps = 40000;
        double *p = malloc(n * n * sizeof *p), *exact = calloc(2 * n, sizeof *exact),
               *emp = calloc(2 * n, sizeof *emp);
        size_t *cnt = calloc(n, sizeof *cnt);
        ck_assert(p && exact && emp && cnt);
        ck_assert_int_eq(ev_fig_median_dist(n, p), EV_OK);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                exact[i + j] += p[i * n + j];
        uint64_t st = 12345 + n;
        for (size_t r = 0; r < reps; r++) {
            size_t cum = 0, x1 = n, x2 = n;
            memset(cnt, 0, n * sizeof *cnt);
            for (size_t d = 0; d < n; d++)
                cnt[((mc_next(&st) >> 32) * n) >> 32]++;
            for (size_t v = 0; v < n && x2 == n; v++) {
                cum += cnt[v];
                if (x1 == n && cum > k1)
                    x1 = v;
                if (cum > k2)
                    x2 = v;
            }
            emp[x1 + x2] += 1.0 / (double)reps;
        }
        double fe = 0, fm = 0, worst = 0;
        for (size_t s = 0; s < 2 * n; s++) {
            fe += exact[s];
            fm += emp[s];
            if (fabs(fe - fm) > worst)
                worst = fabs(fe - fm);
        }
        ck_assert_msg(worst < 0.015, "n=%zu: KS distance %g", n, worst);
        free(p);
        free(exact);
        free(emp);
        free(cnt);
    }
}
END_TEST

/* Prints a figures tree (pretty) into a new string. */
static char *print_tree(const cJSON *t)
{
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_json_print(t, 1, &b), EV_OK);
    return ev_buf_steal(&b, NULL);
}

/* The pair object of figures f for case idx, arm and against, or NULL. */
static const cJSON *fig_pair_of(const cJSON *f, int64_t idx, const char *arm, const char *against)
{
    const cJSON *p;
    cJSON_ArrayForEach(
        p, cJSON_GetObjectItemCaseSensitive(
               f, "pairs")) if (num(cJSON_GetObjectItemCaseSensitive(p, "case_index")) == (double)idx &&
                                !strcmp(cJSON_GetObjectItemCaseSensitive(p, "arm")->valuestring, arm) &&
                                !strcmp(cJSON_GetObjectItemCaseSensitive(p, "against")->valuestring,
                                        against)) return p;
    return NULL;
}

/* A main-phase job of the figures' view: its key, arm, case, round,
 * outcome and hot samples (no cold ones, no clock, captured). */
static ev_view_job fig_job(const char *key, const char *arm, int64_t case_index, int64_t round,
                           const char *outcome, const double *hot, size_t n_hot)
{
    ev_view_job j;
    memset(&j, 0, sizeof j);
    j.job_key = key;
    j.phase = "main";
    j.arm = arm;
    j.round = round;
    j.case_index = case_index;
    j.outcome = outcome;
    j.hot = hot;
    j.n_hot = n_hot;
    return j;
}

/* The view of jobs[0 .. n) under seed (the figures read no cases). */
static ev_run_view fig_view(const ev_view_job *jobs, size_t n, int64_t seed)
{
    ev_run_view v;
    memset(&v, 0, sizeof v);
    v.jobs = jobs;
    v.n_jobs = n;
    v.seed = seed;
    return v;
}

/* Three rounds: the ratio is exp of the mean log ratio over the rounds
 * paired, the interval the t interval over them (t(0.975, n - 1) from the
 * table, computed here from the definition), the verdict read from it; a
 * failed round leaves the pairing; one paired round has no interval and is
 * not significant; the estimate over rounds is the geometric mean. */
START_TEST(test_figures_over_rounds_pair_by_round_and_call_an_interval_holding_one_not_significant)
{
    /* per round r: every sample of a job equals its median */
    static double v[3][3][7]; /* [arm: default, rows1, rows2][round] */
    const double med[3][3] = {{10.0, 11.0, 10.5}, {5.0, 5.6, 5.1}, {10.2, 10.1, 11.4}};
    for (int a = 0; a < 3; a++)
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < 7; i++)
                v[a][r][i] = med[a][r];
    static const char *const arms[3] = {"default", "rows1", "rows2"};
    char keys[18][64];
    ev_view_job jobs[18];
    size_t n = 0;
    for (int c = 0; c < 2; c++)
        for (int a = 0; a < 3; a++)
            for (int r = 0; r < 3; r++) {
                snprintf(keys[n], sizeof keys[n], "main/%d/%s/round-%d", c, arms[a], r + 1);
                /* case 1: rows1 fails in rounds 2 and 3 */
                int bad = c == 1 && a == 1 && r > 0;
                jobs[n] = fig_job(keys[n], arms[a], c, r + 1, bad ? "failed-exit" : "completed", v[a][r], 7);
                n++;
            }
    ev_run_view in = fig_view(jobs, n, 5);
    ev_err err = {{0}};
    cJSON *f = NULL;
    CHK(ev_figures_build(&in, &f, &err));

    /* rows1 / default on case 0: three paired rounds */
    const cJSON *p = fig_pair_of(f, 0, "rows1", "default");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "basis")->valuestring, "rounds");
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(p, "n_rounds")) == 3);
    double l[3], mean = 0, ss = 0;
    for (int r = 0; r < 3; r++) {
        l[r] = log(med[1][r]) - log(med[0][r]);
        mean += l[r];
    }
    mean /= 3;
    for (int r = 0; r < 3; r++)
        ss += (l[r] - mean) * (l[r] - mean);
    double sd = sqrt(ss / 2), t = 4.302652729749464; /* t(0.975, 2) */
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(p, "interval");
    ck_assert_double_eq_tol(num(cJSON_GetObjectItemCaseSensitive(p, "ratio")), exp(mean), 1e-12);
    ck_assert_double_eq_tol(num(cJSON_GetArrayItem(iv, 0)), exp(mean - t * sd / sqrt(3)), 1e-12);
    ck_assert_double_eq_tol(num(cJSON_GetArrayItem(iv, 1)), exp(mean + t * sd / sqrt(3)), 1e-12);
    ck_assert_double_eq_tol(num(cJSON_GetObjectItemCaseSensitive(p, "log_ratio_sd")), sd, 1e-12);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring, "win");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "significant")));
    /* the within-process figures of round 1 stay beside it */
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(p, "within");
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(w, "round")) == 1);
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(w, "ratio_of_medians")) == 0.5);

    /* rows2 / default on case 0: the rounds disagree in sign: not significant */
    p = fig_pair_of(f, 0, "rows2", "default");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring, "not significant");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "significant")));
    iv = cJSON_GetObjectItemCaseSensitive(p, "interval");
    ck_assert(num(cJSON_GetArrayItem(iv, 0)) < 1.0 && num(cJSON_GetArrayItem(iv, 1)) > 1.0);

    /* case 1: rows1 completed round 1 only: one pair, no interval */
    p = fig_pair_of(f, 1, "rows1", "default");
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(p, "n_rounds")) == 1);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "interval")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "interval_reason")->valuestring,
                     "one paired round: no interval over rounds");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring, "not significant");
    ck_assert_double_eq_tol(num(cJSON_GetObjectItemCaseSensitive(p, "ratio")), 0.5, 1e-15);

    /* estimates over rounds: the geometric mean of the usable rounds */
    const cJSON *a;
    int seen = 0;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(f, "arms"))
    {
        int64_t c = (int64_t)num(cJSON_GetObjectItemCaseSensitive(a, "case_index"));
        const char *arm = cJSON_GetObjectItemCaseSensitive(a, "arm")->valuestring;
        ck_assert(num(cJSON_GetObjectItemCaseSensitive(a, "n_rounds")) == 3);
        if (c == 0 && !strcmp(arm, "default")) {
            ck_assert_double_eq_tol(num(cJSON_GetObjectItemCaseSensitive(a, "estimate_us")),
                                    cbrt(10.0 * 11.0 * 10.5), 1e-12);
            seen++;
        }
        if (c == 1 && !strcmp(arm, "rows1")) {
            ck_assert(num(cJSON_GetObjectItemCaseSensitive(a, "n_usable")) == 1);
            ck_assert(num(cJSON_GetObjectItemCaseSensitive(a, "estimate_us")) == 5.0);
            ck_assert(
                cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "round_medians_us"), 1)));
            seen++;
        }
    }
    ck_assert_int_eq(seen, 2);
    /* across cases: one win (case 0), one not significant (case 1) */
    const cJSON *ac;
    cJSON_ArrayForEach(
        ac, cJSON_GetObjectItemCaseSensitive(
                f, "across")) if (!strcmp(cJSON_GetObjectItemCaseSensitive(ac, "arm")->valuestring, "rows1"))
    {
        ck_assert(num(cJSON_GetObjectItemCaseSensitive(ac, "wins")) == 1);
        ck_assert(num(cJSON_GetObjectItemCaseSensitive(ac, "losses")) == 0);
        ck_assert(num(cJSON_GetObjectItemCaseSensitive(ac, "not_significant")) == 1);
    }
    cJSON_Delete(f);
}
END_TEST

/* A job whose last attempt ran in the timed loop (its device record's
 * capture: a Python arm that torch.cuda.graph could not capture) is never
 * ranked against a captured one: the pair has no ratio and says why; two
 * such arms are ranked against each other; the device record read is the
 * last attempt's, by the one rule every reader calls. */
START_TEST(test_an_arm_not_graph_captured_is_never_ranked_against_a_captured_one)
{
    const double d[7] = {10, 10, 10, 10, 10, 10, 11}, e[7] = {5, 5, 5, 5, 5, 5, 6},
                 g[7] = {4, 4, 4, 4, 4, 4, 5};
    ev_view_job jobs[3] = {
        fig_job("main/0/default/initial", "default", 0, 1, "completed", d, 7),
        fig_job("main/0/ext-a/initial", "ext-a", 0, 1, "completed", e, 7),
        fig_job("main/0/ext-b/initial", "ext-b", 0, 1, "completed", g, 7),
    };
    cJSON *dev =
        cJSON_Parse("{\"capture\": \"timed loop: torch.cuda.graph could not capture it: RuntimeError\"}");
    cJSON *graph = cJSON_Parse("{\"capture\": \"graph\"}");
    ev_view_capture(&jobs[1], graph);
    ck_assert_int_eq(jobs[1].uncaptured, 0);
    ev_view_capture(&jobs[1], dev);
    ck_assert_int_eq(jobs[1].uncaptured, 1);
    ev_view_capture(&jobs[0], NULL);
    ck_assert_int_eq(jobs[0].uncaptured, 0);
    ev_run_view in = fig_view(jobs, 3, 7);
    ev_err err = {{0}};
    cJSON *f = NULL;
    CHK(ev_figures_build(&in, &f, &err));
    const cJSON *p = fig_pair_of(f, 0, "ext-a", "default");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring, "no ratio");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p, "ratio")));
    const char *why = cJSON_GetObjectItemCaseSensitive(p, "ratio_reason")->valuestring;
    ck_assert_msg(strstr(why,
                         "ext-a not graph-captured (it ran in the timed loop): not ranked against a captured "
                         "arm"),
                  "%s", why);
    p = fig_pair_of(f, 0, "ext-b", "ext-a"); /* a captured external arm beside it: not ranked either */
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "verdict")->valuestring, "no ratio");
    p = fig_pair_of(f, 0, "ext-b", "default");
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(p, "ratio")) > 0);
    cJSON_Delete(f);
    ev_view_capture(&jobs[2], dev); /* both in the timed loop: ranked against each other */
    CHK(ev_figures_build(&in, &f, &err));
    p = fig_pair_of(f, 0, "ext-b", "ext-a");
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(p, "ratio")) > 0);
    cJSON_Delete(f);
    cJSON_Delete(dev);
    cJSON_Delete(graph);
}
END_TEST

START_TEST(test_a_median_win_with_a_p95_loss_is_disclosed_and_figures_are_reproducible)
{
    const double d[7] = {10, 10, 10, 10, 10, 10, 11}, r1[7] = {5, 5, 5, 5, 5, 5, 50};
    ev_view_job jobs[2] = {
        fig_job("main/0/default/initial", "default", 0, 1, "completed", d, 7),
        fig_job("main/0/rows1/initial", "rows1", 0, 1, "completed", r1, 7),
    };
    ev_view_clock(&jobs[1], 1755);
    ev_view_clock(&jobs[1], 1700);
    ev_run_view in = fig_view(jobs, 2, 7);
    ev_err err = {{0}};
    cJSON *f1 = NULL, *f2 = NULL, *f3 = NULL;
    CHK(ev_figures_build(&in, &f1, &err));
    CHK(ev_figures_build(&in, &f2, &err));
    in.seed = 8;
    CHK(ev_figures_build(&in, &f3, &err));
    char *t1 = print_tree(f1), *t2 = print_tree(f2), *t3 = print_tree(f3);
    ck_assert_str_eq(t1, t2);
    ck_assert_str_ne(t1, t3); /* the seed is the interval's only randomness */

    const cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f1, "pairs"), 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(pair, "arm")->valuestring, "rows1");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(pair, "against")->valuestring, "default");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pair, "tail_disclosure")));
    double u = 0, pv = 0;
    ck_assert_int_eq(ev_fig_mann_whitney(r1, 7, d, 7, &u, &pv), EV_OK);
    ck_assert(u == 42.0);
    const cJSON *within = cJSON_GetObjectItemCaseSensitive(pair, "within");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(pair, "basis")->valuestring, "within-process");
    ck_assert(strtod(cJSON_GetObjectItemCaseSensitive(within, "mwu_p")->valuestring, NULL) == pv);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f1, "tail_disclosures")), 1);
    /* raw numbers: read the text back */
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(within, "ratio_of_medians");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(within, "ci_low");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(within, "ci_high");
    ck_assert(cJSON_IsRaw(r) && cJSON_IsRaw(lo) && cJSON_IsRaw(hi));
    double rv = strtod(r->valuestring, NULL), lv = strtod(lo->valuestring, NULL),
           hv = strtod(hi->valuestring, NULL);
    ck_assert(rv == 0.5);
    ck_assert(lv <= rv && rv <= hv);
    /* one round: the headline is the within-process ratio and interval, and
     * the verdict is read from that interval */
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(pair, "interval");
    ck_assert(strtod(cJSON_GetObjectItemCaseSensitive(pair, "ratio")->valuestring, NULL) == rv);
    ck_assert(strtod(cJSON_GetArrayItem(iv, 0)->valuestring, NULL) == lv);
    ck_assert(strtod(cJSON_GetArrayItem(iv, 1)->valuestring, NULL) == hv);
    ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pair, "significant")),
                     hv < 1.0 || lv > 1.0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(pair, "verdict")->valuestring, hv < 1.0 ? "win"
                                                                                     : lv > 1.0
                                                                                         ? "loss"
                                                                                         : "not significant");
    const cJSON *p95 = cJSON_GetObjectItemCaseSensitive(within, "p95_ratio");
    double qa = 0, qb = 0;
    ck_assert_int_eq(ev_quantile(r1, 7, 0.95, &qa), EV_OK);
    ck_assert_int_eq(ev_quantile(d, 7, 0.95, &qb), EV_OK);
    ck_assert_double_eq_tol(qa, 36.5, 1e-9);
    ck_assert(strtod(p95->valuestring, NULL) == qa / qb);
    const cJSON *j1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f1, "jobs"), 1);
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(j1, "sm_clock_max_mhz")) == 1755.0);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j1, "cold_over_hot")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j1, "cold_over_hot_reason")->valuestring,
                     "no cold samples");
    const cJSON *ac = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f1, "across"), 0);
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(ac, "wins")) == (hv < 1.0 ? 1.0 : 0.0));
    ck_assert(num(cJSON_GetObjectItemCaseSensitive(ac, "wins")) +
                  num(cJSON_GetObjectItemCaseSensitive(ac, "losses")) +
                  num(cJSON_GetObjectItemCaseSensitive(ac, "not_significant")) ==
              1.0);

    /* a parsed copy, canonicalised, prints to the same bytes */
    cJSON *back = NULL;
    CHK(ev_json_parse(t1, strlen(t1), EV_JSON_CANONICAL, &back, &err));
    ck_assert_int_eq(ev_figures_canon(back), EV_OK);
    char *t4 = print_tree(back);
    ck_assert_str_eq(t1, t4);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    cJSON_Delete(f1);
    cJSON_Delete(f2);
    cJSON_Delete(f3);
    cJSON_Delete(back);
}
END_TEST

START_TEST(test_figures_rebuilt_from_samples_csv_by_the_documented_recipe_equal_the_exported_ones)
{
    ev_err err = {{0}};
    ev_bundle *b = export_fixture();
    cJSON *val = parse_member(b, "validation.json");
    size_t n;
    const ev_member *m = ev_bundle_members(b, &n);
    cJSON *rebuilt = NULL;
    CHK(ev_figures_rebuild(m, n, &rebuilt, &err));
    cJSON *exported = cJSON_DetachItemFromObjectCaseSensitive(val, "figures");
    ck_assert_ptr_nonnull(exported);
    ck_assert_int_eq(ev_figures_canon(exported), EV_OK);
    char *a = print_tree(rebuilt), *e = print_tree(exported);
    ck_assert_str_eq(a, e);
    ck_assert_ptr_nonnull(strstr(e, "\"ratio_of_medians\":"));
    free(a);
    free(e);
    cJSON_Delete(rebuilt);
    cJSON_Delete(exported);
    cJSON_Delete(val);
    ev_bundle_free(b);
}
END_TEST

/* A copy of b's members with member name's bytes replaced by (p, n). */
static ev_member *members_with(const ev_bundle *b, const char *name, const char *p, size_t n, size_t *count)
{
    size_t k;
    const ev_member *m = ev_bundle_members(b, &k);
    ev_member *c = calloc(k, sizeof *c);
    memcpy(c, m, k * sizeof *c);
    for (size_t i = 0; i < k; i++)
        if (!strcmp(c[i].name, name)) {
            c[i].data = p;
            c[i].len = n;
        }
    *count = k;
    return c;
}

START_TEST(test_figures_verify_accepts_the_export_and_refuses_tampered_samples_or_figures)
{
    ev_err err = {{0}};
    ev_bundle *b = export_fixture();
    size_t n;
    const ev_member *m = ev_bundle_members(b, &n);
    CHK(ev_figures_verify(m, n, &err));

    /* one hot sample of a completed job made faster (its elapsed_ms left): the
     * medians, intervals and p-values no longer match */
    const ev_member *csv = member(b, "samples.csv");
    char *t = strndup(csv->data, csv->len);
    char *row =
        strstr(t, "\n1,1,1,reduce_sum,17,1024,1024,fp16,4,calibration,default,main,initial,completed,hot,3,");
    ck_assert_ptr_nonnull(row);
    char *cell = row + 1;
    for (int c = 0; c < 19; c++)
        cell = strchr(cell, ',') + 1;
    ck_assert(cell[0] >= '1' && cell[0] <= '9');
    cell[0] = '1'; /* per_op_us now starts with 1: about half */
    size_t k;
    ev_member *tm = members_with(b, "samples.csv", t, csv->len, &k);
    ck_assert_int_eq(ev_figures_verify(tm, k, &err), EV_EVERIFY);
    ck_assert_ptr_nonnull(strstr(err.msg, "figures differ"));
    free(tm);
    free(t);

    /* a figure changed in validation.json */
    const ev_member *val = member(b, "validation.json");
    t = strndup(val->data, val->len);
    char *w = strstr(t, "\"wins\":\t");
    ck_assert_ptr_nonnull(w);
    w += strlen("\"wins\":\t");
    *w = *w == '9' ? '8' : (char)(*w + 1);
    tm = members_with(b, "validation.json", t, val->len, &k);
    ck_assert_int_eq(ev_figures_verify(tm, k, &err), EV_EVERIFY);
    free(tm);
    free(t);

    /* rows of one job split apart: refused as malformed */
    t = strndup(csv->data, csv->len);
    char *first = strchr(t, '\n') + 1, *second = strchr(first, '\n') + 1, *third = strchr(second, '\n') + 1;
    /* the first data row moved to the end: its job's rows are split */
    ev_buf nb = EV_BUF_INIT;
    ck_assert_int_eq(ev_buf_append(&nb, t, (size_t)(first - t)), EV_OK);
    ck_assert_int_eq(ev_buf_append(&nb, second, (size_t)(third - second)), EV_OK);
    ck_assert_int_eq(ev_buf_append(&nb, third, (size_t)(t + csv->len - third)), EV_OK);
    ck_assert_int_eq(ev_buf_append(&nb, first, (size_t)(second - first)), EV_OK);
    tm = members_with(b, "samples.csv", nb.data, nb.len, &k);
    ck_assert_int_eq(ev_figures_verify(tm, k, &err), EV_EFORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "not"));
    free(tm);
    free(t);
    ev_buf_free(&nb);
    ev_bundle_free(b);
}
END_TEST

/* ---- tests: the commands ---------------------------------------------------------- */

START_TEST(test_export_command_prints_the_root_and_uses_the_documented_exit_codes)
{
    char ev[] = "evident", out[400], missing[400];
    snprintf(out, sizeof out, "%s/cli.zip", tmpdir);
    snprintf(missing, sizeof missing, "%s/nope.db", tmpdir);
    ev_buf o = EV_BUF_INIT;

    char *ok[] = {ev, "export", "--db", dbpath, "--out", out, NULL};
    ck_assert_int_eq(run_cmd(ok, &o), 0);
    ck_assert_uint_eq(o.len, 65);
    ck_assert_int_eq(o.data[64], '\n');
    ev_bundle *b = export_fixture();
    ck_assert(!memcmp(o.data, ev_bundle_root(b), 64));
    ev_bundle_free(b);

    char *help[] = {ev, "export", "--help", NULL};
    ck_assert_int_eq(run_cmd(help, NULL), 0);
    char *ver[] = {ev, "export", "--version", NULL};
    ck_assert_int_eq(run_cmd(ver, NULL), 0);
    char *noargs[] = {ev, "export", NULL};
    ck_assert_int_eq(run_cmd(noargs, NULL), 2);
    char *badrun[] = {ev, "export", "--db", dbpath, "--run", "x1", "--out", out, NULL};
    ck_assert_int_eq(run_cmd(badrun, NULL), 2);
    char *norun[] = {ev, "export", "--db", dbpath, "--run", "99", "--out", out, NULL};
    ck_assert_int_eq(run_cmd(norun, NULL), 2);
    char *nodb[] = {ev, "export", "--db", missing, "--out", out, NULL};
    ck_assert_int_eq(run_cmd(nodb, NULL), 2);

    /* report: from the archive, equal to the member but for the red notice
     * (this store is made through the store API, not by a run, so its bundle
     * does not verify: no plan); a non-zip fails (1) */
    char html[400];
    snprintf(html, sizeof html, "%s/r.html", tmpdir);
    char *rep[] = {ev, "report", out, "--out", html, NULL};
    ck_assert_int_eq(run_cmd(rep, NULL), 0);
    size_t n;
    ev_member *m = read_back(out, &n);
    const ev_member *h = ev_member_find(m, n, "report.html");
    ev_buf x = EV_BUF_INIT;
    slurp(html, &x);
    ck_assert_int_eq(ev_buf_puts(&x, ""), EV_OK);
    char *alarm = strstr(x.data, "<div class=\"alarm\">"), *end = alarm ? strstr(alarm, "</div>\n") : NULL;
    ck_assert_msg(alarm && end, "no notice on a bundle that does not verify");
    end += strlen("</div>\n");
    memmove(alarm, end, strlen(end) + 1);
    x.len = strlen(x.data);
    ck_assert_uint_eq(x.len, h->len);
    ck_assert(!memcmp(x.data, h->data, x.len));
    char md[400];
    snprintf(md, sizeof md, "%s/cases.md", tmpdir);
    char *repmd[] = {ev, "report", out, "--markdown", "--out", md, NULL};
    ck_assert_int_eq(run_cmd(repmd, NULL), 0);
    slurp(md, &x);
    ck_assert_ptr_nonnull(strstr(x.data, "| reduce_sum 17x1024 fp16 B4 | calibration |"));
    char *notzip[] = {ev, "report", dbpath, "--out", html, NULL};
    ck_assert_int_eq(run_cmd(notzip, NULL), 1);
    char *nofile[] = {ev, "report", missing, "--out", html, NULL};
    ck_assert_int_eq(run_cmd(nofile, NULL), 2);
    for (size_t i = 0; i < n; i++) {
        free((void *)m[i].name);
        free((void *)m[i].data);
    }
    free(m);
    ev_buf_free(&x);
    ev_buf_free(&o);
}
END_TEST

static Suite *bundle_suite(void)
{
    Suite *s = suite_create("bundle");
    TCase *z = tcase_create("zip");
    tcase_add_test(z, test_zip_writer_refuses_bad_and_duplicate_names);
    tcase_add_test(z, test_zip_entries_have_fixed_time_attributes_method_and_sorted_names);
    tcase_add_test(z, test_zip_writer_gives_the_same_bytes_whatever_the_input_order_and_time_zone);
    tcase_add_test(z, test_redaction_replaces_absolute_paths_and_is_idempotent);
    tcase_add_test(z, test_per_op_us_refuses_counts_beyond_two_to_the_53);
    tcase_add_test(z, test_mann_whitney_p_is_exact_for_small_samples);
    tcase_add_test(z, test_bootstrap_median_rank_law_equals_enumeration_of_every_resample);
    tcase_add_test(z, test_bootstrap_median_rank_law_agrees_with_plain_resampling);
    tcase_add_test(z, test_a_median_win_with_a_p95_loss_is_disclosed_and_figures_are_reproducible);
    tcase_add_test(z, test_an_arm_not_graph_captured_is_never_ranked_against_a_captured_one);
    tcase_add_test(z,
                   test_figures_over_rounds_pair_by_round_and_call_an_interval_holding_one_not_significant);
    tcase_add_test(z, test_markdown_names_the_best_peer_and_counts_auto_wins_and_losses_against_it);
    suite_add_tcase(s, z);

    TCase *e = tcase_create("export");
    tcase_add_checked_fixture(e, setup, teardown);
    tcase_set_timeout(e, 240);
    tcase_add_test(e, test_every_required_member_is_present_and_nothing_else);
    tcase_add_test(e, test_samples_csv_has_the_documented_header_and_one_row_per_stored_sample);
    tcase_add_test(e, test_per_op_us_is_computed_in_double_from_the_stored_value);
    tcase_add_test(e, test_validation_json_derives_outcomes_and_only_completed_jobs_claim_medians);
    tcase_add_test(e, test_outputs_are_present_for_validated_attempts_and_hash_to_their_receipts);
    tcase_add_test(e, test_receipts_list_every_other_member_and_hash_to_the_root);
    tcase_add_test(e, test_provenance_source_tree_hash_is_the_runners_hash_of_the_snapshot);
    tcase_add_test(e, test_model_json_is_the_refit_of_the_exported_medians);
    tcase_add_test(e, test_two_exports_of_one_store_are_byte_identical_in_any_time_zone);
    tcase_add_test(e, test_report_regenerated_from_the_archived_members_equals_the_exported_one);
    tcase_add_test(e, test_markdown_of_a_run_without_peers_or_ceiling_bytes_says_so);
    tcase_add_test(e, test_export_command_prints_the_root_and_uses_the_documented_exit_codes);
    tcase_add_test(e, test_figures_rebuilt_from_samples_csv_by_the_documented_recipe_equal_the_exported_ones);
    tcase_add_test(e, test_an_unfinished_run_exports_without_a_status_and_explains_its_failed_fit);
    tcase_add_test(e, test_figures_verify_accepts_the_export_and_refuses_tampered_samples_or_figures);
    suite_add_tcase(s, e);
    return s;
}

int main(void)
{
    int failed = ev_check_suite(bundle_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
