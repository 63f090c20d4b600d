/*
 * report_head.c: the top of report.html (report_int.h): the headline (the
 * device and host the run measured, the run's status and what the page can
 * say of the bundle's own checks, auto against each peer and the best
 * one), then one compact case x arm matrix of time, GB/s and the fraction
 * of the same run's ceiling, and the arm header cells it shares with the
 * case table.  The long tables follow in report_html.c.
 */
#include "report_int.h"
#include "runner/sample_rules.h"
#include "stats.h"

/* Appends "<tr><th>h</th><td>escaped v</td></tr>". */
static ev_status row(ev_buf *b, const char *h, const char *v)
{
    ev_status rc = ev_buf_printf(b, "<tr><th>%s</th><td>", h);
    if (!rc)
        rc = rp_put_esc(b, v);
    if (!rc)
        rc = ev_buf_puts(b, "</td></tr>\n");
    return rc;
}

/* The environment record of the run's first invocation, or NULL. */
static const cJSON *first_environment(const rep *r)
{
    const cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r->val, "invocations"), 0);
    const cJSON *e = inv ? cJSON_GetObjectItemCaseSensitive(inv, "environment") : NULL;
    return cJSON_IsObject(e) ? e : NULL;
}

/* The lowest and highest SM clock any job's hot samples recorded (figures
 * "jobs").  Returns 1 when some job recorded one. */
static int clocks_seen(const rep *r, double *lo, double *hi)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *j;
    int any = 0;
    double a, c;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(f, "jobs"))
    {
        if (!rp_jnum(j, "sm_clock_min_mhz", &a) || !rp_jnum(j, "sm_clock_max_mhz", &c))
            continue;
        if (!any || a < *lo)
            *lo = a;
        if (!any || c > *hi)
            *hi = c;
        any = 1;
    }
    return any;
}

/* Joins "name v" for a device fact (-1 unknown, else 0 off / 1 on) into t. */
static void add_mode(char *t, size_t cap, const char *name, int64_t lo, int64_t hi)
{
    size_t len = strlen(t);
    snprintf(t + len, cap - len, "%s%s %s", len ? ", " : "", name,
             hi < 0     ? "unknown"
             : lo == hi ? (hi ? "on" : "off")
                        : "mixed");
}

/* The host and the runner's adaptations to it (sample_rules.h; docs/
 * runner.md, "A busy host"), from the attempts' device records and
 * "backoff" cold timings: the priority the measured threads ran at, the
 * load averages seen, the re-calibrations, the rescues that waited.  No
 * row for a bundle whose records hold no host facts (older runs). */
static ev_status host_row(const rep *r, ev_buf *b)
{
    const cJSON *j, *a, *c;
    size_t n = 0, fifo = 0, recal = 0, recal_att = 0, backoffs = 0, locks = 0;
    double lo = 0, hi = 0, waited = 0, locked = 0;
    int64_t cpus = 0;
    char refused[EV_RULE_REFUSED_MAX] = "", t[900];
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->val, "jobs"))
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "device");
            ev_rule_attempt ra;
            memset(&ra, 0, sizeof ra);
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(a, "cold_timings"))
            {
                const char *nm = ev_jr_str(c, "name");
                int64_t ns;
                if (nm && !strcmp(nm, EV_RULE_BACKOFF) && !ev_jr_ns(c, "elapsed_ns", &ns)) {
                    backoffs++;
                    waited += (double)ns / 1e9;
                }
                if (nm && !strcmp(nm, EV_RULE_CPULOCK) && !ev_jr_ns(c, "elapsed_ns", &ns)) {
                    locks++;
                    locked += (double)ns / 1e9;
                }
            }
            if (!cJSON_IsObject(d))
                continue;
            ev_rule_device_attempt(d, &ra);
            recal += ra.n_recal;
            recal_att += ra.n_recal > 0;
            if (!ra.host.known)
                continue;
            double l0 = ra.host.load_start < ra.host.load_end ? ra.host.load_start : ra.host.load_end;
            double l1 = ra.host.load_start > ra.host.load_end ? ra.host.load_start : ra.host.load_end;
            lo = n == 0 || l0 < lo ? l0 : lo;
            hi = n == 0 || l1 > hi ? l1 : hi;
            n++;
            cpus = ra.host.cpus;
            if (ra.host.fifo)
                fifo++;
            else if (!refused[0])
                snprintf(refused, sizeof refused, "%s", ra.host.refused);
        }
    }
    if (!n)
        return EV_OK;
    snprintf(t, sizeof t,
             "%zu attempts: %zu with the measured threads at real-time priority (SCHED_FIFO)%s%s%s; load "
             "average %.2f - %.2f on %" PRId64 " CPUs while they ran; %zu re-calibrations after a drifted "
             "sample (in %zu attempts); %zu rescues waited %.1f s before they started",
             n, fifo, fifo < n ? ", the others at normal priority (" : "", fifo < n ? refused : "",
             fifo < n ? ")" : "", lo, hi, cpus, recal, recal_att, backoffs, waited);
    if (locks) /* said only where it happened: a bundle without such waits reads as before */
        snprintf(
            t + strlen(t), sizeof t - strlen(t),
            "; %zu attempts waited %.1f s for another run to leave their CPUs (docs/runner.md, \"Two runs "
            "on one host\")",
            locks, locked);
    return row(b, "host load and priority", t);
}

