/*
 * check_protocol.c: the protocol parser refuses malformed protocols with
 * the field named, fills docs/runner.md's defaults, parses the shipped
 * protocols; the plan is deterministic and complete; rescue retries
 * exactly the retryable outcomes; the run status follows docs/runner.md.
 */
#include <check.h>

#include "progress.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "json.h"
#include "model/model.h"
#include "runner/plan.h"
#include "store/store.h"
#include "runner/protocol.h"
#include "strs.h"
#include "runner/subset.h"
#include "inputs.h"
#include "runner/validate.h"
#include <glob.h>
#include <math.h>

#define SHA0 "0000000000000000000000000000000000000000000000000000000000000000"

static const char *const good_case =
    "{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4}";

/* Parses text; returns the status and leaves the message in err. */
static ev_status parse(const char *text, ev_protocol *p, ev_err *err)
{
    return ev_protocol_parse(text, strlen(text), p, err);
}

/* Parses a file of protocols/.  The caller frees. */
static void parse_file(const char *path, ev_protocol *p)
{
    ev_buf b = EV_BUF_INIT;
    ev_err err = {""};
    ck_assert_int_eq(ev_read_file(path, &b, &err), EV_OK);
    ck_assert_msg(ev_protocol_parse(b.data, b.len, p, &err) == EV_OK, "%s: %s", path, err.msg);
    ev_buf_free(&b);
}

START_TEST(test_a_minimal_protocol_gets_the_design_defaults)
{
    char text[512];
    ev_protocol p;
    ev_err err = {""};

    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [%s]}", good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(p.samples, 7);
    ck_assert_int_eq(p.ops_per_graph, 100);
    ck_assert(p.warmup_ms == 500);
    ck_assert(p.target_sample_ms == 100);
    ck_assert_int_eq(p.retries, 1);
    ck_assert_int_eq(p.cases[0].stride, 1024);
    ck_assert_str_eq(p.cases[0].role, "calibration");
    ck_assert_int_eq(p.ref_cuda.ceiling_bytes, INT64_C(1) << 30);
    ck_assert_int_eq(p.ref_cpu.ceiling_cache_multiple, 8);
    ck_assert_int_eq(p.reference_arms, 1);
    ev_protocol_free(&p);
}
END_TEST

/* A protocol of cases and kernels alone is enough: every other field takes
 * the default profile (protocol.h), the seed, the arms (ours the model
 * fits, the peers, every kernel) and each case's default_rows among them;
 * the values it runs with, defaults included, are one object that is a
 * protocol itself and parses to the same values again. */
START_TEST(test_a_protocol_of_cases_and_kernels_alone_takes_the_default_profile)
{
    static const char text[] =
        "{\"kernels\": [{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, "
        "\"entries\": {\"reduce_sum/fp32\": \"a_sum\"}}],\n"
        " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 65, \"cols\": 512, \"dtype\": \"fp32\"}]}";
    static const char *const arms[] = {"default", "rows1", "rows2", "cub", "torch-compile", "ext-a"};
    ev_protocol p, q;
    ev_err err = {""};
    cJSON *v = NULL, *w = NULL;
    ev_buf a = EV_BUF_INIT, b = EV_BUF_INIT, again = EV_BUF_INIT;

    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(p.seed, EV_PROTO_DEFAULT_SEED);
    ck_assert_uint_eq(p.n_arms, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert_str_eq(p.arms[i], arms[i]);
    ck_assert_int_eq(p.cases[0].default_rows, EV_PROTO_DEFAULT_B);
    ck_assert_int_eq(p.samples, 7);
    ck_assert(p.warmup_ms == 500 && p.target_sample_ms == 100);
    ck_assert_int_eq(p.rounds, 1);
    ck_assert_int_eq(p.cold_samples, 3);

    /* the values used: every key a protocol has, the defaults written out */
    ck_assert_int_eq(ev_protocol_values(&p, &v), EV_OK);
    ck_assert_int_eq(ev_json_print(v, 0, &a), EV_OK);
    ck_assert_msg(strstr(a.data,
                         "\"seed\":1,\"arms\":[\"default\",\"rows1\",\"rows2\",\"cub\",\"torch-compile\","
                         "\"ext-a\"],\"cases\":[{\"op\":\"reduce_sum\",\"rows\":65,\"cols\":512,"
                         "\"stride\":512,\"dtype\":\"fp32\",\"default_rows\":4,\"role\":\"calibration\"}]") &&
                      strstr(a.data, "\"samples\":7,") && strstr(a.data, "\"warmup_ms\":500,") &&
                      strstr(a.data, "\"rounds\":1,") && strstr(a.data, "\"sample_band\":0.5,"),
                  "%s", a.data);
    /* ...which, with the kernels, is a protocol: the same values again */
    cJSON_AddItemToObject(v, "kernels",
                          cJSON_Parse("[{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, "
                                      "\"entries\": {\"reduce_sum/fp32\": \"a_sum\"}}]"));
    ck_assert_int_eq(ev_json_print(v, 0, &again), EV_OK);
    ck_assert_msg(parse(again.data, &q, &err) == EV_OK, "%s: %s", err.msg, again.data);
    ck_assert_int_eq(ev_protocol_values(&q, &w), EV_OK);
    ck_assert_int_eq(ev_json_print(w, 0, &b), EV_OK);
    ck_assert_str_eq(a.data, b.data);
    cJSON_Delete(v);
    cJSON_Delete(w);
    ev_buf_free(&a);
    ev_buf_free(&b);
    ev_buf_free(&again);
    ev_protocol_free(&p);
    ev_protocol_free(&q);
}
END_TEST

/* Each malformed protocol and the text its refusal must contain. */
static const struct {
    const char *text, *want;
} bad[] = {
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": -1, \"cols\": 4, "
     "\"dtype\": \"fp32\", \"default_rows\": 4}]}",
     "cases[0].rows: must be >= 0"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE, {\"op\": \"reduce_prod\", \"rows\": 1, "
     "\"cols\": 4, "
     "\"dtype\": \"fp32\", \"default_rows\": 4}]}",
     "cases[1].op: 'reduce_prod' is not allowed"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"sampels\": 7}", "sampels: unknown key"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"sum_depth\": 0}}",
     "tolerances.sum_depth: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"sum_depth\": 64.5}}",
     "tolerances.sum_depth: must be an integer"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"sum_depth\": 9}}",
     "tolerances.sum_depth: 9 is below ceil(log2(1024)) = 10"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"samples\": \"7\"}",
     "samples: must be an integer"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"samples\": 0}", "samples: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"warmup_ms\": -5}",
     "warmup_ms: must be >= 0"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"rows3\"], \"cases\": [CASE]}", "arms[1]: unknown arm 'rows3'"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"default\"], \"cases\": [CASE]}", "arms[1]: duplicate arm"},
    {"{\"seed\": 1, \"arms\": [\"auto\"], \"cases\": [CASE]}", "arms[0]: 'auto' is planned by the runner"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": []}", "cases: must be a non-empty array"},
    {"{\"seed\": -1, \"arms\": [\"default\"], \"cases\": [CASE]}", "seed: must be >= 0"},
    {"{\"seed\": 1, \"arms\": [], \"cases\": [CASE]}", "arms: must be a non-empty array"},
    {"{\"arms\": [\"default\"]}", "cases: missing"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 2, \"cols\": 8, "
     "\"stride\": 4, \"dtype\": \"fp32\", \"default_rows\": 4}]}",
     "cases[0].stride: must be >= cols"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 2, \"cols\": 8, "
     "\"dtype\": \"fp64\", \"default_rows\": 4}]}",
     "cases[0].dtype: 'fp64' is not allowed"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 2.5, \"cols\": "
     "8, "
     "\"dtype\": \"fp32\", \"default_rows\": 4}]}",
     "cases[0].rows: must be an integer"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-x\"], \"cases\": [CASE], "
     "\"fault_arms\": [{\"name\": \"fault-x\", \"kind\": \"hang\"}]}",
     "fault_arms: refused unless allow_fault_arms is true"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-x\", \"kind\": \"exit\", \"code\": 0}]}",
     "fault_arms[0].code: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-x\", \"kind\": \"hang\", \"signal\": 9}]}",
     "fault_arms[0].signal: not a field of kind 'hang'"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"reference\": {\"cuda\": "
     "{\"ceiling_bytes\": "
     "1048576}}}",
     "reference.cuda.ceiling_bytes: must be >= 1073741824"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"reference\": {\"cpu\": "
     "{\"ceiling_cache_multiple\": "
     "4}}}",
     "reference.cpu.ceiling_cache_multiple: must be >= 8"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"cpu_set\": [0, 0]}",
     "cpu_set[1]: duplicate CPU"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"sample_band\": 0}}",
     "tolerances.sample_band: must be > 0"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"clock_band\": 1.5}}",
     "tolerances.clock_band: must be <= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"tolerances\": {\"clock_band\": -0.1}}",
     "tolerances.clock_band: must be >= 0"},
    {"{\"seed\": 1, \"seed\": 2, \"arms\": [\"default\"], \"cases\": [CASE]}", "protocol"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE]} trailing", "protocol"},
    {"[1, 2]", "protocol: must be an object"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"retries\": 2}", "retries: must be <= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": 0}",
     "rounds: 0; must be at least 1 (each round measures every case and arm once"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": -3}",
     "rounds: -3; must be at least 1"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": 65}",
     "rounds: 65; at most 64 are accepted"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": 1e15}",
     "rounds: 1000000000000000; at most 64 are accepted"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": 2.5}",
     "rounds: must be an integer"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"rounds\": \"3\"}",
     "rounds: must be an integer"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-ws\", \"kind\": \"wrong-schedule\", \"samples\": 2}]}",
     "fault_arms[0].samples: not a field of kind 'wrong-schedule'"},
    /* Bounds, each with its reason. */
    {"{\"seed\": 9007199254740993, \"arms\": [\"default\"], \"cases\": [CASE]}",
     "seed: must be below 2^53 in magnitude"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 1048576, "
     "\"cols\": 1048576, \"dtype\": \"fp32\", \"default_rows\": 4}]}",
     "cases[0]: rows x stride x element size must be <= 64 GiB"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"warmup_ms\": 100000, \"job_timeout_s\": "
     "60}",
     "job_timeout_s: 60 s is less than twice the warm-up and samples it must hold"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-o\", \"kind\": \"overrun\", \"factor\": 1}]}",
     "fault_arms[0].factor: must be >= 2"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-o\", \"kind\": \"exit\", \"code\": 3, \"factor\": 4}]}",
     "fault_arms[0].factor: not a field of kind 'exit'"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-t\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-t\", \"kind\": \"throttle\"}]}",
     "fault_arms[0].mhz: missing"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-t\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-t\", \"kind\": \"throttle\", \"mhz\": 0}]}",
     "fault_arms[0].mhz: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-c\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-c\", \"kind\": \"contended\"}]}",
     "fault_arms[0].processes: missing"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-c\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-c\", \"kind\": \"contended\", \"processes\": 0}]}",
     "fault_arms[0].processes: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-r\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-r\", \"kind\": \"throttled\", \"reasons\": 0}]}",
     "fault_arms[0].reasons: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-r\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-r\", \"kind\": \"throttled\", \"reasons\": 8, \"mhz\": 5}]}",
     "fault_arms[0].mhz: not a field of kind 'throttled'"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-l\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-l\", \"kind\": \"late\"}]}",
     "fault_arms[0].ms: missing"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-l\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-l\", \"kind\": \"late\", \"ms\": 0}]}",
     "fault_arms[0].ms: must be >= 1"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"fault-l\"], \"cases\": [CASE], \"allow_fault_arms\": true, "
     "\"fault_arms\": [{\"name\": \"fault-l\", \"kind\": \"throttled\", \"reasons\": 8, \"ms\": 5}]}",
     "fault_arms[0].ms: not a field of kind 'throttled'"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"model_schedules\": \"default\"}",
     "model_schedules: must be a non-empty array of schedule names"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"model_schedules\": []}",
     "model_schedules: must be a non-empty array of schedule names"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"model_schedules\": [\"default\", 2]}",
     "model_schedules[1]: must be a string"},
    {"{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [CASE], \"model_schedules\": [\"default\", "
     "\"rows8\"]}",
     "model_schedules[1]: unknown schedule 'rows8'"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"rows1\"], \"cases\": [CASE], \"model_schedules\": "
     "[\"rows1\"]}",
     "model_schedules: must list default"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"rows1\"], \"cases\": [CASE], \"model_schedules\": "
     "[\"default\", \"rows1\", \"rows1\"]}",
     "model_schedules[2]: duplicate schedule 'rows1'"},
    {"{\"seed\": 1, \"arms\": [\"default\", \"rows1\"], \"cases\": [CASE], \"model_schedules\": "
     "[\"default\", \"rows1\", \"short\"]}",
     "model_schedules[2]: 'short' is not one of arms"},
};

