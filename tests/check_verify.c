/*
 * check_verify.c: verify-bundle's checks 2 to 8, the content-level part of
 * the hostile corpus (the zip-level part is tests/check_zipread.c), and the
 * command line through the real binary.
 *
 * A good bundle is built once per run: a synthetic store through the store
 * API (src/verify/fixture/vfixture.h) exported by the real exporter.  Each
 * hostile case reads its members, tampers with one thing, recomputes every
 * digest and receipts.json (so only the deep checks can catch it), writes a
 * new zip with the bundle's own writer and states the expected check,
 * member and reason.  JSON members are edited as parsed trees and printed
 * back with every number as its exact text, which reproduces the exporter's
 * bytes (a test proves that first), so an edit changes only what it means
 * to change.
 */
#include <check.h>

#include "progress.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "buf.h"
#include "bundle/export.h"
#include "evidence/receipts.h"
#include "evidence/report.h"
#include "bundle/zipwrite.h"
#include "json.h"
#include "plants.h"
#include "run_prog.h"
#include "runner/protocol.h"
#include "runner/sample_rules.h"
#include "runner/snapshot.h"
#include "runner/validate.h"
#include "selector.h"
#include "sha256.h"
#include "store/store.h"
#include "verify/fixture/vfixture.h"
#include "verify/verify.h"
#include "verify/verify_int.h"
#include "zipread.h"

/* ------------------------------------------------------------ fixture */

static char g_dir[256];    /* mkdtemp directory of this run */
static char g_good[300];   /* the good bundle */
static char g_failed[300]; /* a bundle whose first job failed and was rescued */
static char g_tree[300];   /* a source tree equal to the bundle's sources */
static char g_root[65];    /* the good bundle's root digest */

static const char src_kernel[] = "/* reduce kernels */\nint ev_k;\n";
static const char src_default[] = "/* the default entry */\n";
static const char src_runner[] = "/* runner */\nint ev_r;\n";
static const char src_proto[] = "{\"seed\": 1}\n";
static const char src_schema[] = "-- schema\n";
static const ev_vfix_source g_sources[] = {
    {"db/schema.sql", src_schema, sizeof src_schema - 1},
    {"kernels/reduce.c", src_kernel, sizeof src_kernel - 1},
    {"kernels/reduce_default.cuh", src_default, sizeof src_default - 1},
    {"protocols/quick.json", src_proto, sizeof src_proto - 1},
    {"src/runner/worker.c", src_runner, sizeof src_runner - 1},
};

/* Writes bytes to dir/rel, creating parent directories; aborts on error. */
static void write_tree_file(const char *dir, const char *rel, const void *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *s = path + strlen(dir) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0755);
            *s = '/';
        }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        abort();
    }
}

/* Builds the good and the rescued bundle and the source tree, once. */
static void build_fixtures(void)
{
    ev_err err = {{0}};
    char db[300];
    char root2[65];
    snprintf(g_dir, sizeof g_dir, "%s/check_verify.XXXXXX", ev_test_tmp());
    if (!mkdtemp(g_dir))
        abort();
    ev_vfix_opts o = {6, 7, 2, 0, g_sources, sizeof g_sources / sizeof g_sources[0], 0, 0};
    snprintf(db, sizeof db, "%s/good.db", g_dir);
    snprintf(g_good, sizeof g_good, "%s/good.zip", g_dir);
    if (ev_vfix_build(db, &o, &err) || ev_export_file(db, 0, g_good, g_root, &err)) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        abort();
    }
    o.fail_first = 1;
    snprintf(db, sizeof db, "%s/failed.db", g_dir);
    snprintf(g_failed, sizeof g_failed, "%s/failed.zip", g_dir);
    if (ev_vfix_build(db, &o, &err) || ev_export_file(db, 0, g_failed, root2, &err)) {
        fprintf(stderr, "fixture: %s\n", err.msg);
        abort();
    }
    snprintf(g_tree, sizeof g_tree, "%s/tree", g_dir);
    mkdir(g_tree, 0755);
    for (size_t i = 0; i < sizeof g_sources / sizeof g_sources[0]; i++)
        write_tree_file(g_tree, g_sources[i].path, g_sources[i].bytes, g_sources[i].len);
}

/* ------------------------------------------------------------ members */

#define TM_MAX 256

typedef struct tm_list {
    char *name[TM_MAX];
    ev_buf data[TM_MAX];
    size_t n;
} tm_list;

/* Reads every member of the zip at path into l. */
static void tm_load(tm_list *l, const char *path)
{
    ev_buf raw = EV_BUF_INIT;
    ev_err err = {{0}};
    ev_zip *z = NULL;
    ev_zip_problems *pr = NULL;
    memset(l, 0, sizeof *l);
    ck_assert_int_eq(ev_read_file(path, &raw, &err), EV_OK);
    ck_assert_int_eq(ev_zip_problems_new(&pr), EV_OK);
    ck_assert_int_eq(ev_zip_read_mem(raw.data, raw.len, NULL, &z, pr, &err), EV_OK);
    for (size_t i = 0; i < ev_zip_count(z); i++) {
        const ev_zip_member *m = ev_zip_at(z, i);
        ck_assert_uint_lt(l->n, TM_MAX);
        l->name[l->n] = strdup(m->name);
        ck_assert_int_eq(ev_buf_append(&l->data[l->n], m->data, (size_t)m->size), EV_OK);
        l->n++;
    }
    ev_zip_free(z);
    ev_zip_problems_free(pr);
    ev_buf_free(&raw);
}

/* The buffer of member name, or NULL. */
static ev_buf *tm_get(tm_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return &l->data[i];
    return NULL;
}

/* Sets (adds or replaces) a member. */
static void tm_set(tm_list *l, const char *name, const void *p, size_t n)
{
    ev_buf *b = tm_get(l, name);
    if (!b) {
        ck_assert_uint_lt(l->n, TM_MAX);
        l->name[l->n] = strdup(name);
        b = &l->data[l->n++];
    }
    ev_buf_reset(b);
    ck_assert_int_eq(ev_buf_append(b, p, n), EV_OK);
}

/* Removes a member (which must exist). */
static void tm_remove(tm_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name)) {
            free(l->name[i]);
            ev_buf_free(&l->data[i]);
            memmove(&l->name[i], &l->name[i + 1], (l->n - i - 1) * sizeof l->name[0]);
            memmove(&l->data[i], &l->data[i + 1], (l->n - i - 1) * sizeof l->data[0]);
            l->n--;
            return;
        }
    ck_abort_msg("no member %s", name);
}

/* Replaces the first occurrence of from with to in member name. */
static void tm_replace(tm_list *l, const char *name, const char *from, const char *to)
{
    ev_buf *b = tm_get(l, name);
    ck_assert_ptr_nonnull(b);
    char *at = memmem(b->data, b->len, from, strlen(from));
    ck_assert_msg(at != NULL, "'%s' not in %s", from, name);
    ev_buf nb = EV_BUF_INIT;
    size_t off = (size_t)(at - b->data);
    ck_assert_int_eq(ev_buf_append(&nb, b->data, off), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&nb, to), EV_OK);
    ck_assert_int_eq(ev_buf_append(&nb, at + strlen(from), b->len - off - strlen(from)), EV_OK);
    ev_buf_free(b);
    *b = nb;
}

/* qsort comparator over member indexes by name. */
static tm_list *g_sort_list;
static int tm_cmp(const void *a, const void *b)
{
    return strcmp(g_sort_list->name[*(const size_t *)a], g_sort_list->name[*(const size_t *)b]);
}

/* Writes l to path as a zip, with receipts.json recomputed (canonical)
 * unless keep_receipts. */
static void tm_write(tm_list *l, const char *path, int keep_receipts)
{
    size_t idx[TM_MAX];
    ev_member m[TM_MAX];
    ev_err err = {{0}};
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    g_sort_list = l;
    qsort(idx, l->n, sizeof idx[0], tm_cmp);
    if (!keep_receipts) {
        /* resealed as the exporter seals: its own receipts writer */
        ev_receipt rc[TM_MAX];
        char hex[TM_MAX][65];
        size_t k = 0;
        for (size_t j = 0; j < l->n; j++) {
            size_t i = idx[j];
            if (!strcmp(l->name[i], "receipts.json"))
                continue;
            ev_sha256_hex(l->data[i].data ? l->data[i].data : "", l->data[i].len, hex[k]);
            rc[k].name = l->name[i];
            rc[k].size = (int64_t)l->data[i].len;
            rc[k].sha256_hex = hex[k];
            k++;
        }
        ev_buf out = EV_BUF_INIT;
        ck_assert_int_eq(ev_receipts_json(EV_BUNDLE_FORMAT, rc, k, &out), EV_OK);
        tm_set(l, "receipts.json", out.data, out.len);
        ev_buf_free(&out);
        for (size_t i = 0; i < l->n; i++)
            idx[i] = i;
        qsort(idx, l->n, sizeof idx[0], tm_cmp);
    }
    for (size_t k = 0; k < l->n; k++) {
        m[k].name = l->name[idx[k]];
        m[k].data = l->data[idx[k]].data;
        m[k].len = l->data[idx[k]].len;
    }
    ck_assert_msg(ev_zip_write(path, m, l->n, &err) == EV_OK, "zip write: %s", err.msg);
}

static void tm_free(tm_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->name[i]);
        ev_buf_free(&l->data[i]);
    }
    l->n = 0;
}

/* Replaces every number of a tree by raw exact text (as the exporter
 * writes numbers), so printing reproduces the exporter's bytes. */
static void rawify(cJSON *t)
{
    for (cJSON *c = t ? t->child : NULL; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            char buf[32];
            ck_assert_int_eq(ev_json_format_double(c->valuedouble, buf), EV_OK);
            cJSON *raw = cJSON_CreateRaw(buf);
            ck_assert_ptr_nonnull(raw);
            if (c->string) {
                raw->string = strdup(c->string); /* ReplaceItemViaPointer keeps no key */
                ck_assert_ptr_nonnull(raw->string);
            }
            cJSON_ReplaceItemViaPointer(t, c, raw);
            c = raw;
        } else {
            rawify(c);
        }
    }
}

/* Parses member name of l (strictly). */
static cJSON *tm_json(tm_list *l, const char *name)
{
    ev_buf *b = tm_get(l, name);
    ev_err err = {{0}};
    cJSON *t = NULL;
    ck_assert_ptr_nonnull(b);
    ck_assert_msg(ev_json_parse(b->data, b->len, 0, &t, &err) == EV_OK, "%s: %s", name, err.msg);
    return t;
}

/* Prints tree back into member name (numbers exact) and frees it. */
static void tm_json_put(tm_list *l, const char *name, cJSON *t)
{
    ev_buf out = EV_BUF_INIT;
    rawify(t);
    ck_assert_int_eq(ev_json_print(t, 1, &out), EV_OK);
    tm_set(l, name, out.data, out.len);
    ev_buf_free(&out);
    cJSON_Delete(t);
}

/* The job object of validation.json's jobs with this key. */
static cJSON *job_by_key(cJSON *val, const char *key)
{
    cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(val, "jobs"))
    {
        if (!strcmp(cJSON_GetObjectItem(j, "job_key")->valuestring, key))
            return j;
    }
    ck_abort_msg("no job %s", key);
    return NULL;
}

/* ------------------------------------------------------------ verdicts */

static char g_case[300];

/* Verifies path; returns the report (caller frees). */
static ev_vreport *verify(const char *path, const char *tree, const char *root)
{
    ev_verify_opts o = {tree, root, NULL, NULL, 0, NULL};
    ev_vreport *r = NULL;
    ev_err err = {{0}};
    ck_assert_msg(ev_verify_bundle(path, &o, &r, &err) == EV_OK, "verify: %s", err.msg);
    return r;
}

/* Text of the report, for failure messages. */
static const char *report_text(const ev_vreport *r)
{
    static ev_buf b = EV_BUF_INIT;
    ev_buf_reset(&b);
    ev_vreport_text(r, &b);
    return b.data ? b.data : "";
}

/* 1 when r holds a failure of check whose member equals member (NULL: any)
 * and whose reason contains substr. */
static int has_failure(const ev_vreport *r, const char *check, const char *member, const char *substr)
{
    for (int c = 0; c < VR_NCHECKS; c++) {
        if (strcmp(vr_name(c), check))
            continue;
        const vr_check *k = &r->checks[c];
        for (size_t i = 0; i < k->n_fails; i++)
            if ((!member || !strcmp(k->fails[i].member, member)) && strstr(k->fails[i].text, substr))
                return 1;
    }
    return 0;
}

/* Asserts that r FAILS with that failure among its failures. */
static void expect_fail(ev_vreport *r, const char *check, const char *member, const char *substr)
{
    ck_assert_msg(!ev_vreport_passed(r), "expected FAIL, got PASS:\n%s", report_text(r));
    ck_assert_msg(has_failure(r, check, member, substr), "expected FAIL %s: %s: ...%s...; got:\n%s", check,
                  member ? member : "*", substr, report_text(r));
}

/* Asserts that r PASSes. */
static void expect_pass(ev_vreport *r)
{
    ck_assert_msg(ev_vreport_passed(r), "expected PASS:\n%s", report_text(r));
}

/* Writes l as this case's bundle and verifies it. */
static ev_vreport *tamper_verify(tm_list *l, const char *tag, const char *tree, const char *root)
{
    snprintf(g_case, sizeof g_case, "%s/%s.zip", g_dir, tag);
    tm_write(l, g_case, 0);
    return verify(g_case, tree, root);
}

/* Regenerates report.html from l's other members (as the exporter does),
 * so that a tampered member leaves the report consistent and the check
 * under test is the only one that can object. */
static void tm_rereport(tm_list *l)
{
    ev_member m[TM_MAX];
    ev_buf out = EV_BUF_INIT;
    ev_err err = {{0}};
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->name[i], "report.html") || !strcmp(l->name[i], "receipts.json"))
            continue;
        m[n].name = l->name[i];
        m[n].data = l->data[i].data;
        m[n].len = l->data[i].len;
        n++;
    }
    ck_assert_msg(ev_report_html(m, n, &out, &err) == EV_OK, "report: %s", err.msg);
    tm_set(l, "report.html", out.data, out.len);
    ev_buf_free(&out);
}

/* The plan kernels/selector.h makes for schedule sc of case ci of the
 * validation tree v on the cpu backend with 2 threads (the fixture's). */
static ev_launch_plan plan_of(cJSON *v, int64_t ci, ev_sched sc)
{
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "cases"), (int)ci);
    ev_shape sh;
    ev_launch_plan p;
    ev_err err = {{0}};
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(ev_op_parse(cJSON_GetObjectItem(c, "op")->valuestring, &sh.op), 0);
    ck_assert_int_eq(ev_dtype_parse(cJSON_GetObjectItem(c, "dtype")->valuestring, &sh.dtype), 0);
    sh.rows = (int64_t)cJSON_GetObjectItem(c, "rows")->valuedouble;
    sh.cols = (int64_t)cJSON_GetObjectItem(c, "cols")->valuedouble;
    sh.stride = (int64_t)cJSON_GetObjectItem(c, "stride")->valuedouble;
    ck_assert_int_eq(ev_selector_plan(EV_SEL_CPU, &sh, sc,
                                      (int64_t)cJSON_GetObjectItem(c, "default_rows")->valuedouble, 2, &p,
                                      &err),
                     EV_OK);
    return p;
}

/* Sets the first graph node of job key's first attempt to launch p. */
static void set_node(cJSON *v, const char *key, const ev_launch_plan *p)
{
    cJSON *j = job_by_key(v, key);
    ck_assert_ptr_nonnull(j);
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    cJSON *nd = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "graph_nodes"), 0);
    ck_assert_ptr_nonnull(nd);
    cJSON_ReplaceItemInObject(nd, "function", cJSON_CreateString(p->entry));
    cJSON *g = cJSON_CreateArray(), *b = cJSON_CreateArray();
    for (int d = 0; d < 3; d++) {
        cJSON_AddItemToArray(g, cJSON_CreateNumber((double)p->grid[d]));
        cJSON_AddItemToArray(b, cJSON_CreateNumber((double)p->block[d]));
    }
    cJSON_ReplaceItemInObject(nd, "grid", g);
    cJSON_ReplaceItemInObject(nd, "block", b);
}

/* The function name of job key's first graph node. */
static const char *node_fn(cJSON *v, const char *key)
{
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(job_by_key(v, key), "attempts"), 0);
    cJSON *nd = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "graph_nodes"), 0);
    ck_assert_ptr_nonnull(nd);
    return cJSON_GetObjectItem(nd, "function")->valuestring;
}

/* ------------------------------------------------------------ good bundles */

START_TEST(test_good_bundle_passes_every_check)
{
    ev_vreport *r = verify(g_good, NULL, NULL);
    expect_pass(r);
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_vreport_text(r, &b), EV_OK);
    ck_assert_ptr_nonnull(strstr(b.data, "refit from samples.csv"));
    ck_assert_ptr_nonnull(strstr(b.data, "byte for byte"));
    ev_buf_free(&b);
    ev_vreport_free(r);
}
END_TEST

START_TEST(test_pass_without_expect_root_says_authenticity_is_not_shown)
{
    ev_vreport *r = verify(g_good, NULL, NULL);
    ev_buf b = EV_BUF_INIT;
    ck_assert_int_eq(ev_vreport_json(r, &b), EV_OK);
    cJSON *t = cJSON_Parse(b.data);
    ck_assert_ptr_nonnull(t);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(t, "authenticity_shown")));
    ck_assert_str_eq(cJSON_GetObjectItem(t, "root")->valuestring, g_root);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t, "checks")), 7);
    cJSON_Delete(t);
    ev_buf_free(&b);
    ev_vreport_free(r);
}
END_TEST

START_TEST(test_rescued_bundle_passes_with_its_rescue_regenerated)
{
    ev_vreport *r = verify(g_failed, NULL, NULL);
    expect_pass(r);
    ck_assert_ptr_nonnull(
        strstr(report_text(r), "1 rescue jobs regenerated; run status failed, completed-after-rescue"));
    ev_vreport_free(r);
}
END_TEST

START_TEST(test_rewriting_members_unchanged_keeps_the_same_bytes_and_passes)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf before = EV_BUF_INIT;
    ev_buf *v = tm_get(&l, "validation.json");
    ck_assert_int_eq(ev_buf_append(&before, v->data, v->len), EV_OK);
    tm_json_put(&l, "validation.json", tm_json(&l, "validation.json"));
    v = tm_get(&l, "validation.json");
    ck_assert_uint_eq(v->len, before.len);
    ck_assert(memcmp(v->data, before.data, before.len) == 0);
    ev_vreport *r = tamper_verify(&l, "same", NULL, NULL);
    expect_pass(r);
    ck_assert_str_eq(r->root_hex, g_root);
    ev_vreport_free(r);
    ev_buf_free(&before);
    tm_free(&l);
}
END_TEST

START_TEST(test_right_root_and_source_tree_pass)
{
    ev_vreport *r = verify(g_good, g_tree, g_root);
    expect_pass(r);
    ck_assert(r->root_matches);
    ck_assert_int_eq(r->checks[VR_SOURCES].verdict, EV_VERDICT_PASS);
    ev_vreport_free(r);
}
END_TEST

/* ------------------------------------------------------------ members (check 2) */

START_TEST(test_extra_member_fails_members)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_set(&l, "notes.txt", "hello\n", 6);
    ev_vreport *r = tamper_verify(&l, "extra", NULL, NULL);
    expect_fail(r, "members", "notes.txt", "not a bundle member name");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_extra_output_member_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_set(&l, "outputs/999-1.bin", "\0\0\0\0", 4);
    ev_vreport *r = tamper_verify(&l, "extra_output", NULL, NULL);
    expect_fail(r, "rederive", "outputs/999-1.bin", "names this output");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_missing_member_fails_members)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_remove(&l, "model.json");
    ev_vreport *r = tamper_verify(&l, "missing", NULL, NULL);
    expect_fail(r, "members", "model.json", "missing required member");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_member_changed_without_new_receipt_fails_members)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(&l, "report.html", "<", "<!-- x -->\n<");
    snprintf(g_case, sizeof g_case, "%s/stale_receipt.zip", g_dir);
    tm_write(&l, g_case, 1);
    ev_vreport *r = verify(g_case, NULL, NULL);
    expect_fail(r, "members", "report.html", "does not equal its receipt");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_wrong_root_with_expect_root_fails)
{
    ev_vreport *r = verify(g_good, NULL, "00000000000000000000000000000000000000000000000000000000000000ff");
    expect_fail(r, "members", "receipts.json", "does not equal --expect-root");
    ev_vreport_free(r);
}
END_TEST

/* ------------------------------------------------------------ formats (check 3) */

START_TEST(test_json_with_duplicate_keys_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(&l, "validation.json", "\"format\":", "\"summary\":\t1,\n\t\"format\":");
    ev_vreport *r = tamper_verify(&l, "dupkey", NULL, NULL);
    expect_fail(r, "formats", "validation.json", "duplicate key");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_json_with_trailing_bytes_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *m = tm_get(&l, "model.json");
    ck_assert_int_eq(ev_buf_puts(m, "{}\n"), EV_OK);
    ev_vreport *r = tamper_verify(&l, "trailing", NULL, NULL);
    expect_fail(r, "formats", "model.json", "trailing bytes");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_json_nested_5000_deep_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf deep = EV_BUF_INIT;
    for (int i = 0; i < 5000; i++)
        ck_assert_int_eq(ev_buf_puts(&deep, "["), EV_OK);
    for (int i = 0; i < 5000; i++)
        ck_assert_int_eq(ev_buf_puts(&deep, "]"), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&deep, "\n"), EV_OK);
    tm_set(&l, "provenance.json", deep.data, deep.len);
    ev_vreport *r = tamper_verify(&l, "deep", NULL, NULL);
    expect_fail(r, "formats", "provenance.json", "nesting deeper");
    ev_vreport_free(r);
    ev_buf_free(&deep);
    tm_free(&l);
}
END_TEST

START_TEST(test_number_that_is_not_its_exact_text_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    /* 0.05 reads back to the same double, but is not the text written. */
    tm_replace(&l, "model.json", "0.050000000000000003", "0.05");
    ev_vreport *r = tamper_verify(&l, "noncanon", NULL, NULL);
    expect_fail(r, "formats", "model.json", "not canonical");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_csv_with_missing_columns_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *s = tm_get(&l, "samples.csv");
    ev_buf out = EV_BUF_INIT;
    /* Drop the last column (sm_clock_mhz) from the header and every row. */
    const char *p = s->data, *end = s->data + s->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *comma = p;
        for (const char *q = p; q < nl; q++)
            if (*q == ',')
                comma = q;
        ck_assert_int_eq(ev_buf_append(&out, p, (size_t)(comma - p)), EV_OK);
        ck_assert_int_eq(ev_buf_puts(&out, "\n"), EV_OK);
        p = nl + 1;
    }
    tm_set(&l, "samples.csv", out.data, out.len);
    ev_vreport *r = tamper_verify(&l, "csvcols", NULL, NULL);
    expect_fail(r, "formats", "samples.csv", "header");
    ck_assert_int_eq(r->checks[VR_REDERIVE].verdict, EV_VERDICT_NOT_RUN);
    ev_vreport_free(r);
    ev_buf_free(&out);
    tm_free(&l);
}
END_TEST

START_TEST(test_csv_with_bad_utf8_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(&l, "samples.csv", ",initial,",
               ",init\xff\xfe"
               "al,");
    ev_vreport *r = tamper_verify(&l, "csvutf8", NULL, NULL);
    expect_fail(r, "formats", "samples.csv", "UTF-8");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* ------------------------------------------------------------ samples */

/* Index of the start of the last line of b (b ends with '\n'). */
static size_t last_line_start(const ev_buf *b)
{
    size_t i = b->len - 1;
    while (i > 0 && b->data[i - 1] != '\n')
        i--;
    return i;
}

/* Splits a CSV line (no quotes in samples.csv) into at most 32 fields. */
static size_t split(char *line, char **f)
{
    size_t n = 0;
    f[n++] = line;
    for (char *p = line; *p && *p != '\n'; p++)
        if (*p == ',') {
            *p = '\0';
            f[n++] = p + 1;
        }
    char *nl = strchr(f[n - 1], '\n');
    if (nl)
        *nl = '\0';
    return n;
}

/* Rewrites the last row of samples.csv: elapsed_ms times factor (and
 * per_op_us recomputed consistently when consistent), or the row
 * duplicated with the next sample_index when dup. */
static void edit_last_row(tm_list *l, double factor, int consistent, int dup)
{
    ev_buf *s = tm_get(l, "samples.csv");
    size_t at = last_line_start(s);
    char line[1024], *f[32];
    ck_assert_uint_lt(s->len - at, sizeof line);
    memcpy(line, s->data + at, s->len - at);
    line[s->len - at] = '\0';
    size_t n = split(line, f);
    ck_assert_uint_eq(n, 24);
    double el = strtod(f[18], NULL) * factor;
    long long reps = strtoll(f[16], NULL, 10), opg = strtoll(f[17], NULL, 10);
    char e[32], pu[32], idx[32];
    ev_json_format_double(el, e);
    ev_json_format_double(consistent ? el * 1000.0 / (double)(reps * opg) : strtod(f[19], NULL), pu);
    snprintf(idx, sizeof idx, "%lld", strtoll(f[15], NULL, 10) + 1);
    ev_buf out = EV_BUF_INIT;
    if (dup)
        ck_assert_int_eq(ev_buf_append(&out, s->data, s->len), EV_OK);
    else
        ck_assert_int_eq(ev_buf_append(&out, s->data, at), EV_OK);
    f[18] = e;
    f[19] = pu;
    if (dup)
        f[15] = idx;
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(ev_buf_printf(&out, "%s%s", f[i], i + 1 < n ? "," : "\n"), EV_OK);
    tm_set(l, "samples.csv", out.data, out.len);
    ev_buf_free(&out);
}

/* The start of field k (0-based) of the CSV line at p (no quotes). */
static char *csv_field_at(char *p, int k)
{
    for (; k > 0; p++)
        if (*p == ',')
            k--;
    return p;
}

/* The good bundle read whole, streamed, and streamed in pieces of one to
 * a few bytes: PASS each way, with reports equal word for word. */
START_TEST(test_the_good_bundle_passes_alike_read_whole_or_streamed_in_any_pieces)
{
    int saved = vb_stream_samples;
    size_t saved_piece = vb_stream_piece;
    static const size_t pieces[] = {0, 0, 1, 2, 13, 4096};
    char *first = NULL;
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        vb_stream_samples = k > 0;
        vb_stream_piece = pieces[k];
        size_t rereads = vb_stream_rereads;
        ev_vreport *r = verify(g_good, NULL, NULL);
        expect_pass(r);
        ck_assert_uint_eq(vb_stream_rereads, rereads); /* accepted as streamed */
        if (!first)
            first = strdup(report_text(r));
        else
            ck_assert_str_eq(report_text(r), first);
        ev_vreport_free(r);
    }
    free(first);
    vb_stream_samples = saved;
    vb_stream_piece = saved_piece;
}
END_TEST