/* The peer versions and the device's hygiene, from the attempts' device
 * records (a run stored with schema 3: validation.json's run.store_schema);
 * an older bundle says the store kept none. */
static ev_status device_rows(const rep *r, ev_buf *b)
{
    const cJSON *j, *a;
    char vers[600] = "", hyg[600] = "";
    int64_t n = 0, busy = 0, throttled = 0, unknown = 0, l2 = -2;
    int64_t lo[3] = {2, 2, 2}, hi[3] = {-1, -1, -1};
    static const char *const modes[3] = {"ecc", "mig", "persistence"};
    ev_status rc;
    if (!rp_peer_versions(r, vers, sizeof vers))
        return row(b, "peer versions",
                   "torch, triton and CUB versions are not kept by the store; the peers' source bytes are "
                   "members (sources/kernels/)");
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->val, "jobs"))
    {
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "device"), *x;
            if (!cJSON_IsObject(d))
                continue;
            n++;
            int any_busy = 0, any_hot = 0, known = 0;
            cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(d, "hot_other_processes"))
            {
                known |= x->valuedouble >= 0;
                any_busy |= x->valuedouble > 0;
            }
            cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(d, "hot_throttle_reasons"))
            {
                known |= x->valuedouble >= 0;
                any_hot |= x->valuedouble > 0 && ((int64_t)x->valuedouble & EV_RULE_THROTTLE_MASK);
            }
            busy += any_busy;
            throttled += any_hot;
            unknown += !known;
            for (int k = 0; k < 3; k++) {
                int64_t m = rp_jint(d, modes[k], -1);
                if (m >= 0 && m < lo[k])
                    lo[k] = m;
                if (m > hi[k])
                    hi[k] = m;
            }
            int64_t l = rp_jint(d, "persisting_l2_bytes", -1);
            if (l > l2)
                l2 = l;
        }
    }
    rc = row(b, "peer versions", vers[0] ? vers : "none recorded (no peer arm, or no version read)");
    snprintf(hyg, sizeof hyg,
             "%" PRId64 " attempts with a device record: %" PRId64
             " with a hot sample beside another compute "
             "process, %" PRId64 " throttled for power or heat, %" PRId64 " unknown (no NVML facts)",
             n, busy, throttled, unknown);
    for (int k = 0; k < 3; k++)
        add_mode(hyg, sizeof hyg, modes[k], lo[k], hi[k]);
    {
        size_t len = strlen(hyg);
        if (l2 >= 0)
            snprintf(hyg + len, sizeof hyg - len, ", persisting L2 limit %" PRId64 " bytes (at most)", l2);
        else
            snprintf(hyg + len, sizeof hyg - len, ", persisting L2 limit unknown");
    }
    if (!rc)
        rc = row(b, "GPU hygiene", hyg);
    if (!rc)
        rc = host_row(r, b);
    return rc;
}