/* 100,000 cases: refused at once, with the limit and the reason, before
 * anything is allocated for them.  "At once" is the parse's own CPU time
 * (0.28 s idle on a 2-core VM), not the wall clock, which a busy host
 * stretches (10.5 s with 23 suites' processes on 2 CPUs). */
START_TEST(test_a_protocol_of_100000_cases_is_refused_at_once)
{
    ev_buf b = EV_BUF_INIT;
    ev_protocol p;
    ev_err err = {""};
    struct timespec t0, t1;

    ck_assert_int_eq(ev_buf_printf(&b, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": ["), EV_OK);
    for (int i = 0; i < 100000; i++)
        ck_assert_int_eq(ev_buf_printf(&b, "%s%s", i ? "," : "", good_case), EV_OK);
    ck_assert_int_eq(ev_buf_printf(&b, "]}"), EV_OK);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    ck_assert_int_eq(ev_protocol_parse(b.data, b.len, &p, &err), EV_EFORMAT);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    ck_assert_msg(strstr(err.msg, "cases: 100000 cases, at most 4096"), "%s", err.msg);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("check_protocol: 100000 cases (%zu bytes) refused in %.3f s of CPU\n", b.len, s);
    ck_assert_msg(s < 10, "took %.1f s of CPU", s);
    ev_buf_free(&b);
}
END_TEST

START_TEST(test_a_malformed_protocol_is_refused_with_the_field_named)
{
    char text[2048], *at;
    ev_protocol p;
    ev_err err = {""};
    const char *src = bad[_i].text;

    /* Expand CASE into a valid case object. */
    at = strstr(src, "CASE");
    if (at)
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - src), src, good_case, at + 4);
    else
        snprintf(text, sizeof text, "%s", src);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "protocol %d: got '%s', want '%s'", _i, err.msg,
                  bad[_i].want);
    ck_assert_ptr_null(p.cases);
}
END_TEST

/* "model_schedules" is a mask in enum order whatever the file's order;
 * absent, it is today's default, rows1, rows2. */
START_TEST(test_model_schedules_are_read_as_a_set_and_default_to_the_seeds_three)
{
    char text[1024];
    ev_protocol p;
    ev_err err = {""};

    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [%s]}", good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(p.model_schedules, EV_SCHEDS_DEFAULT);
    ev_protocol_free(&p);
    snprintf(text, sizeof text,
             "{\"seed\": 1, \"arms\": [\"short\", \"rows4\", \"default\"], \"cases\": [%s], "
             "\"model_schedules\": [\"short\", \"default\", \"rows4\"]}",
             good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(p.model_schedules, EV_SCHED_BIT(EV_SCHED_DEFAULT) | EV_SCHED_BIT(EV_SCHED_ROWS4) |
                                             EV_SCHED_BIT(EV_SCHED_SHORT));
    ev_protocol_free(&p);
}
END_TEST

/* The checkable-case rule (runner/validate.h): a case whose
 * validation passes an all-zero output is refused, naming the case and
 * what to declare; sum_depth makes it checkable; R = 0 is exempt; MAX
 * cases of the same shape pass. */
START_TEST(test_a_case_whose_validation_passes_an_all_zero_output_is_refused)
{
    static const char *const fmt =
        "{\"seed\": 7, \"arms\": [\"default\"], %s\"cases\": [{\"op\": \"%s\", \"rows\": %d, \"cols\": "
        "131072, \"dtype\": \"fp32\", \"default_rows\": 4}]}";
    char text[512];
    ev_protocol p;
    ev_err err = {""};

    /* 4 rows of 2^17 terms: gamma(N) sum|x| is about 512, a row's sum about 200 */
    snprintf(text, sizeof text, fmt, "", "reduce_sum", 4);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "cases[0] (reduce_sum 4x131072 fp32): an all-zero output passes its "
                                  "validation on every row"),
                  "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "declare tolerances.sum_depth"));
    ev_protocol_free(&p);

    snprintf(text, sizeof text, fmt, "\"tolerances\": {\"sum_depth\": 1024}, ", "reduce_sum", 4);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(p.sum_depth, 1024);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    snprintf(text, sizeof text, fmt, "", "reduce_sum", 0);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    snprintf(text, sizeof text, fmt, "", "reduce_max", 4);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    /* the mean's bound is the sum's over N: the same rows are blind
     * without a depth, and checkable with one */
    snprintf(text, sizeof text, fmt, "", "reduce_mean", 4);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "cases[0] (reduce_mean 4x131072 fp32): an all-zero output passes"), "%s",
                  err.msg);
    ev_protocol_free(&p);
    snprintf(text, sizeof text, fmt, "\"tolerances\": {\"sum_depth\": 1024}, ", "reduce_mean", 4);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    /* the three blind patterns: zeros and both output poisons */
    ck_assert_int_eq(ev_blind_byte(0), 0x00);
    ck_assert_int_eq(ev_blind_byte(1), EV_POISON_OUT_BYTE);
    ck_assert_int_eq(ev_blind_byte(2), EV_POISON_OUT_BYTE2);
}
END_TEST

/* The omission rule (runner/validate.h, ev_case_detection): a case whose
 * planted checks would let an output that omits 1/16 of each row pass a
 * hot sample with a chance above 0.001 is refused, naming the chance, the
 * rows planted and what to change; more ops per graph make it checkable;
 * the bound that holds for any input is refined with the case's own input
 * for a small reduce_sum case (1 x 4096 fp32: one planted row, where the
 * omitted sixteenth's own sum is far outside the bound); a bound too wide
 * to plant past is refused, and so is an op without a plant rule; the
 * resolution is the fewest omitted elements caught. */
