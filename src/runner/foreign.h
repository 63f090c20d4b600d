/*
 * foreign.h: foreign CPU time on the measuring CPUs: how much of the CPUs
 * a job runs on (its affinity when it started) other processes took while
 * one of its samples ran.  Per sample: the CPUs' busy time over the sample
 * less this process's own CPU time (CLOCK_PROCESS_CPUTIME_ID, every
 * thread) less its helpers' (the kernel host's: khost.h).  The busy time
 * is /proc/schedstat's per-CPU run time (ns) where the kernel keeps it,
 * else /proc/stat's per-CPU non-idle ticks (user, nice, system, irq,
 * softirq and steal: another virtual machine's time counts as foreign),
 * 1/CLK_TCK each: coarse (10 ms on most hosts), noted as such.  It is
 * recorded per sample in the attempt's device record (hot_foreign_ms,
 * cold_foreign_ms, foreign_source) and shown in the report; it fails no
 * sample by itself.
 */
#ifndef EV_FOREIGN_H
#define EV_FOREIGN_H

#include <sched.h>
#include <stdint.h>

/* Where busy time is read from (ev_foreign.source). */
#define EV_FOREIGN_SCHEDSTAT "schedstat"
#define EV_FOREIGN_STAT      "stat"
#define EV_FOREIGN_NONE      "none"

typedef struct ev_foreign {
    cpu_set_t cpus;     /* the measuring CPUs: the affinity when opened */
    const char *source; /* EV_FOREIGN_* */
    int64_t tick_ns;    /* /proc/stat's unit */
} ev_foreign;

/* One reading, before or after a sample. */
typedef struct ev_foreign_mark {
    int ok;
    int64_t busy_ns;   /* the measuring CPUs' busy time so far */
    int64_t own_ns;    /* this process's CPU time so far */
    int64_t helper_ns; /* its helpers' (-1: unknown, counted as none) */
} ev_foreign_mark;

/* Takes this process's affinity as the measuring CPUs and finds the
 * source.  OUT: *f. */
void ev_foreign_open(ev_foreign *f);

/* Reads the marks now, with helper_ns the helpers' CPU time (-1: none or
 * unknown).  OUT: *m (m->ok 0 when the busy time cannot be read). */
void ev_foreign_mark_now(const ev_foreign *f, int64_t helper_ns, ev_foreign_mark *m);

/* The foreign CPU time between a and b in ms (may be slightly negative:
 * the sources are not read at the same instant), NAN when unknown. */
double ev_foreign_ms(const ev_foreign_mark *a, const ev_foreign_mark *b);

#endif