/*
 * Foreign CPU time on the measuring CPUs (runner/foreign.h): per hot
 * sample, what other processes took of the CPUs the job ran on, from the
 * attempts' device records; the median and the largest over every hot
 * sample, and the largest of each arm.  No row for a bundle whose device
 * records keep none (before it was kept, or the torch peer's alone).
 */
static ev_status foreign_row(const rep *r, ev_buf *b)
{
    const cJSON *j, *a, *x;
    double *v = NULL, worst = 0, arm_worst[64];
    const char *arm_name[64];
    size_t n = 0, cap = 0, n_arms = 0;
    char t[1200] = "", arms[700] = "", where[200] = "", source[16] = "";
    ev_status rc = EV_OK;

    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r->val, "jobs"))
    {
        const char *arm = ev_jr_str(j, "arm");
        size_t k = 0;
        while (arm && k < n_arms && strcmp(arm_name[k], arm))
            k++;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "attempts"))
        {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(a, "device");
            const char *src = ev_jr_str(d, "foreign_source");
            int i = 0;
            if (src && !source[0])
                snprintf(source, sizeof source, "%s", src);
            cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(d, "hot_foreign_ms"))
            {
                i++;
                if (!cJSON_IsNumber(x))
                    continue;
                if (ev_grow((void **)&v, &cap, n + 1, sizeof *v)) {
                    free(v);
                    return EV_ENOMEM;
                }
                v[n++] = x->valuedouble;
                if (n == 1 || x->valuedouble > worst) {
                    worst = x->valuedouble;
                    snprintf(where, sizeof where, "%s, hot sample %d", ev_jr_str(j, "job_key"), i - 1);
                }
                if (arm && k == n_arms && n_arms < 64) {
                    arm_name[n_arms] = arm;
                    arm_worst[n_arms++] = x->valuedouble;
                } else if (arm && k < n_arms && x->valuedouble > arm_worst[k]) {
                    arm_worst[k] = x->valuedouble;
                }
            }
        }
    }
    for (size_t k = 0; k < n_arms; k++) {
        size_t len = strlen(arms);
        snprintf(arms + len, sizeof arms - len, "%s%s %.3f ms", k ? "; " : "", arm_name[k], arm_worst[k]);
    }
    if (n) {
        double med = 0;
        if ((rc = ev_median(v, n, &med))) {
            free(v);
            return rc;
        }
        snprintf(t, sizeof t,
                 "other processes' CPU time on the measuring CPUs during each hot sample (source: %s%s): "
                 "median %.3f ms, largest %.3f ms (%s), over %zu hot samples; the largest of each arm: %s.  "
                 "Recorded, not a failure",
                 source, !strcmp(source, "stat") ? ", /proc/stat ticks of 10 ms: coarse" : ", ns", med, worst,
                 where, n, arms);
        rc = row(b, "foreign CPU", t);
    }
    free(v);
    return rc;
}

/* How an external kernel ran on cpu and the rules that cannot hold there
 * (the environment's kernel_isolation, runner/khost.h); no row without. */
static ev_status isolation_row(const rep *r, ev_buf *b)
{
    const cJSON *inv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r->val, "invocations"), 0);
    const cJSON *e = inv ? cJSON_GetObjectItemCaseSensitive(inv, "environment") : NULL;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kernel_isolation"), *x;
    ev_buf t = EV_BUF_INIT;
    ev_status rc;
    int i = 0;
    if (!cJSON_IsObject(k))
        return EV_OK;
    rc = ev_buf_printf(&t,
                       "external kernels ran in a process of their own (%s), sharing only %s; seccomp: %s; "
                       "Landlock ABI %lld.  Not held on cpu:",
                       ev_jr_str(k, "process") ? ev_jr_str(k, "process") : "?",
                       ev_jr_str(k, "shared") ? ev_jr_str(k, "shared") : "?",
                       ev_jr_str(k, "seccomp") ? ev_jr_str(k, "seccomp") : "?",
                       (long long)rp_jint(k, "landlock_abi", -1));
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(k, "not_held"))
    {
        if (!rc && cJSON_IsString(x))
            rc = ev_buf_printf(&t, " (%d) %s;", ++i, x->valuestring);
    }
    if (!rc)
        rc = row(b, "kernel isolation (cpu)", t.data);
    ev_buf_free(&t);
    return rc;
}

