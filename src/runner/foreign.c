/*
 * foreign.c: foreign CPU time on the measuring CPUs (foreign.h).
 */
#include "foreign.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Sums the busy time of f's CPUs from file (/proc/schedstat or /proc/stat,
 * as f->source says).  OUT: *ns.  Returns 0, or -1 when it cannot be read
 * or a measuring CPU is missing from it.
 */
static int busy(const ev_foreign *f, const char *source, int64_t *ns)
{
    int schedstat = !strcmp(source, EV_FOREIGN_SCHEDSTAT);
    FILE *in = fopen(schedstat ? "/proc/schedstat" : "/proc/stat", "r");
    char line[512];
    int64_t sum = 0;
    int seen = 0, want = CPU_COUNT(&f->cpus);

    if (!in)
        return -1;
    while (fgets(line, sizeof line, in)) {
        unsigned long long v[10] = {0};
        int cpu;
        char *p;
        if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
            continue;
        cpu = (int)strtol(line + 3, &p, 10);
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &f->cpus))
            continue;
        for (int i = 0; i < 10; i++)
            v[i] = strtoull(p, &p, 10);
        if (schedstat) /* cpuN yld_count legacy sched_count sched_goidle ttwu ttwu_local run_ns ... */
            sum += (int64_t)v[6];
        else /* cpuN user nice system idle iowait irq softirq steal guest guest_nice */
            sum += (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * f->tick_ns;
        seen++;
    }
    fclose(in);
    if (seen != want)
        return -1;
    *ns = sum;
    return 0;
}

void ev_foreign_open(ev_foreign *f)
{
    long hz = sysconf(_SC_CLK_TCK);
    int64_t ns;
    memset(f, 0, sizeof *f);
    f->tick_ns = hz > 0 ? 1000000000 / hz : 10000000;
    if (sched_getaffinity(0, sizeof f->cpus, &f->cpus)) {
        f->source = EV_FOREIGN_NONE;
        return;
    }
    f->source = !busy(f, EV_FOREIGN_SCHEDSTAT, &ns) ? EV_FOREIGN_SCHEDSTAT
                : !busy(f, EV_FOREIGN_STAT, &ns)    ? EV_FOREIGN_STAT
                                                    : EV_FOREIGN_NONE;
}

void ev_foreign_mark_now(const ev_foreign *f, int64_t helper_ns, ev_foreign_mark *m)
{
    struct timespec t;
    memset(m, 0, sizeof *m);
    if (strcmp(f->source, EV_FOREIGN_NONE) && !busy(f, f->source, &m->busy_ns) &&
        !clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)) {
        m->own_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
        m->helper_ns = helper_ns;
        m->ok = 1;
    }
}

double ev_foreign_ms(const ev_foreign_mark *a, const ev_foreign_mark *b)
{
    int64_t helper;
    if (!a->ok || !b->ok)
        return NAN;
    helper = a->helper_ns >= 0 && b->helper_ns >= 0 ? b->helper_ns - a->helper_ns : 0;
    return (double)((b->busy_ns - a->busy_ns) - (b->own_ns - a->own_ns) - helper) / 1e6;
}