START_TEST(test_a_case_whose_planted_checks_miss_an_omitted_sixteenth_is_refused)
{
    static const char *const fmt =
        "{\"seed\": 7, \"arms\": [\"default\"], %s\"cases\": [{\"op\": \"%s\", \"rows\": "
        "%d, \"cols\": %d, \"dtype\": \"fp32\", \"default_rows\": 1}]}";
    char text[512];
    ev_protocol p;
    ev_err err = {""};
    ev_detection d;

    /* one row of MAX: a plant among the omitted sixteenth is the only catch, (15/16)^100 = 0.00157 */
    snprintf(text, sizeof text, fmt, "", "reduce_max", 1, 4096);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_detection(&p, 0, &d, &err), EV_OK);
    ck_assert(d.miss_hot > 0.00157 && d.miss_hot < 0.00158 && !d.data);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_ALL, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg,
                         "cases[0] (reduce_max 1x4096 fp32): an output that omits 1/16 of each row's "
                         "elements passes a hot sample's planted checks with a chance up to 0.00157") &&
                      strstr(err.msg, "use more rows or more ops_per_graph"),
                  "%s", err.msg);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_BLIND, &err), EV_OK);
    ev_protocol_free(&p);
    snprintf(text, sizeof text, fmt, "\"ops_per_graph\": 200, ", "reduce_max", 1, 4096);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_ALL, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    /* 8 rows of MAX: 800 draws catch 9 omitted elements of 1024 (resolution), not 8 */
    snprintf(text, sizeof text, fmt, "", "reduce_max", 8, 1024);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_detection(&p, 0, &d, &err), EV_OK);
    ck_assert_int_eq(d.rows_planted, 8);
    ck_assert_int_eq(d.omit, 9);
    ck_assert(pow(1.0 - 9.0 / 1024, 800) <= EV_DETECT_MISS && pow(1.0 - 8.0 / 1024, 800) > EV_DETECT_MISS);
    ev_protocol_free(&p);

    /* one row of SUM: the bound for any input misses, its own input catches */
    snprintf(text, sizeof text, fmt, "", "reduce_sum", 1, 4096);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_detection(&p, 0, &d, &err), EV_OK);
    ck_assert(d.data && d.miss_hot < 1e-100);
    ck_assert_msg(ev_case_checkable(&p, 0, EV_CHECKABLE_ALL, &err) == EV_OK, "%s", err.msg);
    ev_protocol_free(&p);

    /* one row of SUM whose bound (about 128) holds its omitted sixteenth (about 37): refused */
    snprintf(text, sizeof text, fmt, "", "reduce_sum", 1, 65536);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_ALL, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "omits 1/16 of each row's elements") &&
                      strstr(err.msg, "judged with its own input"),
                  "%s", err.msg);
    ev_protocol_free(&p);

    /* an op without a plant rule (one the vocabulary gains first) has no detection: refused */
    snprintf(text, sizeof text, fmt, "", "reduce_max", 8, 1024);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    snprintf(p.cases[0].op, sizeof p.cases[0].op, "%s", "reduce_l2");
    ck_assert_int_eq(ev_case_detection(&p, 0, &d, &err), EV_EINVAL);
    ck_assert_msg(strstr(err.msg, "cases[0]: reduce_l2 has no plant rule"), "%s", err.msg);
    ev_protocol_free(&p);

    /* a bound too wide for a plant to move a row past twice it */
    snprintf(text, sizeof text, fmt, "\"tolerances\": {\"sum_bound_factor\": 1000}, ", "reduce_sum", 64,
             1024);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_case_checkable(&p, 0, EV_CHECKABLE_ALL, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "its bound is too wide for a plant to move a row's output by twice it"),
                  "%s", err.msg);
    ev_protocol_free(&p);
}
END_TEST

/* Every case of every protocol the repository ships is checkable. */
START_TEST(test_every_shipped_protocol_is_checkable)
{
    static const char *const pats[] = {"protocols/*.json", "examples/*/protocol.json", "tests/cheats/*.json"};
    size_t n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t g;
        if (glob(pats[k], 0, NULL, &g))
            continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            ev_protocol p;
            ev_err err = {""};
            parse_file(g.gl_pathv[i], &p);
            for (size_t c = 0; c < p.n_cases; c++)
                ck_assert_msg(ev_case_checkable(&p, c, EV_CHECKABLE_ALL, &err) == EV_OK, "%s: %s",
                              g.gl_pathv[i], err.msg);
            ev_protocol_free(&p);
            n++;
        }
        globfree(&g);
    }
    ck_assert_uint_ge(n, 10);
}
END_TEST

START_TEST(test_the_shipped_protocols_parse_and_plan)
{
    ev_protocol p;
    ev_plan plan;
    ev_err err = {""};
    size_t holdout = 0;

    parse_file("protocols/seed16.json", &p);
    ck_assert_uint_eq(p.n_cases, 16);
    ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
    /* 16 x (default rows1 rows2 cub torch) + 8 cases with B = 8 get rows4, + floor, ceiling, ceiling-l2 */
    ck_assert_uint_eq(plan.n_main, 16 * 5 + 8 + 3);
    ck_assert_uint_eq(plan.n_policy, 16);
    ck_assert_uint_eq(plan.n_recheck, 16);
    ev_plan_free(&plan);
    ev_protocol_free(&p);

    parse_file("protocols/hopper.json", &p);
    for (size_t i = 0; i < p.n_cases; i++) {
        holdout += !strcmp(p.cases[i].role, "holdout");
        if (i < 16)
            ck_assert_str_eq(p.cases[i].role, "calibration");
    }
    ck_assert_uint_ge(holdout, 12);
    ck_assert_int_eq(p.cases[16].rows, 8192);
    ck_assert_int_eq(p.cases[16].cols, 8192);
    ck_assert_uint_eq(p.model_schedules, EV_SCHEDS_ALL); /* the model chooses among all six */
    /* short only where a row holds at most 32 chunks: 256x128 bf16 (twice),
     * 131072x256 fp16, 2048x64 fp16, 1000x100 fp16; not 17x1024 fp16 */
    ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
    {
        size_t n_short = 0;
        for (size_t i = 0; i < plan.n_main; i++)
            if (!strcmp(plan.jobs[i].arm, "short")) {
                const ev_proto_case *c = &p.cases[plan.jobs[i].case_index];
                ck_assert_msg(c->cols * (!strcmp(c->dtype, "fp32") ? 4 : 2) <= 512, "case %lld",
                              (long long)plan.jobs[i].case_index);
                n_short++;
            }
        ck_assert_uint_eq(n_short, 5);
        ck_assert_int_lt(ev_plan_find(&plan, "main/0/short/initial"), 0);
    }
    /* split only where a row holds more than 64 KiB padded: 32x1048576 fp32
     * alone; not 8192x8192 fp32 or 33x16384 bf16 (32 KiB rows) */
    {
        size_t n_split = 0;
        for (size_t i = 0; i < plan.n_main; i++)
            if (!strcmp(plan.jobs[i].arm, "split")) {
                const ev_proto_case *c = &p.cases[plan.jobs[i].case_index];
                ck_assert_int_eq(c->rows, 32);
                ck_assert_int_eq(c->cols, 1048576);
                n_split++;
            }
        ck_assert_uint_eq(n_split, 1);
        ck_assert_int_lt(ev_plan_find(&plan, "main/16/split/initial"), 0);
    }
    ev_plan_free(&plan);
    /* the flagship, sized for the device budget (docs/runner.md): five
     * rounds, each process short, the rounds carrying the uncertainty */
    ck_assert_int_eq(p.rounds, 5);
    ck_assert(p.warmup_ms == 100);
    ck_assert(p.target_sample_ms == 20);
    ck_assert_int_eq(p.samples, 3);
    ev_protocol_free(&p);

    parse_file("protocols/quick.json", &p);
    ck_assert(p.warmup_ms <= 50);
    ev_protocol_free(&p);
}
END_TEST

START_TEST(test_the_plan_is_deterministic_and_every_key_is_unique)
{
    ev_protocol p;
    ev_plan a, b;
    ev_err err = {""};
    int moved = 0;

    parse_file("protocols/seed16.json", &p);
    ck_assert_int_eq(ev_plan_build(&p, &a, &err), EV_OK);
    ck_assert_int_eq(ev_plan_build(&p, &b, &err), EV_OK);
    ck_assert_uint_eq(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_str_eq(a.jobs[i].job_key, b.jobs[i].job_key);
        ck_assert_int_eq(a.jobs[i].plan_order, b.jobs[i].plan_order);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(a.jobs[i].job_key, a.jobs[j].job_key);
    }
    /* Interleaved: the main order is not case-major. */
    for (size_t i = 1; i < a.n_main; i++)
        if (a.jobs[i].case_index < a.jobs[i - 1].case_index)
            moved = 1;
    ck_assert(moved);
    ck_assert_str_eq(a.jobs[a.n_main].job_key, "policy/0/auto/initial");
    ck_assert_str_eq(a.jobs[a.n - 1].job_key, "recheck/15/default/recheck");
    ck_assert_int_ge(ev_plan_find(&a, "main/-/floor/initial"), 0);
    ck_assert_int_lt(ev_plan_find(&a, "main/0/rows4/initial"), 0); /* B = 4 */
    ck_assert_int_ge(ev_plan_find(&a, "main/2/rows4/initial"), 0); /* B = 8 */
    ev_plan_free(&a);
    ev_plan_free(&b);
    /* Another seed, another order. */
    p.seed++;
    ck_assert_int_eq(ev_plan_build(&p, &b, &err), EV_OK);
    p.seed--;
    ck_assert_int_eq(ev_plan_build(&p, &a, &err), EV_OK);
    moved = 0;
    for (size_t i = 0; i < a.n_main; i++)
        if (strcmp(a.jobs[i].job_key, b.jobs[i].job_key))
            moved = 1;
    ck_assert(moved);
    ev_plan_free(&a);
    ev_plan_free(&b);
    ev_protocol_free(&p);
}
END_TEST

