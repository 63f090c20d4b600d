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
#include "evidence/member.h"
#include "evidence/report.h"
#include "zipread.h"

static char g_dir[256];

/* One round (a: the arms default, rows1, rows2 and a fault arm that
 * always exits 3), three rounds (r: default, rows1, rows2). */
static const char one_round[] =
    "{\"seed\": 11, \"cpu_priority\": \"realtime\", \"samples\": 5, \"warmup_ms\": 10, \"target_sample_ms\": "
    "5, \"cold_samples\": 1,\n"
    " \"tolerances\": {\"sample_band\": 0.9},\n"
    " \"host_threads\": 2,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576, \"flush_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\", \"fault-exit\"], \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3}],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4}]}\n";
static const char three_rounds[] =
    "{\"seed\": 12, \"cpu_priority\": \"realtime\", \"rounds\": 3, \"samples\": 3, \"warmup_ms\": 10, "
    "\"target_sample_ms\": 5,\n"
    " \"tolerances\": {\"sample_band\": 0.9},\n"
    " \"cold_samples\": 1, \"host_threads\": 2,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576, \"flush_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
    " \"cases\": [{\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
    "\"default_rows\": 8}]}\n";

#define SLOWER 16.0 /* the factor one arm's samples are scaled by (a power of two: exact) */

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

/* Writes g_dir/out: the bundle g_dir/in with every per_op_us of arm's
 * samples.csv rows multiplied by SLOWER (exits on failure: a fixture). */
static void make_slower(const char *in, const char *arm, const char *out)
{
    bundle b;
    ev_buf csv = EV_BUF_INIT;
    ev_err err = {""};
    char p[400];
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
        if (nf > 19 && !strcmp(f[10], arm)) {
            char v[64];
            snprintf(v, sizeof v, "%.17g", strtod(f[19], NULL) * SLOWER);
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
    ev_member *m = calloc(b.n + 1, sizeof *m);
    FIXTURE_OK(m != NULL, "out of memory");
    for (size_t i = 0; i < b.n; i++) {
        m[i] = b.m[i];
        if (!strcmp(m[i].name, "samples.csv")) {
            m[i].data = csv.data;
            m[i].len = csv.len;
        }
    }
    fixture(out, p, sizeof p);
    FIXTURE_OK(ev_zip_write(p, m, b.n, &err) == EV_OK, "%s", err.msg);
    free(m);
    ev_buf_free(&csv);
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
}

/* The arm slowed in a-slow.zip and r-slow.zip: the first with an estimate
 * and an interval ("" when none had one: the host was too loaded). */
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
 * into arm[32] ("" when none has one). */
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
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(r, "ci_us");
        if (!cJSON_IsArray(ci) || !(cJSON_GetArrayItem(ci, 0)->valuedouble > 0))
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
                             "exit code 3 (retry-1: failed-exit)");
            ck_assert(cJSON_IsNull(med));
            continue;
        }
        if (strcmp(oc, "completed")) {
            ck_assert_msg(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "reason")),
                          "a failure without why");
            continue;
        }
        estimated++;
        double us = med->valuedouble, gbps = cJSON_GetObjectItemCaseSensitive(r, "gb_per_s")->valuedouble;
        ck_assert_double_eq_tol(gbps, (17.0 * 1024 + 17) * 2 / us / 1e3, 1e-12 * gbps);
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "ceiling_gb_per_s")))
            ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(r, "ceiling_pct")->valuedouble,
                                    100 * gbps / ceil_gbps, 1e-9);
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(r, "ci_us");
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, "within-process");
        ck_assert(cJSON_GetArrayItem(ci, 0)->valuedouble <= us &&
                  us <= cJSON_GetArrayItem(ci, 1)->valuedouble);
    }
    fprintf(stderr, "check_results: %zu of 4 timed arms completed on this host\n", estimated);
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
        if (!cJSON_IsArray(ci))
            continue;
        with_ci++;
        double us = cJSON_GetObjectItemCaseSensitive(r, "median_us")->valuedouble;
        double lo = cJSON_GetArrayItem(ci, 0)->valuedouble, hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, "rounds");
        /* symmetric on the log scale around the geometric mean */
        ck_assert(lo <= us && us <= hi);
        ck_assert_double_eq_tol(log(us) - log(lo), log(hi) - log(us), 1e-9);
    }
    fprintf(stderr, "check_results: %zu of 4 arms have an interval over rounds\n", with_ci);
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
    ev_compare_opts o = {1, fail_slower >= 0, fail_slower >= 0 ? fail_slower : 0};
    bundle_read(a, &x);
    bundle_read(b, &y);
    ck_assert_msg(ev_compare_write(x.m, x.n, y.m, y.n, &o, &out, gated, &err) == EV_OK, "%s", err.msg);
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
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, "evident-compare/1");
    ck_assert_uint_eq(gated, 0);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const char *v = cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring;
        if (!strcmp(v, "no ratio"))
            continue;
        ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(r, "ratio")->valuedouble, 1.0);
        ck_assert_str_eq(v, "not significant");
    }
    const cJSON *su = cJSON_GetObjectItemCaseSensitive(j, "summary");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(su, "slower")->valuedouble, 0);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(su, "faster")->valuedouble, 0);
    cJSON_Delete(j);
}
END_TEST