/* A samples.csv that is only a header line, and a wrong one: FAIL with
 * the header's reason read whole and streamed in any pieces (the stream
 * once accepted it, since no record ever reached the reader that judges
 * the header; found by fuzz_samples). */
START_TEST(test_a_wrong_header_with_no_rows_fails_read_whole_or_streamed)
{
    int saved = vb_stream_samples;
    size_t saved_piece = vb_stream_piece;
    static const struct {
        const char *text;
        size_t len;
    } texts[] = {{"run_id,job_id\n", 14}, {"\n", 1}, {"x\0y\n", 4}, {NULL, 0}};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (int pass = 0; pass < 3; pass++) {
            vb_stream_samples = pass > 0;
            vb_stream_piece = pass == 2 ? 3 : 0;
            tm_list l;
            tm_load(&l, g_good);
            if (texts[t].text) {
                tm_set(&l, "samples.csv", texts[t].text, texts[t].len);
            } else { /* the right header and no rows: formats passes, the rows are missed later */
                ev_buf *csv = tm_get(&l, "samples.csv");
                char head[512];
                size_t hl = (size_t)((char *)memchr(csv->data, '\n', csv->len) - csv->data) + 1;
                ck_assert_uint_lt(hl, sizeof head);
                memcpy(head, csv->data, hl); /* tm_set frees the old text */
                tm_set(&l, "samples.csv", head, hl);
            }
            ev_vreport *r = tamper_verify(&l, "hdronly", NULL, NULL);
            if (texts[t].text)
                expect_fail(r, "formats", "samples.csv", "header");
            else
                ck_assert_msg(!ev_vreport_passed(r) && r->checks[VR_FORMATS].verdict == EV_VERDICT_PASS,
                              "header alone: %s", report_text(r));
            ev_vreport_free(r);
            tm_free(&l);
        }
    vb_stream_samples = saved;
    vb_stream_piece = saved_piece;
}
END_TEST

/* samples.csv read whole, streamed in its pieces, and streamed in pieces
 * of a few bytes (every line and the header across pieces): a row made a
 * duplicate of the row above it fails with the same words each way. */
START_TEST(test_a_duplicate_row_fails_alike_read_whole_or_streamed_in_any_pieces)
{
    int saved = vb_stream_samples;
    size_t saved_piece = vb_stream_piece;
    for (int pass = 0; pass < 3; pass++) {
        vb_stream_samples = pass > 0;
        vb_stream_piece = pass == 2 ? 7 : 0;
        tm_list l;
        tm_load(&l, g_good);
        ev_buf *csv = tm_get(&l, "samples.csv");
        char *mid = memchr(csv->data + csv->len / 2, '\n', csv->len - csv->len / 2), *prev = mid;
        ck_assert_ptr_nonnull(mid);
        while (prev > csv->data && prev[-1] != '\n')
            prev--;
        /* field 15 is sample_index; the fixture's seam rows are one job's
         * consecutive hot samples with one-digit indexes */
        char *a = csv_field_at(prev, 15), *b = csv_field_at(mid + 1, 15);
        ck_assert(a[1] == ',' && b[1] == ',' && a[0] + 1 == b[0]);
        b[0] = a[0];
        size_t rereads = vb_stream_rereads;
        ev_vreport *r = tamper_verify(&l, "seam", NULL, NULL);
        expect_fail(r, "formats", "samples.csv",
                    "duplicate row (same job_id, attempt, timing, sample_index)");
        ck_assert_uint_eq(vb_stream_rereads, rereads + (pass > 0)); /* streamed, refused, read whole */
        ev_vreport_free(r);
        tm_free(&l);
    }
    vb_stream_samples = saved;
    vb_stream_piece = saved_piece;
}
END_TEST

/* The start of line k (0-based) of b, and its length with the LF. */
static size_t line_at(const ev_buf *b, size_t k, size_t *len)
{
    size_t at = 0;
    for (; k > 0; k--)
        at = (size_t)((char *)memchr(b->data + at, '\n', b->len - at) - b->data) + 1;
    *len = (size_t)((char *)memchr(b->data + at, '\n', b->len - at) - (b->data + at)) + 1;
    return at;
}

/* 1 when lines a and b of samples.csv share cells 0..13 and 20..22 (b
 * would be a continuation row of a). */
static int same_repeated_cells(const char *a, const char *b)
{
    const char *fa = a, *fb = b;
    for (int k = 0; k < 23; k++) {
        size_t la = strcspn(fa, ",\n"), lb = strcspn(fb, ",\n");
        if ((k < 14 || k >= 20) && (la != lb || memcmp(fa, fb, la)))
            return 0;
        fa += la + 1;
        fb += lb + 1;
    }
    return 1;
}

/* The continuation rule of verify_samples.c decides and words every
 * verdict as the reference reading (vf_row on every record) does: a
 * mid-file row that repeats the row above it, edited one way at a time,
 * is verified both ways and the two reports must be equal, word for
 * word. */
START_TEST(test_continuation_rows_are_judged_as_the_reference_reading_judges_them)
{
    static const struct {
        int field;          /* cell to replace, or -1: see text */
        const char *text;   /* the new cell; for -1: "crlf", "extra", "noncanon" */
        const char *expect; /* a failure under formats, or NULL (same verdict) */
    } edits[] = {
        {14, "warm", "timing is neither hot nor cold"},
        {14, "hot ", "timing is neither hot nor cold"},
        {15, "01", "not a decimal integer"},
        {15, "-1", "sample_index below 0"},
        {15, "0", NULL},
        {16, "0", "replays or ops_per_graph below 1"},
        {16, "1000000000000000000", "not a decimal integer"},
        {17, "-0", "not a decimal integer"},
        {18, "x", "not a finite decimal number"},
        {18, "1e400", "not a finite decimal number"},
        {19, "0.5", NULL},
        {19, "5e-7", "canonical"},
        {19, "4.9999999999999998e-07", NULL},
        {20, "another/key", "job-level cells differ"},
        {21, "999", "attempt_id or attempt_outcome differs"},
        {22, "failed-exit", "attempt_id or attempt_outcome differs"},
        {22, "crashed", "attempt_outcome is not an outcome name"},
        {23, "abc", "not a decimal integer"},
        {23, "1980", NULL},
        {23, "-0", "not a decimal integer"},
        {13, "failed-exit", "job-level cells differ"},
        {-1, "noncanon", "canonical"},
        {-1, "crlf", NULL},
        {-1, "extra", "25 fields, expected 24"},
    };
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *csv = tm_get(&l, "samples.csv");
    /* a row in the middle whose predecessor it continues, with a
     * successor that continues it in turn */
    size_t k = 0, n_lines = 0, len, plen, nlen;
    for (size_t i = 0; i < csv->len; i++)
        n_lines += csv->data[i] == '\n';
    for (k = n_lines / 2; k + 1 < n_lines; k++) {
        size_t p = line_at(csv, k - 1, &plen), c = line_at(csv, k, &len), x = line_at(csv, k + 1, &nlen);
        if (same_repeated_cells(csv->data + p, csv->data + c) &&
            same_repeated_cells(csv->data + c, csv->data + x))
            break;
    }
    ck_assert_uint_lt(k + 1, n_lines);
    ev_buf orig = EV_BUF_INIT;
    ck_assert_int_eq(ev_buf_append(&orig, csv->data, csv->len), EV_OK);
    int saved = vb_fast_rows;
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        size_t at = line_at(&orig, k, &len);
        char line[1024], *f[32];
        ck_assert_uint_lt(len, sizeof line);
        memcpy(line, orig.data + at, len);
        line[len] = '\0';
        size_t nf = split(line, f);
        ck_assert_uint_eq(nf, 24);
        char canon[40];
        const char *tail = "\n";
        if (edits[e].field >= 0) {
            f[edits[e].field] = (char *)edits[e].text;
        } else if (!strcmp(edits[e].text, "noncanon")) {
            ck_assert_ptr_nonnull(strchr(f[18], '.'));
            snprintf(canon, sizeof canon, "%s0", f[18]); /* same value, one zero more */
            f[18] = canon;
        } else if (!strcmp(edits[e].text, "crlf")) {
            tail = "\r\n";
        } else {
            tail = ",\n";
        }
        ev_buf out = EV_BUF_INIT;
        ck_assert_int_eq(ev_buf_append(&out, orig.data, at), EV_OK);
        for (size_t i = 0; i < nf; i++)
            ck_assert_int_eq(ev_buf_printf(&out, "%s%s", f[i], i + 1 < nf ? "," : tail), EV_OK);
        ck_assert_int_eq(ev_buf_append(&out, orig.data + at + len, orig.len - at - len), EV_OK);
        tm_set(&l, "samples.csv", out.data, out.len);
        ev_buf_free(&out);
        char *text[2];
        for (int fast = 0; fast < 2; fast++) {
            vb_fast_rows = fast;
            ev_vreport *r = tamper_verify(&l, "controw", NULL, NULL);
            if (edits[e].expect)
                ck_assert_msg(has_failure(r, "formats", "samples.csv", edits[e].expect),
                              "edit %zu (fast %d): expected ...%s...; got:\n%s", e, fast, edits[e].expect,
                              report_text(r));
            text[fast] = strdup(report_text(r));
            ck_assert_ptr_nonnull(text[fast]);
            ev_vreport_free(r);
        }
        vb_fast_rows = saved;
        ck_assert_msg(!strcmp(text[0], text[1]), "edit %zu: the reports differ:\nreference:\n%s\nfast:\n%s",
                      e, text[0], text[1]);
        free(text[0]);
        free(text[1]);
    }
    ev_buf_free(&orig);
    tm_free(&l);
}
END_TEST

START_TEST(test_extra_csv_row_fails_rederive_and_protocol)
{
    tm_list l;
    tm_load(&l, g_good);
    edit_last_row(&l, 1.0, 1, 1);
    ev_vreport *r = tamper_verify(&l, "extrarow", NULL, NULL);
    expect_fail(r, "rederive", "samples.csv", "8 hot and 2 cold rows, validation.json records 7 and 2");
    expect_fail(r, "protocol", "samples.csv", "8 hot samples, protocol declares 7");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_dropped_csv_row_fails_rederive_and_protocol)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *s = tm_get(&l, "samples.csv");
    s->len = last_line_start(s);
    ev_vreport *r = tamper_verify(&l, "droprow", NULL, NULL);
    expect_fail(r, "rederive", "samples.csv", "6 hot and 2 cold rows, validation.json records 7 and 2");
    expect_fail(r, "protocol", "samples.csv", "6 hot samples, protocol declares 7");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_changed_timing_fails_rederive_median)
{
    tm_list l;
    tm_load(&l, g_good);
    /* The last row is the median sample of its job: changing its time (and
     * its per_op_us with it) moves the median away from validation.json's. */
    edit_last_row(&l, 1.2, 1, 0);
    ev_vreport *r = tamper_verify(&l, "timing", NULL, NULL);
    expect_fail(r, "rederive", "validation.json", "median_us");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_changed_elapsed_alone_fails_rederive_per_op)
{
    tm_list l;
    tm_load(&l, g_good);
    edit_last_row(&l, 1.01, 0, 0);
    ev_vreport *r = tamper_verify(&l, "elapsed", NULL, NULL);
    expect_fail(r, "rederive", "samples.csv", "per_op_us");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* Scales elapsed_ms (and per_op_us, consistently) of every hot row of the
 * job of samples.csv's last row by factor. */
static void scale_last_job(tm_list *l, double factor)
{
    ev_buf *s = tm_get(l, "samples.csv");
    size_t at = last_line_start(s);
    char line[1024], *f[32];
    memcpy(line, s->data + at, s->len - at);
    line[s->len - at] = '\0';
    ck_assert_uint_eq(split(line, f), 24);
    char job[32];
    snprintf(job, sizeof job, "%s", f[1]);
    ev_buf out = EV_BUF_INIT;
    size_t p = 0, edited = 0;
    while (p < s->len) {
        size_t e = p;
        while (e < s->len && s->data[e] != '\n')
            e++;
        ck_assert_uint_lt(e - p, sizeof line);
        memcpy(line, s->data + p, e - p);
        line[e - p] = '\0';
        size_t n = split(line, f);
        if (p > 0 && n == 24 && !strcmp(f[1], job) && !strcmp(f[14], "hot")) {
            char el[32], pu[32];
            double v = strtod(f[18], NULL) * factor;
            ev_json_format_double(v, el);
            ev_json_format_double(v * 1000.0 / (double)(strtoll(f[16], NULL, 10) * strtoll(f[17], NULL, 10)),
                                  pu);
            f[18] = el;
            f[19] = pu;
            for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(ev_buf_printf(&out, "%s%s", f[i], i + 1 < n ? "," : "\n"), EV_OK);
            edited++;
        } else {
            ck_assert_int_eq(ev_buf_append(&out, s->data + p, e - p + 1), EV_OK);
        }
        p = e + 1;
    }
    ck_assert_uint_eq(edited, 7);
    tm_set(l, "samples.csv", out.data, out.len);
    ev_buf_free(&out);
}

START_TEST(test_sample_outside_the_wide_band_fails_protocol)
{
    /* One sample at 5 x the target: a wrong replay count, not jitter. */
    tm_list l;
    tm_load(&l, g_good);
    edit_last_row(&l, 5.0, 1, 0);
    ev_vreport *r = tamper_verify(&l, "band", NULL, NULL);
    expect_fail(r, "protocol", "samples.csv", "1 hot samples outside the wide band [1.25, 20] ms");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_a_preempted_sample_within_the_wide_band_is_not_a_protocol_failure)
{
    /* One sample at 2.5 x the target, as a loaded 2-core host makes them:
     * the protocol check keeps it (the median moved, so check 6 objects to
     * the edited record; the protocol does not). */
    tm_list l;
    tm_load(&l, g_good);
    edit_last_row(&l, 2.5, 1, 0);
    ev_vreport *r = tamper_verify(&l, "preempted", NULL, NULL);
    ck_assert_msg(vr_fail_count(r, VR_PROTOCOL) == 0, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_calibration_that_ignored_its_target_fails_protocol)
{
    /* Every hot sample of a job at 2 x the target (inside the wide band):
     * the median is outside the protocol's sample_band. */
    tm_list l;
    tm_load(&l, g_good);
    scale_last_job(&l, 2.0);
    ev_vreport *r = tamper_verify(&l, "calibration", NULL, NULL);
    expect_fail(r, "protocol", "samples.csv", "outside the protocol's band [2.5, 7.5] ms");
    ck_assert(!has_failure(r, "protocol", "samples.csv", "wide band"));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_a_claimed_rule_breach_the_samples_do_not_show_fails_protocol)
{
    /* A runner that fails a good attempt (and so buys it a retry) by
     * writing a rule breach into its process row: the records, held to the
     * rules (src/runner/sample_rules.h), show none. */
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/0/default/initial");
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    cJSON *proc = cJSON_GetObjectItem(a, "process");
    cJSON_ReplaceItemInObject(proc, "records_ok", cJSON_CreateFalse());
    cJSON_ReplaceItemInObject(
        proc, "protocol_error",
        cJSON_CreateString(
            "protocol rule: 1 hot samples outside the wide band [1.25, 20] ms (target 5 / 4 to x 4)"));
    cJSON_ReplaceItemInObject(a, "outcome", cJSON_CreateString("failed-protocol"));
    cJSON_ReplaceItemInObject(j, "outcome", cJSON_CreateString("failed-protocol"));
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "claimedbreach", NULL, NULL);
    expect_fail(r, "protocol", "validation.json", "but its records, held to the rules, show no breach");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* ------------------------------------------------- broken invariants */

/* Copies the fixture store g_dir/<from>.db to g_dir/<tag>.db, drops its
 * append-only triggers (as a tamperer would) and runs sql on it.  Returns
 * the copy's path (static buffer). */
static const char *tamper_store(const char *from, const char *tag, const char *sql)
{
    static char dst[320];
    char src[320], cmd[800];
    sqlite3 *db;
    char *msg = NULL;
    snprintf(src, sizeof src, "%s/%s.db", g_dir, from);
    snprintf(dst, sizeof dst, "%s/%s.db", g_dir, tag);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(sqlite3_open(dst, &db), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(db, "CREATE TEMP TABLE t AS SELECT name FROM sqlite_master WHERE type = 'trigger';",
                     NULL, NULL, &msg),
        SQLITE_OK);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT name FROM t", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char drop[200];
        snprintf(drop, sizeof drop, "DROP TRIGGER \"%s\"", (const char *)sqlite3_column_text(st, 0));
        ck_assert_int_eq(sqlite3_exec(db, drop, NULL, NULL, &msg), SQLITE_OK);
    }
    sqlite3_finalize(st);
    ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
    return dst;
}

/* Each class of tampering, made in a store and exported with evident's own
 * exporter: the exporter (the first reader) refuses the store, naming the
 * invariant (store/outcome.h). */
START_TEST(test_the_exporter_refuses_a_store_that_breaks_an_invariant)
{
    static const struct {
        const char *from, *tag, *sql, *want;
    } cases[] = {
        {"good", "passmism",
         "UPDATE validations SET mismatches = 1 WHERE rowid = (SELECT min(rowid) FROM validations);",
         "is passed with mismatches"},
        {"good", "profile",
         "UPDATE environments SET profile_id = "
         "'00000000000000000000000000000000000000000000000000000000000000ab';",
         "profile id is not the SHA-256 of its environment record"},
        {"failed", "neverrun",
         "CREATE TEMP TABLE gone AS SELECT a.attempt_id FROM attempts a JOIN jobs j USING (job_id) "
         "WHERE j.job_key IN ('main/0/default/initial', 'rescue/0/default/retry-1');"
         "DELETE FROM samples WHERE attempt_id IN gone; DELETE FROM validations WHERE attempt_id IN gone;"
         "DELETE FROM warmups WHERE attempt_id IN gone; DELETE FROM calibrations WHERE attempt_id IN gone;"
         "DELETE FROM cold_timings WHERE attempt_id IN gone; DELETE FROM flushes WHERE attempt_id IN gone;"
         "DELETE FROM graph_nodes WHERE attempt_id IN gone; DELETE FROM bindings WHERE attempt_id IN gone;"
         "DELETE FROM processes WHERE attempt_id IN gone; DELETE FROM attempts WHERE attempt_id IN gone;"
         "DELETE FROM jobs WHERE job_key = 'rescue/0/default/retry-1';"
         "UPDATE run_status SET status = 'failed', rescue_status = 'failed-after-rescue';",
         "job main/0/default/initial was never attempted"},
        {"good", "lastinterrupted",
         "UPDATE processes SET interrupted = 1 WHERE attempt_id = (SELECT a.attempt_id FROM attempts a JOIN "
         "jobs j "
         "USING (job_id) WHERE j.job_key = 'main/1/rows1/initial');",
         "job main/1/rows1/initial ends in an interrupted attempt"},
        {"good", "stagegone",
         "DELETE FROM validations WHERE stage = 'final' AND attempt_id = (SELECT a.attempt_id FROM attempts "
         "a "
         "JOIN jobs j USING (job_id) WHERE j.job_key = 'main/1/rows1/initial');",
         "of job main/1/rows1/initial is completed without both validation stages"},
        {"good", "plannedretry",
         "UPDATE jobs SET retry_of = (SELECT min(job_id) FROM jobs) WHERE job_key = 'main/2/rows2/initial';",
         "job main/2/rows2/initial is in phase main yet retries another job"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *db = tamper_store(cases[i].from, cases[i].tag, cases[i].sql);
        char zip[340], root[65];
        ev_err err = {{0}};
        snprintf(zip, sizeof zip, "%s/%s.zip", g_dir, cases[i].tag);
        ck_assert_int_eq(ev_export_file(db, 0, zip, root, &err), EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, "breaks an invariant") && strstr(err.msg, cases[i].want), "%s: %s",
                      cases[i].tag, err.msg);
        ck_assert_int_ne(access(zip, F_OK), 0);
    }
}
END_TEST

/* The same classes made in a bundle (a tamperer with an exporter of their
 * own): verify-bundle FAILs each, naming the invariant. */
START_TEST(test_the_verifier_fails_a_bundle_that_breaks_an_invariant)
{
    /* a passed validation with a mismatch */
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/0/default/initial");
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    cJSON *val = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "validations"), 0);
    cJSON_ReplaceItemInObject(val, "mismatches", cJSON_CreateNumber(1));
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "inv-mism", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "validation is passed with mismatches");
    ev_vreport_free(r);
    tm_free(&l);

    /* a profile id that is not its record's hash */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "invocations"), 0);
    cJSON_ReplaceItemInObject(
        inv, "profile_id",
        cJSON_CreateString("00000000000000000000000000000000000000000000000000000000000000ab"));
    tm_json_put(&l, "validation.json", v);
    r = tamper_verify(&l, "inv-profile", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "is not the SHA-256 of its environment_record");
    ev_vreport_free(r);
    tm_free(&l);

    /* a finished run with a job never attempted */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    j = job_by_key(v, "main/0/default/initial");
    cJSON_ReplaceItemInObject(j, "attempts", cJSON_CreateArray());
    cJSON_ReplaceItemInObject(j, "last_attempt", cJSON_CreateNull());
    cJSON_ReplaceItemInObject(j, "outcome", cJSON_CreateString("interrupted"));
    tm_json_put(&l, "validation.json", v);
    r = tamper_verify(&l, "inv-never", NULL, NULL);
    expect_fail(r, "plan", "validation.json",
                "job main/0/default/initial: run.status completed is set, but the job was never attempted");
    ev_vreport_free(r);
    tm_free(&l);

    /* a finished run whose job ends in an interrupted attempt */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    j = job_by_key(v, "main/0/default/initial");
    a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(a, "process"), "interrupted", cJSON_CreateTrue());
    cJSON_ReplaceItemInObject(a, "outcome", cJSON_CreateString("interrupted"));
    cJSON_ReplaceItemInObject(j, "outcome", cJSON_CreateString("interrupted"));
    tm_json_put(&l, "validation.json", v);
    r = tamper_verify(&l, "inv-interrupted", NULL, NULL);
    expect_fail(r, "plan", "validation.json",
                "job main/0/default/initial: run.status completed is set, but the job");
    ev_vreport_free(r);
    tm_free(&l);

    /* a completed attempt run again (a silent re-run for a better result) */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    j = job_by_key(v, "main/0/default/initial");
    cJSON *atts = cJSON_GetObjectItem(j, "attempts");
    cJSON *again = cJSON_Duplicate(cJSON_GetArrayItem(atts, 0), 1);
    cJSON_ReplaceItemInObject(again, "attempt", cJSON_CreateNumber(2));
    cJSON_AddItemToArray(atts, again);
    cJSON_ReplaceItemInObject(j, "last_attempt", cJSON_CreateNumber(2));
    tm_json_put(&l, "validation.json", v);
    r = tamper_verify(&l, "inv-rerun", NULL, NULL);
    expect_fail(
        r, "plan", "validation.json",
        "job main/0/default/initial attempt 1: completed, yet attempted again (only an interrupted attempt "
        "is rerun)");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* ------------------------------------------------------------ plan (check 4) */

/* A three-round fixture bundle of this code's making, built once. */
static char g_rounds[320];
static const char *rounds_bundle(void)
{
    if (!g_rounds[0]) {
        char db[320], root[65];
        ev_err err = {{0}};
        ev_vfix_opts o = {6, 7, 2, 0, g_sources, sizeof g_sources / sizeof g_sources[0], 3, 0};
        snprintf(db, sizeof db, "%s/rounds.db", g_dir);
        snprintf(g_rounds, sizeof g_rounds, "%s/rounds.zip", g_dir);
        ck_assert_msg(!ev_vfix_build(db, &o, &err) && !ev_export_file(db, 0, g_rounds, root, &err), "%s",
                      err.msg);
    }
    return g_rounds;
}

START_TEST(test_a_bundle_of_three_rounds_verifies_and_its_figures_stand_on_rounds)
{
    ev_vreport *r = verify(rounds_bundle(), NULL, NULL);
    ck_assert_msg(ev_vreport_failures(r) == 0, "%s", report_text(r));
    ev_vreport_free(r);
    tm_list l;
    tm_load(&l, rounds_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "figures"), "pairs"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(p, "basis")->valuestring, "rounds");
    ck_assert_int_eq(cJSON_GetObjectItem(p, "n_rounds")->valuedouble, 3);
    job_by_key(v, "main/0/rows1/round-1");
    job_by_key(v, "policy/0/rows1/round-3");
    job_by_key(v, "policy/5/auto/round-2");
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

/* Two jobs of different rounds swap their places in the order: the order
 * the bundle records is not its seed's, and the first job out of order is
 * named. */
START_TEST(test_a_recorded_order_that_is_not_the_seeds_fails_plan_naming_the_job)
{
    tm_list l;
    tm_load(&l, rounds_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *a = NULL, *b = NULL, *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        const char *k = cJSON_GetObjectItem(j, "job_key")->valuestring;
        if (!strncmp(k, "policy/", 7) && !a && strstr(k, "/round-2"))
            a = j;
        if (!strncmp(k, "policy/", 7) && !b && strstr(k, "/round-3"))
            b = j;
    }
    ck_assert(a && b);
    double oa = cJSON_GetObjectItem(a, "plan_order")->valuedouble,
           ob = cJSON_GetObjectItem(b, "plan_order")->valuedouble;
    cJSON_ReplaceItemInObject(a, "plan_order", cJSON_CreateNumber(ob));
    cJSON_ReplaceItemInObject(b, "plan_order", cJSON_CreateNumber(oa));
    char want[200];
    snprintf(want, sizeof want, "job %s: plan_order %.0f, the regenerated plan says %.0f",
             cJSON_GetObjectItem(a, "job_key")->valuestring, ob, oa);
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "round-order", NULL, NULL);
    expect_fail(r, "plan", "validation.json", want);
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* A round of one arm dropped (its job removed from the bundle): FAIL; the
 * same round kept as a recorded failure stands in its place. */
