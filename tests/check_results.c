/*
 * check_results.c: the results as data (`evident results`), two runs
 * compared (`evident compare`) and report.html's headline (and its red
 * notice for a bundle that does not verify) and db/views.sql, on real cpu
 * bundles made here through the real pipeline (evident run, evident
 * export): one with one round, one with three.  A second bundle of each is
 * the first with one arm's raw samples made 16 times slower (samples.csv
 * rewritten, validation.json left as it was), so a comparison that read
 * the derived member instead of the raw samples would see no change.
 */
#include <check.h>

#include "progress.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "buf.h"
#include "sha256.h"
#include "bundle/zipwrite.h"
#include "evidence/attempt.h"
#include "evidence/compare.h"
#include "member.h"
#include "evidence/receipts.h"
#include "evidence/report.h"
#include "zipread.h"

static char g_dir[256];

/*
 * One round (a: the arms default, rows1, rows2 and a fault arm that
 * always exits 3), three rounds (r: default, rows1, rows2).  Every timed
 * job of both completes on any host, however busy (build_fixtures holds
 * them to it): a target of 1 us is shorter than one replay of 100 ops on
 * any machine, so every calibration chooses one replay, and a sample of
 * one replay is exempt from the upper side of both bands (docs/verify.md,
 * check 5), and no replay of 100 ops is as short as their lower sides
 * (0.25 and 0.5 us).  An op takes 8 (a) and 27 (r) times the pool's empty
 * task (the floor arm), so only a floor job 4 times slower than the
 * case's jobs would make one "impossible" (sample_rules.h), and the
 * measured threads run at real-time priority where the host grants it.
 */
static const char one_round[] =
    "{\"seed\": 11, \"cpu_priority\": \"realtime\", \"samples\": 5, \"warmup_ms\": 10, \"target_sample_ms\": "
    "0.001, \"cold_samples\": 1,\n"
    " \"host_threads\": 2,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\", \"fault-exit\"], \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3}],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4}]}\n";
static const char three_rounds[] =
    "{\"seed\": 12, \"cpu_priority\": \"realtime\", \"rounds\": 3, \"samples\": 3, \"warmup_ms\": 10, "
    "\"target_sample_ms\": 0.001,\n"
    " \"cold_samples\": 1, \"host_threads\": 2,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
    "\"default_rows\": 8}]}\n";

#define SLOWER 16.0 /* the factor one arm's samples are scaled by (a power of two: exact) */
/* The factor over rounds: the Welch interval's half-width is t(0.975) x
 * the rounds' spread, which a loaded host widens (under ASan beside
 * another suite 16 x was "inconclusive": the arm's three round medians
 * spread too far), so the rounds' copy is slowed by 2^10, which no spread
 * under about 20 x (one standard deviation, on the log scale) hides. */
#define SLOWER_ROUNDS 1024.0

/* g_dir/name into out[cap]. */
static void fixture(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* Stops the suite before any test when a fixture cannot be made (check's
 * assertions work only inside a test). */
#define FIXTURE_OK(cond, ...)                                                                                \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "check_results: fixture: " __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                                             \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* Runs the shell command cmd; returns its exit status (-1: not run). */
static int sh(const char *cmd)
{
    int st = system(cmd);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* The build directory of the programs. */
static const char *build_dir(void)
{
    const char *b = getenv("EV_BUILD");
    return b && *b ? b : "build";
}

/* A bundle read into members. */
typedef struct bundle {
    ev_buf zip;
    ev_zip *z;
    ev_member *m;
    size_t n;
} bundle;

/* Reads g_dir/name into *b (exits when it cannot: every bundle read is a
 * fixture made before the tests). */
static void bundle_read(const char *name, bundle *b)
{
    char p[400];
    ev_err err = {""};
    memset(b, 0, sizeof *b);
    fixture(name, p, sizeof p);
    FIXTURE_OK(ev_read_file(p, &b->zip, &err) == EV_OK, "%s", err.msg);
    FIXTURE_OK(ev_members_read_zip(b->zip.data, b->zip.len, &b->z, &b->m, &b->n, &err) == EV_OK, "%s: %s",
               name, err.msg);
}

static void bundle_free(bundle *b)
{
    free(b->m);
    ev_zip_free(b->z);
    ev_buf_free(&b->zip);
}

/* Writes g_dir/out: the bundle g_dir/in with member name's bytes replaced
 * by data[0..len) (exits on failure: a fixture). */
static void copy_with(const char *in, const char *name, const char *data, size_t len, const char *out)
{
    bundle b;
    ev_err err = {""};
    char p[400];
    bundle_read(in, &b);
    ev_member *m = calloc(b.n + 1, sizeof *m);
    FIXTURE_OK(m != NULL, "out of memory");
    for (size_t i = 0; i < b.n; i++) {
        m[i] = b.m[i];
        if (!strcmp(m[i].name, name)) {
            m[i].data = data;
            m[i].len = len;
        }
    }
    fixture(out, p, sizeof p);
    FIXTURE_OK(ev_zip_write(p, m, b.n, &err) == EV_OK, "%s", err.msg);
    free(m);
    bundle_free(&b);
}

/* Writes g_dir/out: the bundle g_dir/in with every per_op_us of arm's hot
 * samples.csv rows whose label is label (NULL: every label) multiplied by
 * factor, or, when factor is 0, those rows left out (exits on failure: a
 * fixture). */
static void make_scaled(const char *in, const char *arm, const char *label, double factor, const char *out)
{
    bundle b;
    ev_buf csv = EV_BUF_INIT;
    bundle_read(in, &b);
    const ev_member *s = ev_member_find(b.m, b.n, "samples.csv");
    FIXTURE_OK(s != NULL, "%s: no samples.csv", in);
    const char *t = s->data, *end = t + s->len;
    while (t < end) {
        const char *nl = memchr(t, '\n', (size_t)(end - t));
        size_t len = nl ? (size_t)(nl - t) : (size_t)(end - t);
        char line[4096], *f[32];
        size_t nf = 0;
        FIXTURE_OK(len < sizeof line, "%s: a line of %zu bytes", in, len);
        memcpy(line, t, len);
        line[len] = '\0';
        /* split on ',' keeping empty fields (samples.csv quotes nothing) */
        for (char *q = line; nf < 32;) {
            f[nf++] = q;
            char *c = strchr(q, ',');
            if (!c)
                break;
            *c = '\0';
            q = c + 1;
        }
        if (nf > 19 && !strcmp(f[10], arm) && (!label || !strcmp(f[12], label)) && !strcmp(f[14], "hot") &&
            factor == 0) {
            t += len + (nl ? 1 : 0);
            continue;
        }
        if (nf > 19 && !strcmp(f[10], arm) && (!label || !strcmp(f[12], label)) && factor != 0) {
            char v[64];
            snprintf(v, sizeof v, "%.17g", strtod(f[19], NULL) * factor);
            f[19] = v;
            for (size_t i = 0; i < nf; i++)
                FIXTURE_OK(ev_buf_printf(&csv, "%s%s", i ? "," : "", f[i]) == EV_OK, "out of memory");
        } else {
            for (size_t i = 0; i < nf; i++)
                FIXTURE_OK(ev_buf_printf(&csv, "%s%s", i ? "," : "", f[i]) == EV_OK, "out of memory");
        }
        FIXTURE_OK(ev_buf_puts(&csv, nl ? "\n" : "") == EV_OK, "out of memory");
        t += len + (nl ? 1 : 0);
    }
    bundle_free(&b);
    copy_with(in, "samples.csv", csv.data ? csv.data : "", csv.len, out);
    ev_buf_free(&csv);
}

/* make_scaled of every row of arm by factor. */
static void make_slower(const char *in, const char *arm, double factor, const char *out)
{
    make_scaled(in, arm, NULL, factor, out);
}

/* Exits unless every job of bundle g_dir/name but the fault arms'
 * completed: the fixtures' protocols make that so on any host (see
 * one_round), and every test below counts on it. */
static void all_timed_completed(const char *name)
{
    bundle b;
    const cJSON *j;
    bundle_read(name, &b);
    const ev_member *v = ev_member_find(b.m, b.n, "validation.json");
    FIXTURE_OK(v != NULL, "%s: no validation.json", name);
    cJSON *t = cJSON_ParseWithLength(v->data, v->len);
    FIXTURE_OK(t != NULL, "%s: validation.json is not JSON", name);
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(t, "jobs"))
    {
        const char *arm = cJSON_GetObjectItemCaseSensitive(j, "arm")->valuestring;
        const char *oc = cJSON_GetObjectItemCaseSensitive(j, "outcome")->valuestring;
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "attempts");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(at, cJSON_GetArraySize(at) - 1), "process"),
            "protocol_error");
        FIXTURE_OK(!strncmp(arm, "fault-", 6) || !strcmp(oc, "completed"),
                   "%s: job %s is %s (%s), not completed", name,
                   cJSON_GetObjectItemCaseSensitive(j, "job_key")->valuestring, oc,
                   cJSON_IsString(why) ? why->valuestring : "no protocol error");
    }
    cJSON_Delete(t);
    bundle_free(&b);
}

