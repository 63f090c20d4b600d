/*
 * cmd_fit.c: 'evident fit'.  Fits the cost model (src/model/) from a CSV
 * table of medians (--observations, with --sms) or from a run in the store
 * (--db; the store is written only with --record), writes model.json to
 * --out or stdout (nothing else goes to stdout), and says on stderr what
 * it found.  Exit 0 fitted, 1 the fit failed (bad
 * table, too few geometries, store error), 2 usage or an unreadable path;
 * nothing is written when it fails (--out is replaced atomically).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "model/model.h"
#include "runner/model_store.h"
#include "store/store.h"

static const char fit_usage[] =
    "usage: evident fit (--db FILE [--run ID] [--record] |\n"
    "                    --observations FILE.csv --sms N [--schedules LIST])\n"
    "                   [--threshold 0.05] [--out FILE]\n"
    "\n"
    "Fits q = a0 + aP*P + aD*ceil(P/S)*b*W by NNLS (all eight active subsets),\n"
    "validates it leave-one-geometry-out and decides a schedule per case.\n"
    "\n"
    "  --observations FILE  CSV: op,rows,cols,dtype,default_rows,schedule,median_us[,role]\n"
    "  --sms N              S: SM count (cuda) or worker threads (cpu); with --observations\n"
    "  --observations -     reads the CSV from stdin\n"
    "  --schedules LIST     with --observations: the schedules the model fits and chooses\n"
    "                       from, comma-separated, default among them (a run's protocol\n"
    "                       declares them as model_schedules; default: default,rows1,rows2)\n"
    "  --db FILE            the store: main-phase hot medians of the run (opened read-only)\n"
    "  --record             with --db: also record the fit in the store (a new fits row)\n"
    "  --run ID             the run in the store (default: the newest)\n"
    "  --threshold T        a candidate must be predicted more than T lower (default 0.05)\n"
    "  --out FILE           write model.json there (default, or '-': stdout)\n"
    "\n"
    "model.json is the only thing on stdout; what the fit found goes to stderr.\n"
    "\n"
    "exit status: 0 fitted, 1 the fit failed, 2 usage or unreadable path\n";

/* Parses --schedules: distinct schedule names separated by commas,
 * default among them, into the mask *out.  Returns 0, or -1 with why[]
 * saying what is wrong. */
static int parse_schedules(const char *s, unsigned *out, char *why, size_t cap)
{
    unsigned mask = 0;
    for (const char *p = s;; p++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[32];
        ev_sched sc;
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        if (len >= sizeof name || ev_sched_parse(name, &sc)) {
            snprintf(why, cap, "unknown schedule '%.*s'", (int)(len < 40 ? len : 40), p);
            return -1;
        }
        if (mask & EV_SCHED_BIT(sc)) {
            snprintf(why, cap, "'%s' twice", name);
            return -1;
        }
        mask |= EV_SCHED_BIT(sc);
        if (!end)
            break;
        p = end;
    }
    if (!(mask & EV_SCHED_BIT(EV_SCHED_DEFAULT))) {
        snprintf(why, cap, "the set must hold default");
        return -1;
    }
    *out = mask;
    return 0;
}

/* Parses a whole decimal integer >= lo.  Returns 0 and sets *out, or -1. */
static int parse_i64(const char *s, int64_t lo, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || errno || *end || v < lo)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* Parses a whole finite decimal in [0, 1).  Returns 0 and sets *out, or -1. */
static int parse_threshold(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || errno || *end || !(v >= 0.0 && v < 1.0))
        return -1;
    *out = v;
    return 0;
}

/* Exit code for a library status: 2 for paths that cannot be read or
 * opened, 1 for everything else. */
static int exit_for(ev_status rc)
{
    return rc == EV_EIO ? EV_EXIT_USAGE : EV_EXIT_FAIL;
}

/* Prints the one-paragraph summary of a fit to `to` (stderr: a message,
 * never mixed with model.json), naming out_path when one was written. */