/* Checks the comparison of name against its copy with arm slowed: arm
 * slower by SLOWER, every other arm 1 and not significant; *gated counts
 * the one beyond 10%. */
static void check_slowed(const char *name, const char *slowed, const char *arm, const char *basis)
{
    size_t gated = 0, seen = 0;
    const cJSON *r;
    cJSON *j = compare_json(name, slowed, 10, &gated);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "rows"))
    {
        const char *a = cJSON_GetObjectItemCaseSensitive(r, "arm")->valuestring;
        const char *v = cJSON_GetObjectItemCaseSensitive(r, "verdict")->valuestring;
        if (strcmp(a, arm)) {
            if (strcmp(v, "no ratio"))
                ck_assert_str_eq(v, "not significant");
            continue;
        }
        seen++;
        ck_assert_str_eq(v, "slower");
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "basis")->valuestring, basis);
        ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(r, "ratio")->valuedouble, SLOWER, 1e-9);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "beyond_gate")));
    }
    ck_assert_uint_eq(seen, 1);
    ck_assert_uint_eq(gated, 1);
    cJSON_Delete(j);
}

START_TEST(test_compare_finds_an_arm_made_slower_and_fail_slower_exits_1)
{
    char a[400], b[400], cmd[1400];
    if (!g_arm1[0]) {
        fprintf(stderr, "check_results: no arm completed with an interval on this host: not run\n");
        return;
    }
    check_slowed("a.zip", "a-slow.zip", g_arm1, "within-process");
    /* the command: markdown by default, exit 1 beyond the gate, 0 within it */
    fixture("a.zip", a, sizeof a);
    fixture("a-slow.zip", b, sizeof b);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --fail-slower 10 > %s/cmp.md 2> %s/cmp.err",
             build_dir(), a, b, g_dir, g_dir);
    ck_assert_int_eq(sh(cmd), 1);
    snprintf(cmd, sizeof cmd,
             "grep -q '| slower (beyond the gate) |' %s/cmp.md && grep -q 'beyond 10%%' %s/cmp.err", g_dir,
             g_dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s --fail-slower 2000 > /dev/null 2>&1", build_dir(), a,
             b);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/evident compare %s %s > /dev/null 2>&1", build_dir(), a, b);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

START_TEST(test_compare_over_rounds_finds_the_slowed_arm_with_a_welch_interval)
{
    if (!g_armr[0]) {
        fprintf(stderr, "check_results: no arm completed two rounds on this host: not run\n");
        return;
    }
    check_slowed("r.zip", "r-slow.zip", g_armr, "rounds");
}
END_TEST

/* ---- report.html's headline ------------------------------------------------------ */

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
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(res, "ceiling_gb_per_s")))
        ck_assert_ptr_nonnull(strstr(head, "<th>ceiling</th>"));
    else /* the ceiling job did not complete on this loaded host */
        ck_assert_ptr_null(strstr(head, "<th>ceiling</th>"));
    cJSON_Delete(res);
    ck_assert_ptr_nonnull(strstr(page.data, "GB/s"));
    ck_assert_ptr_nonnull(strstr(page.data, "<h2>Cases and arms</h2>"));
    ev_buf_free(&page);
    bundle_free(&b);
}
END_TEST

START_TEST(test_a_bundle_whose_raw_samples_disagree_is_reported_with_a_red_notice)
{
    char a[400], html[400], cmd[1400];
    ev_buf page = EV_BUF_INIT;
    ev_err err = {""};
    if (!g_arm1[0]) {
        fprintf(stderr, "check_results: no slowed copy on this host: not run\n");
        return;
    }
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
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    build_fixtures();
    /* the slowed copies are fixtures too: made once, before any test forks */
    narrowest_arm("a.zip", g_arm1);
    narrowest_arm("r.zip", g_armr);
    if (g_arm1[0])
        make_slower("a.zip", g_arm1, "a-slow.zip");
    if (g_armr[0])
        make_slower("r.zip", g_armr, "r-slow.zip");
    SRunner *sr = srunner_create(results_suite());
    ev_check_run_all(sr);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (!getenv("EV_KEEP"))
        remove_fixtures();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