/* Runs protocol text into g_dir/name.db and exports g_dir/name.zip. */
static void make_bundle(const char *name, const char *protocol)
{
    char p[400], cmd[2000];
    ev_err err;
    snprintf(p, sizeof p, "%s/%s.json", g_dir, name);
    if (ev_write_file(p, protocol, strlen(protocol), &err)) {
        fprintf(stderr, "check_results: %s\n", err.msg);
        exit(1);
    }
    snprintf(cmd, sizeof cmd,
             "%s/evident run --protocol %s --backend cpu --db %s/%s.db > %s/%s.log 2>&1 && "
             "%s/evident export --db %s/%s.db --out %s/%s.zip >> %s/%s.log 2>&1",
             build_dir(), p, g_dir, name, g_dir, name, build_dir(), g_dir, name, g_dir, name, g_dir, name);
    if (sh(cmd)) {
        fprintf(stderr, "check_results: the fixture %s failed (%s/%s.log)\n", name, g_dir, name);
        exit(1);
    }
    snprintf(p, sizeof p, "%s.zip", name);
    all_timed_completed(p);
}

/* The arm slowed in a-slow.zip and r-slow.zip: the first with an estimate
 * and an interval (main: every timed arm has one). */
static char g_arm1[32], g_armr[32];

/* Results of bundle b as parsed JSON (asserts). */
static cJSON *results_json(const bundle *b)
{
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    ck_assert_msg(ev_results_write(b->m, b->n, 0, &out, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    cJSON *j = cJSON_Parse(out.data);
    ck_assert_msg(j != NULL, "results are not JSON: %.200s", out.data);
    ev_buf_free(&out);
    return j;
}

/* Picks the arm of bundle name whose interval is narrowest (log scale)
 * into arm[32] ("" when none has one), among the arms measured in every
 * round of the run (not auto, which begins after the fit, in round 2: the
 * copies made from the choice name rounds by number). */
static void narrowest_arm(const char *name, char arm[32])
{
    bundle b;
    const cJSON *r;
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    double best = 0;
    bundle_read(name, &b);
    FIXTURE_OK(ev_results_write(b.m, b.n, 0, &out, &err) == EV_OK && ev_buf_puts(&out, "") == EV_OK, "%s: %s",
               name, err.msg);
    cJSON *j = cJSON_Parse(out.data);
    FIXTURE_OK(j != NULL, "%s: results are not JSON", name);
    arm[0] = '\0';
    const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(j, "rounds");
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(r, "ci_us");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "n_rounds");
        if (!cJSON_IsArray(ci) || !(cJSON_GetArrayItem(ci, 0)->valuedouble > 0) || !cJSON_IsNumber(n) ||
            (cJSON_IsNumber(rounds) && n->valuedouble != rounds->valuedouble))
            continue;
        double w = log(cJSON_GetArrayItem(ci, 1)->valuedouble / cJSON_GetArrayItem(ci, 0)->valuedouble);
        if (!arm[0] || w < best) {
            snprintf(arm, 32, "%s", cJSON_GetObjectItemCaseSensitive(r, "arm")->valuestring);
            best = w;
        }
    }
    cJSON_Delete(j);
    ev_buf_free(&out);
    bundle_free(&b);
}

/* The noise floor percentage results give for g_dir/name into *pct (0
 * when none was measured): for making fixtures, outside any test. */
static void floor_of_fixture(const char *name, double *pct)
{
    bundle b;
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    bundle_read(name, &b);
    FIXTURE_OK(ev_results_write(b.m, b.n, 0, &out, &err) == EV_OK && ev_buf_puts(&out, "") == EV_OK, "%s: %s",
               name, err.msg);
    cJSON *j = cJSON_Parse(out.data);
    FIXTURE_OK(j != NULL, "%s: results are not JSON", name);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "noise_floor");
    *pct = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "measured"))
               ? cJSON_GetObjectItemCaseSensitive(f, "pct")->valuedouble
               : 0;
    cJSON_Delete(j);
    ev_buf_free(&out);
    bundle_free(&b);
}

/* Writes g_dir/out: g_dir/in as a bundle of an earlier version of the
 * report code would be: its report.html other bytes (a comment added), and
 * receipts.json listing them (so every other check still passes). */
static void make_earlier_page(const char *in, const char *out)
{
    bundle b;
    ev_buf page = EV_BUF_INIT, rec = EV_BUF_INIT;
    ev_err err = {""};
    char p[400];
    size_t n = 0;
    bundle_read(in, &b);
    ev_member *m = calloc(b.n + 1, sizeof *m);
    ev_receipt *r = calloc(b.n + 1, sizeof *r);
    char(*hex)[EV_SHA256_HEX_LEN + 1] = calloc(b.n + 1, sizeof *hex);
    FIXTURE_OK(m != NULL && r != NULL && hex != NULL, "out of memory");
    for (size_t i = 0; i < b.n; i++) {
        m[i] = b.m[i];
        if (!strcmp(m[i].name, "report.html")) {
            FIXTURE_OK(ev_buf_append(&page, m[i].data, m[i].len) == EV_OK &&
                           ev_buf_puts(&page, "<!-- an earlier version -->\n") == EV_OK,
                       "out of memory");
            m[i].data = page.data;
            m[i].len = page.len;
        }
    }
    for (size_t i = 0; i < b.n; i++) {
        if (!strcmp(m[i].name, "receipts.json"))
            continue;
        FIXTURE_OK(ev_sha256_hex(m[i].data ? m[i].data : "", m[i].len, hex[n]) == EV_OK, "sha256");
        r[n] = (ev_receipt){m[i].name, (int64_t)m[i].len, hex[n]};
        n++;
    }
    FIXTURE_OK(ev_receipts_json(EV_BUNDLE_FORMAT, r, n, &rec) == EV_OK, "receipts.json");
    for (size_t i = 0; i < b.n; i++)
        if (!strcmp(m[i].name, "receipts.json")) {
            m[i].data = rec.data;
            m[i].len = rec.len;
        }
    fixture(out, p, sizeof p);
    FIXTURE_OK(ev_zip_write(p, m, b.n, &err) == EV_OK, "%s", err.msg);
    free(m);
    free(r);
    free(hex);
    ev_buf_free(&page);
    ev_buf_free(&rec);
    bundle_free(&b);
}

/* Sets usable[k] to 1 when round k + 1 of arm (any case) in g_dir/name
 * has a median in the figures (validation.json), else 0. */
static void rounds_usable(const char *name, const char *arm, int usable[3])
{
    bundle b;
    const cJSON *a, *x;
    bundle_read(name, &b);
    const ev_member *v = ev_member_find(b.m, b.n, "validation.json");
    FIXTURE_OK(v != NULL, "%s: no validation.json", name);
    cJSON *j = cJSON_ParseWithLength(v->data, v->len);
    FIXTURE_OK(j != NULL, "%s: validation.json is not JSON", name);
    memset(usable, 0, 3 * sizeof *usable);
    cJSON_ArrayForEach(
        a, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "figures"), "arms"))
    {
        int k = 0;
        if (strcmp(cJSON_GetObjectItemCaseSensitive(a, "arm")->valuestring, arm))
            continue;
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(a, "round_medians_us"))
        {
            if (k < 3)
                usable[k] |= cJSON_IsNumber(x);
            k++;
        }
    }
    cJSON_Delete(j);
    bundle_free(&b);
}