START_TEST(test_a_missing_round_fails_plan_unless_a_recorded_failure_stands_in_its_place)
{
    tm_list l;
    tm_load(&l, rounds_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *jobs = cJSON_GetObjectItem(v, "jobs"), *j;
    int at = 0, hit = -1;
    cJSON_ArrayForEach(j, jobs)
    {
        if (!strcmp(cJSON_GetObjectItem(j, "job_key")->valuestring, "policy/2/rows2/round-2"))
            hit = at;
        at++;
    }
    ck_assert_int_ge(hit, 0);
    cJSON_DeleteItemFromArray(jobs, hit);
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "round-missing", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "planned job policy/2/rows2/round-2 is missing");
    ev_vreport_free(r);
    tm_free(&l);

    /* the fixture with its first round of case 0's default failed (and
     * rescued): a recorded failure in a round's place verifies */
    char db[320], zip[320], root[65];
    ev_err err = {{0}};
    ev_vfix_opts o = {6, 7, 2, 1, g_sources, sizeof g_sources / sizeof g_sources[0], 3, 0};
    snprintf(db, sizeof db, "%s/rounds-failed.db", g_dir);
    snprintf(zip, sizeof zip, "%s/rounds-failed.zip", g_dir);
    ck_assert_msg(!ev_vfix_build(db, &o, &err) && !ev_export_file(db, 0, zip, root, &err), "%s", err.msg);
    r = verify(zip, NULL, NULL);
    ck_assert_msg(ev_vreport_failures(r) == 0, "%s", report_text(r));
    ev_vreport_free(r);
    tm_load(&l, zip);
    v = tm_json(&l, "validation.json");
    ck_assert_str_eq(cJSON_GetObjectItem(job_by_key(v, "main/0/default/round-1"), "outcome")->valuestring,
                     "failed-exit");
    job_by_key(v, "rescue/0/default/round-1-retry-1");
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

START_TEST(test_removed_job_fails_plan)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *jobs = cJSON_GetObjectItem(v, "jobs");
    cJSON_DeleteItemFromArray(jobs, cJSON_GetArraySize(jobs) - 1);
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "removed", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "is missing (dropped or relabelled)");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_added_job_fails_plan)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *jobs = cJSON_GetObjectItem(v, "jobs");
    cJSON *copy = cJSON_Duplicate(job_by_key(v, "main/0/rows1/initial"), 1);
    cJSON_ReplaceItemInObject(copy, "job_key", cJSON_CreateString("main/0/rows8/initial"));
    cJSON_ReplaceItemInObject(copy, "arm", cJSON_CreateString("rows8"));
    cJSON_ReplaceItemInObject(copy, "job_id", cJSON_CreateNumber(9999));
    cJSON_AddItemToArray(jobs, copy);
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "added", NULL, NULL);
    expect_fail(r, "plan", "validation.json",
                "main/0/rows8/initial (job_id 9999) is not in the plan regenerated");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_relabelled_job_fails_plan)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "recheck/2/default/recheck");
    cJSON_ReplaceItemInObject(j, "phase", cJSON_CreateString("main"));
    cJSON_ReplaceItemInObject(j, "label", cJSON_CreateString("initial"));
    cJSON_ReplaceItemInObject(j, "job_key", cJSON_CreateString("main/2/default/initial2"));
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "relabel", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "planned job recheck/2/default/recheck is missing");
    expect_fail(r, "plan", "validation.json", "main/2/default/initial2");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_changed_outcome_fails_plan)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/1/rows2/initial");
    cJSON_ReplaceItemInObject(j, "outcome", cJSON_CreateString("failed-timeout"));
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    cJSON_ReplaceItemInObject(a, "outcome", cJSON_CreateString("failed-timeout"));
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "outcome", NULL, NULL);
    expect_fail(r, "plan", "validation.json",
                "outcome failed-timeout, but its process record gives completed");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_changed_run_status_fails_plan)
{
    tm_list l;
    tm_load(&l, g_failed);
    tm_replace(&l, "validation.json", "\"completed-after-rescue\"", "null");
    ev_vreport *r = tamper_verify(&l, "status", NULL, NULL);
    expect_fail(r, "plan", "validation.json",
                "run.rescue_status null, but the outcomes give completed-after-rescue");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_dropped_rescue_job_fails_plan)
{
    tm_list l;
    tm_load(&l, g_failed);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *jobs = cJSON_GetObjectItem(v, "jobs");
    int i = 0;
    cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        if (!strcmp(cJSON_GetObjectItem(j, "phase")->valuestring, "rescue"))
            break;
        i++;
    }
    cJSON_DeleteItemFromArray(jobs, i);
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "norescue", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "rescue job rescue/0/default/retry-1 is missing");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* ------------------------------------------------------------ rederive (check 6) */

START_TEST(test_edited_median_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/3/default/initial");
    double m = cJSON_GetObjectItem(j, "median_us")->valuedouble;
    cJSON_ReplaceItemInObject(j, "median_us", cJSON_CreateNumber(m * 0.9));
    tm_json_put(&l, "validation.json", v);
    ev_vreport *r = tamper_verify(&l, "median", NULL, NULL);
    expect_fail(r, "rederive", "validation.json", "job main/3/default/initial: median_us");
    /* The refit reads samples.csv, not the edited median: the model stays. */
    ck_assert(!has_failure(r, "rederive", "model.json", "differs"));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_flipped_model_decision_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(&l, "model.json", "\"selected\":\t\"default\"", "\"selected\":\t\"rows1\"");
    ev_vreport *r = tamper_verify(&l, "decision", NULL, NULL);
    expect_fail(r, "rederive", "model.json", "selected");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The schedules the model chooses from are the protocol's: a
 * protocol.json edited to declare another set (rows1 dropped: the
 * fixture's auto jobs that launch rows1 then disagree with it, and so does
 * the refit), or a model.json that claims another set, fails. */
START_TEST(test_a_declared_schedule_set_the_receipts_disagree_with_fails)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(
        &l, "protocol.json", "\"arms\": [\"default\", \"rows1\", \"rows2\"],",
        "\"arms\": [\"default\", \"rows1\", \"rows2\"], \"model_schedules\": [\"default\", \"rows2\"],");
    ev_vreport *r = tamper_verify(&l, "scheds-protocol", NULL, NULL);
    ck_assert_msg(ev_vreport_failures(r) > 0, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);

    tm_load(&l, g_good);
    tm_replace(
        &l, "model.json", "\"threshold\":\t0.050000000000000003,",
        "\"threshold\":\t0.050000000000000003,\n\t\"model_schedules\":\t[\"default\", \"rows1\", \"rows2\", "
        "\"rows4\"],");
    r = tamper_verify(&l, "scheds-model", NULL, NULL);
    expect_fail(r, "rederive", "model.json", "");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_fixture_auto_jobs_follow_a_non_default_selection)
{
    /* The selector check is not vacuous: some auto job of the good bundle
     * launches a candidate, and every native job its own schedule. */
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    int candidates = 0;
    for (int ci = 0; ci < 6; ci++) {
        char key[64];
        snprintf(key, sizeof key, "policy/%d/auto/initial", ci);
        const char *fn = node_fn(v, key);
        candidates += strstr(fn, "_default") == NULL;
        snprintf(key, sizeof key, "main/%d/rows2/initial", ci);
        ck_assert_str_eq(node_fn(v, key), plan_of(v, ci, EV_SCHED_ROWS2).entry);
    }
    ck_assert_int_gt(candidates, 0);
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

START_TEST(test_auto_receipt_of_a_schedule_the_selector_did_not_choose_fails_rederive)
{
    /* What the fault-wrong-schedule arm produces: the auto job launched
     * another schedule than the model selects; every digest recomputed and
     * the report regenerated, so the selector check alone objects. */
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    int ci = 0;
    for (; ci < 6; ci++) {
        char key[64];
        snprintf(key, sizeof key, "policy/%d/auto/initial", ci);
        if (!strstr(node_fn(v, key), "_default"))
            break;
    }
    ck_assert_int_lt(ci, 6);
    char key[64];
    snprintf(key, sizeof key, "policy/%d/auto/initial", ci);
    ev_launch_plan p = plan_of(v, ci, EV_SCHED_DEFAULT);
    set_node(v, key, &p);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "wrong-schedule", NULL, NULL);
    expect_fail(r, "rederive", "validation.json", "but the selector plans");
    expect_fail(r, "rederive", "validation.json", "(the model selects rows");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_native_receipt_with_another_grid_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    ev_launch_plan p = plan_of(v, 2, EV_SCHED_ROWS1);
    p.grid[0] += 1;
    set_node(v, "main/2/rows1/initial", &p);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "wrong-grid", NULL, NULL);
    expect_fail(r, "rederive", "validation.json",
                "job main/2/rows1/initial attempt 1: graph node 0 launches");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_native_receipt_naming_another_entry_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    ev_launch_plan p = plan_of(v, 1, EV_SCHED_ROWS2);
    set_node(v, "main/1/default/initial", &p);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "wrong-entry", NULL, NULL);
    expect_fail(r, "rederive", "validation.json",
                "job main/1/default/initial attempt 1: graph node 0 launches");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The "figures" object of validation.json tree v. */
static cJSON *figures_of(cJSON *v)
{
    cJSON *f = cJSON_GetObjectItem(v, "figures");
    ck_assert_ptr_nonnull(f);
    return f;
}

/* Writes v back, regenerates the report (so only the figure check can
 * object), verifies, and expects exactly one failure: the figures'. */
static void expect_figure_failure(tm_list *l, cJSON *v, const char *tag)
{
    tm_json_put(l, "validation.json", v);
    tm_rereport(l);
    ev_vreport *r = tamper_verify(l, tag, NULL, NULL);
    expect_fail(r, "rederive", "validation.json", "figures differ from their rebuild from samples.csv");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
}

START_TEST(test_tampered_interval_bound_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItem(figures_of(v), "pairs"), 0);
    cJSON *iv = cJSON_GetObjectItem(pair, "interval");
    double lo = cJSON_GetArrayItem(iv, 0)->valuedouble;
    cJSON_ReplaceItemInArray(iv, 0, cJSON_CreateNumber(lo * 0.999));
    expect_figure_failure(&l, v, "fig-ci");
    tm_free(&l);
}
END_TEST

START_TEST(test_tampered_p_value_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItem(figures_of(v), "pairs"), 0);
    cJSON *within = cJSON_GetObjectItem(pair, "within");
    double pv = cJSON_GetObjectItem(within, "mwu_p")->valuedouble;
    cJSON_ReplaceItemInObject(within, "mwu_p", cJSON_CreateNumber(pv < 0.005 ? pv * 1.5 : pv / 2.0));
    expect_figure_failure(&l, v, "fig-p");
    tm_free(&l);
}
END_TEST

START_TEST(test_tampered_tail_disclosure_fails_rederive)
{
    /* A tail disclosure invented (pair flag and list entry, consistent). */
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *f = figures_of(v);
    cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "pairs"), 0);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(pair, "tail_disclosure")));
    cJSON_ReplaceItemInObject(pair, "tail_disclosure", cJSON_CreateTrue());
    cJSON *td = cJSON_CreateObject();
    cJSON_AddItemToObject(td, "case_index", cJSON_Duplicate(cJSON_GetObjectItem(pair, "case_index"), 1));
    cJSON_AddItemToObject(td, "arm", cJSON_Duplicate(cJSON_GetObjectItem(pair, "arm"), 1));
    cJSON_AddItemToObject(td, "against", cJSON_Duplicate(cJSON_GetObjectItem(pair, "against"), 1));
    cJSON_AddItemToObject(td, "ratio", cJSON_Duplicate(cJSON_GetObjectItem(pair, "ratio"), 1));
    cJSON_AddItemToObject(
        td, "p95_ratio",
        cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(pair, "within"), "p95_ratio"), 1));
    cJSON_AddItemToArray(cJSON_GetObjectItem(f, "tail_disclosures"), td);
    expect_figure_failure(&l, v, "fig-tail");
    tm_free(&l);
}
END_TEST

START_TEST(test_tampered_across_case_interval_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *ac = cJSON_GetArrayItem(cJSON_GetObjectItem(figures_of(v), "across"), 0);
    cJSON *ci = cJSON_GetObjectItem(ac, "geomean_ratio_ci");
    double hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
    cJSON_ReplaceItemInArray(ci, 1, cJSON_CreateNumber(nextafter(hi, 2.0 * hi)));
    expect_figure_failure(&l, v, "fig-across");
    tm_free(&l);
}
END_TEST

START_TEST(test_tampered_job_p95_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItem(figures_of(v), "jobs"), 3);
    double p95 = cJSON_GetObjectItem(j, "p95_us")->valuedouble;
    cJSON_ReplaceItemInObject(j, "p95_us", cJSON_CreateNumber(p95 * 0.98));
    expect_figure_failure(&l, v, "fig-p95");
    tm_free(&l);
}
END_TEST

START_TEST(test_wrong_default_entry_source_digest_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *p = tm_json(&l, "proof-receipts.json");
    cJSON *d = cJSON_GetObjectItem(p, "default_entry_source");
    ck_assert_str_eq(cJSON_GetObjectItem(d, "path")->valuestring, "kernels/reduce_default.cuh");
    char hex[65];
    ck_assert_int_eq(ev_sha256_hex(src_kernel, strlen(src_kernel), hex), EV_OK);
    cJSON_ReplaceItemInObject(d, "sha256", cJSON_CreateString(hex));
    tm_json_put(&l, "proof-receipts.json", p);
    ev_vreport *r = tamper_verify(&l, "default-entry", NULL, NULL);
    expect_fail(r, "rederive", "proof-receipts.json", "default_entry_source is not");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_source_swapped_after_the_run_fails_rederive_even_with_hashes_recomputed)
{
    /* A kernel source replaced in the bundle, and every hash an exporter
     * computes (tree hashes, kernel list, receipts) recomputed: only the
     * runner's recorded tree hash, taken before measuring, still binds the
     * measured bytes. */
    tm_list l;
    tm_load(&l, g_good);
    static const char forged[] = "/* a faster kernel, not the measured one */\n";
    tm_set(&l, "sources/kernels/reduce.c", forged, strlen(forged));
    ev_source_file f[5];
    const char *paths[5] = {"db/schema.sql", "kernels/reduce.c", "kernels/reduce_default.cuh",
                            "protocols/quick.json", "src/runner/worker.c"};
    for (int i = 0; i < 5; i++) {
        char name[64];
        snprintf(name, sizeof name, "sources/%s", paths[i]);
        ev_buf *m = tm_get(&l, name);
        f[i].path = (char *)paths[i];
        ck_assert_int_eq(ev_sha256_hex(m->data, m->len, f[i].sha256), EV_OK);
    }
    char tree[65];
    ck_assert_int_eq(ev_tree_hash(f, 5, tree), EV_OK);
    cJSON *pv = tm_json(&l, "provenance.json");
    cJSON_ReplaceItemInObject(pv, "source_tree_hash", cJSON_CreateString(tree));
    tm_json_put(&l, "provenance.json", pv);
    cJSON *pr = tm_json(&l, "proof-receipts.json");
    cJSON_ReplaceItemInObject(pr, "source_tree_hash", cJSON_CreateString(tree));
    cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(pr, "kernel_sources"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(k, "path")->valuestring, "kernels/reduce.c");
    cJSON_ReplaceItemInObject(k, "sha256", cJSON_CreateString(f[1].sha256));
    cJSON_ReplaceItemInObject(k, "size", cJSON_CreateNumber((double)strlen(forged)));
    tm_json_put(&l, "proof-receipts.json", pr);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "swapped-source", NULL, NULL);
    expect_fail(r, "rederive", "provenance.json", "not the snapshot the run hashed");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* Edits one field of proof-receipts.json or provenance.json (a string
 * value, or a number when num is set), rewrites the report, and expects
 * exactly one failure: the member differs from its regeneration. */
static void expect_projection_failure(const char *member, const char *path1, const char *path2,
                                      const char *value, double num, const char *tag)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *t = tm_json(&l, member), *o = t;
    if (path2)
        o = cJSON_GetObjectItem(t, path1);
    const char *key = path2 ? path2 : path1;
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(o, key));
    cJSON_ReplaceItemInObject(o, key, value ? cJSON_CreateString(value) : cJSON_CreateNumber(num));
    tm_json_put(&l, member, t);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, tag, NULL, NULL);
    expect_fail(r, "rederive", member, "differs from its regeneration from validation.json");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}

/* Every field of the two projection members is bound: the build claims,
 * the kernel flags' reason, the run's backend, seed, id and start, each
 * edited alone (provenance's protocol_id has its own check in plan). */
START_TEST(test_a_projection_field_edited_alone_fails_rederive)
{
    expect_projection_failure("proof-receipts.json", "build", "cflags", "-O3 -march=native", 0,
                              "proj-cflags");
    expect_projection_failure("proof-receipts.json", "build", "device_name", "NVIDIA B200", 0, "proj-device");
    expect_projection_failure("proof-receipts.json", "backend", NULL, "cuda", 0, "proj-backend");
    expect_projection_failure("proof-receipts.json", "kernel_flags_reason", NULL, "flags were the defaults",
                              0, "proj-flags");
    expect_projection_failure("provenance.json", "backend", NULL, "cuda", 0, "prov-backend");
    expect_projection_failure("provenance.json", "seed", NULL, NULL, 12345, "prov-seed");
    expect_projection_failure("provenance.json", "run_id", NULL, NULL, 2, "prov-run");
    expect_projection_failure("provenance.json", "created_ns", NULL, "1700000000000000000", 0,
                              "prov-created");
}
END_TEST

/* profile_ids is rebuilt from the invocations: one added is refused. */
START_TEST(test_an_invented_profile_id_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    cJSON *t = tm_json(&l, "provenance.json");
    cJSON_AddItemToArray(
        cJSON_GetObjectItem(t, "profile_ids"),
        cJSON_CreateString("2222222222222222222222222222222222222222222222222222222222222222"));
    tm_json_put(&l, "provenance.json", t);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "prov-ids", NULL, NULL);
    expect_fail(r, "rederive", "provenance.json", "differs from its regeneration from validation.json");
    ck_assert_msg(ev_vreport_failures(r) == 1, "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The first attempt of job key in validation tree v. */
static cJSON *first_attempt(cJSON *v, const char *key)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(job_by_key(v, key), "attempts"), 0);
}

/*
 * The first completed attempt of arm `arm` on case `ci` (-1: on any case,
 * in case order): of its main job, else of its rescue (a loaded host can
 * fail the main attempt's sample rules, and only completed attempts are
 * held to their graph receipts).  OUT: the job key in key (cap bytes) and
 * the attempt number in *att.
 */
static cJSON *completed_attempt(cJSON *v, int ci, const char *arm, char *key, size_t cap, int *att)
{
    static const char *phase[] = {"main/%d/%s/initial", "rescue/%d/%s/retry-1", "rescue/%d/%s/retry-2"};
    cJSON *j, *a;
    for (size_t p = 0; p < 64 * (sizeof phase / sizeof phase[0]); p++) {
        int c = ci >= 0 ? ci : (int)(p / (sizeof phase / sizeof phase[0]));
        if (ci >= 0 && p >= sizeof phase / sizeof phase[0])
            break;
        snprintf(key, cap, phase[p % (sizeof phase / sizeof phase[0])], c, arm);
        cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
        {
            if (strcmp(cJSON_GetObjectItem(j, "job_key")->valuestring, key))
                continue;
            cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
            {
                cJSON *oc = cJSON_GetObjectItem(a, "outcome");
                if (cJSON_IsString(oc) && !strcmp(oc->valuestring, "completed")) {
                    *att = (int)cJSON_GetObjectItem(a, "attempt")->valuedouble;
                    return a;
                }
            }
        }
    }
    /* none: what each attempt of the arm was, and the rule it broke */
    char why[2048] = "";
    size_t n = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        if (strcmp(cJSON_GetObjectItem(j, "arm")->valuestring, arm))
            continue;
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            cJSON *pr = cJSON_GetObjectItem(a, "process");
            cJSON *pe = cJSON_GetObjectItem(pr, "protocol_error"),
                  *se = cJSON_GetObjectItem(pr, "stderr_tail");
            const char *s = cJSON_IsString(pe) && *pe->valuestring ? pe->valuestring
                            : cJSON_IsString(se)                   ? se->valuestring
                                                                   : "";
            size_t l = strlen(s);
            if (n < sizeof why)
                n += (size_t)snprintf(
                    why + n, sizeof why - n, "; %s: %s: %s", cJSON_GetObjectItem(j, "job_key")->valuestring,
                    cJSON_GetObjectItem(a, "outcome")->valuestring, l > 200 ? s + l - 200 : s);
        }
    }
    ck_abort_msg("no completed attempt of %s on case %d%s", arm, ci, why);
    return NULL;
}

/* Writes v back (report regenerated), verifies, expects a plan failure
 * containing want. */
static void expect_plan_failure(tm_list *l, cJSON *v, const char *tag, const char *want)
{
    tm_json_put(l, "validation.json", v);
    tm_rereport(l);
    ev_vreport *r = tamper_verify(l, tag, NULL, NULL);
    expect_fail(r, "plan", "validation.json", want);
    ev_vreport_free(r);
}

/* The invariants of bundle-format.md that one JSON edit could break, each
 * refused: the parsed environment copy, a deleted validation stage, a
 * duplicated stage, a stage of another name, retry_of_job_id on a planned
 * job, an exit code beside a signal, *_ns fields that are not strings. */
START_TEST(test_each_single_field_invariant_of_validation_json_is_refused)
{
    tm_list l;
    cJSON *v, *a;

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON *env =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(v, "invocations"), 0), "environment");
    cJSON_ReplaceItemInObject(env, "threads", cJSON_CreateNumber(64));
    expect_plan_failure(&l, v, "env-copy",
                        "invocation 1: environment is not the parsed copy of its environment_record");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    a = first_attempt(v, "main/1/rows1/initial");
    cJSON *vals = cJSON_GetObjectItem(a, "validations");
    ck_assert_int_eq(cJSON_GetArraySize(vals), 2);
    cJSON_DeleteItemFromArray(vals, 0);
    /* the process's record count made to agree (ev_record_count_problem
     * would name the missing row first): the stages rule itself */
    cJSON *proc = cJSON_GetObjectItem(a, "process");
    cJSON_ReplaceItemInObject(proc, "record_count",
                              cJSON_CreateNumber(cJSON_GetObjectItem(proc, "record_count")->valuedouble - 1));
    expect_plan_failure(&l, v, "stage-deleted",
                        "job main/1/rows1/initial attempt 1: completed without both validation stages (first "
                        "and final) (1 stage(s))");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    vals = cJSON_GetObjectItem(first_attempt(v, "main/1/rows1/initial"), "validations");
    cJSON_AddItemToArray(vals, cJSON_Duplicate(cJSON_GetArrayItem(vals, 1), 1));
    expect_plan_failure(&l, v, "stage-twice", "a validation stage appears twice");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    vals = cJSON_GetObjectItem(first_attempt(v, "main/1/rows1/initial"), "validations");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(vals, 0), "stage", cJSON_CreateString("middle"));
    expect_plan_failure(&l, v, "stage-name", "a validation's stage is neither first nor final");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(job_by_key(v, "main/2/rows2/initial"), "retry_of_job_id",
                              cJSON_CreateNumber(3));
    expect_plan_failure(&l, v, "planned-retry-id",
                        "job main/2/rows2/initial: a planned job, yet retry_of_job_id is not null");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(first_attempt(v, "main/2/rows2/initial"), "process"),
                              "signal", cJSON_CreateNumber(9));
    expect_plan_failure(&l, v, "exit-and-signal", "process record has both an exit_code and a signal");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(first_attempt(v, "main/2/rows2/initial"), "started_ns", cJSON_CreateNumber(5));
    expect_plan_failure(&l, v, "ns-number",
                        "job main/2/rows2/initial attempt 1: started_ns is not a decimal string");
    tm_free(&l);

    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "run"), "created_ns", cJSON_CreateString("0012"));
    expect_plan_failure(&l, v, "ns-run", "run.created_ns or run.finished_ns is not a decimal string");
    tm_free(&l);

    /* two jobs on the device at once: an attempt that started before the
     * attempt released before it had ended */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    {
        cJSON *a1 = first_attempt(v, "main/2/rows2/initial"), *next = NULL, *job;
        long long s1 = atoll(cJSON_GetObjectItem(a1, "started_ns")->valuestring), best = 0;
        const char *e1 = cJSON_GetObjectItem(cJSON_GetObjectItem(a1, "process"), "ended_ns")->valuestring;
        char earlier[32];
        cJSON_ArrayForEach(job, cJSON_GetObjectItem(v, "jobs"))
        {
            cJSON *at;
            cJSON_ArrayForEach(at, cJSON_GetObjectItem(job, "attempts"))
            {
                long long st = atoll(cJSON_GetObjectItem(at, "started_ns")->valuestring);
                if (st > s1 && (!next || st < best))
                    next = at, best = st;
            }
        }
        ck_assert_ptr_nonnull(next);
        snprintf(earlier, sizeof earlier, "%lld", atoll(e1) - 1);
        cJSON_ReplaceItemInObject(next, "started_ns", cJSON_CreateString(earlier));
    }
    expect_plan_failure(&l, v, "device-overlap", "two jobs held the device at once");
    tm_free(&l);

    /* an attempt credited to an invocation the bundle does not hold */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(first_attempt(v, "main/2/rows2/initial"), "invocation_id",
                              cJSON_CreateNumber(7));
    expect_plan_failure(&l, v, "inv-id",
                        "job main/2/rows2/initial attempt 1: invocation_id names no invocation");
    tm_free(&l);

    /* free text that still holds an absolute path (a privacy leak the
     * exporter's redaction prevents) */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(first_attempt(v, "main/2/rows2/initial"), "process"),
                              "stderr_tail", cJSON_CreateString("opened /home/alice/secret/data.bin\n"));
    expect_plan_failure(&l, v, "unredacted",
                        "job main/2/rows2/initial attempt 1: process.stderr_tail holds an absolute path");
    tm_free(&l);
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "run"), "protocol_path",
                              cJSON_CreateString("/home/alice/p.json"));
    expect_plan_failure(&l, v, "unredacted-path", "run.protocol_path holds an absolute path (not redacted)");
    tm_free(&l);

    /* a member printed otherwise than the exporter prints it (same data) */
    tm_load(&l, g_good);
    ev_buf *pm = tm_get(&l, "provenance.json");
    ev_buf compact = EV_BUF_INIT;
    for (size_t i = 0; i < pm->len; i++)
        if (pm->data[i] != '\t')
            ck_assert_int_eq(ev_buf_append(&compact, pm->data + i, 1), EV_OK);
    tm_set(&l, "provenance.json", compact.data, compact.len);
    ev_buf_free(&compact);
    ev_vreport *r = tamper_verify(&l, "printed", NULL, NULL);
    expect_fail(r, "formats", "provenance.json", "is not printed as the exporter prints it");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* A sample row whose clock or elapsed time is negative (or -0) is refused
 * by the formats check: no timer or clock reads so. */