START_TEST(test_a_wrong_schedule_fault_arm_parses_and_is_a_policy_job)
{
    char text[1024];
    ev_protocol p;
    ev_plan plan;
    ev_err err = {""};

    snprintf(text, sizeof text,
             "{\"seed\": 5, \"reference_arms\": false, \"arms\": [\"default\", \"fault-ws\"], "
             "\"allow_fault_arms\": true, \"fault_arms\": [{\"name\": \"fault-ws\", \"kind\": "
             "\"wrong-schedule\"}], "
             "\"cases\": [%s, %s]}",
             good_case, good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(p.faults[0].kind, EV_FAULT_WRONG_SCHEDULE);
    ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
    ck_assert_uint_eq(plan.n_main, 2);   /* default only */
    ck_assert_uint_eq(plan.n_policy, 4); /* auto, fault-ws per case */
    ck_assert_str_eq(plan.jobs[2].job_key, "policy/0/auto/initial");
    ck_assert_str_eq(plan.jobs[3].job_key, "policy/0/fault-ws/initial");
    ck_assert_str_eq(plan.jobs[5].job_key, "policy/1/fault-ws/initial");
    ck_assert_int_eq(plan.jobs[5].plan_order, 3);
    ev_plan_free(&plan);
    ev_protocol_free(&p);
}
END_TEST

START_TEST(test_rescue_retries_exactly_the_retryable_outcomes)
{
    char text[1024];
    ev_protocol p;
    ev_plan plan;
    ev_outcome *o;
    ev_plan_job *r = NULL;
    size_t n = 0;
    ev_err err = {""};
    const char *st, *rst;

    snprintf(
        text, sizeof text,
        "{\"seed\": 5, \"reference_arms\": false, \"arms\": [\"default\", \"rows1\", \"rows2\", \"cub\"], "
        "\"cases\": [%s, %s]}",
        good_case, good_case);
    ck_assert_int_eq(parse(text, &p, &err), EV_OK);
    ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
    ck_assert_uint_eq(plan.n_main, 8);
    o = calloc(plan.n, sizeof *o);
    for (size_t i = 0; i < plan.n; i++)
        o[i] = EV_OUT_COMPLETED;
    o[0] = EV_OUT_FAILED_EXIT;
    o[1] = EV_OUT_FAILED_VALIDATION;
    o[2] = EV_OUT_SKIPPED;
    o[3] = EV_OUT_FAILED_TIMEOUT;
    o[plan.n_main] = EV_OUT_FAILED_SIGNAL;                   /* a policy job */
    o[plan.n_main + plan.n_policy] = EV_OUT_FAILED_PROTOCOL; /* recheck: never retried */
    ck_assert_int_eq(ev_plan_rescue(&p, &plan, o, &r, &n, &err), EV_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(r[0].retry_of, 0);
    ck_assert_int_eq(r[1].retry_of, 3);
    ck_assert_int_eq(r[2].retry_of, (int64_t)plan.n_main);
    ck_assert_str_eq(r[2].label, "retry-1");
    ck_assert(r[2].phase == EV_PHASE_RESCUE);
    ck_assert(strncmp(r[2].job_key, "rescue/", 7) == 0);

    {
        ev_outcome ro[3] = {EV_OUT_COMPLETED, EV_OUT_COMPLETED, EV_OUT_COMPLETED};
        ev_plan_run_status(&plan, o, r, ro, n, &st, &rst);
        ck_assert_str_eq(st, "failed");
        ck_assert_str_eq(rst, "failed-after-rescue"); /* the validation failure is not mended */
        o[1] = EV_OUT_COMPLETED;
        ev_plan_run_status(&plan, o, r, ro, n, &st, &rst);
        ck_assert_str_eq(rst, "completed-after-rescue");
        ro[1] = EV_OUT_FAILED_EXIT;
        ev_plan_run_status(&plan, o, r, ro, n, &st, &rst);
        ck_assert_str_eq(rst, "failed-after-rescue");
    }
    for (size_t i = 0; i < plan.n_main + plan.n_policy; i++)
        o[i] = i == 2 ? EV_OUT_SKIPPED : EV_OUT_COMPLETED;
    ev_plan_run_status(&plan, o, NULL, NULL, 0, &st, &rst);
    ck_assert_str_eq(st, "completed");
    ck_assert_ptr_null(rst);
    free(r);
    p.retries = 0;
    o[0] = EV_OUT_FAILED_EXIT;
    ck_assert_int_eq(ev_plan_rescue(&p, &plan, o, &r, &n, &err), EV_OK);
    ck_assert_uint_eq(n, 0);
    free(o);
    ev_plan_free(&plan);
    ev_protocol_free(&p);
}
END_TEST

/* Rounds: main is round 1 (the fit's data), exactly the one-round plan's
 * main phase but for the labels; policy holds rounds 2..k, every job of
 * round r before any of round r + 1, each round one shuffled block of
 * every main arm and auto, the same jobs in another order; labels name
 * the round; rescue keys stay unique across rounds. */
START_TEST(test_rounds_are_planned_one_after_the_other_each_in_its_own_seeded_order)
{
    char text[1024];
    ev_protocol p1, p3;
    ev_plan a, c;
    ev_err err = {""};

    snprintf(text, sizeof text,
             "{\"seed\": 11, \"arms\": [\"default\", \"rows1\", \"cub\"], \"cases\": [%s, %s, %s]}",
             good_case, good_case, good_case);
    ck_assert_int_eq(parse(text, &p1, &err), EV_OK);
    ck_assert_int_eq(p1.rounds, 1);
    ck_assert_int_eq(ev_plan_build(&p1, &a, &err), EV_OK);
    snprintf(text, sizeof text,
             "{\"seed\": 11, \"rounds\": 3, \"arms\": [\"default\", \"rows1\", \"cub\"], \"cases\": [%s, "
             "%s, %s]}",
             good_case, good_case, good_case);
    ck_assert_int_eq(parse(text, &p3, &err), EV_OK);
    ck_assert_int_eq(p3.rounds, 3);
    ck_assert_int_eq(ev_plan_build(&p3, &c, &err), EV_OK);

    size_t per = a.n_main; /* 3 cases x 3 arms + floor + ceiling + ceiling-l2 */
    ck_assert_uint_eq(per, 12);
    ck_assert_uint_eq(c.n_main, per);             /* round 1 */
    ck_assert_uint_eq(c.n_policy, 2 * (per + 3)); /* rounds 2, 3: the main arms and 3 auto */
    ck_assert_uint_eq(c.n_recheck, a.n_recheck);  /* the recheck is once */
    for (size_t i = 0; i < per; i++) {
        ck_assert_str_eq(a.jobs[i].label, "initial");
        ck_assert_int_eq(a.jobs[i].round, 1);
        char want[128];
        const char *slash = strrchr(a.jobs[i].job_key, '/');
        snprintf(want, sizeof want, "%.*s/round-1", (int)(slash - a.jobs[i].job_key), a.jobs[i].job_key);
        ck_assert_str_eq(c.jobs[i].job_key, want);
    }
    int moved = 0, autos = 0;
    for (size_t r = 0; r < 2; r++)
        for (size_t i = 0; i < per + 3; i++) {
            const ev_plan_job *j = &c.jobs[per + r * (per + 3) + i];
            char lab[16];
            snprintf(lab, sizeof lab, "round-%zu", r + 2);
            ck_assert(j->phase == EV_PHASE_POLICY);
            ck_assert_int_eq(j->round, (int64_t)r + 2);
            ck_assert_str_eq(j->label, lab);
            ck_assert_int_eq(ev_plan_label_round(j->label), (int64_t)r + 2);
            ck_assert_int_eq(j->plan_order, (int64_t)(r * (per + 3) + i));
            if (!strcmp(j->arm, "auto")) {
                autos++;
                continue;
            }
            /* each main job once per round, in another order than round 1 */
            if (i >= per || c.jobs[i].case_index != j->case_index || strcmp(c.jobs[i].arm, j->arm))
                moved = 1;
            size_t hits = 0;
            for (size_t q = 0; q < per; q++)
                hits += c.jobs[q].case_index == j->case_index && !strcmp(c.jobs[q].arm, j->arm);
            ck_assert_uint_eq(hits, 1);
        }
    ck_assert(moved);
    ck_assert_int_eq(autos, 6);
    /* auto is interleaved: not all at the end of its round */
    int auto_first = 0;
    for (size_t i = 0; i < per + 3; i++)
        if (!strcmp(c.jobs[per + i].arm, "auto") && i < per)
            auto_first = 1;
    ck_assert(auto_first);
    ck_assert_int_ge(ev_plan_find(&c, "policy/0/auto/round-2"), 0);
    ck_assert_int_ge(ev_plan_find(&c, "policy/2/cub/round-3"), 0);
    ck_assert_int_lt(ev_plan_find(&c, "policy/0/auto/round-1"), 0);
    ck_assert_str_eq(c.jobs[c.n - 1].job_key, "recheck/2/default/recheck");
    ck_assert_int_eq(c.jobs[c.n - 1].round, 0);

    /* a failure in two rounds of one job: two rescue jobs, distinct keys */
    ev_outcome *o = calloc(c.n, sizeof *o);
    ev_plan_job *r = NULL;
    size_t n = 0;
    for (size_t i = 0; i < c.n; i++)
        o[i] = EV_OUT_COMPLETED;
    o[0] = EV_OUT_FAILED_EXIT;
    for (size_t i = per; i < per + per + 3; i++)
        if (c.jobs[i].case_index == c.jobs[0].case_index && !strcmp(c.jobs[i].arm, c.jobs[0].arm))
            o[i] = EV_OUT_FAILED_EXIT;
    ck_assert_int_eq(ev_plan_rescue(&p3, &c, o, &r, &n, &err), EV_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_ne(r[0].job_key, r[1].job_key);
    ck_assert_str_eq(r[0].label, "round-1-retry-1");
    ck_assert_str_eq(r[1].label, "round-2-retry-1");
    ck_assert_int_eq(r[1].round, 2);
    ck_assert_int_eq(ev_plan_label_round(r[1].label), 2);
    free(r);
    free(o);
    /* labels that name no round */
    ck_assert_int_eq(ev_plan_label_round("recheck"), 0);
    ck_assert_int_eq(ev_plan_label_round("round-0"), 0);
    ck_assert_int_eq(ev_plan_label_round("round-02"), 0);
    ck_assert_int_eq(ev_plan_label_round("round-3x"), 0);
    ck_assert_int_eq(ev_plan_label_round("round-"), 0);
    ck_assert_int_eq(ev_plan_label_round("retry-1"), 1);
    ev_plan_free(&a);
    ev_plan_free(&c);
    ev_protocol_free(&p1);
    ev_protocol_free(&p3);
}
END_TEST

/* The plan of the current store schema runs the reference arms first, in
 * a fixed order, ceiling-l2 among them (the physical plausibility rule
 * bounds every job by them: sample_rules.h), then the cases' jobs
 * shuffled; each later round's block starts with its own.  A plan made
 * for a store of schema 5 (a bundle's run.store_schema) is that schema's:
 * floor and ceiling shuffled in, no ceiling-l2.  No protocol lists
 * ceiling-l2 itself. */
START_TEST(test_the_reference_arms_run_first_and_an_older_schemas_plan_is_its_own)
{
    static const char *const refs[] = {"floor", "ceiling", "ceiling-l2"};
    char text[1024];
    ev_protocol p;
    ev_plan a, old;
    ev_err err = {""};

    parse_file("protocols/quick.json", &p);
    ck_assert_int_eq(p.plan_schema, EV_STORE_VERSION);
    ck_assert_int_eq(ev_plan_build(&p, &a, &err), EV_OK);
    for (size_t i = 0; i < a.n_main; i++) {
        ck_assert_int_eq(a.jobs[i].plan_order, (int64_t)i);
        if (i < 3) {
            char key[64];
            snprintf(key, sizeof key, "main/-/%s/initial", refs[i]);
            ck_assert_str_eq(a.jobs[i].job_key, key);
        } else {
            ck_assert_int_ge(a.jobs[i].case_index, 0);
        }
    }
    p.plan_schema = EV_PLAN_REFS_FIRST_SINCE - 1;
    ck_assert_int_eq(ev_plan_build(&p, &old, &err), EV_OK);
    ck_assert_uint_eq(old.n_main, a.n_main - 1);
    ck_assert_int_lt(ev_plan_find(&old, "main/-/ceiling-l2/initial"), 0);
    ck_assert_int_ge(ev_plan_find(&old, "main/-/floor/initial"), 0);
    ck_assert_int_ge(ev_plan_find(&old, "main/-/ceiling/initial"), 0);
    ck_assert(ev_plan_find(&old, "main/-/floor/initial") != 0 ||
              ev_plan_find(&old, "main/-/ceiling/initial") != 1);
    for (size_t i = 3; i < a.n_main; i++)
        ck_assert_int_ge(ev_plan_find(&old, a.jobs[i].job_key), 0);
    ev_plan_free(&a);
    ev_plan_free(&old);
    ev_protocol_free(&p);

    snprintf(text, sizeof text,
             "{\"seed\": 11, \"rounds\": 3, \"arms\": [\"default\", \"rows1\"], \"cases\": [%s, %s]}",
             good_case, good_case);
    ck_assert_int_eq(parse(text, &p, &err), EV_OK);
    ck_assert_int_eq(ev_plan_build(&p, &a, &err), EV_OK);
    size_t per = a.n_main, block = (a.n_policy) / 2;
    for (size_t r = 0; r < 3; r++)
        for (size_t i = 0; i < 3; i++) {
            const ev_plan_job *j = &a.jobs[r ? per + (r - 1) * block + i : i];
            ck_assert_str_eq(j->arm, refs[i]);
            ck_assert_int_eq(j->round, (int64_t)r + 1);
        }
    ev_plan_free(&a);
    ev_protocol_free(&p);

    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\", \"ceiling-l2\"], \"cases\": [%s]}",
             good_case);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "arms[1]: 'ceiling-l2' is planned by the runner, not listed"), "%s",
                  err.msg);
}
END_TEST