/* Writes g_dir/out: g_dir/in with the device name of its first
 * invocation's environment in validation.json replaced by name (the raw
 * text edited, so every number keeps its bytes). */
static void make_other_device(const char *in, const char *name, const char *out)
{
    bundle b;
    ev_buf t = EV_BUF_INIT;
    bundle_read(in, &b);
    const ev_member *v = ev_member_find(b.m, b.n, "validation.json");
    FIXTURE_OK(v != NULL, "%s: no validation.json", in);
    const char *text = v->data, *end = text + v->len, *dev = NULL, *p;
    for (p = text; p + 9 < end && !dev; p++)
        if (!memcmp(p, "\"device\":", 9))
            dev = p;
    const char *key = NULL;
    for (p = dev; p && p + 7 < end && !key; p++)
        if (!memcmp(p, "\"name\":", 7))
            key = p;
    FIXTURE_OK(key != NULL, "%s: no device name", in);
    const char *q1 = memchr(key + 7, '"', (size_t)(end - key - 7));
    const char *q2 = q1 ? memchr(q1 + 1, '"', (size_t)(end - q1 - 1)) : NULL;
    FIXTURE_OK(q2 != NULL, "%s: a device name that is not a string", in);
    FIXTURE_OK(ev_buf_append(&t, text, (size_t)(q1 + 1 - text)) == EV_OK && ev_buf_puts(&t, name) == EV_OK &&
                   ev_buf_append(&t, q2, (size_t)(end - q2)) == EV_OK,
               "out of memory");
    bundle_free(&b);
    copy_with(in, "validation.json", t.data, t.len, out);
    ev_buf_free(&t);
}

/* Writes g_dir/out: g_dir/in with protocol.json's "rounds" declaring k
 * (the raw text edited: the first "rounds": <digits>). */
static void make_rounds_declared(const char *in, int k, const char *out)
{
    bundle b;
    ev_buf t = EV_BUF_INIT;
    bundle_read(in, &b);
    const ev_member *v = ev_member_find(b.m, b.n, "protocol.json");
    FIXTURE_OK(v != NULL, "%s: no protocol.json", in);
    const char *text = v->data, *end = text + v->len, *p, *at = NULL;
    for (p = text; p + 10 < end && !at; p++)
        if (!memcmp(p, "\"rounds\": ", 10))
            at = p + 10;
    FIXTURE_OK(at != NULL, "%s: protocol.json declares no rounds", in);
    const char *d = at;
    while (d < end && *d >= '0' && *d <= '9')
        d++;
    FIXTURE_OK(ev_buf_append(&t, text, (size_t)(at - text)) == EV_OK && ev_buf_printf(&t, "%d", k) == EV_OK &&
                   ev_buf_append(&t, d, (size_t)(end - d)) == EV_OK,
               "out of memory");
    bundle_free(&b);
    copy_with(in, "protocol.json", t.data, t.len, out);
    ev_buf_free(&t);
}

static void build_fixtures(void)
{
    snprintf(g_dir, sizeof g_dir, "%s/evident-results-XXXXXX", ev_test_tmp());
    if (!mkdtemp(g_dir)) {
        perror("check_results: mkdtemp");
        exit(1);
    }
    make_bundle("a", one_round);
    make_bundle("r", three_rounds);
}

static void remove_fixtures(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (sh(cmd))
        fprintf(stderr, "check_results: could not remove %s\n", g_dir);
}

/* ---- evident results ------------------------------------------------------------ */

START_TEST(test_results_give_one_row_per_case_and_arm_with_gb_per_s_and_the_ceiling_pct)
{
    bundle b;
    const cJSON *r;
    char root[EV_SHA256_HEX_LEN + 1];
    bundle_read("a.zip", &b);
    cJSON *j = results_json(&b);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, "evident-results/1");
    const ev_member *rc = ev_member_find(b.m, b.n, "receipts.json");
    ck_assert_int_eq(ev_sha256_hex(rc->data, rc->len, root), EV_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "root")->valuestring, root);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 5); /* one case x default, rows1, rows2, auto, fault-exit */
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "ceiling_gb_per_s")));
    double ceil_gbps = cJSON_GetObjectItemCaseSensitive(j, "ceiling_gb_per_s")->valuedouble;
    size_t estimated = 0;
    cJSON_ArrayForEach(r, rows)
    {
        const char *oc = cJSON_GetObjectItemCaseSensitive(r, "outcome")->valuestring;
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(r, "median_us");
        ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(r, "bytes_per_op")->valuedouble,
                            (17.0 * 1024 + 17) * 2);
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(r, "arm")->valuestring, "fault-exit")) {
            ck_assert_str_eq(oc, "failed-exit");
            ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "reason")->valuestring,
                             "exit code 3: fault arm fault-exit: exit 3 (retry-1: failed-exit)");
            ck_assert(cJSON_IsNull(med));
            continue;
        }
        ck_assert_str_eq(oc, "completed"); /* every timed job (the fixture's protocol) */
        estimated++;
        double us = med->valuedouble, gbps = cJSON_GetObjectItemCaseSensitive(r, "gb_per_s")->valuedouble;
        ck_assert_double_eq_tol(gbps, (17.0 * 1024 + 17) * 2 / us / 1e3, 1e-12 * gbps);
        ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(r, "ceiling_pct")->valuedouble,
                                100 * gbps / ceil_gbps, 1e-9);
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(r, "ci_us");
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, "within-process");
        ck_assert(cJSON_GetArrayItem(ci, 0)->valuedouble <= us &&
                  us <= cJSON_GetArrayItem(ci, 1)->valuedouble);
    }
    ck_assert_uint_eq(estimated, 4);
    cJSON_Delete(j);

    /* CSV: a header and the same rows, the format in the first column */
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    ck_assert_int_eq(ev_results_write(b.m, b.n, 1, &out, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    ck_assert(!strncmp(out.data, "format,case_index,op,", 21));
    size_t lines = 0;
    for (const char *p = out.data; (p = strstr(p, "\nevident-results/1,0,reduce_sum,17,1024,1024,fp16,"));
         p++)
        lines++;
    ck_assert_uint_eq(lines, 5);
    ev_buf_free(&out);
    bundle_free(&b);
}
END_TEST

START_TEST(test_results_over_rounds_give_a_t_interval_around_the_estimate)
{
    bundle b;
    const cJSON *r;
    size_t with_ci = 0;
    bundle_read("r.zip", &b);
    cJSON *j = results_json(&b);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(j, "rounds")->valuedouble, 3);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(r, "ci_us");
        ck_assert_int_ge((int)cJSON_GetObjectItemCaseSensitive(r, "n_rounds")->valuedouble, 2); /* auto: 2 */
        ck_assert(cJSON_IsArray(ci)); /* every arm completed its rounds (the fixture's protocol) */
        with_ci++;
        double us = cJSON_GetObjectItemCaseSensitive(r, "median_us")->valuedouble;
        double lo = cJSON_GetArrayItem(ci, 0)->valuedouble, hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, "rounds");
        /* symmetric on the log scale around the geometric mean */
        ck_assert(lo <= us && us <= hi);
        ck_assert_double_eq_tol(log(us) - log(lo), log(hi) - log(us), 1e-9);
    }
    ck_assert_uint_eq(with_ci, 4);
    cJSON_Delete(j);
    bundle_free(&b);
}
END_TEST

/* ---- evident compare ------------------------------------------------------------ */

/* Compares g_dir/a against g_dir/b as JSON (asserts).  OUT: *gated. */
static cJSON *compare_json(const char *a, const char *b, double fail_slower, size_t *gated)
{
    bundle x, y;
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    ev_compare_opts o = {1, fail_slower >= 0, fail_slower >= 0 ? fail_slower : 0, 0};
    ev_compare_result res;
    bundle_read(a, &x);
    bundle_read(b, &y);
    ck_assert_msg(ev_compare_write(x.m, x.n, y.m, y.n, &o, &out, &res, &err) == EV_OK, "%s", err.msg);
    *gated = res.gated;
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    cJSON *j = cJSON_Parse(out.data);
    ck_assert_msg(j != NULL, "not JSON: %.200s", out.data);
    ev_buf_free(&out);
    bundle_free(&x);
    bundle_free(&y);
    return j;
}