START_TEST(test_a_negative_clock_or_time_in_samples_csv_fails_formats)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *m = tm_get(&l, "samples.csv");
    ck_assert(m->len > 2 && m->data[m->len - 1] == '\n' && m->data[m->len - 2] == ',');
    ev_buf edited = EV_BUF_INIT;
    ck_assert_int_eq(ev_buf_append(&edited, m->data, m->len - 1), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&edited, "-5\n"), EV_OK); /* the last row's empty sm_clock_mhz */
    tm_set(&l, "samples.csv", edited.data, edited.len);
    ev_buf_free(&edited);
    ev_vreport *r = tamper_verify(&l, "neg-clock", NULL, NULL);
    expect_fail(r, "formats", "samples.csv", "is negative (or -0)");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* Writes v back (report regenerated), verifies, expects a rederive
 * failure of validation.json containing want. */
static void expect_rederive_failure(tm_list *l, cJSON *v, const char *tag, const char *want)
{
    tm_json_put(l, "validation.json", v);
    tm_rereport(l);
    ev_vreport *r = tamper_verify(l, tag, NULL, NULL);
    expect_fail(r, "rederive", "validation.json", want);
    ev_vreport_free(r);
}

/* The stored fit's description and the drift table's job keys are held to
 * what the bundle shows. */
START_TEST(test_store_fit_and_drift_keys_edited_alone_fail_rederive)
{
    tm_list l;
    cJSON *v, *sf;

    /* the fixture stored no fit: claiming one that equals model.json is refused */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    sf = cJSON_GetObjectItem(v, "store_fit");
    cJSON_ReplaceItemInObject(sf, "equals_model_json", cJSON_CreateTrue());
    expect_rederive_failure(&l, v, "fit-claimed",
                            "store_fit: no fit stored, yet fit_id, sha256 or equals_model_json is set");
    tm_free(&l);

    /* a stored fit whose digest is not model.json's, said to equal it */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    sf = cJSON_GetObjectItem(v, "store_fit");
    cJSON_ReplaceItemInObject(sf, "fits", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObject(sf, "fit_id", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObject(
        sf, "sha256", cJSON_CreateString("3333333333333333333333333333333333333333333333333333333333333333"));
    cJSON_ReplaceItemInObject(sf, "equals_model_json", cJSON_CreateTrue());
    expect_rederive_failure(&l, v, "fit-equal",
                            "store_fit: equals_model_json is true, but its sha256 is not model.json's");
    tm_free(&l);

    /* a drift row naming another job */
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    cJSON *d0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "drift"), "cases"), 0);
    cJSON_ReplaceItemInObject(d0, "main_job_key", cJSON_CreateString("main/0/rows1/initial"));
    expect_rederive_failure(&l, v, "drift-key",
                            "drift of case 0: main_job_key is not main/0/default/initial");
    tm_free(&l);
    tm_load(&l, g_good);
    v = tm_json(&l, "validation.json");
    d0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "drift"), "cases"), 1);
    cJSON_ReplaceItemInObject(d0, "recheck_job_key", cJSON_CreateString("recheck/0/default/recheck"));
    expect_rederive_failure(&l, v, "drift-rkey",
                            "drift of case 1: recheck_job_key is not recheck/1/default/recheck");
    tm_free(&l);
}
END_TEST

START_TEST(test_edited_report_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    tm_replace(&l, "report.html", "<", "<!-- all good -->\n<");
    ev_vreport *r = tamper_verify(&l, "report", NULL, NULL);
    expect_fail(r, "rederive", "report.html", "differs from the report regenerated");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

START_TEST(test_changed_output_fails_rederive)
{
    tm_list l;
    tm_load(&l, g_good);
    const char *name = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (!strncmp(l.name[i], "outputs/", 8)) {
            name = l.name[i];
            break;
        }
    ck_assert_ptr_nonnull(name);
    tm_get(&l, name)->data[0] ^= 1;
    ev_vreport *r = tamper_verify(&l, "output", NULL, NULL);
    expect_fail(r, "rederive", name, "records output_sha256");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The first outputs/ member of l, or NULL. */
static const char *first_output(tm_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strncmp(l->name[i], "outputs/", 8))
            return l->name[i];
    return NULL;
}

/* Makes the records of output member name follow its (edited) bytes, as a
 * forger would: its SHA-256 in every validation of its attempt, and, with
 * revalidate, the numbers validation gives those bytes (protocol.json's
 * cases, runner/validate.h), so that only what they mean can object. */
static void follow_output(tm_list *l, const char *name, int revalidate)
{
    ev_buf *o = tm_get(l, name), *pb = tm_get(l, "protocol.json");
    char hex[65];
    ev_protocol p;
    ev_err err = {{0}};
    int hits = 0;
    ck_assert_int_eq(ev_sha256_hex(o->data, o->len, hex), EV_OK);
    ck_assert_int_eq(ev_protocol_parse(pb->data, pb->len, &p, &err), EV_OK);
    cJSON *v = tm_json(l, "validation.json"), *j, *a, *val;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            int mine = 0;
            cJSON_ArrayForEach(val, cJSON_GetObjectItem(a, "validations"))
            {
                cJSON *m = cJSON_GetObjectItem(val, "output_member");
                mine |= cJSON_IsString(m) && !strcmp(m->valuestring, name);
            }
            if (!mine)
                continue;
            ev_validation chk;
            if (revalidate) {
                ev_shape sh;
                ev_oracle_row *rows = NULL;
                int64_t ci = (int64_t)cJSON_GetObjectItem(j, "case_index")->valuedouble;
                ck_assert_int_eq(ev_case_oracle_rows(&p, (size_t)ci, &sh, &rows, &err), EV_OK);
                ev_output_check(&p, &sh, NULL, rows, o->data, &chk);
                free(rows);
            }
            cJSON_ArrayForEach(val, cJSON_GetObjectItem(a, "validations"))
            {
                cJSON_ReplaceItemInObject(val, "output_sha256", cJSON_CreateString(hex));
                if (revalidate) {
                    cJSON_ReplaceItemInObject(val, "passed", cJSON_CreateBool(chk.passed));
                    cJSON_ReplaceItemInObject(val, "max_abs_err", cJSON_CreateNumber(chk.max_abs_err));
                    cJSON_ReplaceItemInObject(val, "bound", cJSON_CreateNumber(chk.bound));
                    cJSON_ReplaceItemInObject(val, "mismatches", cJSON_CreateNumber((double)chk.mismatches));
                }
                hits++;
            }
        }
    }
    ck_assert_int_ge(hits, 1);
    tm_json_put(l, "validation.json", v);
    ev_protocol_free(&p);
}

/* Every stored output is validated again against the oracle of its case's
 * input, regenerated from protocol.json's seed: an output edited with its
 * hash, whose recorded validation no longer holds, fails rederive; so
 * does a recorded max_abs_err the output does not give; an edit whose
 * numbers follow too passes. */
START_TEST(test_an_output_validated_again_must_give_its_recorded_numbers)
{
    tm_list l;
    tm_load(&l, g_good);
    const char *name = first_output(&l);
    ck_assert_ptr_nonnull(name);
    ev_buf *o = tm_get(&l, name);
    o->data[3] ^= 0x40; /* an fp32 element's exponent: far outside the bound */
    follow_output(&l, name, 0);
    ev_vreport *r = tamper_verify(&l, "revalidate", NULL, NULL);
    expect_fail(r, "rederive", name,
                "validated again against the oracle of the input regenerated from protocol.json's seed, "
                "gives failed");
    ev_vreport_free(r);
    follow_output(&l, name, 1); /* the records now say failed, with its numbers */
    tm_rereport(&l);
    r = tamper_verify(&l, "revalidate-followed", NULL, NULL);
    ck_assert_msg(!has_failure(r, "rederive", name, "validated again"), "%s", report_text(r));
    ev_vreport_free(r);
    tm_free(&l);

    /* a recorded max_abs_err the output does not give */
    tm_load(&l, g_good);
    name = first_output(&l);
    cJSON *v = tm_json(&l, "validation.json"), *j, *a, *val;
    int hits = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            cJSON_ArrayForEach(val, cJSON_GetObjectItem(a, "validations"))
            {
                cJSON *m = cJSON_GetObjectItem(val, "output_member");
                if (cJSON_IsString(m) && !strcmp(m->valuestring, name)) {
                    double e = cJSON_GetObjectItem(val, "max_abs_err")->valuedouble;
                    cJSON_ReplaceItemInObject(val, "max_abs_err", cJSON_CreateNumber(e + 0.25));
                    hits++;
                }
            }
        }
    }
    ck_assert_int_eq(hits, 1);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    r = tamper_verify(&l, "revalidate-mae", NULL, NULL);
    expect_fail(r, "rederive", name, "gives passed (max_abs_err");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* What a bundle can make the verifier regenerate is bounded
 * (--regenerate-limit): past the limit, checks 5 and 6 say how many
 * elements the bundle asks for and do not regenerate them. */
START_TEST(test_regenerating_more_inputs_than_the_limit_is_refused_with_the_count)
{
    ev_verify_opts o = {NULL, NULL, NULL, NULL, 1000, NULL};
    ev_vreport *r = NULL;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_verify_bundle(g_good, &o, &r, &err), EV_OK);
    expect_fail(r, "rederive", "outputs/", "validating the outputs again would regenerate up to");
    expect_fail(r, "protocol", "protocol.json", "pass verify-bundle --regenerate-limit N to allow it");
    ck_assert(!strstr(report_text(r), "validated again against the FP64 oracle"));
    ev_vreport_free(r);
}
END_TEST

/* ------------------------------------------------------------ sources (check 7) */

START_TEST(test_stale_source_fails_with_the_changed_files)
{
    char tree[320];
    snprintf(tree, sizeof tree, "%s/stale", g_dir);
    mkdir(tree, 0755);
    for (size_t i = 0; i < sizeof g_sources / sizeof g_sources[0]; i++)
        write_tree_file(tree, g_sources[i].path, g_sources[i].bytes, g_sources[i].len);
    write_tree_file(tree, "kernels/reduce.c", "/* changed */\n", 14);
    write_tree_file(tree, "kernels/new.cu", "x\n", 2);
    ev_vreport *r = verify(g_good, tree, NULL);
    expect_fail(r, "sources", "sources/",
                "stale evidence: 2 changed files: kernels/reduce.c, kernels/new.cu");
    expect_fail(r, "sources", "kernels/new.cu", "in DIR's measurement closure but not in the bundle");
    ev_vreport_free(r);
}
END_TEST

/* A tree with a closure list (the build writes it) is checked by the
 * list, with no build there: the list is itself in the closure, so a tree
 * whose list the bundle lacks is stale; a file the list names in a folder
 * of its own must be a member; a listed file the tree lacks fails. */
START_TEST(test_a_trees_closure_list_is_its_closure_and_a_member_of_it)
{
    char tree[320];
    snprintf(tree, sizeof tree, "%s/listed", g_dir);
    mkdir(tree, 0755);
    for (size_t i = 0; i < sizeof g_sources / sizeof g_sources[0]; i++)
        write_tree_file(tree, g_sources[i].path, g_sources[i].bytes, g_sources[i].len);
    write_tree_file(tree, "src/moved/lanes.c", "int lanes;\n", 11);
    static const char list[] = "db/schema.sql\nkernels/reduce.c\nkernels/reduce_default.cuh\n"
                               "protocols/quick.json\nsrc/moved/lanes.c\nsrc/runner/worker.c\nsrc/gone.h\n";
    write_tree_file(tree, "mk/closure.list", list, sizeof list - 1);
    ev_vreport *r = verify(g_good, tree, NULL);
    expect_fail(r, "sources", "sources/",
                "stale evidence: 2 changed files: mk/closure.list, src/moved/lanes.c");
    expect_fail(r, "sources", "src/moved/lanes.c", "in DIR's measurement closure but not in the bundle");
    expect_fail(r, "sources", "src/gone.h", "named by mk/closure.list but not in the tree");
    ev_vreport_free(r);
}
END_TEST

/* ------------------------------------------------------------ compare (check 8) */

START_TEST(test_compare_of_a_bundle_with_itself_passes)
{
    ev_vreport *r = NULL;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_verify_compare(g_good, g_good, &r, &err), EV_OK);
    ck_assert_int_eq(r->checks[VR_COMPARE].verdict, EV_VERDICT_PASS);
    ck_assert_ptr_nonnull(strstr(report_text(r), "B/A geometric mean 1.000000"));
    ev_vreport_free(r);
}
END_TEST

START_TEST(test_compare_reports_outcome_and_value_differences)
{
    tm_list l;
    tm_load(&l, g_good);
    const char *name = NULL;
    for (size_t i = 0; i < l.n; i++)
        if (!strncmp(l.name[i], "outputs/", 8)) {
            name = l.name[i];
            break;
        }
    ev_buf *o = tm_get(&l, name);
    o->data[2] ^= 0x01; /* one fp32 element, a low mantissa byte */
    /* Keep B self-consistent: the job's hashes and validation follow the bytes. */
    follow_output(&l, name, 1);
    tm_rereport(&l);
    snprintf(g_case, sizeof g_case, "%s/cmp.zip", g_dir);
    tm_write(&l, g_case, 0);
    ev_vreport *r = NULL;
    ev_err err = {{0}};
    ck_assert_int_eq(ev_verify_compare(g_good, g_case, &r, &err), EV_OK);
    expect_fail(r, "compare", name, "outputs differ bitwise; values: 1 of");
    ck_assert_uint_eq(r->checks[VR_REDERIVE].n_fails_total, 0); /* B is self-consistent */
    ev_vreport_free(r);
    r = NULL;
    ck_assert_int_eq(ev_verify_compare(g_good, g_failed, &r, &err), EV_OK);
    expect_fail(r, "compare", "validation.json", "outcome completed in A, failed-exit in B");
    expect_fail(r, "compare", "validation.json", "rescue/0/default/retry-1 is in B only");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* ------------------------------------------------------------ exact text */

START_TEST(test_fast_double_text_equals_snprintf_17g)
{
    /* vb_format17 decides check 3's canonical-number rule for samples.csv;
     * it must give snprintf's "%.17g" bytes for every double. */
    uint64_t st = 88172645463325252ULL;
    double edge[] = {0.0,
                     -0.0,
                     1e-6,
                     9.9999999999999995e-7,
                     1e-4,
                     1e16,
                     1e17,
                     0.5,
                     5,
                     1.25,
                     0.1,
                     0.3,
                     9.9999999999999998e-5,
                     1e15,
                     9007199254740991.0,
                     0.99999999999999989,
                     5e-324,
                     1.7976931348623157e308};
    char a[32], b[32];
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        snprintf(a, sizeof a, "%.17g", edge[i]);
        ck_assert_int_eq(vb_format17(edge[i], b), 0);
        ck_assert_str_eq(a, b);
    }
    for (long i = 0; i < 300000; i++) {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        double v;
        if (i % 3 == 0)
            memcpy(&v, &st, sizeof v);
        else if (i % 3 == 1)
            v = ldexp((double)(st >> 11), -53) * pow(10.0, (double)(int)(st % 30) - 10.0);
        else
            v = (double)(st % 2000000) * 1e-6 * 1000.0 / (double)(1 + (st >> 40) % 10000);
        if (!isfinite(v)) {
            ck_assert_int_eq(vb_format17(v, b), -1);
            continue;
        }
        snprintf(a, sizeof a, "%.17g", v);
        ck_assert_int_eq(vb_format17(v, b), 0);
        ck_assert_str_eq(a, b);
        /* vb_read17 reads the canonical text back to the same bits (it must
         * within its range), and refuses every other text of the value */
        double back;
        int rc = vb_read17(a, strlen(a), &back);
        if (fabs(v) >= 1e-5 && fabs(v) < 1e15)
            ck_assert_msg(rc == 0, "vb_read17 refused %s", a);
        if (rc == 0)
            ck_assert_msg(!memcmp(&back, &v, sizeof v), "vb_read17(%s) gave %.17g", a, back);
        char other[40];
        snprintf(other, sizeof other, "%s%s", a, strchr(a, '.') || strchr(a, 'e') ? "0" : ".0");
        if (!strchr(a, 'e'))
            ck_assert_int_eq(vb_read17(other, strlen(other), &back), -1);
        snprintf(other, sizeof other, "+%s", a);
        ck_assert_int_eq(vb_read17(other, strlen(other), &back), -1);
        /* a shorter text may be another double's canonical text: then
         * that double's, never a wrong one */
        snprintf(other, sizeof other, "%.16g", v);
        if (vb_read17(other, strlen(other), &back) == 0) {
            ck_assert_int_eq(vb_format17(back, b), 0);
            ck_assert_str_eq(b, other);
        }
    }
    static const char *const refused[] = {"",     "-",   ".",   "e5",  "1e", "1e+", "0.0",
                                          "-0.0", "00",  "01",  "1.",  ".5", "1E5", "100000000000000000000",
                                          "0x10", "inf", "nan", "1e5", "1 ", " 1",  "1..2",
                                          "--1"};
    double back;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        ck_assert_msg(vb_read17(refused[i], strlen(refused[i]), &back) == -1, "vb_read17 took \"%s\"",
                      refused[i]);
    ck_assert_int_eq(vb_read17("0", 1, &back), 0);
    ck_assert(back == 0.0 && !signbit(back));
    ck_assert_int_eq(vb_read17("-0", 2, &back), 0);
    ck_assert(back == 0.0 && signbit(back));
    ck_assert_int_eq(vb_read17("1e+20", 5, &back), 0);
    ck_assert(back == 1e20);
}
END_TEST

/* ------------------------------------------------------------ the binary */

/* Runs build/verify-bundle with args; returns the exit status and the last
 * line of stderr in last (and stdout in out when non-NULL). */
static size_t g_as_limit; /* run_bin's child: RLIMIT_AS in bytes, 0 for none */

/* argv for the built program name with args (NULL-terminated, at most 14)
 * into argv[16]. */
static void prog_argv(const char *name, const char *const *args, const char **argv)
{
    size_t n = 0;
    argv[n++] = name;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
}

static int run_bin(const char *const *args, char *last, size_t cap, ev_buf *out)
{
    const char *argv[16];
    ev_ran x;
    prog_argv("verify-bundle", args, argv);
    ev_prog_run(g_dir, (char *const *)argv, g_as_limit, &x);
    ck_assert_msg(x.rc >= 0 && x.rc < 128, "verify-bundle did not exit normally (%d)", x.rc);
    last[0] = '\0';
    if (x.err.len) {
        size_t end = x.err.len;
        while (end > 0 && x.err.data[end - 1] == '\n')
            end--;
        size_t start = end;
        while (start > 0 && x.err.data[start - 1] != '\n')
            start--;
        snprintf(last, cap, "%.*s", (int)(end - start), x.err.data + start);
    }
    if (out) {
        ev_buf_free(out);
        ck_assert_int_eq(ev_buf_append(out, x.out.data, x.out.len), EV_OK);
    }
    ev_ran_free(&x);
    ck_assert_int_ne(x.rc, 127);
    return x.rc;
}

/* Runs build/evident with args; its stdout, then its stderr, are kept in
 * g_dir/evident.log (evident_log).  Returns its exit status. */
static int run_evident(const char *const *args)
{
    const char *argv[16];
    char logp[512];
    ev_ran x;
    ev_err err;
    prog_argv("evident", args, argv);
    ev_prog_run(g_dir, (char *const *)argv, 0, &x);
    ck_assert_msg(x.rc >= 0 && x.rc < 128, "evident did not exit normally (%d)", x.rc);
    snprintf(logp, sizeof logp, "%s/evident.log", g_dir);
    ck_assert_int_eq(ev_buf_append(&x.out, x.err.data, x.err.len), EV_OK);
    ck_assert_int_eq(ev_write_file(logp, x.out.data, x.out.len, &err), EV_OK);
    ev_ran_free(&x);
    return x.rc;
}

static const char *evident_log(char *buf, size_t cap);

/* A real cpu run of protocol text proto (len bytes) as g_dir/<name>.json
 * into a fresh g_dir/<name>.db (the suite runs twice in one directory),
 * exported to zip (g_dir/<name>.zip).  Returns verify-bundle's exit
 * status, its last line in last.
 *
 * The real runs whose point is not timing declare a target of 0.001 ms
 * (FIXED_TARGET): one replay of 100 ops is longer on any host, so every
 * calibration chooses one replay, a sample of one replay is exempt from
 * the upper side of both bands (docs/verify.md, check 5) and no replay
 * is as short as their lower sides: their timed jobs complete whatever
 * the host's load, and the tests hold them to it. */
#define FIXED_TARGET "0.001"
static int real_run(const char *name, const char *proto, size_t len, char *zip, size_t zcap, char *last,
                    size_t lcap)
{
    char pp[320], db[320], file[64], log[8192];
    snprintf(pp, sizeof pp, "%s/%s.json", g_dir, name);
    snprintf(db, sizeof db, "%s/%s.db", g_dir, name);
    snprintf(zip, zcap, "%s/%s.zip", g_dir, name);
    snprintf(file, sizeof file, "%s.json", name);
    unlink(db);
    write_tree_file(g_dir, file, proto, len);
    const char *run[] = {"run", "--protocol", pp, "--backend", "cpu", "--db", db, NULL};
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_msg(run_evident(run) == 0, "%s", evident_log(log, sizeof log));
    ck_assert_int_eq(run_evident(exp), 0);
    const char *ver[] = {zip, NULL};
    return run_bin(ver, last, lcap, NULL);
}

/* The store edits an exporter and verifier once let through, each made in
 * a real run's store (append-only triggers dropped) and exported: the
 * exporter refuses it, or verify-bundle FAILs the bundle.  A fault-exit
 * attempt's exit code 3 made 0, or made signal 9, or its stderr tail
 * emptied (the fault arm's declared end and the worker's line about it,
 * ev_fault_problem); a protocol error erased (a process whose records are
 * not ok says why, ev_process_problem); a cold-timing row deleted (every
 * record the worker sent is a row: ev_record_count_problem). */
START_TEST(test_five_store_edits_of_process_records_are_refused_by_export_or_fail_verify)
{
    static const char proto[] =
        "{\"seed\": 9, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-exit\", \"fault-garbage\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3, \"when\": "
        "\"original\"},\n"
        "                {\"name\": \"fault-garbage\", \"kind\": \"garbage\", \"when\": \"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
#define ATT_OF(key)                                                                                          \
    "(SELECT a.attempt_id FROM attempts a JOIN jobs j USING (job_id) WHERE j.job_key = '" key "')"
    static const struct {
        const char *tag, *sql;
    } edits[] = {
        {"exit-0",
         "UPDATE processes SET exit_code = 0 WHERE attempt_id = " ATT_OF("main/0/fault-exit/initial")},
        {"exit-signal", "UPDATE processes SET exit_code = NULL, signal = 9 WHERE attempt_id = " ATT_OF(
                            "main/0/fault-exit/initial")},
        {"stderr-empty",
         "UPDATE processes SET stderr_tail = '' WHERE attempt_id = " ATT_OF("main/0/fault-exit/initial")},
        {"protocol-error-erased", "UPDATE processes SET protocol_error = NULL WHERE attempt_id = " ATT_OF(
                                      "main/0/fault-garbage/initial")},
        /* a worker's cold row (not the supervisor's own: a backoff or a
         * cpu-lock wait, which another run on the host can cause) */
        {"cold-row-deleted",
         "DELETE FROM cold_timings WHERE rowid = (SELECT min(rowid) FROM cold_timings WHERE "
         "name NOT IN ('backoff', 'cpu-lock') AND attempt_id = " ATT_OF("main/0/default/initial") ")"},
    };
#undef ATT_OF
    char zip[320], last[1024];
    ck_assert_msg(real_run("edits", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *db = tamper_store("edits", edits[i].tag, edits[i].sql);
        char out[340], root[65];
        ev_err err = {{0}};
        snprintf(out, sizeof out, "%s/%s.zip", g_dir, edits[i].tag);
        ev_status rc = ev_export_file(db, 0, out, root, &err);
        if (rc) {
            ck_assert_msg(rc == EV_EFORMAT && strstr(err.msg, "breaks an invariant"), "%s: %s", edits[i].tag,
                          err.msg);
            continue;
        }
        const char *ver[] = {out, NULL};
        ck_assert_msg(run_bin(ver, last, sizeof last, NULL) == 1, "%s: exported and verified: %s",
                      edits[i].tag, last);
    }
}
END_TEST

/* The columns docs/store.md names as free ("Free columns": one
 * "- `table.column`" a line): no rule ties them to another record, so an
 * edit of one alone is caught only by a signature or --expect-root. */
static int column_is_free(const char *table, const char *column)
{
    ev_buf d = EV_BUF_INIT;
    ev_err err = {{0}};
    char want[200];
    ck_assert_int_eq(ev_read_file("docs/store.md", &d, &err), EV_OK);
    const char *sec = strstr(d.data, "\n## Free columns");
    ck_assert_msg(sec != NULL, "docs/store.md has no \"Free columns\" section");
    const char *end = strstr(sec + 1, "\n## ");
    snprintf(want, sizeof want, "\n- `%s.%s`", table, column);
    const char *at = strstr(sec, want);
    int free_col = at && (!end || at < end);
    ev_buf_free(&d);
    return free_col;
}

/* A copy of store `from` (triggers dropped) named tag, with sql run in it.
 * Returns the copy's path, or NULL when the schema refused the edit (a
 * CHECK, NOT NULL or UNIQUE constraint: the store itself guards it). */
static const char *edit_store(const char *from, const char *tag, const char *sql)
{
    static char dst[600];
    char src[600], cmd[2000];
    sqlite3 *db;
    snprintf(src, sizeof src, "%s/%s.db", g_dir, from);
    snprintf(dst, sizeof dst, "%s/%s.db", g_dir, tag);
    snprintf(cmd, sizeof cmd, "rm -f '%s'* && cp '%s' '%s'", dst, src, dst);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(sqlite3_open(dst, &db), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_exec(db, "CREATE TEMP TABLE t AS SELECT name FROM sqlite_master WHERE type = 'trigger'", NULL,
                     NULL, NULL),
        SQLITE_OK);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT name FROM t", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        char drop[200];
        snprintf(drop, sizeof drop, "DROP TRIGGER \"%s\"", (const char *)sqlite3_column_text(st, 0));
        ck_assert_int_eq(sqlite3_exec(db, drop, NULL, NULL, NULL), SQLITE_OK);
    }
    sqlite3_finalize(st);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? dst : NULL;
}