/* cases x rounds is bounded: every round of every case is a process per arm. */
START_TEST(test_cases_times_rounds_is_bounded_with_the_reason)
{
    ev_buf b = EV_BUF_INIT;
    ev_protocol p;
    ev_err err = {""};
    ck_assert_int_eq(ev_buf_puts(&b, "{\"seed\": 1, \"rounds\": 64, \"arms\": [\"default\"], \"cases\": ["),
                     EV_OK);
    for (int i = 0; i < 257; i++)
        ck_assert_int_eq(ev_buf_printf(&b, "%s%s", i ? ", " : "", good_case), EV_OK);
    ck_assert_int_eq(ev_buf_puts(&b, "]}"), EV_OK);
    ck_assert_int_eq(ev_protocol_parse(b.data, b.len, &p, &err), EV_EFORMAT);
    ck_assert_msg(
        strstr(err.msg, "rounds: 257 cases x 64 rounds is 16448 worker processes per arm, at most 16384"),
        "%s", err.msg);
    ev_buf_free(&b);
}
END_TEST

/* A quick loop's subset: the cases and arms chosen (from the default
 * profile's when the protocol names none), fault arms renumbered or
 * dropped, the original named by id; every bad spec refused with the
 * reason; the result parses as a protocol of its own, and a subset of a
 * subset is refused. */
