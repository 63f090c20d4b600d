/*
 * cpulock.h: a host's measuring CPUs, taken in turns (docs/runner.md, "Two
 * runs on one host").  On the cpu backend the CPUs are what is measured,
 * and a worker pins its threads to the first CPUs of its affinity
 * (kernels/reduce_cpu.c, the pool): two runs at once on one host, neither
 * declaring a cpu_set, measure on the same CPUs, each in the other's
 * samples.  So an attempt holds an exclusive lock (flock) on one file per
 * CPU of its worker's affinity, EV_CPULOCK_DIR/evident-cpu-<N>.lock, from
 * before its process starts until it was reaped: attempts of two runs
 * whose CPUs meet never run at once; runs on disjoint CPUs (`evident run
 * --gpus`' shards, a protocol's cpu_set) never wait for each other.  The
 * wait is the attempt's "cpu-lock" cold timing (EV_RULE_CPULOCK,
 * sample_rules.h), the supervisor's own row.  Turns alternate: a run that
 * waits holds a shared lock on EV_CPULOCK_DIR/evident-cpu-waiters.lock,
 * and one that gives its CPUs back while another waits pauses before it
 * takes them again (flock itself favours no one: the run that gave them
 * back took them again at once, and the other waited for its whole run).
 * The cuda backend takes no
 * lock: there the device is measured, and another process on it is the
 * hygiene check's (docs/defenses.md).
 */
#ifndef EV_CPULOCK_H
#define EV_CPULOCK_H

#include <sched.h>
#include <stdint.h>

#include "status.h"

/* Where the lock files are: one directory for every run of the host,
 * whoever runs it (the files are made readable by all: a lock needs no
 * write access). */
#define EV_CPULOCK_DIR "/tmp"

typedef struct ev_cpulock {
    int *fd;       /* one open lock file per CPU, in CPU order */
    int wfd;       /* the waiters' file (-1: none) */
    size_t n;      /* how many */
    int held;      /* every lock is held */
    char why[256]; /* "" or why the run measures without the locks (a file that cannot be opened) */
} ev_cpulock;

/* An ev_cpulock that holds nothing (no files: take, give and close do
 * nothing), before ev_cpulock_open or where no lock is taken (cuda). */
void ev_cpulock_init(ev_cpulock *l);

/* Opens the lock files of the CPUs in cpus under dir (EV_CPULOCK_DIR).  A
 * file that cannot be opened leaves l without locks (l->n 0) and says why
 * in l->why: the run goes on unlocked, and says so.  Returns EV_OK, or
 * EV_ENOMEM. */
ev_status ev_cpulock_open(ev_cpulock *l, const cpu_set_t *cpus, const char *dir, ev_err *err);

/* Takes every lock, in CPU order (so two runs never hold one each of two
 * they both need), polling every few ms while another run holds one,
 * until stop() says stop (stop may be NULL).  Returns the ns it waited
 * (0: no lock was held by another run), or -1 when it stopped first (no
 * lock held then). */
int64_t ev_cpulock_take(ev_cpulock *l, int (*stop)(void *ctx), void *ctx);

/* Gives every lock back (nothing when none is held); when another run
 * waits, pauses long enough for its poll to take them first. */
void ev_cpulock_give(ev_cpulock *l);

/* Gives the locks back and closes their files. */
void ev_cpulock_close(ev_cpulock *l);

#endif