/* The device and host rows. */
static ev_status facts(const rep *r, ev_buf *b)
{
    const cJSON *e = first_environment(r);
    const cJSON *d = e ? cJSON_GetObjectItemCaseSensitive(e, "device") : NULL;
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(r->val, "invocations");
    char t[300];
    double v, w;
    ev_status rc = EV_OK;
    if (!cJSON_IsObject(d))
        return row(b, "device", "not recorded");
    snprintf(t, sizeof t, "%s (backend %s)", ev_jr_str(d, "name") ? ev_jr_str(d, "name") : "?",
             ev_jr_str(d, "backend") ? ev_jr_str(d, "backend") : "?");
    rc = row(b, "device", t);
    snprintf(t, sizeof t, "%" PRId64 " %s; compute capability %s; memory %.1f GiB; %s %.1f MiB",
             rp_jint(d, "sms", -1),
             !strcmp(ev_jr_str(d, "backend") ? ev_jr_str(d, "backend") : "", "cuda") ? "SMs" : "threads",
             ev_jr_str(d, "compute_capability") && *ev_jr_str(d, "compute_capability")
                 ? ev_jr_str(d, "compute_capability")
                 : "-",
             rp_jnum(d, "memory_bytes", &v) ? v / 1073741824.0 : 0.0,
             !strcmp(ev_jr_str(d, "backend") ? ev_jr_str(d, "backend") : "", "cuda") ? "L2"
                                                                                     : "last-level cache",
             rp_jnum(d, "cache_bytes", &w) ? w / 1048576.0 : 0.0);
    if (!rc)
        rc = row(b, "size", t);
    const char *dv = ev_jr_str(d, "driver_version"), *rv = ev_jr_str(d, "runtime_version");
    snprintf(t, sizeof t, "driver %s, runtime %s", dv && *dv ? dv : "-", rv && *rv ? rv : "-");
    if (!rc)
        rc = row(b, "driver and runtime", t);
    int64_t clk = rp_jint(d, "clock_mhz", -1), mclk = rp_jint(d, "memory_clock_mhz", -1);
    double lo = 0, hi = 0;
    int seen = clocks_seen(r, &lo, &hi);
    if (clk > 0)
        snprintf(t, sizeof t, "SM %" PRId64 " MHz, memory %" PRId64 " MHz (as the device reported them)", clk,
                 mclk);
    else
        snprintf(t, sizeof t, "not reported by this backend");
    if (!rc)
        rc = row(b, "clocks", t);
    if (seen)
        snprintf(t, sizeof t, "%.0f - %.0f MHz over every hot sample that recorded one", lo, hi);
    else
        snprintf(t, sizeof t, "no sample recorded an SM clock");
    if (!rc)
        rc = row(b, "SM clock seen", t);
    snprintf(t, sizeof t, "%s; compiler %s; %" PRId64 " threads on CPUs %s",
             ev_jr_str(e, "kernel") ? ev_jr_str(e, "kernel") : "-",
             ev_jr_str(e, "compiler") ? ev_jr_str(e, "compiler") : "-", rp_jint(e, "threads", -1),
             ev_jr_str(e, "affinity") ? ev_jr_str(e, "affinity") : "-");
    if (!rc)
        rc = row(b, "host", t);
    if (!rc)
        rc = device_rows(r, b);
    if (!rc)
        rc = foreign_row(r, b);
    if (!rc)
        rc = isolation_row(r, b);
    if (!rc && cJSON_GetArraySize(inv) > 1) {
        snprintf(t, sizeof t,
                 "%d invocations (--resume); the first one's environment is shown, each one's is "
                 "in validation.json",
                 cJSON_GetArraySize(inv));
        rc = row(b, "invocations", t);
    }
    return rc;
}