START_TEST(test_a_run_compared_with_itself_has_ratios_of_one_and_nothing_significant)
{
    size_t gated = 9;
    const cJSON *r;
    cJSON *j = compare_json("a.zip", "a.zip", 0, &gated);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, "evident-compare/2");
    ck_assert_uint_eq(gated, 0);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const char *v = cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring;
        if (!strcmp(v, "no ratio"))
            continue;
        ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(r, "ratio")->valuedouble, 1.0);
        ck_assert_str_eq(v, "not replicated"); /* one round */
    }
    const cJSON *su = cJSON_GetObjectItemCaseSensitive(j, "summary");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(su, "slower")->valuedouble, 0);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(su, "faster")->valuedouble, 0);
    cJSON_Delete(j);
    /* over rounds: never faster or slower, however noisy the host */
    j = compare_json("r.zip", "r.zip", -1, &gated);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const char *v = cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring;
        ck_assert_msg(!strcmp(v, "no ratio") || !strcmp(v, "not significant") || !strcmp(v, "inconclusive"),
                      "%s", v);
    }
    cJSON_Delete(j);
}
END_TEST

/* The noise floor results give for g_dir/name: *pct (0 when none was
 * measured); returns whether one was. */
static int floor_of(const char *name, double *pct)
{
    bundle b;
    bundle_read(name, &b);
    cJSON *j = results_json(&b);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "noise_floor");
    int measured = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "measured"));
    *pct = measured ? cJSON_GetObjectItemCaseSensitive(f, "pct")->valuedouble : 0;
    cJSON_Delete(j);
    bundle_free(&b);
    return measured;
}

/* The row of arm in compare document j (asserts there is one). */
static const cJSON *compare_row(const cJSON *j, const char *arm)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(r, "arm")->valuestring, arm))
            return r;
    }
    ck_abort_msg("no row for %s", arm);
    return NULL;
}

/* Checks the comparison of name against its copy with arm slowed: arm
 * slower by factor, every other arm 1 and not called (one round: not
 * replicated; rounds: not significant or inconclusive); *gated counts the
 * one beyond 10%. */
static void check_slowed(const char *name, const char *slowed, const char *arm, const char *basis,
                         double factor)
{
    size_t gated = 0, seen = 0;
    const cJSON *r;
    cJSON *j = compare_json(name, slowed, 10, &gated);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const char *a = cJSON_GetObjectItemCaseSensitive(r, "arm")->valuestring;
        const char *v = cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring;
        if (strcmp(a, arm)) {
            if (!strcmp(basis, "rounds"))
                ck_assert_msg(!strcmp(v, "no ratio") || !strcmp(v, "not significant") ||
                                  !strcmp(v, "inconclusive"),
                              "%s: %s", a, v);
            else if (strcmp(v, "no ratio"))
                ck_assert_str_eq(v, "not replicated");
            continue;
        }
        seen++;
        ck_assert_str_eq(v, "slower");
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, basis);
        ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(r, "ratio")->valuedouble, factor,
                                factor * 1e-10);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "beyond_gate")));
    }
    ck_assert_uint_eq(seen, 1);
    ck_assert_uint_eq(gated, 1);
    cJSON_Delete(j);
}

START_TEST(test_compare_finds_an_arm_made_slower_and_fail_slower_exits_1)
{
    char a[400], b[400], cmd[1400];
    double pct;
    ck_assert(floor_of("a.zip", &pct)); /* the default's main and recheck jobs completed */
    check_slowed("a.zip", "a-slow.zip", g_arm1, "within-process", SLOWER);
    /* the command: markdown by default, exit 1 beyond the gate, 0 within it
     * (the slowed copy's samples were edited, so it does not verify: the
     * command compares it only when told not to verify) */
    fixture("a.zip", a, sizeof a);
    fixture("a-slow.zip", b, sizeof b);
    snprintf(cmd, sizeof cmd,
             "%s/evident compare %s %s --no-verify --fail-slower 10 > %s/cmp.md 2> %s/cmp.err", build_dir(),
             a, b, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 1);
    snprintf(cmd, sizeof cmd,
             "grep -q '| slower (beyond the gate) |' %s/cmp.md && grep -q 'beyond 10%%' %s/cmp.err", g_dir,
             g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --no-verify --fail-slower 2000 > /dev/null 2>&1",
             build_dir(), a, b);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --no-verify > /dev/null 2>&1", build_dir(), a, b);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

START_TEST(test_compare_over_rounds_finds_the_slowed_arm_with_a_welch_interval)
{
    check_slowed("r.zip", "r-slow.zip", g_armr, "rounds", SLOWER_ROUNDS);
}
END_TEST

/* One round: a slow-down inside the noise floor the run measured is not
 * called, even where the within-process interval excludes 1, and the gate
 * passes it; the floor and its basis are printed. */
START_TEST(test_one_round_a_slow_down_within_the_measured_floor_is_not_replicated_and_not_gated)
{
    char a[400], b[400], cmd[1400];
    double pct = 0;
    size_t gated = 9;
    ck_assert(floor_of("a.zip", &pct)); /* the default's main and recheck jobs completed */
    cJSON *j = compare_json("a.zip", "a-within.zip", 0, &gated);
    const cJSON *r = compare_row(j, g_arm1);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring, "not replicated");
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(r, "verdict_reason")->valuestring, "within the noise floor"));
    ck_assert_uint_eq(gated, 0);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(j, "noise_floor");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fl, "measured")));
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(fl, "pct")->valuedouble, pct, 1e-9);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(fl, "factor")->valuedouble, 1.25);
    cJSON_Delete(j);
    /* the command: the gate at 0% passes it (exit 0) and the floor is printed */
    fixture("a.zip", a, sizeof a);
    fixture("a-within.zip", b, sizeof b);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --no-verify --fail-slower 0 > %s/within.md 2>&1",
             build_dir(), a, b, g_dir); /* a-within's samples were edited: it does not verify */
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q 'largest recheck drift\\|measured none' %s/within.md", g_dir);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

/* Rounds: one wild round (the arm 465 times slower in round 2 only) gives
 * an interval that holds 1 and reaches far beyond the floor: inconclusive,
 * exit 3, not a confident "not significant". */
START_TEST(test_rounds_too_noisy_to_call_are_inconclusive_and_exit_3)
{
    char a[400], b[400], cmd[1400];
    size_t gated = 9;
    cJSON *j = compare_json("r.zip", "r-wild.zip", -1, &gated);
    const cJSON *r = compare_row(j, g_armr);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring, "inconclusive");
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(r, "verdict_reason")->valuestring, "too noisy"));
    ck_assert(cJSON_GetObjectItemCaseSensitive(r, "ratio")->valuedouble > 2); /* 465^(1/3) ~ 7.7 */
    ck_assert_int_ge(
        (int)cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "summary"), "inconclusive")
            ->valuedouble,
        1);
    cJSON_Delete(j);
    fixture("r.zip", a, sizeof a);
    fixture("r-wild.zip", b, sizeof b);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --no-verify > /dev/null 2> %s/wild.err", build_dir(),
             a, b, g_dir); /* r-wild's samples were edited */
    ck_assert_int_eq(sh(cmd), 3);
    snprintf(cmd, sizeof cmd, "grep -q 'too few or too noisy' %s/wild.err", g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    /* too few: only round 1 of the arm has samples in B */
    j = compare_json("r.zip", "r-thin.zip", -1, &gated);
    r = compare_row(j, g_armr);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring, "inconclusive");
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(r, "verdict_reason")->valuestring, "too few usable rounds"));
    cJSON_Delete(j);
}
END_TEST

/* Two runs of other setups (here: other protocols; and the same run with
 * another device name) are compared and the header says how they differ;
 * a gate over them is refused (exit 2) unless --allow-different. */