START_TEST(test_a_subset_keeps_the_cases_and_arms_chosen_and_names_its_original)
{
    char text[2048];
    ev_buf out = EV_BUF_INIT;
    ev_protocol p;
    ev_err err = {""};
    snprintf(text, sizeof text,
             "{\"seed\": 3, \"arms\": [\"default\", \"rows1\", \"cub\", \"fault-x\", \"fault-y\"], "
             "\"allow_fault_arms\": true, \"fault_arms\": [{\"name\": \"fault-x\", \"kind\": \"exit\", "
             "\"code\": 3, "
             "\"cases\": [1, 3]}, {\"name\": \"fault-y\", \"kind\": \"exit\", \"code\": 4}], "
             "\"cases\": [%s, %s, %s, %s]}",
             good_case, good_case, good_case, good_case);
    ck_assert_msg(ev_protocol_subset(text, strlen(text), "1-3", "default,fault-x", NULL, &out, &err) == EV_OK,
                  "%s", err.msg);
    ck_assert_int_eq(ev_protocol_parse(out.data, out.len, &p, &err), EV_OK);
    ck_assert_uint_eq(p.n_cases, 3);
    ck_assert_uint_eq(p.n_arms, 2);
    ck_assert_uint_eq(p.n_faults, 1); /* fault-y dropped with its arm */
    ck_assert_uint_eq(p.faults[0].n_cases, 2);
    ck_assert_int_eq(p.faults[0].cases[0], 0); /* 1 and 3 renumbered */
    ck_assert_int_eq(p.faults[0].cases[1], 2);
    char id[65];
    ck_assert_int_eq(ev_protocol_id(text, strlen(text), id), EV_OK);
    ck_assert_ptr_nonnull(strstr(out.data, id));
    ck_assert_ptr_nonnull(strstr(out.data, "\"subset_cases\":\t[1, 2, 3]"));
    /* no model named: the subset plans no auto */
    ck_assert_int_eq(p.auto_arm, 0);
    ck_assert(!p.model_from.set);
    ev_protocol_free(&p);
    /* a kernel whose arm is not kept goes with it */
    {
        char kt[2048];
        ev_buf ko = EV_BUF_INIT;
        snprintf(
            kt, sizeof kt,
            "{\"seed\": 3, \"arms\": [\"default\", \"ext-k\"], \"kernels\": [{\"name\": \"ext-k\", "
            "\"sources\": {\"cpu\": \"k.c\"}, \"entries\": {\"reduce_sum/fp16\": \"f\"}}], \"cases\": [%s]}",
            good_case);
        ck_assert_msg(ev_protocol_subset(kt, strlen(kt), NULL, "default", NULL, &ko, &err) == EV_OK, "%s",
                      err.msg);
        ck_assert_msg(!strstr(ko.data, "kernels"), "%s", ko.data);
        ev_buf_reset(&ko);
        ck_assert_msg(ev_protocol_subset(kt, strlen(kt), NULL, "ext-k", NULL, &ko, &err) == EV_OK, "%s",
                      err.msg);
        ck_assert_msg(strstr(ko.data, "\"ext-k\""), "%s", ko.data);
        /* a protocol of cases and kernels alone: cut from the default profile's arms */
        snprintf(kt, sizeof kt,
                 "{\"kernels\": [{\"name\": \"ext-k\", \"sources\": {\"cpu\": \"k.c\"}, \"entries\": "
                 "{\"reduce_sum/fp16\": \"f\"}}], \"cases\": [%s]}",
                 good_case);
        ev_buf_reset(&ko);
        ck_assert_msg(ev_protocol_subset(kt, strlen(kt), NULL, "ext-k,rows1", NULL, &ko, &err) == EV_OK, "%s",
                      err.msg);
        ck_assert_int_eq(ev_protocol_parse(ko.data, ko.len, &p, &err), EV_OK);
        ck_assert_uint_eq(p.n_arms, 2);
        ck_assert_str_eq(p.arms[0], "rows1"); /* in the protocol's order */
        ck_assert_str_eq(p.arms[1], "ext-k");
        ev_protocol_free(&p);
        ev_buf_free(&ko);
    }
    /* the model's declared schedules keep only the kept arms; without
     * default the subset is refused with the reason */
    {
        char mt[2048];
        ev_buf mo = EV_BUF_INIT;
        ev_protocol q;
        snprintf(mt, sizeof mt,
                 "{\"seed\": 3, \"arms\": [\"default\", \"rows1\", \"short\"], \"model_schedules\": "
                 "[\"default\", \"rows1\", \"short\"], \"cases\": [%s]}",
                 good_case);
        ck_assert_msg(ev_protocol_subset(mt, strlen(mt), NULL, "default,rows1", NULL, &mo, &err) == EV_OK,
                      "%s", err.msg);
        ck_assert_msg(ev_protocol_parse(mo.data, mo.len, &q, &err) == EV_OK, "%s", err.msg);
        ck_assert_uint_eq(q.model_schedules, EV_SCHED_BIT(EV_SCHED_DEFAULT) | EV_SCHED_BIT(EV_SCHED_ROWS1));
        ev_protocol_free(&q);
        ev_buf_reset(&mo);
        ck_assert_int_eq(ev_protocol_subset(mt, strlen(mt), NULL, "rows1", NULL, &mo, &err), EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, "model_schedules"), "%s", err.msg);
        ev_buf_free(&mo);
    }
    /* a model named: auto uses its coefficients, to the bit */
    {
        ev_proto_model m = {1, SHA0, 0.1, -2.5000000000000001e-07, 1.0 / 3};
        ev_buf mo = EV_BUF_INIT;
        ck_assert_msg(ev_protocol_subset(text, strlen(text), "1-3", "default,rows1", &m, &mo, &err) == EV_OK,
                      "%s", err.msg);
        ck_assert_msg(ev_protocol_parse(mo.data, mo.len, &p, &err) == EV_OK, "%s", err.msg);
        ck_assert(p.auto_arm && p.model_from.set);
        ck_assert(p.model_from.a0 == m.a0 && p.model_from.aP == m.aP && p.model_from.aD == m.aD);
        ck_assert_str_eq(p.model_from.bundle_sha256, SHA0);
        ev_protocol_free(&p);
        ev_buf_free(&mo);
    }
    /* a subset of a subset */
    ev_buf again = EV_BUF_INIT;
    ck_assert_int_eq(ev_protocol_subset(out.data, out.len, "0", NULL, NULL, &again, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "already a subset"), "%s", err.msg);
    ev_buf_free(&again);
    ev_buf_reset(&out);
    /* bad specs */
    static const struct {
        const char *cases, *arms, *want;
    } specs[] = {
        {"", NULL, "--cases: empty"},
        {"1,", NULL, "a trailing comma"},
        {"x", NULL, "is not an index or a range"},
        {"2-", NULL, "is not a range"},
        {"3-1", NULL, "runs backwards"},
        {"4", NULL, "case 4 is not in the protocol (it has 4 cases: 0-3)"},
        {"1,0-2", NULL, "case 1 is named twice"},
        {"0", NULL, "fault arm fault-x runs on none of the cases kept"},
        {NULL, "rows1,nope", "'nope' is not one of the protocol's arms"},
        {NULL, "rows1,rows1", "'rows1' is named twice"},
        {NULL, "", "--arms: empty"},
        {NULL, "rows1,", "a trailing comma"},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ck_assert_int_eq(
            ev_protocol_subset(text, strlen(text), specs[i].cases, specs[i].arms, NULL, &out, &err),
            EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, specs[i].want), "%zu: %s", i, err.msg);
    }
    ev_buf_free(&out);
    /* the parser holds subset fields to their rule */
    static const char *const fields[][2] = {
        {"\"subset_of\": \"ab\", \"subset_cases\": [0]", "subset_of: must be a protocol id"},
        {"\"subset_cases\": [0]", "subset_of and subset_cases: both or neither"},
        {"\"subset_of\": \"0000000000000000000000000000000000000000000000000000000000000000\", "
         "\"subset_cases\": []",
         "subset_cases: must list one original index per case"},
        /* auto's coefficients from an earlier run's bundle */
        {"\"model_from\": {\"bundle_sha256\": \"ab\", \"a0\": 1, \"aP\": 1, \"aD\": 1}",
         "model_from.bundle_sha256: must be the SHA-256 of the bundle"},
        {"\"model_from\": {\"bundle_sha256\": \"" SHA0 "\", \"a0\": 1, \"aP\": 1}",
         "model_from: needs the coefficients a0, aP and aD"},
        {"\"model_from\": {\"bundle_sha256\": \"" SHA0 "\", \"a0\": 1, \"aP\": 1, \"aD\": \"1\"}",
         "model_from.aD: must be a number"},
        {"\"model_from\": {\"bundle_sha256\": \"" SHA0 "\", \"a0\": 1, \"aP\": 1, \"aD\": 1, \"b\": 2}",
         "model_from"},
        {"\"model_from\": [1]", "model_from: must be an object"},
        {"\"auto_arm\": false, \"model_from\": {\"bundle_sha256\": \"" SHA0 "\", \"a0\": 1, \"aP\": 1, "
         "\"aD\": 1}",
         "model_from: is for the auto arm, and auto_arm is false"},
        {"\"auto_arm\": 0", "auto_arm"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [%s], %s}", good_case,
                 fields[i][0]);
        ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, fields[i][1]), "%zu: %s", i, err.msg);
    }
}
END_TEST

/* auto_arm false plans no auto in any round, and refuses the fault arm
 * that runs beside auto; model_from is read to the bit. */
START_TEST(test_auto_arm_false_plans_no_auto_and_model_from_is_read_exactly)
{
    char text[1400];
    ev_protocol p;
    ev_plan plan;
    ev_err err = {""};

    for (int rounds = 1; rounds <= 3; rounds += 2) {
        snprintf(text, sizeof text,
                 "{\"seed\": 5, \"rounds\": %d, \"auto_arm\": false, \"arms\": [\"default\", "
                 "\"rows1\"], \"cases\": [%s, %s]}",
                 rounds, good_case, good_case);
        ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
        ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
        for (size_t i = 0; i < plan.n; i++)
            ck_assert_msg(strcmp(plan.jobs[i].arm, "auto"), "%s planned", plan.jobs[i].job_key);
        ck_assert_uint_eq(plan.n_policy, rounds == 1 ? 0 : 2 * (2 * 2 + 3)); /* + the three reference arms */
        ev_plan_free(&plan);
        ev_protocol_free(&p);
    }
    snprintf(text, sizeof text,
             "{\"seed\": 5, \"auto_arm\": false, \"arms\": [\"default\", \"fault-ws\"], "
             "\"allow_fault_arms\": true, \"fault_arms\": [{\"name\": \"fault-ws\", \"kind\": "
             "\"wrong-schedule\"}], "
             "\"cases\": [%s]}",
             good_case);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "fault-ws runs beside auto in the policy phase, and auto_arm is false"),
                  "%s", err.msg);
    snprintf(text, sizeof text,
             "{\"seed\": 5, \"arms\": [\"default\"], \"cases\": [%s], \"model_from\": "
             "{\"bundle_sha256\": \"" SHA0 "\", \"a0\": 0.10000000000000001, \"aP\": -2.5e-7, \"aD\": 3}}",
             good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert(p.model_from.set && p.auto_arm);
    ck_assert(p.model_from.a0 == 0.1 && p.model_from.aP == -2.5e-7 && p.model_from.aD == 3);
    ck_assert_str_eq(p.model_from.bundle_sha256, SHA0);
    ev_protocol_free(&p);
}
END_TEST

/* External kernel declarations: the good one parses to its fields; every
 * malformed one is refused with the field and the rule. */