static void print_summary(FILE *to, const ev_fit *f, const char *out_path)
{
    const ev_nnls *r = ev_fit_nnls(f);
    size_t n = ev_fit_case_count(f), changed = 0, changed_logo = 0, agree = 0, cal = 0;
    for (size_t i = 0; i < n; i++) {
        const ev_fit_case *c = ev_fit_case_at(f, i);
        changed += c->full.selected != EV_SCHED_DEFAULT;
        if (c->has_logo) {
            cal++;
            changed_logo += c->logo.selected != EV_SCHED_DEFAULT;
            agree += c->logo.selected == c->full.selected;
        }
    }
    fprintf(to, "fit: a0=%.17g aP=%.17g aD=%.17g active {%s%s%s}\n", r->coef.a0, r->coef.aP, r->coef.aD,
            (r->best & EV_MASK_A0) ? "a0" : "",
            (r->best & EV_MASK_AP) ? ((r->best & EV_MASK_A0) ? ",aP" : "aP") : "",
            (r->best & EV_MASK_AD) ? ((r->best & (EV_MASK_A0 | EV_MASK_AP)) ? ",aD" : "aD") : "");
    fprintf(to,
            "fit: %zu cases (%zu calibration, %zu folds): %zu select a candidate; LOGO %zu, "
            "agreeing with the full fit on %zu of %zu\n",
            n, cal, ev_fit_fold_count(f), changed, changed_logo, agree, cal);
    fprintf(to, "fit: policy geomean %.8f (LOGO %.8f)\n", ev_fit_policy_geomean(f, 0),
            ev_fit_policy_geomean(f, 1));
    ev_fit_maxres m;
    ev_fit_max_residual(f, 1, &m);
    fprintf(to, "fit: max LOGO residual %+.2f%% relative, %+.3f us absolute\n", 100.0 * m.rel, m.abs);
    double g, mx;
    size_t nh;
    ev_fit_holdout_regret(f, &g, &mx, &nh);
    if (nh)
        fprintf(to, "fit: held-out regret over %zu cases: geomean %.6f, max %.6f\n", nh, g, mx);
    else
        fprintf(to, "fit: no holdout cases (no held-out regret)\n");
    if (out_path)
        fprintf(to, "fit: wrote %s\n", out_path);
}