/* Every raw column of every table of a store, edited in turn in its first
 * row (an integer by one, or 0 and 1 swapped; a real by half; text and
 * blobs by a byte more; JSON text at its first number; null made 1), is
 * refused by the schema or the exporter, or FAILs verify-bundle: except
 * the columns docs/store.md names as free, which the test also lists.
 * The store is the verifier's fixture (every job completed, the same on
 * every host, so no verdict here depends on this host's noise). */
START_TEST(test_each_raw_column_edited_alone_is_refused_or_fails_unless_the_docs_name_it_free)
{
    char path[320], miss[4000] = "", list[4000] = "";
    sqlite3 *db;
    snprintf(path, sizeof path, "%s/good.db", g_dir);
    ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *tables;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                                        -1, &tables, NULL),
                     SQLITE_OK);
    size_t edited = 0, guarded = 0, refused = 0, failed = 0, free_n = 0;
    while (sqlite3_step(tables) == SQLITE_ROW) {
        char table[64], sql[1200];
        snprintf(table, sizeof table, "%s", (const char *)sqlite3_column_text(tables, 0));
        sqlite3_stmt *cols;
        char key[16] = "";
        snprintf(
            sql, sizeof sql,
            "SELECT name FROM pragma_table_info('%s') WHERE name IN ('attempt_id', 'job_id') ORDER BY name",
            table);
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &cols, NULL), SQLITE_OK);
        if (sqlite3_step(cols) == SQLITE_ROW)
            snprintf(key, sizeof key, "%s", (const char *)sqlite3_column_text(cols, 0));
        sqlite3_finalize(cols);
        snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') ORDER BY cid", table);
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &cols, NULL), SQLITE_OK);
        while (sqlite3_step(cols) == SQLITE_ROW) {
            char col[64], set[400];
            snprintf(col, sizeof col, "%s", (const char *)sqlite3_column_text(cols, 0));
            sqlite3_stmt *v;
            /* the row of a case's completed attempt where the table has one
             * (main/0/default/initial's), else the first */
            char order[300] = "rowid";
            if (key[0])
                snprintf(order, sizeof order,
                         "%s IN (SELECT a.%s FROM attempts a JOIN jobs j USING (job_id) WHERE j.job_key = "
                         "'main/0/default/initial') DESC, %srowid",
                         key, key,
                         /* a worker's cold row, not the supervisor's own wait (a backoff, or a
                          * cpu-lock that another run on the host caused) */
                         strcmp(table, "cold_timings") ? "" : "name IN ('backoff', 'cpu-lock'), ");
            snprintf(
                sql, sizeof sql,
                "SELECT rowid, typeof(\"%s\"), \"%s\", json_valid(\"%s\") FROM \"%s\" ORDER BY %s LIMIT 1",
                col, col, col, table, order);
            ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &v, NULL), SQLITE_OK);
            if (sqlite3_step(v) != SQLITE_ROW) {
                sqlite3_finalize(v);
                fprintf(stderr, "check_verify: %s has no rows in the fixture: its columns are not edited\n",
                        table);
                break;
            }
            int64_t rowid = sqlite3_column_int64(v, 0);
            const char *type = (const char *)sqlite3_column_text(v, 1);
            int json = sqlite3_column_int(v, 3) && !strcmp(type, "text") &&
                       ((const char *)sqlite3_column_text(v, 2))[0] == '{';
            if (!strcmp(type, "integer"))
                snprintf(set, sizeof set, "CASE WHEN \"%s\" IN (0, 1) THEN 1 - \"%s\" ELSE \"%s\" + 1 END",
                         col, col, col);
            else if (!strcmp(type, "real"))
                snprintf(set, sizeof set, "CASE WHEN \"%s\" = 0 THEN 1.0 ELSE \"%s\" * 1.5 END", col, col);
            else if (json)
                snprintf(set, sizeof set,
                         "json_set(\"%s\", (SELECT fullkey FROM json_tree(\"%s\") WHERE type IN ('integer', "
                         "'real') LIMIT 1), (SELECT value FROM json_tree(\"%s\") WHERE type IN ('integer', "
                         "'real') LIMIT 1) + 1)",
                         col, col, col);
            else if (!strcmp(type, "text"))
                snprintf(set, sizeof set, "\"%s\" || 'x'", col);
            else if (!strcmp(type, "blob"))
                snprintf(set, sizeof set, "CAST(\"%s\" AS BLOB) || X'00'", col);
            else
                snprintf(set, sizeof set, "1");
            sqlite3_finalize(v);
            char tag[200], edit[2000], zip[600], root[65];
            snprintf(tag, sizeof tag, "col-%s-%s", table, col);
            snprintf(edit, sizeof edit, "UPDATE \"%s\" SET \"%s\" = %s WHERE rowid = %lld", table, col, set,
                     (long long)rowid);
            edited++;
            const char *dbp = edit_store("good", tag, edit);
            if (!dbp) {
                guarded++;
                continue;
            }
            ev_err err = {{0}};
            snprintf(zip, sizeof zip, "%s/%s.zip", g_dir, tag);
            if (ev_export_file(dbp, 0, zip, root, &err)) {
                refused++;
                continue;
            }
            ev_vreport *r = verify(zip, NULL, NULL);
            int passed = ev_vreport_passed(r);
            ev_vreport_free(r);
            if (!passed) {
                failed++;
                continue;
            }
            size_t len = strlen(column_is_free(table, col) ? list : miss);
            snprintf((column_is_free(table, col) ? list : miss) + len, sizeof miss - len, " %s.%s", table,
                     col);
            free_n += column_is_free(table, col);
        }
        sqlite3_finalize(cols);
    }
    sqlite3_finalize(tables);
    sqlite3_close(db);
    fprintf(stderr,
            "check_verify: %zu columns edited: %zu refused by the schema, %zu by the exporter, %zu FAIL "
            "verify-bundle, %zu free (docs/store.md):%s\n",
            edited, guarded, refused, failed, free_n, list);
    ck_assert_msg(!miss[0], "edited alone, these PASS and docs/store.md does not name them free:%s", miss);
}
END_TEST

/* A real cpu run whose policy phase holds the wrong-schedule fault arm
 * (it launches a schedule the selector did not choose, and records what it
 * launched honestly): the verifier's receipt check must FAIL the bundle. */
START_TEST(test_real_run_with_the_wrong_schedule_fault_arm_fails_rederive)
{
    static const char proto[] =
        "{\"seed\": 5, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\", \"fault-ws\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-ws\", \"kind\": \"wrong-schedule\", \"cases\": [0]}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", "
        "\"default_rows\": 8}]}\n";
    char zip[320], last[1024];
    ck_assert_int_eq(real_run("ws", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last), 1);
    ck_assert_msg(strstr(last, "FAIL rederive") && strstr(last, "fault-ws") && strstr(last, "selector plans"),
                  "%s", last);
}
END_TEST

/* Impossible timings (sample_rules.h) on the cpu backend (the fixture's):
 * every time there is the host's, which preemption lengthens, so the
 * floor rule is not applied (ev_rule_floor_applies) and a job running an
 * op in a tenth of the run's floor passes with the verifier saying so;
 * one that reads its input cold at 100 x the run's streaming ceiling
 * FAILs protocol (check 5 holds every attempt to the physical
 * plausibility rule, runner/sample_rules.h).  The floor rule on a device
 * is test_a_gpu_job_faster_than_half_the_floor_fails_rederive. */
START_TEST(test_a_job_faster_than_the_floor_or_the_ceiling_allows_fails_rederive)
{
    for (int k = 1; k <= 2; k++) {
        char db[320], zip[320], root[65];
        ev_err err = {{0}};
        ev_vfix_opts o = {6, 7, 2, 0, g_sources, sizeof g_sources / sizeof g_sources[0], 0, k};
        snprintf(db, sizeof db, "%s/impossible-%d.db", g_dir, k);
        snprintf(zip, sizeof zip, "%s/impossible-%d.zip", g_dir, k);
        ck_assert_msg(!ev_vfix_build(db, &o, &err) && !ev_export_file(db, 0, zip, root, &err), "%s", err.msg);
        ev_vreport *r = verify(zip, NULL, NULL);
        if (k == 1) {
            ck_assert_msg(ev_vreport_passed(r), "%s", report_text(r));
            ck_assert_msg(strstr(report_text(r), "impossible timings: not applied on the cpu backend"), "%s",
                          report_text(r));
        } else {
            expect_fail(r, "protocol", "samples.csv", "job main/3/rows1/initial");
            expect_fail(r, "protocol", "samples.csv", EV_RULE_PLAUSIBLE_NAME ": cold median");
            ck_assert_int_eq(ev_vreport_failures(r), 1);
        }
        ev_vreport_free(r);
    }
}
END_TEST

/* receipts/h200's store (a real cuda run) copied to g_dir/NAME.db and
 * opened: *h; its path in db. */
static void h200_store_open(const char *name, char db[320], sqlite3 **h)
{
    char cmd[800];
    snprintf(db, 320, "%s/%s.db", g_dir, name);
    snprintf(cmd, sizeof cmd, "cp receipts/h200/evidence.db '%s'", db);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(sqlite3_open(db, h), SQLITE_OK);
}

/* Closes h, the edited store at db, re-exports it by the exporter to
 * g_dir/NAME.zip and verifies that.  Its report (the caller frees it). */
static ev_vreport *h200_store_reexport(const char *name, const char *db, sqlite3 *h)
{
    char zip[320], root[65];
    ev_err err = {{0}};
    sqlite3_close(h);
    snprintf(zip, sizeof zip, "%s/%s.zip", g_dir, name);
    ck_assert_msg(!ev_export_file(db, 0, zip, root, &err), "%s", err.msg);
    return verify(zip, NULL, NULL);
}

/* receipts/h200's store (h200_store_open) with
 * job_key's hot samples made ten times faster (each hot sample's replays
 * and its chosen calibration step's x 10: elapsed times, bands and
 * calibration still agree), re-exported and verified
 * (h200_store_reexport). */
static ev_vreport *h200_job_ten_times_faster(const char *name, const char *job_key)
{
    char db[320], edit[1200];
    sqlite3 *h = NULL;
    snprintf(edit, sizeof edit,
             "DROP TRIGGER samples_no_update; DROP TRIGGER calibrations_no_update;"
             "UPDATE samples SET replays = replays * 10 WHERE timing = 'hot' AND attempt_id = (SELECT "
             "a.attempt_id FROM attempts a JOIN jobs j USING (job_id) WHERE j.job_key = '%s');"
             "UPDATE calibrations SET replays = replays * 10 WHERE chosen = 1 AND attempt_id = (SELECT "
             "a.attempt_id FROM attempts a JOIN jobs j USING (job_id) WHERE j.job_key = '%s');",
             job_key, job_key);
    h200_store_open(name, db, &h);
    ck_assert_int_eq(sqlite3_exec(h, edit, NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_changes(h), 1); /* the one chosen calibration step */
    return h200_store_reexport(name, db, h);
}

/* In the store h: every graph node of an attempt whose rule-1 plan launch
 * rule `rule` plans otherwise (its schedule read from the node's entry
 * name, its shape and S from its binding) made to launch that rule's
 * plan, as a run of code declaring it would have.  Returns the attempts
 * changed. */
static int h200_nodes_as_rule(sqlite3 *h, int rule)
{
    sqlite3_stmt *q = NULL;
    int n = 0;
    ck_assert_int_eq(sqlite3_exec(h, "DROP TRIGGER graph_nodes_no_update;", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(
        sqlite3_prepare_v2(h,
                           "SELECT DISTINCT g.attempt_id, g.function, b.op, b.dtype, b.rows, b.cols, "
                           "b.stride, b.threads, c.default_rows, g.block_x FROM graph_nodes g JOIN "
                           "bindings b USING (attempt_id) JOIN attempts a USING (attempt_id) JOIN "
                           "jobs j USING (job_id) JOIN cases c ON c.run_id = j.run_id AND "
                           "c.case_index = j.case_index",
                           -1, &q, NULL),
        SQLITE_OK);
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *fn = (const char *)sqlite3_column_text(q, 1), *u = strrchr(fn, '_');
        ev_shape sh = {0};
        ev_sched sc;
        ev_launch_plan p1, p2;
        ev_err e;
        char set[300];
        if (!u || ev_sched_parse(u + 1, &sc) ||
            ev_op_parse((const char *)sqlite3_column_text(q, 2), &sh.op) ||
            ev_dtype_parse((const char *)sqlite3_column_text(q, 3), &sh.dtype))
            continue; /* cub's and the reference kernels' nodes */
        sh.rows = sqlite3_column_int64(q, 4);
        sh.cols = sqlite3_column_int64(q, 5);
        sh.stride = sqlite3_column_int64(q, 6);
        ck_assert_int_eq(ev_selector_plan_rule(1, EV_SEL_CUDA, &sh, sc, sqlite3_column_int64(q, 8),
                                               sqlite3_column_int64(q, 7), &p1, &e),
                         EV_OK);
        ck_assert_int_eq(ev_selector_plan_rule(rule, EV_SEL_CUDA, &sh, sc, sqlite3_column_int64(q, 8),
                                               sqlite3_column_int64(q, 7), &p2, &e),
                         EV_OK);
        int same = !strcmp(p1.entry, p2.entry) && p1.block[0] == p2.block[0];
        if (!same && !strcmp(p2.entry, fn) && p2.block[0] == sqlite3_column_int64(q, 9))
            continue;                   /* an attempt this loop rewrote: the query sees its own updates */
        ck_assert_str_eq(p1.entry, fn); /* as measured */
        ck_assert_int_eq(p1.block[0], sqlite3_column_int64(q, 9));
        if (same)
            continue;
        snprintf(set, sizeof set,
                 "UPDATE graph_nodes SET function = '%s', block_x = %lld WHERE attempt_id = %lld;", p2.entry,
                 (long long)p2.block[0], (long long)sqlite3_column_int64(q, 0));
        ck_assert_int_eq(sqlite3_exec(h, set, NULL, NULL, NULL), SQLITE_OK);
        n++;
    }
    sqlite3_finalize(q);
    return n;
}

static int g_rule_attempts; /* what h200_nodes_as_rule changed in the last store */

/* receipts/h200's store (h200_store_open; a real cuda run whose code
 * declares no launch rule: rule 1) with its kernels/selector.h source made
 * to declare `#define EV_LAUNCH_RULE <rule>` (and, with nodes_as > 0, its
 * graph nodes as h200_nodes_as_rule makes them for that rule),
 * re-exported and verified (h200_store_reexport). */
static ev_vreport *h200_declaring_launch_rule(const char *name, const char *rule, int nodes_as)
{
    char db[320], edit[800], hex[EV_SHA256_HEX_LEN + 1], set[200];
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    snprintf(edit, sizeof edit,
             "DROP TRIGGER sources_no_update;"
             "UPDATE sources SET bytes = CAST(CAST(bytes AS TEXT) || '#define EV_LAUNCH_RULE %s' || char(10) "
             "AS BLOB) WHERE path = '" EV_LAUNCH_RULE_SOURCE "';",
             rule);
    h200_store_open(name, db, &h);
    ck_assert_int_eq(sqlite3_exec(h, edit, NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_changes(h), 1);
    /* the row's sha256 to match (the exporter checks it) */
    ck_assert_int_eq(sqlite3_prepare_v2(h,
                                        "SELECT bytes FROM sources WHERE path = '" EV_LAUNCH_RULE_SOURCE "'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(ev_sha256_hex(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), hex),
                     EV_OK);
    sqlite3_finalize(st);
    snprintf(set, sizeof set, "UPDATE sources SET sha256 = '%s' WHERE path = '" EV_LAUNCH_RULE_SOURCE "';",
             hex);
    ck_assert_int_eq(sqlite3_exec(h, set, NULL, NULL, NULL), SQLITE_OK);
    g_rule_attempts = nodes_as > 0 ? h200_nodes_as_rule(h, nodes_as) : 0;
    return h200_store_reexport(name, db, h);
}

/* r, a run whose nodes were made as code of launch rule `rule` launches
 * them: no node fails the selector, and its note names the rule. */
static void expect_nodes_planned_by(ev_vreport *r, int rule)
{
    char note[80];
    snprintf(note, sizeof note, "(launch rule %d) on cuda equal their", rule);
    ck_assert_msg(!has_failure(r, "rederive", NULL, "the selector plans"), "%s", report_text(r));
    ck_assert_msg(!has_failure(r, "rederive", NULL, "graph node"), "%s", report_text(r));
    ck_assert_msg(strstr(report_text(r), note), "%s", report_text(r));
}

/* The verifier plans every graph node by the launch rule the bundle's own
 * code declares (kernels/selector.h, EV_LAUNCH_RULE; none: rule 1).  The
 * committed H200 run (rule 1: its 1024x512 fp16 default program launched
 * reduce_sum_fp16_default with 128 threads) passes as measured (the
 * receipts tests); the same run with its code made to declare rule 2
 * FAILs rederive where rule 2 plans the packed program it did not launch,
 * and a rule this verifier does not know is named as such. */
START_TEST(test_graph_nodes_are_planned_by_the_launch_rule_the_bundled_code_declares)
{
    ev_vreport *r = h200_declaring_launch_rule("h200-rule2", "2", 0);
    expect_fail(r, "rederive", "validation.json", "job main/8/default/initial");
    expect_fail(r, "rederive", "validation.json",
                "launches reduce_sum_fp16_default grid [256, 1, 1] block [128, 1, 1], but the selector plans "
                "reduce_sum_fp16_pack grid [256, 1, 1] block [64, 1, 1]");
    ev_vreport_free(r);
    r = h200_declaring_launch_rule("h200-rule9", "9", 0);
    expect_fail(r, "rederive", "sources/" EV_LAUNCH_RULE_SOURCE, "declares launch rule 9");
    ev_vreport_free(r);
    /* the run as code of rule 2 would have launched it (the packed entry,
     * half the threads, where rule 2 plans it: auto's nodes included):
     * no node fails the selector, and its note names the rule */
    r = h200_declaring_launch_rule("h200-rule2-packed", "2", 2);
    ck_assert_int_ge(g_rule_attempts, 10);
    expect_nodes_planned_by(r, 2);
    ev_vreport_free(r);
}
END_TEST

/* Launch rule 3 (kernels/selector.h): the committed H200 run's code made
 * to declare it FAILs rederive where rule 3 plans the thin program at one
 * chunk a thread and the run launched 32 lanes a row (2048x64 fp16, case
 * 23: 8 rows in 256 threads, where rule 3 plans 64); the run as code of
 * rule 3 would have launched it (rule 2's packed programs too) passes. */
START_TEST(test_graph_nodes_are_planned_by_launch_rule_3_where_the_code_declares_it)
{
    ev_vreport *r = h200_declaring_launch_rule("h200-rule3", "3", 0);
    expect_fail(r, "rederive", "validation.json", "job main/23/default/initial");
    expect_fail(r, "rederive", "validation.json",
                "launches reduce_sum_fp16_default grid [256, 1, 1] block [256, 1, 1], but the selector plans "
                "reduce_sum_fp16_default grid [256, 1, 1] block [64, 1, 1]");
    expect_fail(r, "rederive", "validation.json", "job main/23/rows4/initial");
    ev_vreport_free(r);
    /* as code of rule 2 launched it: rule 3's thin programs are missing */
    r = h200_declaring_launch_rule("h200-rule3-as-2", "3", 2);
    expect_fail(r, "rederive", "validation.json",
                "launches reduce_sum_fp16_pack grid [256, 1, 1] block [128, 1, 1], but the selector plans "
                "reduce_sum_fp16_default grid [256, 1, 1] block [64, 1, 1]");
    ev_vreport_free(r);
    r = h200_declaring_launch_rule("h200-rule3-thin", "3", 3);
    ck_assert_int_ge(g_rule_attempts, 12);
    expect_nodes_planned_by(r, 3);
    ev_vreport_free(r);
}
END_TEST

/* The floor rule where the floor is timed on the device: receipts/h200's
 * store (cuda; its floor's hot median 0.51 us per op) with one job's hot
 * samples made 10 x faster (replays x 10, as the plausibility test below
 * does: 1.15 us becomes 0.115, under half the floor), re-exported, FAILs
 * rederive naming the job and the rule. */
START_TEST(test_a_gpu_job_faster_than_half_the_floor_fails_rederive)
{
    ev_vreport *r = h200_job_ten_times_faster("h200-floor", "main/1/rows1/initial");
    expect_fail(r, "rederive", "validation.json", "job main/1/rows1/initial");
    expect_fail(r, "rederive", "validation.json", "below 1/2 of the run's floor");
    ev_vreport_free(r);
}
END_TEST

/* On the cpu backend the floor is the host's time of an empty task, which
 * preemption lengthens without bound: a floor of one replay per sample
 * (FIXED_TARGET: exempt from the bands' upper sides) had a median of
 * hundreds of empty launches in a loaded make check, and a stall can span
 * every floor sample of a run.  A real run of two rounds whose floor
 * samples are all set to 1 ms per op (whatever the host's load did to
 * them), re-exported, PASSes: the floor rule is not applied on cpu
 * (ev_rule_floor_applies).  Held to that floor, its honest jobs were
 * "faster than an empty launch" and the bundle FAILed. */
START_TEST(test_a_floor_with_preempted_samples_does_not_make_honest_jobs_impossible)
{
    static const char proto[] =
        "{\"seed\": 12, \"cpu_priority\": \"realtime\", \"rounds\": 2, \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"auto_arm\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\"],\n"
        " \"cases\": [{\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
        "\"default_rows\": 8}]}\n";
    static const char edit[] =
        "DROP TRIGGER samples_no_update;"
        "CREATE TEMP TABLE fl AS SELECT j.job_key AS k, a.attempt_id AS id FROM attempts a JOIN jobs j "
        "USING (job_id) WHERE j.job_key IN ('main/-/floor/round-1', 'policy/-/floor/round-2');"
        "UPDATE samples SET elapsed_ms = 100 WHERE timing = 'hot' AND attempt_id IN (SELECT id FROM fl);";
    char zip[320], last[512], db[320], zip2[320], root[65], reason[600] = "";
    const char *c, *m, *why;
    sqlite3 *h = NULL;
    ev_err err = {{0}};
    real_run("preempted", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last);
    snprintf(db, sizeof db, "%s/preempted.db", g_dir);
    snprintf(zip2, sizeof zip2, "%s/preempted-floor.zip", g_dir);
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, edit, NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_changes(h), 6);
    sqlite3_close(h);
    ck_assert_msg(!ev_export_file(db, 0, zip2, root, &err), "%s", err.msg);
    ev_vreport *r = verify(zip2, NULL, NULL);
    if (ev_vreport_first_failure(r, &c, &m, &why))
        snprintf(reason, sizeof reason, "%s: %s: %s", c, m, why);
    ck_assert_msg(ev_vreport_passed(r), "the bundle of a preempted floor FAILs: %s", reason);
    ev_vreport_free(r);
}
END_TEST

/* Physical plausibility on a real GPU bundle (receipts/h200, store schema
 * 3: no ceiling-l2, so its memory ceiling bounds the cold medians and the
 * hot medians of working sets past 2 x the L2).  As committed it keeps the
 * rule (its fastest arm reads 8192x8192 fp32 at 0.98 of its 4.6 TB/s
 * ceiling; check 5 passes; its plan is regenerated as its schema's).  Its
 * store with one job's hot samples made 10 x faster (each sample's and the
 * chosen calibration step's replays x 10: elapsed times, bands and
 * calibration still agree), re-exported by the exporter (every derived
 * member consistent with the edit), FAILs exactly once: protocol, naming
 * the job and the rule. */
START_TEST(test_a_gpu_bundle_made_ten_times_faster_and_re_exported_fails_physical_plausibility)
{
    ev_vreport *r = verify("receipts/h200/delivery.zip", NULL, NULL);
    ck_assert_int_eq(vr_fail_count(r, VR_PLAN), 0);
    ck_assert_int_eq(vr_fail_count(r, VR_PROTOCOL), 0);
    ev_vreport_free(r);

    r = h200_job_ten_times_faster("h200-fast", "main/16/rows1/initial");
    expect_fail(r, "protocol", "samples.csv",
                "job main/16/rows1/initial attempt 1 (completed): " EV_RULE_PLAUSIBLE_NAME ": hot median");
    expect_fail(r, "protocol", "samples.csv", "over 2 x the run's memory ceiling");
    ck_assert_int_eq(ev_vreport_failures(r), 1);
    ev_vreport_free(r);
}
END_TEST

/* A real run of examples/ext-simple (an external kernel): its bundle holds
 * the kernel's source and PASSes; the same bundle without that source
 * member (receipts resealed) FAILs plan, naming the kernel and the path. */
START_TEST(test_a_bundle_without_a_declared_kernels_source_fails_plan)
{
    char db[320], zip[320];
    tm_list l;
    snprintf(db, sizeof db, "%s/ext.db", g_dir);
    snprintf(zip, sizeof zip, "%s/ext.zip", g_dir);
    const char *run[] = {"run", "--protocol", "examples/ext-simple/protocol.json", "--backend", "cpu", "--db",
                         db,    NULL};
    const char *exp[] = {"export", "--db", db, "--out", zip, NULL};
    ck_assert_int_eq(run_evident(run), 0);
    ck_assert_int_eq(run_evident(exp), 0);
    ev_vreport *r = verify(zip, NULL, NULL);
    ck_assert_msg(ev_vreport_passed(r), "the honest bundle does not pass");
    ev_vreport_free(r);
    tm_load(&l, zip);
    tm_remove(&l, "sources/external/ext-simple/simple.c");
    tm_rereport(&l);
    r = tamper_verify(&l, "ext-no-source", NULL, NULL);
    expect_fail(r, "plan", "protocol.json",
                "kernel ext-simple: its cpu source simple.c is not in the bundle");
    ev_vreport_free(r);
    tm_free(&l);
    /* an external job's graph receipt names another function than the
     * entry its protocol declares for the case (a completed attempt:
     * only those are held to their receipts) */
    char key[200], want[400];
    int att;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *nodes =
        cJSON_GetObjectItem(completed_attempt(v, 2, "ext-simple", key, sizeof key, &att), "graph_nodes");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(nodes, 0), "function", cJSON_CreateString("ex_max_f32"));
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    r = tamper_verify(&l, "ext-wrong-entry", NULL, NULL);
    snprintf(want, sizeof want,
             "job %s attempt %d: graph node 0 launches ex_max_f32 grid [1, 1, 1] block "
             "[1, 1, 1], but the protocol declares ex_sum_f32 grid [1, 1, 1] block [1, 1, 1] for "
             "reduce_sum/fp32",
             key, att);
    expect_fail(r, "rederive", "validation.json", want);
    ev_vreport_free(r);
    tm_free(&l);
    /* the right entry with another geometry than the backend launches it
     * with (on cpu: one call per op, grid and block 1) */
    tm_load(&l, zip);
    v = tm_json(&l, "validation.json");
    nodes = cJSON_GetObjectItem(completed_attempt(v, 2, "ext-simple", key, sizeof key, &att), "graph_nodes");
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "grid"), 0,
                             cJSON_CreateNumber(2));
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    r = tamper_verify(&l, "ext-wrong-geometry", NULL, NULL);
    snprintf(want, sizeof want,
             "job %s attempt %d: graph node 0 launches ex_sum_f32 grid [2, 1, 1] block "
             "[1, 1, 1], but the protocol declares ex_sum_f32 grid [1, 1, 1] block [1, 1, 1]",
             key, att);
    expect_fail(r, "rederive", "validation.json", want);
    ev_vreport_free(r);
    tm_free(&l);
    /* one node more than the graph holds ops (cpu: one batch receipt per
     * graph), for the external arm and for one of ours */
    for (int which = 0; which < 2; which++) {
        tm_load(&l, zip);
        v = tm_json(&l, "validation.json");
        nodes = cJSON_GetObjectItem(
            completed_attempt(v, which ? -1 : 2, which ? "rows1" : "ext-simple", key, sizeof key, &att),
            "graph_nodes");
        cJSON_AddItemToArray(nodes, cJSON_Duplicate(cJSON_GetArrayItem(nodes, 0), 1));
        cJSON_ReplaceItemInObject(cJSON_GetArrayItem(nodes, 1), "node_index", cJSON_CreateNumber(1));
        tm_json_put(&l, "validation.json", v);
        tm_rereport(&l);
        r = tamper_verify(&l, which ? "extra-node-ours" : "extra-node-ext", NULL, NULL);
        snprintf(want, sizeof want, "job %s attempt %d: 2 graph nodes, but a cpu graph of 100 ops records 1",
                 key, att);
        expect_fail(r, "rederive", "validation.json", want);
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* A real cpu run with the throttle fault arm (its last hot sample reports
 * an SM clock of 500 MHz against 1000 for the others, in the main job
 * only): the supervisor applies the sample rules, records the attempt
 * failed-protocol with the breach as its reason, rescues it, and the
 * honest bundle PASSes, the claimed breach being the one its records show.
 * (The overrun fault arm, which this test ran before the plants, now
 * fails on its op checks' replay counts first: check_runner.) */
START_TEST(test_real_run_whose_attempt_broke_a_sample_rule_is_failed_protocol_and_verifies)
{
    static const char proto[] =
        "{\"seed\": 6, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 40, "
        "\"target_sample_ms\": 20, \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false, \"tolerances\": {\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-over\", \"fault-drift\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-over\", \"kind\": \"throttle\", \"mhz\": 500, \"when\": "
        "\"original\"},\n"
        "                {\"name\": \"fault-drift\", \"kind\": \"drift\", \"factor\": 16, \"when\": "
        "\"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    char zip[320], last[1024];
    ck_assert_msg(real_run("over", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    /* The main job failed the rule and its rescue completed. */
    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/0/fault-over/initial");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "outcome")->valuestring, "failed-protocol");
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    const char *why = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error")->valuestring;
    /* the fault's symptom: a sample at an SM clock below the band (first,
     * or after a breach this host's noise caused) */
    ck_assert_msg(strstr(why, "protocol rule: ") == why && strstr(why, "SM clock"), "%s", why);
    cJSON *rj = job_by_key(v, "rescue/0/fault-over/retry-1");
    cJSON *ra = cJSON_GetArrayItem(cJSON_GetObjectItem(rj, "attempts"), 0);
    const cJSON *rwhy = cJSON_GetObjectItem(cJSON_GetObjectItem(ra, "process"), "protocol_error");
    /* The retry runs normally: completed, or, when this host's noise struck,
     * failed by a sample rule itself (recorded as honestly). */
    ck_assert_msg(!strcmp(cJSON_GetObjectItem(rj, "outcome")->valuestring, "completed") ||
                      (cJSON_IsString(rwhy) && !strncmp(rwhy->valuestring, "protocol rule: ", 15)),
                  "retry: %s (%s)", cJSON_GetObjectItem(rj, "outcome")->valuestring,
                  cJSON_IsString(rwhy) ? rwhy->valuestring : "no protocol error");
    /* Every drift sample reads 16 x its time: each that left the band
     * made the worker re-calibrate (at most two, never after the last),
     * each from a step of its own, and say so in its device record; the
     * band broke, and the bundle PASSed with them (above: the op checks'
     * replay counts hold the re-calibrations' steps).  Which samples left
     * it is the host's: a calibration a loaded host slowed can put a
     * drifted sample back in the band (seen under ASan beside another
     * suite: one re-calibration), so the test holds the rule, not the
     * count. */
    cJSON *dj0 = job_by_key(v, "main/0/fault-drift/initial");
    ck_assert_str_eq(cJSON_GetObjectItem(dj0, "outcome")->valuestring, "failed-protocol");
    cJSON *drift_a = cJSON_GetArrayItem(cJSON_GetObjectItem(dj0, "attempts"), 0);
    const char *dwhy =
        cJSON_GetObjectItem(cJSON_GetObjectItem(drift_a, "process"), "protocol_error")->valuestring;
    ck_assert_msg(strstr(dwhy, "protocol rule: ") == dwhy && strstr(dwhy, "band"), "%s", dwhy);
    cJSON *rc = cJSON_GetObjectItem(cJSON_GetObjectItem(drift_a, "device"), "recalibrations");
    int n_rc = cJSON_GetArraySize(rc);
    ck_assert_msg(n_rc >= 1 && n_rc <= 2, "%d re-calibrations", n_rc);
    for (int k = 0; k < n_rc; k++) {
        int after = (int)cJSON_GetObjectItem(cJSON_GetArrayItem(rc, k), "after")->valuedouble;
        ck_assert_msg(after >= 0 && after <= 1, "a re-calibration after hot sample %d of 3", after);
        if (k) {
            ck_assert_int_lt((int)cJSON_GetObjectItem(cJSON_GetArrayItem(rc, k - 1), "after")->valuedouble,
                             after);
            ck_assert_int_lt(
                (int)cJSON_GetObjectItem(cJSON_GetArrayItem(rc, k - 1), "first_step")->valuedouble,
                (int)cJSON_GetObjectItem(cJSON_GetArrayItem(rc, k), "first_step")->valuedouble);
        }
    }
    /* Its rescue waited first (the attempt broke a sample rule), and the
     * wait is its "backoff" cold timing, within the gap it stands in. */
    cJSON *c, *backoff = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(ra, "cold_timings"))
    {
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "backoff"))
            backoff = c;
    }
    ck_assert_msg(backoff && strtoll(cJSON_GetObjectItem(backoff, "elapsed_ns")->valuestring, NULL, 10) >=
                                 900000000LL,
                  "the rescue of a sample-rule failure did not wait about 1 s first");
    cJSON_Delete(v);
    tm_free(&l);

    /* A re-calibration claimed after a sample inside the band fails check
     * 5: a calibration step (a copy of the chosen one, so every count
     * still agrees) made into a re-calibration after the first in-band
     * sample before the last of a completed attempt. */
    tm_load(&l, zip);
    v = tm_json(&l, "validation.json");
    cJSON *pj = cJSON_Parse(proto);
    double T = cJSON_GetObjectItem(pj, "target_sample_ms")->valuedouble;
    double b = cJSON_GetObjectItem(cJSON_GetObjectItem(pj, "tolerances"), "sample_band")->valuedouble;
    cJSON_Delete(pj);
    /* the default arm's completed attempt that did not re-calibrate (so
     * that only the rule under test can object): its main job's, else
     * its rescue's; else one that did (its own list is replaced below) */
    cJSON *dj = job_by_key(v, "main/0/default/initial"),
          *da = cJSON_GetArrayItem(cJSON_GetObjectItem(dj, "attempts"), 0);
    if (strcmp(cJSON_GetObjectItem(da, "outcome")->valuestring, "completed") ||
        cJSON_GetObjectItem(cJSON_GetObjectItem(da, "device"), "recalibrations")) {
        cJSON *rj2 = NULL;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(v, "jobs"))
        {
            if (!strcmp(cJSON_GetObjectItem(c, "job_key")->valuestring, "rescue/0/default/retry-1"))
                rj2 = c;
        }
        cJSON *ra2 = rj2 ? cJSON_GetArrayItem(cJSON_GetObjectItem(rj2, "attempts"), 0) : NULL;
        if (ra2 && !strcmp(cJSON_GetObjectItem(ra2, "outcome")->valuestring, "completed") &&
            (!cJSON_GetObjectItem(cJSON_GetObjectItem(ra2, "device"), "recalibrations") ||
             strcmp(cJSON_GetObjectItem(da, "outcome")->valuestring, "completed"))) {
            dj = rj2;
            da = ra2;
        }
    }
    ck_assert_str_eq(cJSON_GetObjectItem(da, "outcome")->valuestring, "completed");
    /* the attempt's hot samples, from samples.csv: the first in the band */
    ev_buf *csv = tm_get(&l, "samples.csv");
    char needle[64];
    int in_band = -1, hot = 0;
    snprintf(needle, sizeof needle, "1,%d,1,", (int)cJSON_GetObjectItem(dj, "job_id")->valuedouble);
    for (const char *line = csv->data; line && line < csv->data + csv->len && in_band < 0;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *nl = strchr(line, '\n');
        char row[1024];
        snprintf(row, sizeof row, "%.*s", (int)(nl ? nl - line : (long)strlen(line)), line);
        if (strncmp(row, needle, strlen(needle)) || !strstr(row, ",hot,"))
            continue; /* run 1, the job, attempt 1: its hot rows */
        /* elapsed_ms: the 19th column */
        char *f = row;
        for (int k = 0; k < 18 && f; k++)
            f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        ck_assert_ptr_nonnull(f);
        double ms = strtod(f, NULL);
        if (hot < 2 && ms >= (1 - b) * T && ms <= (1 + b) * T)
            in_band = hot;
        hot++;
    }
    ck_assert_msg(in_band >= 0, "no in-band hot sample before the last in %s", "main/0/default/initial");
    cJSON *cal = cJSON_GetObjectItem(da, "calibrations");
    int n_steps = cJSON_GetArraySize(cal);
    cJSON *copy = cJSON_Duplicate(cJSON_GetArrayItem(cal, n_steps - 1), 1);
    cJSON_ReplaceItemInObject(copy, "step", cJSON_CreateNumber(n_steps));
    cJSON_AddItemToArray(cal, copy);
    /* (an attempt that did re-calibrate, on a busy host, has its own list:
     * replaced, so that this one is the only re-calibration it claims) */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(da, "device"), "recalibrations");
    cJSON *list = cJSON_AddArrayToObject(cJSON_GetObjectItem(da, "device"), "recalibrations");
    cJSON *one = cJSON_CreateObject();
    cJSON_AddNumberToObject(one, "after", in_band);
    cJSON_AddNumberToObject(one, "first_step", n_steps);
    cJSON_AddItemToArray(list, one);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "recal-in-band", NULL, NULL);
    expect_fail(r, "protocol", "validation.json",
                "a re-calibration follows only a sample that drifted out of it");
    ev_vreport_free(r);
    tm_free(&l);

    /* A backoff longer than the gap between the failed attempt's end and
     * the rescue's start fails; so does one on a job that is not such a
     * rescue. */
    for (int k = 0; k < 2; k++) {
        tm_load(&l, zip);
        v = tm_json(&l, "validation.json");
        cJSON *target =
            k ? cJSON_GetArrayItem(cJSON_GetObjectItem(job_by_key(v, "main/0/default/initial"), "attempts"),
                                   0)
              : cJSON_GetArrayItem(
                    cJSON_GetObjectItem(job_by_key(v, "rescue/0/fault-over/retry-1"), "attempts"), 0);
        cJSON *colds = cJSON_GetObjectItem(target, "cold_timings"), *bo = NULL;
        cJSON_ArrayForEach(c, colds)
        {
            if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "backoff"))
                bo = c;
        }
        if (k) {
            bo = cJSON_CreateObject();
            cJSON_AddStringToObject(bo, "name", "backoff");
            cJSON_AddStringToObject(bo, "elapsed_ns", "1000");
            cJSON_AddItemToArray(colds, bo);
        } else {
            cJSON_ReplaceItemInObject(bo, "elapsed_ns", cJSON_CreateString("900000000000"));
        }
        tm_json_put(&l, "validation.json", v);
        tm_rereport(&l);
        r = tamper_verify(&l, k ? "backoff-not-rescue" : "backoff-too-long", NULL, NULL);
        expect_fail(r, "protocol", "validation.json",
                    k ? "a backoff, but it is not the first attempt of a rescue"
                      : "a wait longer than the gap it stands in");
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* A "cpu-lock" cold timing (the supervisor's wait for another run to
 * leave the attempt's CPUs: runner/cpulock.h; a real one is in
 * check_runner's two runs at once, whose bundles PASS) stands only in a
 * cpu run, and claims no more than the gap it was waited in: from the end
 * of the invocation's attempt before it (or the invocation's start) to
 * the attempt's start.  One of 900 s fails; one of 1 us in a run that
 * says it measured on cuda fails (whatever else that run then breaks). */