START_TEST(test_kernel_declarations_are_parsed_and_each_bad_one_refused)
{
    char text[2048];
    ev_protocol p;
    ev_err err = {""};
    static const char good[] =
        "{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"k/a.c\", \"cuda\": \"a.cu\"}, "
        "\"entries\": {\"reduce_sum/fp32\": \"a_sum\", \"reduce_max/bf16\": \"a_max\"}, "
        "\"geometry\": {\"grid\": \"cdiv(rows, 4)\", \"block\": \"128\"}}";
    snprintf(text, sizeof text,
             "{\"seed\": 1, \"arms\": [\"default\", \"ext-a\"], \"cases\": [%s], \"kernels\": [%s]}",
             good_case, good);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_uint_eq(p.n_kernels, 1);
    const ev_ext_kernel *k = ev_protocol_kernel(&p, "ext-a");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(ev_ext_source(k, "cpu"), "k/a.c");
    ck_assert_str_eq(ev_ext_entry_for(k, "reduce_max", "bf16"), "a_max");
    ck_assert_ptr_null(ev_ext_entry_for(k, "reduce_max", "fp32"));
    ev_arm_kind kind;
    int64_t rows;
    ck_assert_int_eq(ev_arm_classify(&p, "ext-a", &kind, &rows), 0);
    ck_assert(kind == EV_ARM_EXTERNAL);
    /* a kernel's file is named by its arm and its path in the protocol's
     * directory, wherever that directory lies; on disk, under it */
    ev_strs cl = EV_STRS_INIT, disk = EV_STRS_INIT;
    ck_assert_int_eq(ev_ext_closure(p.kernels, p.n_kernels, "cpu", "/home/u/proj", &cl, &disk), EV_OK);
    ck_assert_uint_eq(cl.n, 1);
    ck_assert_str_eq(cl.v[0], "external/ext-a/k/a.c");
    ck_assert_str_eq(disk.v[0], "/home/u/proj/k/a.c");
    ev_strs_free(&cl);
    ev_strs_free(&disk);
    ev_protocol_free(&p);

    /* a list: the translation unit first, then the files it includes; the
     * closure names each of them, per kernel (a file two kernels include is
     * two members, one under each) */
    snprintf(text, sizeof text,
             "{\"seed\": 1, \"arms\": [\"ext-a\", \"ext-b\"], \"cases\": [%s], \"kernels\": ["
             "{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.c\", \"h/a.h\", \"shared.h\"]}, "
             "\"entries\": {\"reduce_sum/fp32\": \"f\"}}, "
             "{\"name\": \"ext-b\", \"sources\": {\"cpu\": [\"b.c\", \"shared.h\"]}, "
             "\"entries\": {\"reduce_sum/fp32\": \"f\"}}]}",
             good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    k = ev_protocol_kernel(&p, "ext-a");
    ck_assert_str_eq(ev_ext_source(k, "cpu"), "a.c");
    ck_assert_str_eq(ev_ext_file(k, "cpu", 1), "h/a.h");
    ck_assert_ptr_null(ev_ext_file(k, "cpu", 3));
    ck_assert_ptr_null(ev_ext_source(k, "cuda"));
    ck_assert(ev_ext_declares(k, "cpu", "external/ext-a/h/a.h") && !ev_ext_declares(k, "cpu", "h/a.h") &&
              !ev_ext_declares(k, "cpu", "external/ext-b/b.c"));
    ck_assert_int_eq(ev_ext_closure(p.kernels, p.n_kernels, "cpu", NULL, &cl, NULL), EV_OK);
    ck_assert_uint_eq(cl.n, 5);
    ck_assert_str_eq(cl.v[2], "external/ext-a/shared.h");
    ck_assert_str_eq(cl.v[3], "external/ext-b/b.c");
    ck_assert_str_eq(cl.v[4], "external/ext-b/shared.h");
    ev_strs_free(&cl);
    {
        char d[64], rec[64];
        ck_assert_int_eq(ev_ext_protocol_dir("p.json", d, sizeof d), 0);
        ck_assert_str_eq(d, ".");
        ck_assert_int_eq(ev_ext_protocol_dir("../x/p.json", d, sizeof d), 0);
        ck_assert_str_eq(d, "../x");
        ck_assert_int_eq(ev_ext_protocol_dir("/p.json", d, sizeof d), 0);
        ck_assert_str_eq(d, "/");
        /* what a run records: no directory of the user's */
        ev_ext_protocol_recorded("/home/u/proj/p.json", rec, sizeof rec);
        ck_assert_str_eq(rec, "<path>/p.json");
        ev_ext_protocol_recorded("../x/p.json", rec, sizeof rec);
        ck_assert_str_eq(rec, "../x/p.json");
    }
    ev_protocol_free(&p);

    static const char *const bads[][2] = {
        {"{\"name\": \"a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "must start with 'ext-'"},
        {"{\"name\": \"ext-a\", \"sources\": {}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "sources: must name a cpu and/or a cuda source"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"../a.c\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}}",
         "must be a relative path inside the protocol's directory"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"/abs/a.c\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}}",
         "must be a relative path inside the protocol's directory"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.cu\"}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "sources.cpu: must be a .c file"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.h\", \"a.c\"]}, \"entries\": "
         "{\"reduce_sum/fp32\": "
         "\"f\"}}",
         "sources.cpu: must be a .c file"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.c\", \"../x.h\"]}, \"entries\": "
         "{\"reduce_sum/fp32\": \"f\"}}",
         "'../x.h' must be a relative path inside the protocol's directory"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.c\", \"a.h\", \"a.h\"]}, \"entries\": "
         "{\"reduce_sum/fp32\": \"f\"}}",
         "sources.cpu: 'a.h' twice"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": []}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "must be a file name, or a list of file names"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.c\", 3]}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}}",
         "'(not a string)' must be a relative path"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": [\"a.c\", \"1.h\", \"2.h\", \"3.h\", \"4.h\", "
         "\"5.h\", \"6.h\", \"7.h\", \"8.h\"]}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "sources.cpu: at most 8 files"},
        {"{\"name\": \"ext-a\", \"sources\": {\"rocm\": \"a.c\"}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "unknown field 'rocm'"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {\"reduce_prod/fp32\": \"f\"}}",
         "is not op/dtype"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {\"reduce_sum/fp64\": \"f\"}}",
         "is not op/dtype"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {\"reduce_sum/fp32\": \"1f\"}}",
         "must be a C identifier"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {}}", "entries: must map each"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cuda\": \"a.cu\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}}",
         "a cuda source needs {\"grid\": EXPR, \"block\": EXPR}"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cuda\": \"a.cu\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}, "
         "\"geometry\": {\"grid\": \"rows +\", \"block\": \"128\"}}",
         "geometry.grid: 'rows +' is malformed"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cuda\": \"a.cu\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}, "
         "\"geometry\": {\"grid\": \"rows\"}}",
         "geometry: needs both grid and block"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": {\"reduce_sum/fp32\": \"f\"}, "
         "\"x\": 1}",
         "unknown field 'x'"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        snprintf(text, sizeof text,
                 "{\"seed\": 1, \"arms\": [\"default\", \"ext-a\"], \"cases\": [%s], \"kernels\": [%s]}",
                 good_case, bads[i][0]);
        ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, bads[i][1]), "%zu: %s", i, err.msg);
    }
    /* declared and not an arm; an arm not declared; declared twice */
    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [%s], \"kernels\": [%s]}",
             good_case, good);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "ext-a is declared but not one of arms"), "%s", err.msg);
    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"ext-b\"], \"cases\": [%s], \"kernels\": [%s]}",
             good_case, good);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "unknown arm 'ext-b'"), "%s", err.msg);
    snprintf(text, sizeof text,
             "{\"seed\": 1, \"arms\": [\"ext-a\"], \"cases\": [%s], \"kernels\": [%s, %s]}", good_case, good,
             good);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "'ext-a' twice"), "%s", err.msg);
}
END_TEST

/* A Python arm's declaration: its module (for both backends, or per
 * backend, a list: the module first, then the files it imports), its
 * functions as entries, its memory allowance; each refusal names the
 * field; the run's interpreter comes from --python, else the protocol's
 * "python" (a relative path from the protocol's directory), else python3. */