/* Nanoseconds since the epoch (the fit's created_ns in the store). */
static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* `evident fit`: see the usage text.  Returns the exit code. */
int ev_cmd_fit(int argc, char **argv)
{
    const char *obs_path = NULL, *db_path = NULL, *out_path = NULL;
    int64_t sms = 0, run_id = 0;
    int have_sms = 0, have_run = 0, have_scheds = 0;
    double threshold = 0.05;
    unsigned scheds = EV_SCHEDS_DEFAULT; /* --schedules, or --db: the run protocol's model_schedules */
    char why[80];
    int code = EV_EXIT_OK;
    ev_status rc = EV_OK;
    ev_err err = {{0}};
    ev_buf in = EV_BUF_INIT, json = EV_BUF_INIT;
    ev_obs *obs = NULL;
    ev_excluded *excl = NULL;
    size_t n_obs = 0, n_excl = 0;
    ev_store *store = NULL;
    ev_fit *fit = NULL;
    enum { OPT_OBS, OPT_SMS, OPT_DB, OPT_RUN, OPT_THRESHOLD, OPT_OUT, OPT_RECORD, OPT_SCHEDS };
    static const ev_cli_opt opts[] = {{"--observations", 1}, {"--sms", 1},       {"--db", 1},
                                      {"--run", 1},          {"--threshold", 1}, {"--out", 1},
                                      {"--record", 0},       {"--schedules", 1}};
    const char *v = NULL;
    int k, record = 0;
    ev_cli cli;

    ev_cli_init(&cli, "evident fit", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_step(&cli, fit_usage, &v, &code)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            return ev_cli_unexpected(&cli, v);
        case OPT_OBS:
            obs_path = v;
            break;
        case OPT_DB:
            db_path = v;
            break;
        case OPT_OUT:
            out_path = v;
            break;
        case OPT_RECORD:
            record = 1;
            break;
        case OPT_SMS:
            if (parse_i64(v, 1, &sms))
                return ev_cli_usage(cli.cmd, "--sms '%s' is not an integer >= 1", v);
            have_sms = 1;
            break;
        case OPT_RUN:
            if (parse_i64(v, 1, &run_id))
                return ev_cli_usage(cli.cmd, "--run '%s' is not an integer >= 1", v);
            have_run = 1;
            break;
        case OPT_THRESHOLD:
            if (parse_threshold(v, &threshold))
                return ev_cli_usage(cli.cmd, "--threshold '%s' is not a number in [0, 1)", v);
            break;
        case OPT_SCHEDS:
            if (parse_schedules(v, &scheds, why, sizeof why))
                return ev_cli_usage(cli.cmd, "--schedules '%.60s': %s", v, why);
            have_scheds = 1;
            break;
        }
    }
    if (!!obs_path == !!db_path)
        return ev_cli_usage(cli.cmd, "give exactly one of --observations FILE.csv or --db FILE");
    if (obs_path && (!have_sms || have_run || record))
        return ev_cli_usage(cli.cmd, "--observations needs --sms N (and takes no --run or --record)");
    if (db_path && have_sms)
        return ev_cli_usage(cli.cmd, "--db takes S from the run's bindings, not --sms");
    if (db_path && have_scheds)
        return ev_cli_usage(cli.cmd, "--db takes the schedules of the run's protocol (model_schedules), "
                                     "not --schedules");
    if (db_path && ev_cli_is_std(db_path))
        return ev_cli_usage(cli.cmd, "--db -: the store is a file, not stdin");
    if ((obs_path && (code = ev_cli_input(cli.cmd, "--observations", obs_path))) ||
        (db_path && (code = ev_cli_input(cli.cmd, "--db", db_path))) ||
        (db_path && record && (code = ev_cli_store_rw(cli.cmd, "--db", db_path))) ||
        (out_path && (code = ev_cli_output(cli.cmd, "--out", out_path))))
        return code;

    if (obs_path) {
        if ((code = ev_cli_read(cli.cmd, obs_path, &in)))
            goto out;
        if ((rc = ev_obs_from_csv(in.data ? in.data : "", in.len, &obs, &n_obs, &err))) {
            fprintf(stderr, "evident fit: %s: %s\n", obs_path, err.msg);
            code = EV_EXIT_FAIL;
            goto out;
        }
    } else {
        if ((rc = ev_store_open(db_path, record ? 0 : EV_STORE_READONLY, &store, &err))) {
            fprintf(stderr, "evident fit: %s: %s\n", db_path, err.msg);
            code = exit_for(rc == EV_ENOTFOUND ? EV_EIO : rc);
            goto out;
        }
        if (!have_run && (rc = ev_store_last_run(store, &run_id, &err))) {
            fprintf(stderr, "evident fit: %s: %s\n", db_path, err.msg);
            code = EV_EXIT_FAIL;
            goto out;
        }
        if ((rc = ev_obs_run_scheds(store, run_id, &scheds, &err)) ||
            (rc = ev_obs_from_store(store, run_id, scheds, &obs, &n_obs, &excl, &n_excl, &sms, &err))) {
            fprintf(stderr, "evident fit: %s: %s\n", db_path, err.msg);
            code = EV_EXIT_FAIL;
            goto out;
        }
    }

    ev_fit_input fin = {obs, n_obs, excl, n_excl, sms, threshold, scheds};
    if ((rc = ev_model_fit(&fin, &fit, &err))) {
        fprintf(stderr, "evident fit: %s: %s\n", obs_path ? obs_path : db_path, err.msg);
        code = EV_EXIT_FAIL;
        goto out;
    }
    if ((rc = ev_fit_to_json(fit, &json, &err))) {
        fprintf(stderr, "evident fit: %s\n", err.msg);
        code = EV_EXIT_FAIL;
        goto out;
    }
    if (record) {
        int64_t fit_id = 0;
        if ((rc = ev_store_add_fit(store, run_id, now_ns(), json.data, &fit_id, &err))) {
            fprintf(stderr, "evident fit: %s: recording the fit: %s\n", db_path, err.msg);
            code = EV_EXIT_FAIL;
            goto out;
        }
        fprintf(stderr, "fit: recorded as fit %lld of run %lld in %s\n", (long long)fit_id, (long long)run_id,
                db_path);
    }
    /* model.json is the data (stdout without --out, or with --out -); what
     * was found is a message */
    if ((code = ev_cli_write(cli.cmd, out_path ? out_path : "-", json.data, json.len)))
        goto out;
    print_summary(stderr, fit, out_path && !ev_cli_is_std(out_path) ? out_path : NULL);
out:
    ev_fit_free(fit);
    ev_store_close(store);
    free(obs);
    free(excl);
    ev_buf_free(&in);
    ev_buf_free(&json);
    return code;
}