START_TEST(test_compare_of_different_setups_says_so_and_refuses_a_gate_unless_allowed)
{
    char a[400], b[400], d[400], cmd[1600];
    fixture("a.zip", a, sizeof a);
    fixture("r.zip", b, sizeof b);
    fixture("a-h100.zip", d, sizeof d);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s > %s/diff.md 2>&1", build_dir(), a, b, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q 'A and B differ in setup:.*protocol (' %s/diff.md", g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --fail-slower 10 > /dev/null 2> %s/diff.err",
             build_dir(), a, b, g_dir);
    ck_assert_int_eq(sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "grep -q -- '--allow-different' %s/diff.err && test $(wc -l < %s/diff.err) = 1",
             g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --fail-slower 10 --allow-different > /dev/null 2>&1",
             build_dir(), a, b);
    ck_assert_int_eq(sh(cmd), 0);
    /* the same samples on "another device": the device is named, the gate refused */
    snprintf(cmd, sizeof cmd,
             "%s/evident compare %s %s --no-verify --json --fail-slower 10 > %s/dev.json 2>/dev/null",
             build_dir(), a, d, g_dir); /* a-h100's environment was edited */
    ck_assert_int_eq(sh(cmd), 2);
    ev_buf t = EV_BUF_INIT;
    ev_err err = {""};
    char p[400];
    fixture("dev.json", p, sizeof p);
    ck_assert_int_eq(ev_read_file(p, &t, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&t, ""), EV_OK);
    cJSON *j = cJSON_Parse(t.data);
    ck_assert_ptr_nonnull(j);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "same_setup")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "gate_refused")));
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItemCaseSensitive(j, "differences")->valuestring,
                                 "device (")); /* x / NVIDIA H100 */
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(j, "differences")->valuestring, "NVIDIA H100"));
    cJSON_Delete(j);
    ev_buf_free(&t);
    snprintf(cmd, sizeof cmd,
             "%s/evident compare %s %s --no-verify --fail-slower 10 --allow-different > /dev/null 2>&1",
             build_dir(), a, d);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

/* Compares members x[0..nx) against y[0..ny) as JSON (asserts). */
static cJSON *compare_members_json(const ev_member *x, size_t nx, const ev_member *y, size_t ny)
{
    ev_buf out = EV_BUF_INIT;
    ev_err err = {""};
    ev_compare_opts o = {1, 0, 0, 0};
    ev_compare_result res;
    ck_assert_msg(ev_compare_write(x, nx, y, ny, &o, &out, &res, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    cJSON *j = cJSON_Parse(out.data);
    ck_assert_msg(j != NULL, "not JSON: %.200s", out.data);
    ev_buf_free(&out);
    return j;
}

/* The measured sources of A and B (their sources/ members) decide what a
 * ratio can mean: the same files byte for byte make an A/A comparison,
 * and the document says so; a file that differs or is on one side only is
 * named, and where the setups are the same the peers' own B / A (their
 * versions the same in both) is given beside the calls: the shift between
 * the two runs that a change's ratio must be read against (on two H100
 * hosts, programs with identical code moved up to 31%:
 * docs/experiments/hopper-h100/compare-496db61-dc37ae8.md).  A real GPU
 * bundle, receipts/h100, against itself and against a copy of its members
 * with one source edited and one left out. */
START_TEST(test_compare_names_the_measured_sources_that_differ_and_the_peers_shift_beside_them)
{
    ev_buf zip = EV_BUF_INIT;
    ev_zip *z = NULL;
    ev_member *m = NULL, *e = NULL;
    size_t n = 0, ne = 0, files = 0;
    ev_err err = {""};
    ck_assert_msg(ev_read_file("receipts/h100/delivery.zip", &zip, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_members_read_zip(zip.data, zip.len, &z, &m, &n, &err) == EV_OK, "%s", err.msg);
    for (size_t i = 0; i < n; i++)
        files += !strncmp(m[i].name, "sources/", 8);
    ck_assert_uint_gt(files, 50);

    cJSON *j = compare_members_json(m, n, m, n);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "sources");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(src, "same")));
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(src, "files_a")->valuedouble, (int)files);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(src, "differ")), 0);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "peers_shift"))); /* A/A: no controls needed */
    cJSON_Delete(j);

    /* B: lanes.c edited, selector.h left out */
    ck_assert_ptr_nonnull(e = calloc(n, sizeof *e));
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(m[i].name, "sources/kernels/selector.h"))
            continue;
        e[ne] = m[i];
        if (!strcmp(m[i].name, "sources/kernels/lanes.c")) {
            e[ne].data = "/* edited */\n";
            e[ne].len = strlen("/* edited */\n");
        }
        ne++;
    }
    ck_assert_uint_eq(ne, n - 1);
    j = compare_members_json(m, n, e, ne);
    src = cJSON_GetObjectItemCaseSensitive(j, "sources");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(src, "same")));
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(src, "files_b")->valuedouble, (int)files - 1);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(src, "differ");
    ck_assert_int_eq(cJSON_GetArraySize(d), 2);
    ck_assert_str_eq(cJSON_GetArrayItem(d, 0)->valuestring, "kernels/lanes.c");
    ck_assert_str_eq(cJSON_GetArrayItem(d, 1)->valuestring, "kernels/selector.h (only in A)");
    /* the peers: cub and torch-compile on 30 cases, B / A exactly 1 (the same samples), none called */
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "peers_shift");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(ps, "pairs")->valuedouble, 60);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(ps, "min")->valuedouble, 1.0);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(ps, "max")->valuedouble, 1.0);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(ps, "called")->valuedouble, 0);
    cJSON_Delete(j);

    /* markdown: the same words */
    ev_buf out = EV_BUF_INIT;
    ev_compare_opts o = {0, 0, 0, 0};
    ev_compare_result res;
    ck_assert_int_eq(ev_compare_write(m, n, e, ne, &o, &out, &res, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    ck_assert_msg(strstr(out.data, "Measured sources: 2 files differ (kernels/lanes.c, kernels/selector.h "
                                   "(only in A))"),
                  "%.2000s", out.data);
    ck_assert_msg(strstr(out.data, "The peers (cub, torch-compile: the same versions in A and B) moved B / A "
                                   "from 1.000 to 1.000 (60 pairs, 0 called)"),
                  "%.2000s", out.data);
    ev_buf_free(&out);
    ck_assert_int_eq(ev_compare_write(m, n, m, n, &o, &out, &res, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&out, ""), EV_OK);
    ck_assert_msg(strstr(out.data, "Measured sources: the same in A and B"), "%.2000s", out.data);
    ev_buf_free(&out);
    free(e);
    free(m);
    ev_zip_free(z);
    ev_buf_free(&zip);
}
END_TEST

/* results --json and compare --json name the device (driver and runtime
 * included), the host and the peer versions at their top level (compare:
 * of each run), with each run's noise floor. */
START_TEST(test_results_and_compare_json_carry_device_driver_host_and_peer_versions_at_the_top)
{
    bundle b;
    size_t gated;
    bundle_read("a.zip", &b);
    cJSON *j = results_json(&b);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "device"),
                *h = cJSON_GetObjectItemCaseSensitive(j, "host");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(d, "backend")->valuestring, "cpu");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "name")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "driver_version")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(h, "kernel")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(h, "host_hash")));
    ck_assert_uint_eq(strlen(cJSON_GetObjectItemCaseSensitive(h, "host_hash")->valuestring), 64);
    ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "peer_versions"))); /* schema 3 and later */
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "replicated")));
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(j, "basis")->valuestring, "not replicated"));
    ck_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "pairs")));
    cJSON_Delete(j);
    bundle_free(&b);
    j = compare_json("a.zip", "r.zip", -1, &gated);
    for (int k = 0; k < 2; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k ? "b" : "a");
        ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(x, "device"), "driver_version")));
        ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(x, "host")));
        ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(x, "peer_versions")));
        ck_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(x, "noise_floor")));
    }
    cJSON_Delete(j);
}
END_TEST