START_TEST(test_a_cpu_lock_wait_stands_only_in_a_cpu_run_and_within_its_gap)
{
    for (int k = 0; k < 2; k++) {
        tm_list l;
        tm_load(&l, g_good);
        cJSON *v = tm_json(&l, "validation.json");
        if (k)
            cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "run"), "backend", cJSON_CreateString("cuda"));
        cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItem(v, "jobs"), 1);
        cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "name", "cpu-lock");
        cJSON_AddStringToObject(w, "elapsed_ns", k ? "1000" : "900000000000");
        cJSON_AddItemToArray(cJSON_GetObjectItem(a, "cold_timings"), w);
        tm_json_put(&l, "validation.json", v);
        tm_rereport(&l);
        ev_vreport *r = tamper_verify(&l, k ? "cpu-lock-cuda" : "cpu-lock-too-long", NULL, NULL);
        expect_fail(r, "protocol", "validation.json",
                    k ? "a cpu-lock wait, but the run measured on cuda"
                      : "a cpu-lock wait longer than the gap");
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* Physical plausibility in the runner, on a real cpu run: the reference
 * arms run first (floor, ceiling, ceiling-l2: plan_order 0, 1, 2), so when
 * the fast fault arm ends (a timer 200 x slow: its calibration, samples and
 * wall clocks agree, and only its speed gives it away) the run's ceilings
 * are known; its hot and cold medians move 4 MiB faster than 2 x the
 * largest ceiling, and the supervisor records it failed-protocol naming the
 * rule (its rescue as well); the honest arm completes under the same bound
 * (its plausibility names the largest ceiling); the bundle PASSes (check 5
 * finds each claimed breach in the records), and the report's per-arm
 * table says which defences held. */
START_TEST(test_a_job_faster_than_the_runs_ceilings_fails_in_the_runner_and_its_bundle_verifies)
{
    static const char proto[] =
        "{\"seed\": 5, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 2, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"auto_arm\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 16777216}},\n"
        " \"arms\": [\"rows1\", \"fault-fast\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-fast\", \"kind\": \"fast\", \"factor\": 200}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 16384, \"dtype\": \"fp32\", "
        "\"default_rows\": 4}]}\n";
    static const char *const refs[] = {"main/-/floor/initial", "main/-/ceiling/initial",
                                       "main/-/ceiling-l2/initial"};
    char zip[320], last[1024];
    ck_assert_msg(real_run("fast", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json");
    for (int i = 0; i < 3; i++) {
        cJSON *r = job_by_key(v, refs[i]);
        ck_assert_int_eq(cJSON_GetObjectItem(r, "plan_order")->valueint, i);
        ck_assert_str_eq(cJSON_GetObjectItem(r, "outcome")->valuestring, "completed");
    }
    static const char *const fast[] = {"main/0/fault-fast/initial", "rescue/0/fault-fast/retry-1"};
    for (int i = 0; i < 2; i++) {
        cJSON *j = job_by_key(v, fast[i]);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "outcome")->valuestring, "failed-protocol");
        ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "plausibility")));
        cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
        const char *why =
            cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error")->valuestring;
        ck_assert_msg(strstr(why, "protocol rule: ") == why && strstr(why, EV_RULE_PLAUSIBLE_NAME ": ") &&
                          strstr(why, "over 2 x the run's largest ceiling"),
                      "%s", why);
    }
    /* no honest attempt breaks the rule (a sample rule this host's load
     * breaks is recorded as honestly, and rescued) */
    const cJSON *j, *a;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        if (strstr(cJSON_GetObjectItem(j, "arm")->valuestring, "fault-fast"))
            continue;
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            const cJSON *pe = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error");
            ck_assert_msg(!cJSON_IsString(pe) || !strstr(pe->valuestring, EV_RULE_PLAUSIBLE_NAME), "%s: %s",
                          cJSON_GetObjectItem(j, "job_key")->valuestring, pe->valuestring);
        }
    }
    ev_buf *rep = tm_get(&l, "report.html");
    ck_assert_ptr_nonnull(memmem(rep->data, rep->len, "<h2>Defences per arm</h2>", 25));
    cJSON *h = job_by_key(v, "main/0/rows1/initial");
    if (!strcmp(cJSON_GetObjectItem(h, "outcome")->valuestring, "completed")) {
        cJSON *pl = cJSON_GetObjectItem(h, "plausibility");
        ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(pl, "hot"), "bound_by")->valuestring,
                         "largest");
        ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(pl, "cold"), "bound_by")->valuestring,
                         "largest");
        ck_assert(cJSON_GetObjectItem(cJSON_GetObjectItem(pl, "hot"), "bound_bpus")->valuedouble > 0);
        static const char row[] = "<tr><td>rows1</td><td class=\"n\">1</td><td>op checks 1/1; kept output "
                                  "1/1; plausibility (2 x the ceiling): hot largest 1, cold largest 1";
        ck_assert_msg(memmem(rep->data, rep->len, row, sizeof row - 1), "no rows1 row of defences");
    }
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

/* The bundle format (evident/receipts.h): an honest bundle names format
 * 2 and PASSes; the same bundle with receipts.json as format 1 wrote it
 * (no bundle_format key) PASSes too, under its own root (older bundles keep
 * verifying); a format this verifier does not know FAILs members, naming
 * it, before anything else is read as evidence. */
START_TEST(test_the_bundle_format_is_read_first_and_older_bundles_verify)
{
    tm_list l;
    tm_load(&l, g_good);
    ev_buf *rec = tm_get(&l, "receipts.json");
    static const char key[] = "\"bundle_format\":\t2,";
    ck_assert_ptr_nonnull(memmem(rec->data, rec->len, key, strlen(key)));
    tm_free(&l);
    static const struct {
        const char *from, *to, *fail;
    } t[] = {
        {"\"bundle_format\":\t2,\n\t", "", NULL},
        {"\"bundle_format\":\t2,", "\"bundle_format\":\t3,",
         "bundle_format 3: this verifier reads bundle formats 1 (no bundle_format key) to 2"},
        {"\"bundle_format\":\t2,", "\"bundle_format\":\t1,",
         "bundle_format 1: this verifier reads bundle formats 1 (no bundle_format key) to 2"},
        {"\"bundle_format\":\t2,", "\"bundle_format\":\t\"2\",", "bundle_format -1: this verifier reads"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        tm_load(&l, g_good);
        tm_replace(&l, "receipts.json", t[i].from, t[i].to);
        snprintf(g_case, sizeof g_case, "%s/format-%zu.zip", g_dir, i);
        tm_write(&l, g_case, 1);
        ev_vreport *r = verify(g_case, NULL, NULL);
        if (t[i].fail)
            expect_fail(r, "members", "receipts.json", t[i].fail);
        else
            expect_pass(r);
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* Rewrites the sm_clock_mhz cell (the last) of job_key's hot rows of
 * samples.csv: clocks[i] for its i-th hot row (-1: empty). */
static void set_hot_clocks(tm_list *l, const char *job_key, const long long *clocks, size_t n_clocks)
{
    ev_buf *s = tm_get(l, "samples.csv"), out = EV_BUF_INIT;
    size_t i = 0, at = 0, k = 0;
    while (at < s->len) {
        size_t end = at;
        while (end < s->len && s->data[end] != '\n')
            end++;
        char line[1024], *f[32];
        ck_assert_uint_lt(end - at, sizeof line);
        memcpy(line, s->data + at, end - at);
        line[end - at] = '\0';
        size_t n = split(line, f);
        if (i > 0 && n == 24 && !strcmp(f[20], job_key) && !strcmp(f[14], "hot") && k < n_clocks) {
            char c[32] = "";
            if (clocks[k] >= 0)
                snprintf(c, sizeof c, "%lld", clocks[k]);
            k++;
            for (size_t j = 0; j < 23; j++)
                ck_assert_int_eq(ev_buf_printf(&out, "%s,", f[j]), EV_OK);
            ck_assert_int_eq(ev_buf_printf(&out, "%s\n", c), EV_OK);
        } else {
            ck_assert_int_eq(ev_buf_append(&out, s->data + at, end - at + 1), EV_OK);
        }
        at = end + 1;
        i++;
    }
    ck_assert_uint_eq(k, n_clocks);
    tm_set(l, "samples.csv", out.data, out.len);
    ev_buf_free(&out);
}

/* The SM clock rule (sample_rules.h, GPU hygiene): a real cpu
 * run with the throttle fault arm (its last hot sample reports 500 MHz,
 * the others 1000, in the original job only): the supervisor records the
 * attempt failed-protocol, the clock in its reason, and rescues it; the
 * honest bundle PASSes.  The same bundle whose completed rescue reports a
 * throttled clock in samples.csv FAILs check 5. */
START_TEST(test_a_throttled_sample_is_failed_protocol_and_a_completed_one_fails_check_5)
{
    static const char proto[] =
        "{\"seed\": 6, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 20, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-hot\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-hot\", \"kind\": \"throttle\", \"mhz\": 500, \"when\": "
        "\"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    char zip[320], last[1024];
    ck_assert_msg(real_run("hot", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "main/0/fault-hot/initial");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "outcome")->valuestring, "failed-protocol");
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    const char *why = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error")->valuestring;
    ck_assert_msg(strstr(why,
                         "1 hot samples at an SM clock below clock_band 0.90000000000000002 x the attempt's "
                         "highest 1000 MHz (lowest 500 MHz): the device was throttled"),
                  "%s", why);
    ck_assert_str_eq(cJSON_GetObjectItem(job_by_key(v, "rescue/0/fault-hot/retry-1"), "outcome")->valuestring,
                     "completed");
    cJSON_Delete(v);
    /* the completed retry claims clocks that show a throttle */
    static const long long clocks[] = {1980, 1980, 1500};
    set_hot_clocks(&l, "rescue/0/fault-hot/retry-1", clocks, 3);
    ev_vreport *r = tamper_verify(&l, "throttled-completed", NULL, NULL);
    expect_fail(r, "protocol", "samples.csv",
                "job rescue/0/fault-hot/retry-1 attempt 1 (completed): 1 hot samples at an SM clock below "
                "clock_band 0.90000000000000002 x the attempt's highest 1980 MHz (lowest 1500 MHz)");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The device record of job key's first attempt in validation.json of l
 * (its tree in *v, which the caller puts back or deletes). */
static cJSON *device_of(tm_list *l, const char *key, cJSON **v)
{
    *v = tm_json(l, "validation.json");
    cJSON *j = job_by_key(*v, key);
    ck_assert_ptr_nonnull(j);
    cJSON *d = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0), "device");
    ck_assert_msg(cJSON_IsObject(d), "job %s has no device record", key);
    return d;
}

/* Replaces d's member key with the integer array vals[n]. */
static void set_ints(cJSON *d, const char *key, const long long *vals, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)vals[i]));
    cJSON_ReplaceItemInObjectCaseSensitive(d, key, a);
}

/* GPU hygiene (sample_rules.h): a real cpu run with the
 * contended fault arm (its last hot sample reports 2 other compute
 * processes) and the throttled fault arm (NVML reasons 0x48: HwSlowdown |
 * HwThermalSlowdown), the late fault arm (its last hot sample's wall
 * clock reads 50 ms over its events: late device work) and the no-device
 * fault arm (no device record), in
 * the original jobs only: the supervisor records the four attempts
 * failed-protocol, the samples named in the reason, and
 * rescues them; every attempt has its device record (the cpu backend's
 * facts unknown, -1, never a failure) and the honest bundle PASSes.  The
 * same bundle FAILs check 5 when a completed attempt's device record says
 * another process used the GPU or the GPU throttled, or a sample's wall
 * clock outlasted its events, when a completed attempt has none, when its plants are not its seed's and case's, when a member is
 * malformed, and when two attempts of one arm name different peer
 * versions. */