/* The run's status and what the page can say of the bundle's checks. */
static ev_status verdict_rows(const rep *r, ev_buf *b)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(r->val, "run");
    const char *st = ev_jr_str(run, "status"), *rs = ev_jr_str(run, "rescue_status");
    char t[300];
    ev_status rc = ev_buf_printf(b, "<tr><th>run status</th><td class=\"%s\">",
                                 st && !strcmp(st, "completed") ? "ok" : "bad");
    snprintf(t, sizeof t, "%s%s%s", st ? st : "-", rs ? ", " : "", rs ? rs : "");
    if (!rc)
        rc = rp_put_esc(b, t);
    if (!rc)
        rc = ev_buf_puts(b, "</td></tr>\n");
    snprintf(t, sizeof t, "%s%s",
             r->prov && ev_jr_str(r->prov, "git_commit") ? ev_jr_str(r->prov, "git_commit") : "-",
             r->prov && rp_jtrue(r->prov, "git_dirty") ? " (dirty)" : "");
    if (!rc)
        rc = row(b, "measured at", t);
    if (!rc)
        rc = row(b, "source tree", r->prov ? ev_jr_str(r->prov, "source_tree_hash") : NULL);
    if (!rc)
        rc = ev_buf_puts(b, "<tr><th>checks</th><td>verify-bundle regenerates this page from the bundle's "
                            "other members byte for byte and rebuilds every derived number from the raw "
                            "records; a bundle that fails is shown with a red notice at the top by "
                            "<code>evident report</code>.  The root digest is the SHA-256 of receipts.json, "
                            "which lists this page, so the page cannot hold it: <code>verify-bundle "
                            "delivery.zip --expect-root $(cat ROOT)</code> binds it, <code>evident results "
                            "--json</code> prints it.</td></tr>\n");
    return rc;
}

/* Appends "<td class=...>" for an interval [lo, hi] of a ratio: "ok"
 * when it lies below 1, "bad" above, no class when it holds 1 or there is
 * none (has 0): a colour follows the interval, never the point estimate. */
static ev_status td_by_interval(ev_buf *b, int has, double lo, double hi)
{
    return ev_buf_puts(b, has && hi < 1.0   ? "<td class=\"ok\">"
                          : has && lo > 1.0 ? "<td class=\"bad\">"
                                            : "<td>");
}

/* auto against each peer (figures "across": geometric mean with its
 * case-bootstrap interval; the cases counted by their calls, rp_pair_call)
 * and against the best peer of each case, then what the calls stand on. */
static ev_status auto_rows(const rep *r, ev_buf *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r->val, "figures"), *p, *c;
    char t[48], u[48], w[48], line[600], counts[200];
    double v, lo = 0, hi = 0;
    size_t n = 0;
    rp_counts best;
    ev_status rc = EV_OK;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(f, "across"))
    {
        const char *a = ev_jr_str(p, "arm"), *g = ev_jr_str(p, "against");
        const cJSON *ci = cJSON_GetObjectItemCaseSensitive(p, "geomean_ratio_ci");
        rp_counts k;
        if (rc || !a || !g || !ev_is_arm(a, EV_ARM_AUTO))
            continue;
        int has = rp_jnum(p, "geomean_ratio", &v);
        int has_ci = rp_numv(cJSON_GetArrayItem(ci, 0), &lo) && rp_numv(cJSON_GetArrayItem(ci, 1), &hi);
        rp_count_calls(r, a, g, &k);
        snprintf(line, sizeof line, "geometric mean %s %s%s%s%s%s over %" PRId64 " cases: %s",
                 has ? rp_fmt(t, v, 3) : "-", has_ci ? "[" : "", has_ci ? rp_fmt(u, lo, 3) : "",
                 has_ci ? ", " : "", has_ci ? rp_fmt(w, hi, 3) : "", has_ci ? "]" : "",
                 rp_jint(p, "n_cases", 0), rp_counts_text(&k, counts, sizeof counts));
        if (has_ci)
            snprintf(line + strlen(line), sizeof line - strlen(line), " (interval: cases resampled)");
        if (rp_jint(p, "n_cases", 0) == 0)
            snprintf(line, sizeof line, "no case where both completed");
        rc = ev_buf_puts(b, "<tr><th>auto / ");
        if (!rc)
            rc = rp_put_esc(b, g);
        if (!rc)
            rc = ev_buf_puts(b, "</th>");
        if (!rc)
            rc = td_by_interval(b, has && has_ci, lo, hi);
        if (!rc)
            rc = rp_put_esc(b, line);
        if (!rc)
            rc = ev_buf_puts(b, "</td></tr>\n");
    }
    double *ratios = malloc((size_t)(cJSON_GetArraySize(r->cases) + 1) * sizeof *ratios), g = 0;
    if (!ratios)
        return EV_ENOMEM;
    memset(&best, 0, sizeof best);
    cJSON_ArrayForEach(c, r->cases)
    {
        const char *peer;
        double ar;
        rp_call k;
        if (!rp_auto_vs_best(r, rp_jint(c, "case_index", -1), &peer, &ar, &k))
            continue;
        ratios[n++] = ar;
        best.n[k]++;
    }
    int has_g = n && !ev_geomean(ratios, n, &g);
    free(ratios);
    if (has_g)
        snprintf(line, sizeof line,
                 "geometric mean %s over %zu cases: %s (the faster completed peer of each case; no interval "
                 "across the mix, so no colour)",
                 rp_fmt(t, g, 3), n, rp_counts_text(&best, counts, sizeof counts));
    else
        snprintf(line, sizeof line, "no case has both auto and a peer completed");
    if (!rc)
        rc = ev_buf_puts(b, "<tr><th>auto / best peer</th><td><strong>");
    if (!rc)
        rc = rp_put_esc(b, line);
    if (!rc)
        rc = ev_buf_puts(b, "</strong></td></tr>\n");
    if (!rc) {
        char basis[1000];
        rc = row(b, "rounds and basis", rp_basis_text(r, basis, sizeof basis));
    }
    return rc;
}