/* Bundles of earlier formats are read under their own rules and never
 * refused for their age: the committed five-round H200 bundles (bundle
 * format 1, a store before schema 3) and a bundle whose protocol.json
 * declares rounds it does not hold, or rounds out of range; each says
 * which checks did not apply. */
START_TEST(test_bundles_of_earlier_formats_are_read_and_say_which_checks_did_not_apply)
{
    static const char *const old[2] = {"docs/experiments/intervals-h200/pair1-run1.zip",
                                       "docs/experiments/intervals-h200/pair1-run2.zip"};
    char cmd[1600];
    ev_buf t = EV_BUF_INIT;
    ev_err err = {""};
    /* measured by earlier kernels, whose graph receipts this selector no
     * longer plans: they do not verify today, so they are read unverified
     * (stderr says so) */
    snprintf(cmd, sizeof cmd, "%s/evident results %s --json --no-verify > %s/old.json 2>/dev/null",
             build_dir(), old[0], g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    char p[400];
    fixture("old.json", p, sizeof p);
    ck_assert_int_eq(ev_read_file(p, &t, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&t, ""), EV_OK);
    cJSON *j = cJSON_Parse(t.data);
    ck_assert_ptr_nonnull(j);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "peer_versions")));
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(j, "peer_versions_reason"));
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "format_notes"), 0)->valuestring,
               "peer versions"));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "replicated")));
    cJSON_Delete(j);
    ev_buf_free(&t);
    /* compared and reported, never refused (0: called, or 3: some pair inconclusive) */
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --no-verify > %s/old.md 2>/dev/null", build_dir(),
             old[0], old[1], g_dir);
    int rc = sh(cmd);
    ck_assert_msg(rc == 0 || rc == 3, "compare of two earlier bundles: exit %d", rc);
    snprintf(cmd, sizeof cmd, "grep -q \"A's format: .*peer versions\" %s/old.md", g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "%s/evident report %s --out %s/old.html 2>/dev/null && grep -q 'rounds and basis' %s/old.html",
             build_dir(), old[0], g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    /* a bundle whose own page an earlier version drew: said so, not alarmed over */
    char e[400];
    fixture("a-earlier.zip", e, sizeof e);
    snprintf(
        cmd, sizeof cmd,
        "%s/evident report %s --out %s/earlier.html 2> %s/earlier.err && grep -q 'every other check passes' "
        "%s/earlier.err && grep -q 'rounds and basis' %s/earlier.html",
        build_dir(), e, g_dir, g_dir, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    /* rounds declared but not held, and rounds out of range */
    static const char *const cases[2][2] = {
        {"r-declares-4.zip", "another number of rounds than protocol.json's 4"},
        {"r-declares-99.zip", "outside 1..64"}};
    for (int k = 0; k < 2; k++) {
        bundle b;
        bundle_read(cases[k][0], &b);
        j = results_json(&b);
        const cJSON *n;
        int seen = 0;
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(j, "format_notes")) seen |=
            strstr(n->valuestring, cases[k][1]) != NULL;
        ck_assert_msg(seen, "%s: no note '%s'", cases[k][0], cases[k][1]);
        cJSON_Delete(j);
        bundle_free(&b);
    }
}
END_TEST

/* ---- report.html's headline ------------------------------------------------------ */

/* The row of report page html whose header is th: its <td ...> opening
 * tag and text into tag[cap] (asserts there is one). */
static void head_row(const char *html, const char *th, char *tag, size_t cap)
{
    char want[120];
    snprintf(want, sizeof want, "<th>%s</th>", th);
    const char *at = strstr(html, want);
    ck_assert_msg(at != NULL, "no row %s", th);
    at += strlen(want);
    const char *end = strstr(at, "</td>");
    ck_assert_ptr_nonnull(end);
    snprintf(tag, cap, "%.*s", (int)(end - at), at);
}

START_TEST(test_the_report_leads_with_the_headline_and_an_intact_bundle_gets_its_own_page)
{
    char a[400], html[400], cmd[1400];
    bundle b;
    ev_buf page = EV_BUF_INIT;
    ev_err err = {""};
    fixture("a.zip", a, sizeof a);
    fixture("a.html", html, sizeof html);
    snprintf(cmd, sizeof cmd, "%s/evident report %s --out %s 2> %s/a-report.err", build_dir(), a, html,
             g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    ck_assert_int_eq(ev_read_file(html, &page, &err), EV_OK);
    bundle_read("a.zip", &b);
    const ev_member *held = ev_member_find(b.m, b.n, "report.html");
    ck_assert_ptr_nonnull(held);
    ck_assert_uint_eq(held->len, page.len);
    ck_assert(!memcmp(held->data, page.data, page.len)); /* the member, byte for byte */
    ck_assert_int_eq(ev_buf_puts(&page, ""), EV_OK);
    const char *head = strstr(page.data, "<h2>Headline</h2>"), *run = strstr(page.data, "<h2>Run</h2>");
    ck_assert_msg(head && run && head < run, "the headline is not first");
    ck_assert_ptr_null(strstr(page.data, "class=\"alarm\""));
    ck_assert_ptr_nonnull(strstr(head, "<th>auto / best peer</th>"));
    ck_assert_ptr_nonnull(strstr(head, "(backend cpu)"));
    cJSON *res = results_json(&b);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(res, "ceiling_gb_per_s")));
    ck_assert_ptr_nonnull(strstr(head, "<th>ceiling</th>"));
    cJSON_Delete(res);
    ck_assert_ptr_nonnull(strstr(page.data, "GB/s"));
    ck_assert_ptr_nonnull(strstr(page.data, "<h2>Cases and arms</h2>"));
    /* the headline states the rounds and the basis */
    char tag[1200];
    head_row(head, "rounds and basis", tag, sizeof tag);
    ck_assert_ptr_nonnull(strstr(tag, "1 round: not replicated"));
    ev_buf_free(&page);
    bundle_free(&b);
    bundle_read("r.zip", &b);
    ck_assert_int_eq(ev_report_html(b.m, b.n, &page, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&page, ""), EV_OK);
    head_row(page.data, "rounds and basis", tag, sizeof tag);
    ck_assert_ptr_nonnull(strstr(tag, "3 rounds"));
    ev_buf_free(&page);
    bundle_free(&b);
}
END_TEST

/* The headline colours a ratio by its interval, never by its point
 * estimate, and counts cases by their calls: a one-round pair within
 * process (no floor measured) is not a loss.  Members made here: the
 * figures of a report, nothing else. */