START_TEST(test_a_sample_taken_on_a_busy_or_throttled_gpu_is_failed_protocol_and_check_5_rechecks_it)
{
    static const char proto[] =
        "{\"seed\": 6, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 20, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-busy\", \"fault-hot\", \"fault-nodev\", \"fault-late\"], "
        "\"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-busy\", \"kind\": \"contended\", \"processes\": 2, \"when\": "
        "\"original\"},\n"
        "                {\"name\": \"fault-hot\", \"kind\": \"throttled\", \"reasons\": 72, \"when\": "
        "\"original\"},\n"
        "                {\"name\": \"fault-late\", \"kind\": \"late\", \"ms\": 50, \"when\": "
        "\"original\"},\n"
        "                {\"name\": \"fault-nodev\", \"kind\": \"no-device\", \"when\": \"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    char zip[320], last[1024];
    ck_assert_msg(real_run("hyg", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json");
    ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(v, "run"), "store_schema")->valuedouble,
                     EV_STORE_VERSION);
    static const struct {
        const char *key, *why;
    } failed[] = {
        {"main/0/fault-busy/initial", "protocol rule: 1 hot samples taken while another compute process used "
                                      "the GPU (hot samples 2)"},
        {"main/0/fault-hot/initial", "protocol rule: 1 hot samples taken while the GPU was throttled for "
                                     "power or heat (hot samples 2; NVML reasons 0x48)"},
        {"main/0/fault-nodev/initial",
         "completed without a device record (docs/runner.md, \"Worker records\")"},
        {"main/0/fault-late/initial", "protocol rule: 1 hot samples whose device work outlasted their timed "
                                      "events (hot samples 2; worst: "},
    };
    for (int k = 0; k < 4; k++) {
        cJSON *j = job_by_key(v, failed[k].key);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "outcome")->valuestring, "failed-protocol");
        cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
        const char *why =
            cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error")->valuestring;
        static const char late_end[] = "over 1.5 x + 20 ms)";
        size_t nw = strlen(why);
        if (k < 3) /* the fault's breach alone: no other rule breaks (FIXED_TARGET) */
            ck_assert_str_eq(why, failed[k].why);
        else /* the late one's figures are this host's */
            ck_assert_msg(!strncmp(why, failed[k].why, strlen(failed[k].why)) && nw >= sizeof late_end - 1 &&
                              !strcmp(why + nw - (sizeof late_end - 1), late_end),
                          "%s", why);
    }
    cJSON *dj = job_by_key(v, "main/0/default/initial");
    cJSON *d = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(dj, "attempts"), 0), "device");
    ck_assert_int_eq((int)cJSON_GetObjectItem(d, "other_processes")->valuedouble, -1); /* cpu: unknown */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "hot_throttle_reasons")), 3);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "hot_wall_ms")), 3);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(d, "cold_other_processes")), 1);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(d, "rotation")));
    ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(d, "plants"), "rows")->valuedouble, 17);
    ck_assert_str_eq(
        cJSON_GetObjectItem(job_by_key(v, "rescue/0/fault-busy/retry-1"), "outcome")->valuestring,
        "completed");
    ck_assert_str_eq(cJSON_GetObjectItem(dj, "outcome")->valuestring, "completed");
    cJSON_Delete(v);
    tm_free(&l);

    static const long long busy[] = {0, 1, 0}, hot[] = {0, 4, 1}, short_list[] = {-1, -1};
    for (int t = 0; t < 10; t++) {
        const char *key = t == 5 ? "main/0/default/initial" : "rescue/0/fault-busy/retry-1";
        const char *want = NULL;
        cJSON *rot;
        char tag[32], nodev[96];
        tm_load(&l, zip);
        d = device_of(&l, key, &v);
        switch (t) {
        case 0:
            set_ints(d, "hot_other_processes", busy, 3);
            want =
                "attempt 1 (completed): 1 hot samples taken while another compute process used the GPU (hot "
                "samples 1)";
            break;
        case 1: /* 0x4 SwPowerCap counts; 0x1 GpuIdle does not */
            set_ints(d, "hot_throttle_reasons", hot, 3);
            want = "attempt 1 (completed): 1 hot samples taken while the GPU was throttled for power or heat "
                   "(hot samples 1; NVML reasons 0x4)";
            break;
        case 2:
            cJSON_ReplaceItemInObjectCaseSensitive(
                cJSON_GetArrayItem(cJSON_GetObjectItem(job_by_key(v, key), "attempts"), 0), "device",
                cJSON_CreateNull());
            snprintf(nodev, sizeof nodev,
                     "attempt 1 (completed): no device record, in a run stored with schema %d",
                     EV_STORE_VERSION);
            want = nodev;
            break;
        case 3: /* planted rows per op other than its seed and case make */
            rot = cJSON_GetObjectItem(d, "plants");
            cJSON_ReplaceItemInObjectCaseSensitive(rot, "rows", cJSON_CreateNumber(3));
            want = "its device record's plants (variants";
            break;
        case 4:
            set_ints(d, "hot_other_processes", short_list, 2);
            want = "device record: hot_other_processes: must be an array of 3 integers, one per hot sample";
            break;
        case 6: /* the second sample's wall 40 ms over its events: late device work */
        {
            cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "hot_wall_ms"), 1);
            cJSON_SetNumberValue(w, w->valuedouble + 40.0);
            want = "attempt 1 (completed): 1 hot samples whose device work outlasted their timed events (hot "
                   "samples 1; worst: ";
            break;
        }
        case 7:
            cJSON_SetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "hot_wall_ms"), 0), -2.0);
            want = "device record: hot_wall_ms: must be numbers >= 0, or -1 (unknown)";
            break;
        case 8: /* the cold sample taken while another process used the GPU */
            set_ints(d, "cold_other_processes", busy + 1, 1);
            want = "attempt 1 (completed): 1 cold samples taken while another compute process used the GPU "
                   "(cold samples 0)";
            break;
        case 9:
            set_ints(d, "cold_throttle_reasons", short_list, 2);
            want =
                "device record: cold_throttle_reasons: must be an array of 1 integers, one per cold sample";
            break;
        default: /* the arm's recheck names no versions: the two disagree */
            cJSON_AddItemToObject(cJSON_GetObjectItem(d, "versions"), "cub", cJSON_CreateString("9.9.9"));
            want = "device record names peer versions {}, another attempt of arm default named "
                   "{\"cub\":\"9.9.9\"}";
            break;
        }
        tm_json_put(&l, "validation.json", v);
        snprintf(tag, sizeof tag, "device-%d", t);
        ev_vreport *r = tamper_verify(&l, tag, NULL, NULL);
        expect_fail(r, "protocol", "validation.json", want);
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* The attempt object of job key's attempt 1 in validation.json v. */
static cJSON *attempt1(cJSON *v, const char *key)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(job_by_key(v, key), "attempts"), 0);
}

/* The output checks after timed samples of store schema 4, held to their
 * own rules: a bundle a cpu run of that schema made
 * (tests/fixtures/schema4/checks.zip, commit 6065926, before the plants
 * replaced the rotated input and the second input set) keeps, for every
 * completed attempt, the rotated sample's output of both input sets and
 * the second set's after the last sample, with their bytes, and
 * verify-bundle validates each again from the seed in the device record.
 * A check left out, a check's bytes edited with their hash, a failed
 * check in a completed attempt: FAIL.  The checkable-case rule: a bundle
 * of schema 4 whose case would pass an all-zero output (here:
 * sum_bound_factor 1000) FAILs check 5; the same bundle claiming schema 3
 * is only noted. */
START_TEST(test_output_checks_after_samples_are_kept_and_validated_again_from_the_seed)
{
    const char *zip =
        "tests/fixtures/schema4/checks.zip"; /* 17x1024 fp16 SUM, 40x300 fp32 MAX; default, rows1 */
    ev_vreport *r = verify(zip, NULL, NULL);
    expect_pass(r);
    ck_assert_msg(strstr(report_text(r), "output checks after timed samples validated again"), "%s",
                  report_text(r));
    ev_vreport_free(r);

    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json"), *j;
    const char *key = NULL;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            if (strcmp(cJSON_GetObjectItem(a, "outcome")->valuestring, "completed"))
                continue;
            cJSON *checks = cJSON_GetObjectItem(a, "sample_checks"), *c;
            ck_assert_int_eq(cJSON_GetArraySize(checks), 3);
            int kept = 0;
            cJSON_ArrayForEach(c, checks)
            {
                cJSON *m = cJSON_GetObjectItem(c, "output_member");
                ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "passed")));
                if (cJSON_IsString(m)) {
                    ck_assert_ptr_nonnull(tm_get(&l, m->valuestring));
                    kept++;
                }
            }
            /* the second set's output after the last sample is its output
             * after the rotated one: its bytes are kept once */
            ck_assert_int_eq(kept, 2);
            ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 1), "output_member")));
            if (!key)
                key = cJSON_GetObjectItem(j, "job_key")->valuestring;
        }
    }
    ck_assert_ptr_nonnull(key);
    char keep[128];
    snprintf(keep, sizeof keep, "%s", key);
    cJSON_Delete(v);
    tm_free(&l);

    for (int t = 0; t < 7; t++) {
        char tag[32], member[160];
        const char *want = NULL, *check = "rederive";
        tm_load(&l, zip);
        v = tm_json(&l, "validation.json");
        cJSON *a = attempt1(v, keep), *checks = cJSON_GetObjectItem(a, "sample_checks");
        cJSON *c = cJSON_GetArrayItem(checks, t == 0 ? 2 : 0);
        snprintf(member, sizeof member, "%s", cJSON_GetObjectItem(c, "output_member")->valuestring);
        switch (t) {
        case 6: /* a check twice (it cannot stand in for one left out) */
            cJSON_AddItemToArray(checks, cJSON_Duplicate(c, 1));
            want = ", twice";
            break;
        case 5: /* the check that kept no bytes claims a hash no other check of its set has */
            cJSON_ReplaceItemInObject(
                cJSON_GetArrayItem(checks, 1), "output_sha256",
                cJSON_CreateString("00000000000000000000000000000000000000000000000000000000000000aa"));
            want = "the check of input set 1 after the last sample keeps no bytes, and no other check of the "
                   "set has its output_sha256";
            break;
        case 0: /* the second set's check after the last sample, left out with its member */
            cJSON_DeleteItemFromArray(checks, 2);
            tm_remove(&l, member);
            want = "(completed): 2 of the 3 output checks its device record calls for";
            break;
        case 1: /* the rotated sample's output edited, its hash following */
        {
            ev_buf *o = tm_get(&l, member);
            char hex[65];
            o->data[1] ^= 0x40;
            ev_sha256_hex(o->data, o->len, hex);
            cJSON_ReplaceItemInObject(c, "output_sha256", cJSON_CreateString(hex));
            want = "validated again against the oracle of the input regenerated from protocol.json's seed, "
                   "gives failed";
            break;
        }
        case 2: /* a failed check in a completed attempt */
            cJSON_ReplaceItemInObject(c, "passed", cJSON_CreateFalse());
            want = "completed with a failed check after a timed sample";
            break;
        case 3: /* a case whose validation passes zeros, in a run of schema 4 */
        case 4: /* the same, claimed to be stored before the rule */
        {
            ev_buf *pb = tm_get(&l, "protocol.json");
            char *text = malloc(pb->len + 64);
            const char *at = strstr(pb->data, "\"sample_band\"");
            ck_assert_ptr_nonnull(at);
            size_t pre = (size_t)(at - pb->data);
            memcpy(text, pb->data, pre);
            size_t n = pre + (size_t)snprintf(text + pre, 64, "\"sum_bound_factor\": 1000, ");
            memcpy(text + n, at, pb->len - pre);
            tm_set(&l, "protocol.json", text, n + pb->len - pre);
            free(text);
            if (t == 4)
                cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "run"), "store_schema",
                                          cJSON_CreateNumber(3));
            check = "protocol";
            want =
                "cases[0] (reduce_sum 17x1024 fp16): an all-zero output passes its validation on every row";
            break;
        }
        }
        tm_json_put(&l, "validation.json", v);
        snprintf(tag, sizeof tag, "checks-%d", t);
        r = tamper_verify(&l, tag, NULL, NULL);
        if (t == 4) {
            ck_assert_msg(!has_failure(r, check, "protocol.json", want), "%s", report_text(r));
            ck_assert_msg(strstr(report_text(r), "before the checkable-case rule (schema 4), so it is noted"),
                          "%s", report_text(r));
        } else {
            expect_fail(r, check, t == 3 ? "protocol.json" : t == 1 ? member : "validation.json", want);
        }
        ev_vreport_free(r);
        tm_free(&l);
    }
}
END_TEST

/* The check tags and the kept output (store schema 5; kernels/plants.h):
 * a real cpu run's bundle holds, for every completed attempt, one op
 * check per cold and hot sample, whose tag verify-bundle recomputes from
 * the seed the device record reveals, and the kept output, which it
 * validates again on its planted input regenerated from the seeds.  Each
 * tampering FAILs with its reason: a tag edited, a sample's op check left
 * out, its replay count edited, the device record's seed or variants
 * edited, the kept output's bytes edited with their hash, its op edited,
 * the kept output left out, a failed op check in a completed attempt, a
 * regenerate limit below the chains' length; the exporter refuses a store
 * holding a failed op check in a completed attempt. */
START_TEST(test_every_samples_check_tag_is_recomputed_from_the_seed_and_the_kept_output_validated_again)
{
    static const char proto[] =
        "{\"seed\": 5, \"samples\": 3, \"warmup_ms\": 20, \"target_sample_ms\": 5, \"cold_samples\": 2,\n"
        " \"host_threads\": 2, \"reference_arms\": false, \"auto_arm\": false, \"tolerances\": "
        "{\"sample_band\": 0.9},\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "            {\"op\": \"reduce_max\", \"rows\": 300, \"cols\": 300, \"dtype\": \"fp32\", "
        "\"default_rows\": 4}]}\n";
    char zip[320], last[1024];
    ck_assert_msg(real_run("tags", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    ev_vreport *r = verify(zip, NULL, NULL);
    expect_pass(r);
    ck_assert_msg(
        strstr(report_text(r), "kept outputs (one op of the last replay of each attempt) validated again"),
        "%s", report_text(r));
    ev_vreport_free(r);

    tm_list l;
    tm_load(&l, zip);
    cJSON *v = tm_json(&l, "validation.json"), *j;
    const char *key = NULL;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        cJSON *a;
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(j, "attempts"))
        {
            if (strcmp(cJSON_GetObjectItem(a, "outcome")->valuestring, "completed"))
                continue;
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "op_checks")), 5);
            ck_assert(cJSON_IsObject(cJSON_GetObjectItem(a, "op_kept")));
            if (!key)
                key = cJSON_GetObjectItem(j, "job_key")->valuestring;
        }
    }
    ck_assert_ptr_nonnull(key);
    char keep[128];
    snprintf(keep, sizeof keep, "%s", key);
    cJSON_Delete(v);
    tm_free(&l);

    for (int t = 0; t < 10; t++) {
        char tag[32], member[160] = "validation.json";
        const char *want = NULL, *check = "protocol";
        tm_load(&l, zip);
        v = tm_json(&l, "validation.json");
        cJSON *a = attempt1(v, keep), *ops = cJSON_GetObjectItem(a, "op_checks");
        cJSON *o = cJSON_GetArrayItem(ops, 3), *k = cJSON_GetObjectItem(a, "op_kept");
        cJSON *pl = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "device"), "plants");
        ev_verify_opts opts = {NULL, NULL, NULL, NULL, 0, NULL};
        switch (t) {
        case 0: /* a tag edited: not the seed's, yet passed */
            cJSON_ReplaceItemInObject(o, "tag", cJSON_CreateString("0123456789abcdef"));
            want = "records tag 0123456789abcdef and passed true, where the device record's seed gives";
            break;
        case 1: /* a sample's op check left out */
            cJSON_DeleteItemFromArray(ops, 3);
            want = "(completed): op checks of 4 of its 5 samples: a sample's check tag was left out";
            break;
        case 2: /* its replay count edited */
            cJSON_ReplaceItemInObject(
                o, "replay_end", cJSON_CreateNumber(cJSON_GetObjectItem(o, "replay_end")->valuedouble + 1));
            want = "replays run (";
            break;
        case 3: /* the seed the device record reveals edited: its kept op is another seed's, or
                 * (one seed in a hundred) the same, and then its tags are */
            cJSON_ReplaceItemInObject(pl, "seed", cJSON_CreateString("00000000000000aa"));
            want = ev_plant_kept_op(0xaa, 100) == (int64_t)cJSON_GetObjectItem(pl, "kept_op")->valuedouble
                       ? "where the device record's seed gives"
                       : "are not the ones its seed, the protocol and the device's cache";
            break;
        case 4: /* fewer variants than its cache and the protocol make */
            cJSON_ReplaceItemInObject(pl, "variants", cJSON_CreateNumber(2));
            want = "are not the ones its seed, the protocol and the device's cache";
            break;
        case 5: /* the kept output's bytes edited, its hash following */
        {
            snprintf(member, sizeof member, "%s", cJSON_GetObjectItem(k, "output_member")->valuestring);
            ev_buf *b = tm_get(&l, member);
            char hex[65];
            b->data[1] ^= 0x40;
            ev_sha256_hex(b->data, b->len, hex);
            cJSON_ReplaceItemInObject(k, "output_sha256", cJSON_CreateString(hex));
            check = "rederive";
            want = "the kept output (op ";
            break;
        }
        case 6: /* the kept output said to be another op's */
            cJSON_ReplaceItemInObject(
                k, "op", cJSON_CreateNumber(((int)cJSON_GetObjectItem(k, "op")->valuedouble + 1) % 100));
            check = "rederive";
            want = "where the seed keeps op";
            break;
        case 7: /* the kept output left out with its member */
            tm_remove(&l, cJSON_GetObjectItem(k, "output_member")->valuestring);
            cJSON_ReplaceItemInObject(a, "op_kept", cJSON_CreateNull());
            want = "(completed): no kept output (op_kept)";
            break;
        case 8: /* a failed op check in a completed attempt */
            cJSON_ReplaceItemInObject(o, "passed", cJSON_CreateFalse());
            check = "rederive";
            want = "completed with a failed check after a timed sample";
            break;
        case 9: /* chains longer than the verifier may compute */
            opts.regen_limit = 3;
            want = "recomputing the check tags would take";
            break;
        }
        tm_json_put(&l, "validation.json", v);
        snprintf(tag, sizeof tag, "tags-%d", t);
        if (t == 9) {
            snprintf(g_case, sizeof g_case, "%s/%s.zip", g_dir, tag);
            tm_write(&l, g_case, 0);
            ev_err err = {{0}};
            ck_assert_int_eq(ev_verify_bundle(g_case, &opts, &r, &err), EV_OK);
        } else {
            r = tamper_verify(&l, tag, NULL, NULL);
        }
        expect_fail(r, check, t == 5 ? member : t == 9 ? NULL : "validation.json", want);
        ev_vreport_free(r);
        tm_free(&l);
    }
    /* the exporter, the first reader, refuses the same store (store/outcome.h) */
    char sql[400];
    snprintf(
        sql, sizeof sql,
        "UPDATE op_checks SET passed = 0 WHERE timing = 'hot' AND attempt_id = (SELECT a.attempt_id FROM "
        "attempts a JOIN jobs j USING (job_id) WHERE j.job_key = '%s' AND a.attempt = 1);",
        keep);
    const char *bad = tamper_store("tags", "tagsfailed", sql);
    char bz[340], root[65];
    ev_err err = {{0}};
    snprintf(bz, sizeof bz, "%s/tagsfailed.zip", g_dir);
    ck_assert_int_eq(ev_export_file(bad, 0, bz, root, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "breaks an invariant") &&
                      strstr(err.msg, "completed with a failed check after a timed sample"),
                  "%s", err.msg);
}
END_TEST

/* A real cpu run of a protocol with a 0-row calibration case: the fit
 * leaves it out as a no-op case in all three readers (the store's fit, the
 * exporter, the verifier: one rule, ev_obs_select), so the honest bundle
 * PASSes check 6; auto on R = 0 completes and launches nothing (an empty
 * grid). */
START_TEST(test_a_real_run_with_a_zero_row_case_verifies_and_auto_launches_nothing)
{
    static const char proto[] =
        "{\"seed\": 9, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 20, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 0, \"cols\": 64, \"dtype\": \"fp32\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 37, \"cols\": 257, \"stride\": 260, \"dtype\": "
        "\"bf16\", "
        "\"default_rows\": 4, \"role\": \"holdout\"},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 33, \"cols\": 256, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 128, \"dtype\": \"fp32\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 48, \"cols\": 64, \"dtype\": \"bf16\", "
        "\"default_rows\": 2}]}\n";
    /* six calibration geometries besides the 0-row one, every job completed (FIXED_TARGET) */
    char zip[320], last[1024];
    ck_assert_msg(real_run("zero", proto, sizeof proto - 1, zip, sizeof zip, last, sizeof last) == 0, "%s",
                  last);
    tm_list l;
    tm_load(&l, zip);
    cJSON *m = tm_json(&l, "model.json");
    char *mt = cJSON_PrintUnformatted(m);
    ck_assert_msg(strstr(mt, "no-op case (R = 0, N = 64)"), "%s", mt);
    free(mt);
    cJSON_Delete(m);
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *j = job_by_key(v, "policy/2/auto/initial");
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    const cJSON *why = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "process"), "protocol_error");
    ck_assert_msg(!strcmp(cJSON_GetObjectItem(j, "outcome")->valuestring, "completed"), "%s (%s)",
                  cJSON_GetObjectItem(j, "outcome")->valuestring,
                  cJSON_IsString(why) ? why->valuestring : "no protocol error");
    cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "graph_nodes"), 0);
    ck_assert_ptr_nonnull(node);
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetObjectItem(node, "grid"), 0)->valuedouble, 0);
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