START_TEST(test_python_arm_declarations_are_parsed_and_each_bad_one_refused)
{
    char text[2048], py[300];
    ev_protocol p;
    ev_err err = {""};
    snprintf(
        text, sizeof text,
        "{\"seed\": 1, \"arms\": [\"ext-a\", \"ext-b\"], \"cases\": [%s], \"python\": \"venv/bin/python\", "
        "\"kernels\": [{\"name\": \"ext-a\", \"python\": \"k/a.py\", \"entries\": {\"reduce_sum/fp32\": "
        "\"a_sum\"}}, {\"name\": \"ext-b\", \"python\": {\"cuda\": [\"b.py\", \"util.py\"]}, \"entries\": "
        "{\"reduce_sum/fp32\": \"b_sum\"}, \"memory_mb\": 512}]}",
        good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    const ev_ext_kernel *a = ev_protocol_kernel(&p, "ext-a"), *b = ev_protocol_kernel(&p, "ext-b");
    ck_assert(a && a->python && b && b->python);
    ck_assert_str_eq(ev_ext_source(a, "cpu"), "k/a.py");
    ck_assert_str_eq(ev_ext_source(a, "cuda"), "k/a.py");
    ck_assert_ptr_null(ev_ext_source(b, "cpu"));
    ck_assert_str_eq(ev_ext_file(b, "cuda", 1), "util.py");
    ck_assert_int_eq(a->memory_mb, EV_EXT_PY_MEMORY_MB);
    ck_assert_int_eq(b->memory_mb, 512);
    ck_assert_str_eq(ev_ext_entry_for(a, "reduce_sum", "fp32"), "a_sum");
    ck_assert_int_eq(ev_protocol_python(&p, NULL, "examples/x/p.json", py, sizeof py), 0);
    ck_assert_str_eq(py, "examples/x/venv/bin/python");
    ck_assert_int_eq(ev_protocol_python(&p, "/opt/py/bin/python3", "examples/x/p.json", py, sizeof py), 0);
    ck_assert_str_eq(py, "/opt/py/bin/python3");
    ev_protocol_free(&p);
    ck_assert_int_eq(ev_protocol_python(NULL, NULL, "p.json", py, sizeof py), 0);
    ck_assert_str_eq(py, "python3");

    static const char *const bads[][2] = {
        {"{\"name\": \"ext-a\", \"python\": \"a.py\", \"sources\": {\"cpu\": \"a.c\"}, \"entries\": "
         "{\"reduce_sum/fp32\": \"f\"}}",
         "declares both sources (a C or CUDA C kernel) and python"},
        {"{\"name\": \"ext-a\", \"python\": \"a.c\", \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "python.cpu: must be a .py file"},
        {"{\"name\": \"ext-a\", \"python\": \"../a.py\", \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "must be a relative path inside the protocol's directory"},
        {"{\"name\": \"ext-a\", \"python\": {}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "python: must name a module for cpu and/or cuda"},
        {"{\"name\": \"ext-a\", \"python\": {\"rocm\": \"a.py\"}, \"entries\": {\"reduce_sum/fp32\": \"f\"}}",
         "unknown field 'rocm'"},
        {"{\"name\": \"ext-a\", \"python\": \"a.py\", \"entries\": {\"reduce_sum/fp32\": \"a-sum\"}}",
         "must be a Python identifier"},
        {"{\"name\": \"ext-a\", \"python\": \"a.py\", \"entries\": {\"reduce_sum/fp32\": \"f\"}, "
         "\"geometry\": "
         "{\"grid\": \"1\", \"block\": \"1\"}}",
         "a Python arm launches its own work"},
        {"{\"name\": \"ext-a\", \"sources\": {\"cuda\": \"a.cu\"}, \"entries\": {\"reduce_sum/fp32\": "
         "\"f\"}, "
         "\"geometry\": {\"grid\": \"rows\", \"block\": \"32\"}, \"memory_mb\": 64}",
         "memory_mb: only a kernel with a process of its own"},
        {"{\"name\": \"ext-a\", \"python\": \"a.py\", \"entries\": {\"reduce_sum/fp32\": \"f\"}, "
         "\"memory_mb\": "
         "8}",
         "memory_mb: must be an integer from 16"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        snprintf(text, sizeof text,
                 "{\"seed\": 1, \"arms\": [\"ext-a\"], \"cases\": [%s], \"kernels\": [%s]}", good_case,
                 bads[i][0]);
        ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, bads[i][1]), "%zu: %s", i, err.msg);
    }
    snprintf(text, sizeof text, "{\"seed\": 1, \"arms\": [\"default\"], \"cases\": [%s], \"python\": \"\"}",
             good_case);
    ck_assert_int_eq(parse(text, &p, &err), EV_EFORMAT);
    ck_assert_msg(strstr(err.msg, "python: must be an interpreter's name or path"), "%s", err.msg);
}
END_TEST

/* Geometry expressions: the grammar, integer arithmetic, cdiv, and each
 * refusal (malformed, zero, negative, overflow, division by zero). */
START_TEST(test_geometry_expressions_evaluate_exactly_and_refuse_what_cannot_launch)
{
    static const struct {
        const char *e;
        int64_t want; /* 0: refused */
        const char *why;
    } t[] = {
        {"128", 128, NULL},
        {"cdiv(rows, 4)", 9, NULL},
        {"cdiv(rows * cols, 256) + 1", 34, NULL},
        {"(cols - 1) / 32 % 5", 2, NULL},
        {"stride*2", 2080, NULL},
        {"rows - 33", 0, "must be >= 1"},
        {"rows - 40", 0, "must be >= 1"},
        {"cols / (rows - 33)", 0, "divides by zero"},
        {"cdiv(rows, 0)", 0, "divides by zero"},
        {"9223372036854775807 + 1", 0, "overflows"},
        {"rows +", 0, "malformed"},
        {"rows cols", 0, "malformed (text after"},
        {"(rows", 0, "without its ')'"},
        {"cdiv(rows)", 0, "cdiv needs (a, b)"},
        {"threads", 0, "malformed"},
        {"", 0, "malformed"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int64_t v = -1;
        ev_err err = {""};
        ev_status rc = ev_ext_eval(t[i].e, 33, 256, 1040, &v, &err);
        if (t[i].want) {
            ck_assert_msg(rc == EV_OK, "%s: %s", t[i].e, err.msg);
            ck_assert_int_eq(v, t[i].want);
        } else {
            ck_assert_int_eq(rc, EV_EFORMAT);
            ck_assert_msg(strstr(err.msg, t[i].why), "%s: %s", t[i].e, err.msg);
        }
    }
}
END_TEST

/* A cuda geometry that cannot launch on one of the protocol's cases (zero
 * blocks, or more threads per block than any device has) is refused when
 * the protocol is read, before anything runs, naming the kernel, the case,
 * the expression and the shape; a case the kernel has no entry for, and an
 * R = 0 case (nothing is launched), are not held to it. */
START_TEST(test_a_geometry_that_cannot_launch_on_a_case_is_refused_before_anything_runs)
{
    static const char *const cases =
        "{\"op\": \"reduce_sum\", \"rows\": 64, \"cols\": 128, \"dtype\": \"fp32\", \"default_rows\": 4}, "
        "{\"op\": \"reduce_sum\", \"rows\": 3, \"cols\": 128, \"dtype\": \"fp32\", \"default_rows\": 4}, "
        "{\"op\": \"reduce_max\", \"rows\": 1, \"cols\": 128, \"dtype\": \"fp32\", \"default_rows\": 4}, "
        "{\"op\": \"reduce_sum\", \"rows\": 0, \"cols\": 128, \"dtype\": \"fp32\", \"default_rows\": 4}";
    static const char *const t[][3] = {
        {"rows / 4", "32",
         "kernels[0] on cases[1]: ext-a: geometry grid 'rows / 4' for 3x128 (stride 128): "},
        {"rows", "cols * 16",
         "ext-a: geometry block 'cols * 16' for 64x128 (stride 128) is 2048, over the limit of 1024"},
        {"rows", "cols - 128", "kernels[0] on cases[0]: ext-a: geometry block 'cols - 128'"},
        {"cdiv(rows, 2)", "cols", NULL},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char text[2048];
        ev_protocol p;
        ev_err err = {""};
        snprintf(text, sizeof text,
                 "{\"seed\": 1, \"arms\": [\"default\", \"ext-a\"], \"cases\": [%s], \"kernels\": "
                 "[{\"name\": \"ext-a\", \"sources\": {\"cuda\": \"a.cu\"}, \"entries\": "
                 "{\"reduce_sum/fp32\": \"a_sum\"}, \"geometry\": {\"grid\": \"%s\", \"block\": \"%s\"}}]}",
                 cases, t[i][0], t[i][1]);
        ev_status rc = parse(text, &p, &err);
        if (!t[i][2]) {
            ck_assert_msg(rc == EV_OK, "%zu: %s", i, err.msg);
            ev_protocol_free(&p);
            continue;
        }
        ck_assert_int_eq(rc, EV_EFORMAT);
        ck_assert_msg(strstr(err.msg, t[i][2]), "%zu: %s", i, err.msg);
    }
}
END_TEST

START_TEST(test_a_fault_arm_runs_only_on_its_cases)
{
    char text[1024];
    ev_protocol p;
    ev_plan plan;
    ev_err err = {""};
    ev_arm_kind k;
    int64_t rows;

    snprintf(
        text, sizeof text,
        "{\"seed\": 5, \"reference_arms\": false, \"arms\": [\"default\", \"fault-x\"], "
        "\"allow_fault_arms\": "
        "true, \"fault_arms\": [{\"name\": \"fault-x\", \"kind\": \"exit\", \"code\": 3, \"cases\": [1]}], "
        "\"cases\": [%s, %s]}",
        good_case, good_case);
    ck_assert_msg(parse(text, &p, &err) == EV_OK, "%s", err.msg);
    ck_assert_int_eq(ev_plan_build(&p, &plan, &err), EV_OK);
    ck_assert_uint_eq(plan.n_main, 3);
    ck_assert_int_ge(ev_plan_find(&plan, "main/1/fault-x/initial"), 0);
    ck_assert_int_lt(ev_plan_find(&plan, "main/0/fault-x/initial"), 0);
    ck_assert_int_eq(ev_arm_classify(&p, "fault-x", &k, &rows), 0);
    ck_assert(k == EV_ARM_FAULT);
    ck_assert_int_eq(ev_arm_classify(&p, "rows2", &k, &rows), 0);
    ck_assert_int_eq(rows, 2);
    ck_assert_int_eq(ev_arm_classify(NULL, "fault-x", &k, &rows), -1);
    ev_plan_free(&plan);
    ev_protocol_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("protocol");
    TCase *tc = tcase_create("core");
    int failed;

    tcase_add_test(tc, test_a_minimal_protocol_gets_the_design_defaults);
    tcase_add_test(tc, test_a_protocol_of_100000_cases_is_refused_at_once);
    tcase_add_test(tc, test_model_schedules_are_read_as_a_set_and_default_to_the_seeds_three);
    tcase_add_loop_test(tc, test_a_malformed_protocol_is_refused_with_the_field_named, 0,
                        (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_the_shipped_protocols_parse_and_plan);
    tcase_add_test(tc, test_the_plan_is_deterministic_and_every_key_is_unique);
    tcase_add_test(tc, test_the_reference_arms_run_first_and_an_older_schemas_plan_is_its_own);
    tcase_add_test(tc, test_rescue_retries_exactly_the_retryable_outcomes);
    tcase_add_test(tc, test_a_fault_arm_runs_only_on_its_cases);
    tcase_add_test(tc, test_kernel_declarations_are_parsed_and_each_bad_one_refused);
    tcase_add_test(tc, test_python_arm_declarations_are_parsed_and_each_bad_one_refused);
    tcase_add_test(tc, test_a_protocol_of_cases_and_kernels_alone_takes_the_default_profile);
    tcase_add_test(tc, test_geometry_expressions_evaluate_exactly_and_refuse_what_cannot_launch);
    tcase_add_test(tc, test_a_geometry_that_cannot_launch_on_a_case_is_refused_before_anything_runs);
    tcase_add_test(tc, test_auto_arm_false_plans_no_auto_and_model_from_is_read_exactly);
    tcase_add_test(tc, test_rounds_are_planned_one_after_the_other_each_in_its_own_seeded_order);
    tcase_add_test(tc, test_cases_times_rounds_is_bounded_with_the_reason);
    tcase_add_test(tc, test_a_subset_keeps_the_cases_and_arms_chosen_and_names_its_original);
    tcase_add_test(tc, test_a_wrong_schedule_fault_arm_parses_and_is_a_policy_job);
    tcase_add_test(tc, test_a_case_whose_validation_passes_an_all_zero_output_is_refused);
    tcase_add_test(tc, test_every_shipped_protocol_is_checkable);
    tcase_add_test(tc, test_a_case_whose_planted_checks_miss_an_omitted_sixteenth_is_refused);
    suite_add_tcase(s, tc);
    failed = ev_check_suite(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