START_TEST(test_the_headline_colours_by_the_interval_and_counts_by_the_call)
{
    static const char val[] =
        "{\"format\": \"evident-validation/1\", \"run\": {\"run_id\": 1, \"backend\": \"cpu\", \"status\": "
        "\"completed\"},\n \"cases\": [{\"case_index\": 0, \"op\": \"reduce_sum\", \"rows\": 17, \"cols\": "
        "1024, "
        "\"stride\": 1024, \"dtype\": \"fp16\", \"default_rows\": 4, \"role\": \"calibration\"}],\n "
        "\"jobs\": [],\n"
        " \"figures\": {\"arms\": [], \"pairs\": [{\"case_index\": 0, \"arm\": \"auto\", \"against\": "
        "\"torch-compile\", \"basis\": \"within-process\", \"n_rounds\": 1, \"ratio\": 1.002, \"interval\": "
        "[1.0001, 1.003], \"verdict\": \"loss\"}],\n \"across\": [{\"arm\": \"auto\", \"against\": "
        "\"torch-compile\", \"n_cases\": 1, \"geomean_ratio\": 1.005, \"geomean_ratio_ci\": [0.948, 1.056], "
        "\"wins\": 0, \"losses\": 1, \"not_significant\": 0},\n {\"arm\": \"auto\", \"against\": \"cub\", "
        "\"n_cases\": 1, \"geomean_ratio\": 1.02, \"geomean_ratio_ci\": [1.01, 1.03], \"wins\": 0, "
        "\"losses\": "
        "0, \"not_significant\": 1}]}}\n";
    ev_member m = {"validation.json", val, sizeof val - 1};
    ev_buf page = EV_BUF_INIT;
    ev_err err = {""};
    char tag[600];
    ck_assert_msg(ev_report_html(&m, 1, &page, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_buf_puts(&page, ""), EV_OK);
    head_row(page.data, "auto / torch-compile", tag, sizeof tag);
    ck_assert_msg(!strncmp(tag, "<td>", 4), "1.005 [0.948, 1.056] is coloured: %s", tag);
    ck_assert_ptr_nonnull(strstr(tag, "0 losses"));
    ck_assert_ptr_nonnull(strstr(tag, "1 not replicated"));
    head_row(page.data, "auto / cub", tag, sizeof tag);
    ck_assert_msg(!strncmp(tag, "<td class=\"bad\">", 16), "1.02 [1.01, 1.03] is not red: %s", tag);
    head_row(page.data, "rounds and basis", tag, sizeof tag);
    ck_assert_ptr_nonnull(strstr(tag, "1 round: not replicated"));
    ck_assert_ptr_nonnull(strstr(tag, "no noise floor"));
    ev_buf_free(&page);
}
END_TEST

START_TEST(test_a_bundle_whose_raw_samples_disagree_is_reported_with_a_red_notice)
{
    char a[400], html[400], cmd[1400];
    ev_buf page = EV_BUF_INIT;
    ev_err err = {""};
    fixture("a-slow.zip", a, sizeof a);
    fixture("a-slow.html", html, sizeof html);
    snprintf(cmd, sizeof cmd, "%s/evident report %s --out %s 2> %s/slow-report.err", build_dir(), a, html,
             g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    ck_assert_int_eq(ev_read_file(html, &page, &err), EV_OK); /* written all the same */
    ck_assert_int_eq(ev_buf_puts(&page, ""), EV_OK);
    const char *alarm = strstr(page.data, "<div class=\"alarm\">"), *head = strstr(page.data, "<h2>Headline");
    ck_assert_msg(alarm && head && alarm < head, "no notice above the headline");
    ck_assert_ptr_nonnull(strstr(alarm, "does not verify"));
    ck_assert_ptr_nonnull(strstr(alarm, "samples.csv"));
    snprintf(cmd, sizeof cmd, "grep -q 'written with a notice: verify-bundle: FAIL' %s/slow-report.err",
             g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    ev_buf_free(&page);
}
END_TEST

/* results and compare verify a bundle before they show a figure of it:
 * one that does not verify (the slowed copy, whose samples were edited)
 * gets no rows and no comparison, exit 1, its first failure in one line
 * on stderr; compare --no-verify and results from stdin say in one line
 * that they did not verify. */
START_TEST(test_results_and_compare_refuse_a_bundle_that_does_not_verify)
{
    char a[400], b[400], cmd[1600];
    fixture("a.zip", a, sizeof a);
    fixture("a-slow.zip", b, sizeof b);
    snprintf(cmd, sizeof cmd, "%s/evident results %s --json > %s/r.out 2> %s/r.err", build_dir(), b, g_dir,
             g_dir);
    ck_assert_int_eq(sh(cmd), 1);
    snprintf(
        cmd, sizeof cmd,
        "test ! -s %s/r.out && test $(wc -l < %s/r.err) = 1 && grep -q 'does not verify, no rows written: "
        "verify-bundle: FAIL' %s/r.err",
        g_dir, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s > %s/c.out 2> %s/c.err", build_dir(), a, b, g_dir,
             g_dir);
    ck_assert_int_eq(sh(cmd), 1);
    snprintf(
        cmd, sizeof cmd,
        "test ! -s %s/c.out && grep -q 'a-slow.zip does not verify, nothing compared: verify-bundle: FAIL' "
        "%s/c.err",
        g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "%s/evident compare %s %s --no-verify > /dev/null 2> %s/c.err && grep -q "
             "'not verified' %s/c.err",
             build_dir(), a, b, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    /* an intact bundle: rows, and no word of verification */
    snprintf(cmd, sizeof cmd,
             "%s/evident results %s --json > %s/r.out 2> %s/r.err && test -s %s/r.out && test ! "
             "-s %s/r.err",
             build_dir(), a, g_dir, g_dir, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "%s/evident results - --json < %s > %s/r.out 2> %s/r.err && grep -q 'stdin is not "
             "verified' %s/r.err",
             build_dir(), a, g_dir, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

/* ---- db/views.sql ------------------------------------------------------------------ */

/* One row of a query: column 0 as text, column 1 as a double or text. */
typedef struct qrow {
    char key[200], text[300];
    double v;
    int has_v;
} qrow;

/* Runs db/views.sql, then sql, on the store g_dir/name opened read-only;
 * returns the rows (free) and their count in *n. */
static qrow *views_query(const char *name, const char *sql, size_t *n)
{
    char p[400];
    ev_buf views = EV_BUF_INIT;
    ev_err err = {""};
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    qrow *v = NULL;
    size_t cap = 0;
    char *msg = NULL;
    fixture(name, p, sizeof p);
    ck_assert_int_eq(ev_read_file("db/views.sql", &views, &err), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&views, ""), EV_OK);
    ck_assert_int_eq(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(db, views.data, NULL, NULL, &msg) == SQLITE_OK, "db/views.sql: %s", msg);
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            v = realloc(v, cap * sizeof *v);
            ck_assert_ptr_nonnull(v);
        }
        qrow *r = &v[(*n)++];
        memset(r, 0, sizeof *r);
        snprintf(r->key, sizeof r->key, "%s", (const char *)sqlite3_column_text(st, 0));
        if (sqlite3_column_type(st, 1) == SQLITE_FLOAT) {
            r->v = sqlite3_column_double(st, 1);
            r->has_v = 1;
        } else if (sqlite3_column_type(st, 1) == SQLITE_TEXT) {
            snprintf(r->text, sizeof r->text, "%s", (const char *)sqlite3_column_text(st, 1));
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    ev_buf_free(&views);
    return v;
}

START_TEST(test_the_store_views_give_validation_json_medians_to_the_bit_and_failures_with_reasons)
{
    bundle b;
    size_t n = 0, matched = 0;
    qrow *v = views_query("a.db", "SELECT job_key, median_us FROM job_hot_medians ORDER BY job_id", &n);
    bundle_read("a.zip", &b);
    const ev_member *vm = ev_member_find(b.m, b.n, "validation.json");
    cJSON *val = cJSON_ParseWithLength(vm->data, vm->len);
    ck_assert_ptr_nonnull(val);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(val, "jobs"))
    {
        const cJSON *med = cJSON_GetObjectItemCaseSensitive(j, "median_us");
        const char *key = cJSON_GetObjectItemCaseSensitive(j, "job_key")->valuestring;
        if (!cJSON_IsNumber(med))
            continue;
        size_t i = 0;
        while (i < n && strcmp(v[i].key, key))
            i++;
        ck_assert_msg(i < n, "%s: no row in job_hot_medians", key);
        /* cJSON reads the %.17g text back to the same bits */
        ck_assert_msg(v[i].has_v && v[i].v == med->valuedouble, "%s: view %.17g, validation.json %.17g", key,
                      v[i].v, med->valuedouble);
        matched++;
    }
    ck_assert_uint_eq(matched, n);
    ck_assert_uint_ge(matched, 2); /* at least the reference arms */
    free(v);
    cJSON_Delete(val);
    bundle_free(&b);

    v = views_query(
        "a.db", "SELECT job_key, reason FROM failure_reasons WHERE arm = 'fault-exit' ORDER BY job_id", &n);
    ck_assert_uint_eq(n, 2); /* the job and its rescue */
    ck_assert_str_eq(v[0].text, "exit code 3");
    ck_assert_str_eq(v[1].text, "exit code 3");
    free(v);
    v = views_query("r.db", "SELECT arm, estimate_us FROM case_arm_medians", &n);
    ck_assert_uint_ge(n, 1);
    for (size_t i = 0; i < n; i++)
        ck_assert(v[i].has_v && v[i].v > 0);
    free(v);
}
END_TEST

/* One reader of an attempt's record (evidence/attempt.h) for the verifier
 * and the report: the facts and the words come from one reading, and a
 * malformed record is said to be one, with the rule it breaks. */
START_TEST(test_one_reader_gives_an_attempts_outcome_facts_and_the_words_for_its_failure)
{
    static const char *const cases[][3] = {
        /* process, validations, expected words (outcome failed-exit unless said) */
        {"{\"exit_code\":3,\"signal\":null,\"timed_out\":false,\"interrupted\":false,\"skipped\":false,"
         "\"records_ok\":true,\"ended_ns\":\"5\",\"wall_ns\":\"4\"}",
         "[]", "exit code 3"},
        {"{\"exit_code\":null,\"signal\":9,\"timed_out\":true,\"interrupted\":false,\"skipped\":false,"
         "\"records_ok\":true,\"ended_ns\":\"5\",\"wall_ns\":\"4\"}",
         "[]", "watchdog timeout"},
        {"{\"exit_code\":0,\"signal\":null,\"timed_out\":false,\"interrupted\":false,\"skipped\":false,"
         "\"records_ok\":false,\"protocol_error\":\"a gap\",\"ended_ns\":\"5\",\"wall_ns\":\"4\"}",
         "[]", "a gap"},
        {"null", "[]", "no process record"},
        /* both an exit code and a signal: waitpid gives one */
        {"{\"exit_code\":1,\"signal\":9,\"timed_out\":false,\"interrupted\":false,\"skipped\":false,"
         "\"records_ok\":true,\"ended_ns\":\"5\",\"wall_ns\":\"4\"}",
         "[]", "both an exit_code and a signal"},
        {"{\"exit_code\":0,\"signal\":null,\"timed_out\":false,\"interrupted\":false,\"skipped\":false,"
         "\"records_ok\":true,\"ended_ns\":\"05\",\"wall_ns\":\"4\"}",
         "[]", "not a decimal string"},
        {"{}", "[{\"stage\":\"middle\"}]", "neither first nor final"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[600], why_words[200];
        snprintf(text, sizeof text, "{\"process\":%s,\"validations\":%s}", cases[i][0], cases[i][1]);
        cJSON *a = cJSON_Parse(text);
        ck_assert_ptr_nonnull(a);
        ev_attempt_rec rec;
        const char *why = NULL;
        if (ev_attempt_read(a, &rec, &why)) {
            ck_assert_msg(why && strstr(why, cases[i][2]), "%zu: %s", i, why ? why : "(none)");
        } else {
            ev_attempt_reason(&rec, "failed-exit", why_words, sizeof why_words);
            ck_assert_str_eq(why_words, cases[i][2]);
        }
        cJSON_Delete(a);
    }
    /* a failed validation: its mismatches are the words, and the outcome
     * derived from the same facts is failed-validation */
    cJSON *a = cJSON_Parse("{\"process\":{\"exit_code\":0,\"signal\":null,\"timed_out\":false,"
                           "\"interrupted\":false,\"skipped\":false,\"records_ok\":true,\"ended_ns\":\"5\","
                           "\"wall_ns\":\"4\"},\"validations\":[{\"stage\":\"first\",\"passed\":false,"
                           "\"mismatches\":7,\"output_sha256\":\"00\"}]}");
    ev_attempt_rec rec;
    const char *why = NULL;
    char words[200];
    ck_assert_msg(!ev_attempt_read(a, &rec, &why), "%s", why ? why : "");
    ck_assert_int_eq(rec.stages, 1);
    ck_assert_int_eq(ev_outcome_derive(&rec.facts), EV_OUT_FAILED_VALIDATION);
    ck_assert_str_eq(ev_attempt_reason(&rec, "failed-validation", words, sizeof words),
                     "output does not match the oracle (7 mismatches)");
    cJSON_Delete(a);
}
END_TEST

static Suite *results_suite(void)
{
    Suite *s = suite_create("results");
    TCase *t = tcase_create("results");
    tcase_set_timeout(t, 480);
    tcase_add_test(t, test_results_give_one_row_per_case_and_arm_with_gb_per_s_and_the_ceiling_pct);
    tcase_add_test(t, test_results_over_rounds_give_a_t_interval_around_the_estimate);
    suite_add_tcase(s, t);
    t = tcase_create("compare");
    tcase_set_timeout(t, 480);
    tcase_add_test(t, test_a_run_compared_with_itself_has_ratios_of_one_and_nothing_significant);
    tcase_add_test(t, test_compare_finds_an_arm_made_slower_and_fail_slower_exits_1);
    tcase_add_test(t, test_compare_over_rounds_finds_the_slowed_arm_with_a_welch_interval);
    tcase_add_test(t, test_results_and_compare_refuse_a_bundle_that_does_not_verify);
    tcase_add_test(t, test_one_round_a_slow_down_within_the_measured_floor_is_not_replicated_and_not_gated);
    tcase_add_test(t, test_rounds_too_noisy_to_call_are_inconclusive_and_exit_3);
    tcase_add_test(t, test_compare_of_different_setups_says_so_and_refuses_a_gate_unless_allowed);
    tcase_add_test(t, test_compare_names_the_measured_sources_that_differ_and_the_peers_shift_beside_them);
    tcase_add_test(t, test_results_and_compare_json_carry_device_driver_host_and_peer_versions_at_the_top);
    tcase_add_test(t, test_bundles_of_earlier_formats_are_read_and_say_which_checks_did_not_apply);
    suite_add_tcase(s, t);
    t = tcase_create("views");
    tcase_set_timeout(t, 240);
    tcase_add_test(t, test_the_store_views_give_validation_json_medians_to_the_bit_and_failures_with_reasons);
    tcase_add_test(t, test_one_reader_gives_an_attempts_outcome_facts_and_the_words_for_its_failure);
    suite_add_tcase(s, t);
    t = tcase_create("report");
    tcase_set_timeout(t, 480);
    tcase_add_test(t, test_the_report_leads_with_the_headline_and_an_intact_bundle_gets_its_own_page);
    tcase_add_test(t, test_a_bundle_whose_raw_samples_disagree_is_reported_with_a_red_notice);
    tcase_add_test(t, test_the_headline_colours_by_the_interval_and_counts_by_the_call);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    build_fixtures();
    /* the slowed copies are fixtures too: made once, before any test forks */
    narrowest_arm("a.zip", g_arm1);
    narrowest_arm("r.zip", g_armr);
    FIXTURE_OK(g_arm1[0] && g_armr[0], "a.zip or r.zip: no arm with an interval");
    {
        double pct = 0;
        make_slower("a.zip", g_arm1, SLOWER, "a-slow.zip");
        /* half the run's noise floor slower (1% when it measured none) */
        floor_of_fixture("a.zip", &pct);
        make_scaled("a.zip", g_arm1, NULL, 1.0 + (pct > 0 ? pct : 2.0) / 200.0, "a-within.zip");
    }
    {
        make_slower("r.zip", g_armr, SLOWER_ROUNDS, "r-slow.zip");
        make_scaled("r.zip", g_armr, "round-2", 465.0, "r-wild.zip");
        /* thin: only the arm's first usable round keeps its samples */
        int usable[3];
        char keep[24] = "", from[32] = "r.zip", to[32];
        rounds_usable("r.zip", g_armr, usable);
        for (int k = 0; k < 3; k++) {
            char lab[24];
            snprintf(lab, sizeof lab, "round-%d", k + 1);
            if (usable[k] && !keep[0]) {
                snprintf(keep, sizeof keep, "%s", lab);
                continue;
            }
            snprintf(to, sizeof to, "r-thin-%d.zip", k + 1);
            make_scaled(from, g_armr, lab, 0, to);
            snprintf(from, sizeof from, "%s", to);
        }
        copy_with(from, "", "", 0, "r-thin.zip");
    }
    make_other_device("a.zip", "NVIDIA H100 80GB HBM3", "a-h100.zip");
    make_earlier_page("a.zip", "a-earlier.zip");
    make_rounds_declared("r.zip", 4, "r-declares-4.zip");
    make_rounds_declared("r.zip", 99, "r-declares-99.zip");
    SRunner *sr = srunner_create(results_suite());
    ev_check_run_all(sr);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (!getenv("EV_KEEP"))
        remove_fixtures();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