/* Reads the log of the last run_evident into buf[cap]. */
static const char *evident_log(char *buf, size_t cap)
{
    char logp[512];
    snprintf(logp, sizeof logp, "%s/evident.log", g_dir);
    FILE *f = fopen(logp, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* --strict: a run whose job failed after its rescue exits 1 and says so;
 * the same run without --strict exits 0 (its failures are evidence), and
 * a run whose only failure was rescued exits 0 under --strict. */
START_TEST(test_strict_run_exits_1_only_when_a_job_failed_after_its_rescue)
{
    static const char proto[] =
        "{\"seed\": 8, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-exit\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    static const char rescued[] =
        "{\"seed\": 8, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 2, \"reference_arms\": false,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
        " \"arms\": [\"default\", \"fault-exit\"], \"allow_fault_arms\": true,\n"
        " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3, \"when\": "
        "\"original\"}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4}]}\n";
    char pp[320], pr[320], db1[320], db2[320], db3[320], log[8192];
    snprintf(pp, sizeof pp, "%s/strict.json", g_dir);
    snprintf(pr, sizeof pr, "%s/rescued.json", g_dir);
    snprintf(db1, sizeof db1, "%s/strict1.db", g_dir);
    snprintf(db2, sizeof db2, "%s/strict2.db", g_dir);
    snprintf(db3, sizeof db3, "%s/strict3.db", g_dir);
    unlink(db1); /* the suite runs twice in one directory */
    unlink(db2);
    unlink(db3);
    write_tree_file(g_dir, "strict.json", proto, sizeof proto - 1);
    write_tree_file(g_dir, "rescued.json", rescued, sizeof rescued - 1);
    const char *strict[] = {"run", "--protocol", pp, "--backend", "cpu", "--db", db1, "--strict", NULL};
    const char *plain[] = {"run", "--protocol", pp, "--backend", "cpu", "--db", db2, NULL};
    const char *ok[] = {"run", "--protocol", pr, "--backend", "cpu", "--db", db3, "--strict", NULL};
    ck_assert_int_eq(run_evident(strict), 1);
    ck_assert_msg(strstr(evident_log(log, sizeof log), "--strict: run 1 is failed, failed-after-rescue"),
                  "%s", log);
    ck_assert_int_eq(run_evident(plain), 0);
    int ok_rc = run_evident(ok);
    evident_log(log, sizeof log);
    ck_assert_msg(ok_rc == 0, "%s", log); /* its retry completes (FIXED_TARGET) */
    ck_assert_msg(strstr(log, "run 1: failed, completed-after-rescue"), "%s", log);
}
END_TEST

/* Short of memory (an address-space limit), verify-bundle gives no verdict
 * and says so, exit 2: never a FAIL of a good bundle, never a PASS of an
 * incomplete check.  Not under ASan, whose shadow memory needs more address
 * space than any limit here. */
START_TEST(test_out_of_memory_is_a_resource_error_never_a_fail)
{
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "check_verify: ASan build: the address-space limit test did not run\n");
#else
    char last[1024], db[320], big[320], root[65];
    ev_err err = {{0}};
    /* a bundle of this code's making, the H200 run's order of size (2 MB):
     * 120 cases, 200 hot samples a job */
    ev_vfix_opts o = {120, 200, 2, 0, g_sources, sizeof g_sources / sizeof g_sources[0], 0, 0};
    snprintf(db, sizeof db, "%s/big.db", g_dir);
    snprintf(big, sizeof big, "%s/big.zip", g_dir);
    ck_assert_msg(!ev_vfix_build(db, &o, &err) && !ev_export_file(db, 0, big, root, &err), "%s", err.msg);
    const char *ver[] = {big, NULL};
    int two = 0, zero = 0;
    for (size_t mib = 16; mib <= 160; mib += 8) {
        g_as_limit = mib << 20;
        int rc = run_bin(ver, last, sizeof last, NULL);
        g_as_limit = 0;
        ck_assert_msg(rc == 0 || rc == 2, "%zu MiB: exit %d: %s", mib, rc, last);
        if (rc == 2) {
            ck_assert_msg(strstr(last, "no verdict") && strstr(last, "resource error"), "%zu MiB: %s", mib,
                          last);
            two++;
        } else {
            zero++;
        }
    }
    ck_assert_int_gt(two, 0);
    ck_assert_int_gt(zero, 0);
    printf("check_verify: address-space limits 16..160 MiB: %d gave no verdict (exit 2), %d PASS, none "
           "FAIL\n",
           two, zero);
#endif
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__)
/* Appends to b about n bytes of JSON of shape k, each made to cost a
 * parser far more than its bytes (0: a wide array of 0s; 1: arrays nested
 * 60 deep, repeated; 2: a wide object; 3: one long string; 4: an array of
 * one-letter strings; 5: an array of empty objects), with a digit of
 * entropy every 24 values so the zip's 200:1 ratio cap lets it through. */
static void hostile_json(ev_buf *b, int k, size_t n)
{
    uint64_t x = 88172645463325252ull;
    size_t i = 0;
#define HJ_DIGIT() ((x ^= x << 13, x ^= x >> 7, x ^= x << 17), (char)('0' + x % 10))
    ck_assert_int_eq(ev_buf_puts(b, k == 2 ? "{" : k == 3 ? "{\"a\":\"" : "{\"a\":["), EV_OK);
    while (b->len < n) {
        char d = i % 24 ? '0' : HJ_DIGIT();
        if (k == 0)
            ev_buf_printf(b, "%s%c", i ? "," : "", d);
        else if (k == 1)
            ev_buf_printf(b,
                          "%s[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[%c]]]]]]]]]]]]]]]]]]"
                          "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                          i ? "," : "", d);
        else if (k == 2)
            ev_buf_printf(b, "%s\"%zx\":%c", i ? "," : "", i, d);
        else if (k == 3)
            ev_buf_printf(b, "%c", i % 64 ? 'x' : HJ_DIGIT());
        else if (k == 4)
            ev_buf_printf(b, "%s\"%c\"", i ? "," : "", i % 24 ? 'x' : d);
        else
            ev_buf_printf(b, i % 24 ? "%s{}" : "%s{\"a\":0}", i ? "," : "");
        i++;
    }
#undef HJ_DIGIT
    ck_assert_int_eq(ev_buf_puts(b, k == 2 ? "}\n" : k == 3 ? "\"}\n" : "]}\n"), EV_OK);
}
#endif

/* Every JSON member of a bundle, replaced in turn by each hostile shape of
 * 12 MB (a tree of it would take 40 times that without bounds), is
 * refused with a verdict (FAIL, never an exhausted memory: exit 1, not 2)
 * by verify-bundle under an address-space limit of 384 MiB, which the
 * honest bundle passes under too.  Its members' bounds (src/evidence/
 * member.h: size class, values per byte, the bundle's budget) hold before
 * a tree is built. */
START_TEST(test_hostile_json_shapes_in_every_member_get_a_verdict_within_a_memory_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "check_verify: ASan build: the hostile shapes under a memory limit did not run\n");
#else
    static const char *const members[] = {"validation.json",     "model.json",    "provenance.json",
                                          "proof-receipts.json", "protocol.json", "receipts.json"};
    static const char *const shapes[] = {"wide array",  "nested arrays", "wide object",
                                         "long string", "many strings",  "empty objects"};
    char last[1024], zip[400];
    const char *honest[] = {g_good, NULL};
    g_as_limit = (size_t)384 << 20;
    ck_assert_msg(run_bin(honest, last, sizeof last, NULL) == 0, "the honest bundle under 384 MiB: %s", last);
    for (size_t mi = 0; mi < sizeof members / sizeof members[0]; mi++)
        for (int k = 0; k < 6; k++) {
            tm_list l;
            ev_buf h = EV_BUF_INIT;
            tm_load(&l, g_good);
            hostile_json(&h, k, (size_t)12 << 20);
            tm_set(&l, members[mi], h.data, h.len);
            snprintf(zip, sizeof zip, "%s/hostile-%zu-%d.zip", g_dir, mi, k);
            tm_write(&l, zip, !strcmp(members[mi], "receipts.json"));
            const char *ver[] = {zip, NULL};
            int rc = run_bin(ver, last, sizeof last, NULL);
            ck_assert_msg(rc == 1 && strstr(last, "verify-bundle: FAIL"), "%s as a %s: exit %d: %s",
                          members[mi], shapes[k], rc, last);
            unlink(zip);
            ev_buf_free(&h);
            tm_free(&l);
        }
    g_as_limit = 0;
#endif
}
END_TEST

START_TEST(test_binary_exit_codes)
{
    char last[1024];
    const char *help[] = {"--help", NULL}, *ver[] = {"--version", NULL}, *none[] = {NULL};
    const char *bad[] = {"--frobnicate", "x.zip", NULL};
    char missing[320], notzip[320];
    snprintf(missing, sizeof missing, "%s/does-not-exist.zip", g_dir);
    snprintf(notzip, sizeof notzip, "%s/not-a-zip.zip", g_dir);
    write_tree_file(g_dir, "not-a-zip.zip", "hello, not a zip\n", 17);
    const char *miss[] = {missing, NULL}, *nz[] = {notzip, NULL}, *dir[] = {g_dir, NULL};
    const char *badroot[] = {g_good, "--expect-root", "abc", NULL};
    const char *wrongroot[] = {g_good, "--expect-root",
                               "00000000000000000000000000000000000000000000000000000000000000ff", NULL};
    const char *notree[] = {g_good, "--source-tree", missing, NULL};

    ck_assert_int_eq(run_bin(help, last, sizeof last, NULL), 0);
    ck_assert_int_eq(run_bin(ver, last, sizeof last, NULL), 0);
    ck_assert_int_eq(run_bin(none, last, sizeof last, NULL), 2);
    ck_assert_int_eq(run_bin(bad, last, sizeof last, NULL), 2);
    ck_assert_int_eq(run_bin(miss, last, sizeof last, NULL), 2);
    ck_assert_ptr_nonnull(strstr(last, "cannot open"));
    ck_assert_int_eq(run_bin(dir, last, sizeof last, NULL), 2);
    ck_assert_int_eq(run_bin(badroot, last, sizeof last, NULL), 2);
    ck_assert_int_eq(run_bin(notree, last, sizeof last, NULL), 2);
    ck_assert_int_eq(run_bin(nz, last, sizeof last, NULL), 1);
    ck_assert_msg(!strncmp(last, "verify-bundle: FAIL archive: ", 29), "last line: %s", last);
    ck_assert_int_eq(run_bin(wrongroot, last, sizeof last, NULL), 1);
    ck_assert_msg(!strncmp(last, "verify-bundle: FAIL members: receipts.json: root digest ", 56),
                  "last line: %s", last);
}
END_TEST

START_TEST(test_binary_pass_and_json)
{
    char last[1024];
    const char *good[] = {g_good, "--expect-root", g_root, "--source-tree", g_tree, NULL};
    const char *js[] = {g_good, "--json", NULL};
    ev_buf out = EV_BUF_INIT;
    int rc = run_bin(good, last, sizeof last, &out);
    ck_assert_msg(rc == 0, "exit %d, %s", rc, last);
    ck_assert_ptr_nonnull(strstr(out.data, "verdict: PASS"));
    ev_buf_reset(&out);
    rc = run_bin(js, last, sizeof last, &out);
    cJSON *t = cJSON_ParseWithLength(out.data, out.len);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(cJSON_GetObjectItem(t, "verdict")->valuestring, rc == 0 ? "PASS" : "FAIL");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t, "checks")), 7);
    cJSON_Delete(t);
    ev_buf_free(&out);
}
END_TEST

START_TEST(test_binary_compare_exit_codes)
{
    char last[1024];
    const char *same[] = {"--compare", g_good, g_good, NULL};
    const char *diff[] = {"--compare", g_good, g_failed, NULL};
    const char *one[] = {"--compare", g_good, NULL};
    int rc = run_bin(same, last, sizeof last, NULL);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, last);
    ck_assert_int_eq(run_bin(diff, last, sizeof last, NULL), 1);
    ck_assert_int_eq(run_bin(one, last, sizeof last, NULL), 2);
}
END_TEST

/* ------------------------------------------------------------ shards */

/* A real run of two shards (docs/runner.md, "Shards"): main, merge, rest,
 * merge, export, into g_dir/sharded.zip, made once (the forked tests share
 * g_dir).  Returns its path. */
static const char *sharded_bundle(void)
{
    static const char proto[] =
        "{\"seed\": 9, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 4, "
        "\"target_sample_ms\": " FIXED_TARGET ", \"cold_samples\": 1,\n"
        " \"host_threads\": 1,\n"
        " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 4194304}},\n"
        " \"arms\": [\"default\", \"rows1\", \"rows2\"],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
        "\"default_rows\": 4},\n"
        "           {\"op\": \"reduce_max\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\", "
        "\"default_rows\": 8},\n"
        "           {\"op\": \"reduce_sum\", \"rows\": 130, \"cols\": 96, \"dtype\": \"fp32\", "
        "\"default_rows\": 8}]}\n";
    static char zip[320];
    char pp[320], db[2][320], mainp[320], all[320];
    struct stat sb;
    snprintf(zip, sizeof zip, "%s/sharded.zip", g_dir);
    if (stat(zip, &sb) == 0)
        return zip;
    snprintf(pp, sizeof pp, "%s/sharded.json", g_dir);
    snprintf(mainp, sizeof mainp, "%s/sharded-main.db", g_dir);
    snprintf(all, sizeof all, "%s/sharded-all.db", g_dir);
    write_tree_file(g_dir, "sharded.json", proto, sizeof proto - 1);
    for (int i = 0; i < 2; i++) {
        char shard[24];
        snprintf(db[i], sizeof db[i], "%s/sharded-%d.db", g_dir, i);
        snprintf(shard, sizeof shard, "%d/2", i);
        const char *run[] = {"run",     "--protocol", pp,     "--shard", shard,
                             "--phase", "main",       "--db", db[i],     NULL};
        ck_assert_int_eq(run_evident(run), 0);
    }
    const char *m1[] = {"merge", db[0], db[1], "--out", mainp, NULL};
    ck_assert_int_eq(run_evident(m1), 0);
    for (int i = 0; i < 2; i++) {
        char shard[24];
        snprintf(shard, sizeof shard, "%d/2", i);
        const char *run[] = {"run",  "--protocol", pp,    "--shard", shard, "--phase",
                             "rest", "--main",     mainp, "--db",    db[i], NULL};
        ck_assert_int_eq(run_evident(run), 0);
    }
    const char *m2[] = {"merge", db[0], db[1], "--out", all, NULL};
    ck_assert_int_eq(run_evident(m2), 0);
    char part[330];
    snprintf(part, sizeof part, "%s.part", zip);
    const char *exp[] = {"export", "--db", all, "--out", part, NULL};
    ck_assert_int_eq(run_evident(exp), 0);
    ck_assert_int_eq(rename(part, zip), 0);
    return zip;
}

/* The first job of validation.json v whose case is case_index. */
static cJSON *job_of_case(cJSON *v, int64_t case_index)
{
    cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(v, "jobs"))
    {
        cJSON *c = cJSON_GetObjectItem(j, "case_index");
        if (cJSON_IsNumber(c) && (int64_t)c->valuedouble == case_index)
            return j;
    }
    ck_abort_msg("no job of case %lld", (long long)case_index);
    return NULL;
}

/* The id of the first invocation of shard k in validation.json v. */
static int64_t invocation_of_shard(cJSON *v, int64_t k)
{
    cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(v, "invocations"))
    {
        cJSON *sh = cJSON_GetObjectItem(x, "shard");
        if (sh && (int64_t)cJSON_GetObjectItem(sh, "index")->valuedouble == k)
            return (int64_t)cJSON_GetObjectItem(x, "invocation_id")->valuedouble;
    }
    ck_abort_msg("no invocation of shard %lld", (long long)k);
    return -1;
}

START_TEST(test_a_merged_bundle_of_two_shards_passes_and_lists_its_shards)
{
    tm_list l;
    ev_vreport *r = verify(sharded_bundle(), NULL, NULL);
    expect_pass(r);
    ev_vreport_free(r);
    tm_load(&l, sharded_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *sh = cJSON_GetObjectItem(v, "shards");
    ck_assert_ptr_nonnull(sh);
    ck_assert_int_eq((int)cJSON_GetObjectItem(sh, "count")->valuedouble, 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(sh, "list")), 2);
    ck_assert_int_eq((int)cJSON_GetObjectItem(job_of_case(v, 1), "shard")->valuedouble, 1);
    cJSON_Delete(v);
    tm_free(&l);
}
END_TEST

/* A job moved to the other shard in validation.json: the partition
 * (ev_plan_shard_of) says where it belongs. */
START_TEST(test_a_job_listed_in_another_shard_than_the_partitions_fails_plan)
{
    tm_list l;
    tm_load(&l, sharded_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON_ReplaceItemInObject(job_of_case(v, 1), "shard", cJSON_CreateNumber(0));
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "shard-moved", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "but the partition puts it in shard 1");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* An attempt credited to an invocation of the other shard: the shard a
 * job's attempts ran in is the shard the partition gives it. */
START_TEST(test_an_attempt_credited_to_another_shards_invocation_fails_plan_naming_both)
{
    tm_list l;
    tm_load(&l, sharded_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    int64_t other = invocation_of_shard(v, 0);
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(job_of_case(v, 1), "attempts"), 0);
    cJSON_ReplaceItemInObject(a, "invocation_id", cJSON_CreateNumber((double)other));
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "shard-credited", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "(shard 1 of 2): attempt 1 ran in invocation");
    expect_fail(r, "plan", "validation.json", "which is shard 0's");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* The shard list must name exactly each shard's invocations, and an
 * invocation may name a shard only in a bundle that lists its shards. */
START_TEST(test_a_shard_list_that_disagrees_with_the_invocations_fails_plan)
{
    tm_list l;
    tm_load(&l, sharded_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *list = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "shards"), "list");
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "invocations"), 0);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "shard-list", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "does not list every invocation of shard 1");
    ev_vreport_free(r);
    tm_free(&l);

    tm_load(&l, sharded_bundle());
    v = tm_json(&l, "validation.json");
    cJSON_DeleteItemFromObject(v, "shards");
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    r = tamper_verify(&l, "shard-unlisted", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "names a shard, but the bundle lists no shards");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* A bundle from a subset of the shards (shard 1's invocations and jobs
 * cut out, and every member made consistent again) FAILs naming the
 * missing shard and its jobs. */
START_TEST(test_a_bundle_cut_to_one_shard_fails_plan_naming_the_missing_jobs_and_their_shard)
{
    tm_list l;
    tm_load(&l, sharded_bundle());
    cJSON *v = tm_json(&l, "validation.json");
    cJSON *invs = cJSON_GetObjectItem(v, "invocations"), *jobs = cJSON_GetObjectItem(v, "jobs");
    for (int i = cJSON_GetArraySize(invs) - 1; i >= 0; i--) {
        cJSON *sh = cJSON_GetObjectItem(cJSON_GetArrayItem(invs, i), "shard");
        if ((int)cJSON_GetObjectItem(sh, "index")->valuedouble == 1)
            cJSON_DeleteItemFromArray(invs, i);
    }
    cJSON_DeleteItemFromArray(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "shards"), "list"), 1),
            "invocations"),
        0);
    for (int i = cJSON_GetArraySize(jobs) - 1; i >= 0; i--)
        if ((int)cJSON_GetObjectItem(cJSON_GetArrayItem(jobs, i), "shard")->valuedouble == 1)
            cJSON_DeleteItemFromArray(jobs, i);
    tm_json_put(&l, "validation.json", v);
    tm_rereport(&l);
    ev_vreport *r = tamper_verify(&l, "shard-subset", NULL, NULL);
    expect_fail(r, "plan", "validation.json", "shard 1 of 2 has no invocation");
    expect_fail(r, "plan", "validation.json", "planned job main/1/default/initial (shard 1 of 2) is missing");
    expect_fail(r, "plan", "validation.json",
                "planned job main/-/ceiling/initial/shard-1 (shard 1 of 2) is missing");
    ev_vreport_free(r);
    tm_free(&l);
}
END_TEST

/* In a sharded bundle each case's auto / floor is taken against the floor
 * of its own shard's device (report_int.h, rp_case_floor), and the
 * impossible-timing rule holds it to that floor. */
START_TEST(test_a_sharded_reports_auto_over_floor_uses_each_cases_own_shards_floor)
{
    static const char check[] =
        "import json, sys, zipfile\n"
        "v = json.loads(zipfile.ZipFile(sys.argv[1]).read('validation.json'))\n"
        "fl = {j['shard']: j['median_us'] for j in v['jobs'] if j['arm'] == 'floor' and j['phase'] == "
        "'main'}\n"
        "for j in v['jobs']:\n"
        "    if j['arm'] == 'floor' and j['phase'] == 'rescue' and fl.get(j['shard']) is None:\n"
        "        fl[j['shard']] = j['median_us']\n"
        "n = v['shards']['count']\n"
        "rows = [l for l in open(sys.argv[2]) if l.startswith('| reduce')]\n"
        "head = [l for l in open(sys.argv[2]) if l.startswith('| Operation')][0].split('|')\n"
        "col = [c.strip() for c in head].index('auto / floor')\n"
        "auto = {j['case_index']: j['median_us'] for j in v['jobs'] if j['arm'] == 'auto' and "
        "j['median_us']}\n"
        "cases = sorted(auto)\n"
        "assert len(rows) == len(v['cases']) and len(fl) == n\n"
        "for i, c in enumerate(v['cases']):\n"
        "    ci = c['case_index']\n"
        "    if ci not in auto: continue\n"
        "    f = fl[ci % n]\n"
        "    want = '%.3f' % (auto[ci] / f) if f else '-'\n"
        "    got = rows[i].split('|')[col].strip()\n"
        "    assert got == want, (ci, got, want)\n";
    char py[320], md[320], cmd[1200];
    const char *zip = sharded_bundle();
    snprintf(py, sizeof py, "%s/floor-check.py", g_dir);
    snprintf(md, sizeof md, "%s/sharded.md", g_dir);
    write_tree_file(g_dir, "floor-check.py", check, sizeof check - 1);
    const char *rep[] = {"report", zip, "--markdown", "--out", md, NULL};
    ck_assert_int_eq(run_evident(rep), 0);
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s' '%s'", py, zip, md);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ------------------------------------------------------------ suite */

static Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *t = tcase_create("verify");
    tcase_set_timeout(t, 240);
    tcase_add_test(t, test_good_bundle_passes_every_check);
    tcase_add_test(t, test_pass_without_expect_root_says_authenticity_is_not_shown);
    tcase_add_test(t, test_rescued_bundle_passes_with_its_rescue_regenerated);
    tcase_add_test(t, test_rewriting_members_unchanged_keeps_the_same_bytes_and_passes);
    tcase_add_test(t, test_right_root_and_source_tree_pass);
    tcase_add_test(t, test_extra_member_fails_members);
    tcase_add_test(t, test_extra_output_member_fails_rederive);
    tcase_add_test(t, test_missing_member_fails_members);
    tcase_add_test(t, test_member_changed_without_new_receipt_fails_members);
    tcase_add_test(t, test_wrong_root_with_expect_root_fails);
    tcase_add_test(t, test_json_with_duplicate_keys_fails_formats);
    tcase_add_test(t, test_json_with_trailing_bytes_fails_formats);
    tcase_add_test(t, test_json_nested_5000_deep_fails_formats);
    tcase_add_test(t, test_number_that_is_not_its_exact_text_fails_formats);
    tcase_add_test(t, test_csv_with_missing_columns_fails_formats);
    tcase_add_test(t, test_csv_with_bad_utf8_fails_formats);
    tcase_add_test(t, test_extra_csv_row_fails_rederive_and_protocol);
    tcase_add_test(t, test_dropped_csv_row_fails_rederive_and_protocol);
    tcase_add_test(t, test_changed_timing_fails_rederive_median);
    tcase_add_test(t, test_the_good_bundle_passes_alike_read_whole_or_streamed_in_any_pieces);
    tcase_add_test(t, test_a_duplicate_row_fails_alike_read_whole_or_streamed_in_any_pieces);
    tcase_add_test(t, test_a_wrong_header_with_no_rows_fails_read_whole_or_streamed);
    tcase_add_test(t, test_continuation_rows_are_judged_as_the_reference_reading_judges_them);
    tcase_add_test(t, test_changed_elapsed_alone_fails_rederive_per_op);
    tcase_add_test(t, test_sample_outside_the_wide_band_fails_protocol);
    tcase_add_test(t, test_a_preempted_sample_within_the_wide_band_is_not_a_protocol_failure);
    tcase_add_test(t, test_calibration_that_ignored_its_target_fails_protocol);
    tcase_add_test(t, test_a_claimed_rule_breach_the_samples_do_not_show_fails_protocol);
    tcase_add_test(t, test_the_exporter_refuses_a_store_that_breaks_an_invariant);
    tcase_add_test(t, test_the_verifier_fails_a_bundle_that_breaks_an_invariant);
    tcase_add_test(t, test_five_store_edits_of_process_records_are_refused_by_export_or_fail_verify);
    tcase_add_test(t, test_removed_job_fails_plan);
    tcase_add_test(t, test_a_projection_field_edited_alone_fails_rederive);
    tcase_add_test(t, test_an_invented_profile_id_fails_rederive);
    tcase_add_test(t, test_each_single_field_invariant_of_validation_json_is_refused);
    tcase_add_test(t, test_store_fit_and_drift_keys_edited_alone_fail_rederive);
    tcase_add_test(t, test_a_negative_clock_or_time_in_samples_csv_fails_formats);
    tcase_add_test(t, test_a_bundle_of_three_rounds_verifies_and_its_figures_stand_on_rounds);
    tcase_add_test(t, test_a_recorded_order_that_is_not_the_seeds_fails_plan_naming_the_job);
    tcase_add_test(t, test_a_missing_round_fails_plan_unless_a_recorded_failure_stands_in_its_place);
    tcase_add_test(t, test_added_job_fails_plan);
    tcase_add_test(t, test_relabelled_job_fails_plan);
    tcase_add_test(t, test_changed_outcome_fails_plan);
    tcase_add_test(t, test_changed_run_status_fails_plan);
    tcase_add_test(t, test_dropped_rescue_job_fails_plan);
    tcase_add_test(t, test_edited_median_fails_rederive);
    tcase_add_test(t, test_flipped_model_decision_fails_rederive);
    tcase_add_test(t, test_edited_report_fails_rederive);
    tcase_add_test(t, test_wrong_default_entry_source_digest_fails_rederive);
    tcase_add_test(t, test_source_swapped_after_the_run_fails_rederive_even_with_hashes_recomputed);
    tcase_add_test(t, test_tampered_interval_bound_fails_rederive);
    tcase_add_test(t, test_tampered_p_value_fails_rederive);
    tcase_add_test(t, test_tampered_tail_disclosure_fails_rederive);
    tcase_add_test(t, test_tampered_across_case_interval_fails_rederive);
    tcase_add_test(t, test_tampered_job_p95_fails_rederive);
    tcase_add_test(t, test_fixture_auto_jobs_follow_a_non_default_selection);
    tcase_add_test(t, test_a_declared_schedule_set_the_receipts_disagree_with_fails);
    tcase_add_test(t, test_auto_receipt_of_a_schedule_the_selector_did_not_choose_fails_rederive);
    tcase_add_test(t, test_native_receipt_with_another_grid_fails_rederive);
    tcase_add_test(t, test_native_receipt_naming_another_entry_fails_rederive);
    tcase_add_test(t, test_changed_output_fails_rederive);
    tcase_add_test(t, test_an_output_validated_again_must_give_its_recorded_numbers);
    tcase_add_test(t, test_regenerating_more_inputs_than_the_limit_is_refused_with_the_count);
    tcase_add_test(t, test_output_checks_after_samples_are_kept_and_validated_again_from_the_seed);
    tcase_add_test(
        t, test_every_samples_check_tag_is_recomputed_from_the_seed_and_the_kept_output_validated_again);
    tcase_add_test(t, test_stale_source_fails_with_the_changed_files);
    tcase_add_test(t, test_a_trees_closure_list_is_its_closure_and_a_member_of_it);
    tcase_add_test(t, test_compare_of_a_bundle_with_itself_passes);
    tcase_add_test(t, test_compare_reports_outcome_and_value_differences);
    tcase_add_test(t, test_fast_double_text_equals_snprintf_17g);
    tcase_add_test(t, test_real_run_with_the_wrong_schedule_fault_arm_fails_rederive);
    tcase_add_test(t, test_a_bundle_without_a_declared_kernels_source_fails_plan);
    tcase_add_test(t, test_a_job_faster_than_the_floor_or_the_ceiling_allows_fails_rederive);
    tcase_add_test(t, test_a_floor_with_preempted_samples_does_not_make_honest_jobs_impossible);
    tcase_add_test(t, test_a_gpu_job_faster_than_half_the_floor_fails_rederive);
    tcase_add_test(t, test_graph_nodes_are_planned_by_the_launch_rule_the_bundled_code_declares);
    tcase_add_test(t, test_graph_nodes_are_planned_by_launch_rule_3_where_the_code_declares_it);
    tcase_add_test(t, test_a_gpu_bundle_made_ten_times_faster_and_re_exported_fails_physical_plausibility);
    tcase_add_test(t, test_real_run_whose_attempt_broke_a_sample_rule_is_failed_protocol_and_verifies);
    tcase_add_test(t, test_a_job_faster_than_the_runs_ceilings_fails_in_the_runner_and_its_bundle_verifies);
    tcase_add_test(t, test_a_throttled_sample_is_failed_protocol_and_a_completed_one_fails_check_5);
    tcase_add_test(t,
                   test_a_sample_taken_on_a_busy_or_throttled_gpu_is_failed_protocol_and_check_5_rechecks_it);
    tcase_add_test(t, test_the_bundle_format_is_read_first_and_older_bundles_verify);
    tcase_add_test(t, test_strict_run_exits_1_only_when_a_job_failed_after_its_rescue);
    tcase_add_test(t, test_a_real_run_with_a_zero_row_case_verifies_and_auto_launches_nothing);
    tcase_add_test(t, test_out_of_memory_is_a_resource_error_never_a_fail);
    tcase_add_test(t, test_binary_exit_codes);
    tcase_add_test(t, test_binary_pass_and_json);
    tcase_add_test(t, test_binary_compare_exit_codes);
    suite_add_tcase(s, t);
    t = tcase_create("waits");
    tcase_set_timeout(t, 240);
    tcase_add_test(t, test_a_cpu_lock_wait_stands_only_in_a_cpu_run_and_within_its_gap);
    suite_add_tcase(s, t);
    t = tcase_create("columns");
    tcase_set_timeout(t, 900); /* one export and one verification per column */
    tcase_add_test(t, test_each_raw_column_edited_alone_is_refused_or_fails_unless_the_docs_name_it_free);
    tcase_add_test(t, test_hostile_json_shapes_in_every_member_get_a_verdict_within_a_memory_limit);
    suite_add_tcase(s, t);
    t = tcase_create("shards");
    tcase_set_timeout(t, 480);
    tcase_add_test(t, test_a_merged_bundle_of_two_shards_passes_and_lists_its_shards);
    tcase_add_test(t, test_a_job_listed_in_another_shard_than_the_partitions_fails_plan);
    tcase_add_test(t, test_an_attempt_credited_to_another_shards_invocation_fails_plan_naming_both);
    tcase_add_test(t, test_a_shard_list_that_disagrees_with_the_invocations_fails_plan);
    tcase_add_test(t, test_a_bundle_cut_to_one_shard_fails_plan_naming_the_missing_jobs_and_their_shard);
    tcase_add_test(t, test_a_sharded_reports_auto_over_floor_uses_each_cases_own_shards_floor);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    build_fixtures();
    int failed = ev_check_suite(verify_suite());
    /* again, with every samples.csv streamed in pieces of 61 bytes (lines
     * and the header fall across pieces): the same verdicts and reasons */
    vb_stream_piece = 61;
    failed += ev_check_suite(verify_suite());
    if (!failed) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "check_verify: could not remove %s\n", g_dir);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