/* Appends the headline: problem (when non-NULL) as a red notice first,
 * then auto against the peers, the run and the checks, the device and
 * host, the ceiling and the floor.  EV_ENOMEM. */
ev_status rp_sec_headline(const rep *r, const char *problem, ev_buf *b)
{
    char t[200], u[48];
    double bpus, fl;
    int used;
    ev_status rc = EV_OK;
    if (problem) {
        rc = ev_buf_puts(b, "<div class=\"alarm\"><strong>This bundle does not verify.</strong> ");
        if (!rc)
            rc = rp_put_esc(b, problem);
        if (!rc)
            rc = ev_buf_puts(
                b, "<br>What follows is what its members claim, not what its raw records show.</div>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "<h2>Headline</h2>\n<table class=\"head\">\n");
    if (!rc)
        rc = auto_rows(r, b);
    if (!rc)
        rc = verdict_rows(r, b);
    if (!rc)
        rc = facts(r, b);
    if (!rc && rp_ceiling_bpus(r, &bpus)) {
        snprintf(t, sizeof t,
                 "%s GB/s (a streaming read in this run; every %% of the ceiling below is of it)",
                 rp_fmt(u, bpus / 1e3, 2));
        rc = row(b, ev_arm_kind_name(EV_ARM_CEILING), t);
    }
    {
        /* the L2-resident ceiling (store schema 6): what bounds hot medians
         * of working sets within 2 x the L2 (runner/sample_rules.h) */
        const cJSON *l2 = rp_md_ref_job(r, ev_arm_kind_name(EV_ARM_CEILING_L2), &used);
        double us, bytes;
        if (!rc && rp_md_median(l2, &us) && us > 0 && rp_md_ceiling_bytes(l2, &bytes)) {
            snprintf(t, sizeof t,
                     "%s GB/s (the same read over half the L2, replayed hot: the bound of hot "
                     "medians whose working set fits in 2 x the L2)",
                     rp_fmt(u, bytes / us / 1e3, 2));
            rc = row(b, ev_arm_kind_name(EV_ARM_CEILING_L2), t);
        }
    }
    if (!rc && rp_md_median(rp_md_ref_job(r, ev_arm_kind_name(EV_ARM_FLOOR), &used), &fl)) {
        snprintf(t, sizeof t, "%s us per op (an empty launch in this run)", rp_fmt(u, fl, 4));
        rc = row(b, ev_arm_kind_name(EV_ARM_FLOOR), t);
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}

/* Appends one <th> per arm column of the case table, in order. */
ev_status rp_put_arm_headers(const rep *r, ev_buf *b)
{
    ev_status rc = EV_OK;
    for (size_t i = 0; i < r->n_arms && !rc; i++) {
        rc = ev_buf_puts(b, "<th>");
        if (!rc)
            rc = rp_put_esc(b, r->arms[i]);
        if (!rc)
            rc = ev_buf_puts(b, "</th>");
    }
    return rc;
}

/* Appends the case x arm matrix: per cell the estimate, GB/s and the
 * percentage of the ceiling (when the run has one), the case's fastest arm
 * in bold, an arm without an estimate in red with its outcome; an empty
 * cell where the run planned no such job.  EV_ENOMEM. */
ev_status rp_sec_matrix(const rep *r, ev_buf *b)
{
    const cJSON *c;
    double bpus = 0;
    int have_ceil = rp_ceiling_bpus(r, &bpus);
    ev_status rc =
        ev_buf_printf(b,
                      "<h2>Cases and arms</h2>\n<p>Each cell: the estimate in us per op (the hot "
                      "median; with several rounds the geometric mean of their medians), then GB/s "
                      "(bytes one op moves: every input element read, one output per row written)%s; "
                      "the fastest arm of each case in bold; a red cell names the outcome of a job that did "
                      "not complete.</p>\n"
                      "<table>\n<tr><th>case</th><th>bytes per op</th>",
                      have_ceil ? " and the % of the same run's ceiling" : "");
    if (!rc)
        rc = rp_put_arm_headers(r, b);
    if (!rc)
        rc = ev_buf_puts(b, "</tr>\n");
    cJSON_ArrayForEach(c, r->cases)
    {
        int64_t idx = rp_jint(c, "case_index", -1);
        double bytes = 0;
        int have_bytes = rp_case_bytes(c, &bytes);
        char lab[160], t[48], u[48], w[48];
        double fastest = 0;
        rp_arm_stat st;
        for (size_t i = 0; i < r->n_arms; i++)
            if (rp_arm_stat_get(r, idx, r->arms[i], &st) && st.est_us > 0 &&
                (!fastest || st.est_us < fastest))
                fastest = st.est_us;
        if (rc)
            break;
        rc = ev_buf_puts(b, "<tr><td>");
        if (!rc)
            rc = rp_put_esc(b, rp_case_label(c, lab, sizeof lab));
        if (!rc)
            rc = ev_buf_printf(b, "</td><td class=\"n\">%s</td>", have_bytes ? rp_fmt(t, bytes, 0) : "-");
        for (size_t i = 0; i < r->n_arms && !rc; i++) {
            const char *oc;
            char reason[300];
            if (!rp_arm_outcome(r, idx, r->arms[i], &oc, reason, sizeof reason)) {
                rc = ev_buf_puts(b, "<td></td>");
                continue;
            }
            if (!rp_arm_stat_get(r, idx, r->arms[i], &st) || !(st.est_us > 0)) {
                rc = ev_buf_puts(b, "<td class=\"bad\">");
                if (!rc)
                    rc = rp_put_esc(b, oc);
                if (!rc)
                    rc = ev_buf_puts(b, "</td>");
                continue;
            }
            double gbps = have_bytes ? bytes / st.est_us / 1e3 : 0;
            int best = st.est_us == fastest;
            rc = ev_buf_printf(b, "<td class=\"n\">%s%s%s<br><small>%s GB/s", best ? "<strong>" : "",
                               rp_fmt(t, st.est_us, 4), best ? "</strong>" : "",
                               have_bytes ? rp_fmt(u, gbps, 1) : "-");
            if (!rc && have_ceil && have_bytes)
                rc = ev_buf_printf(b, ", %s%%", rp_fmt(w, 100.0 * gbps / (bpus / 1e3), 1));
            if (!rc)
                rc = ev_buf_puts(b, "</small></td>");
        }
        if (!rc)
            rc = ev_buf_puts(b, "</tr>\n");
    }
    if (!rc)
        rc = ev_buf_puts(b, "</table>\n");
    return rc;
}
