/*
 * khost.h: the kernel host, the process an external kernel runs in on the
 * cpu backend (docs/defenses.md, "External host code apart").  The worker
 * (backend_cpu.c) forks and execs build/evident-kernel-host
 * (khost_main.c, beside the worker's own executable) with one memfd, the
 * only memory the two processes share: a control block, a list of calls
 * and the data region holding the job's inputs and outputs.  The host
 * loads the kernel's shared object under a seccomp filter and Landlock,
 * then under a stricter filter runs the calls the worker requests, each
 * ENTRY(in, out, rows, cols, stride) with in and out inside the data
 * region.  The timer, the FP64 oracle, the expected outputs, the records
 * and the secret seed stay in the worker's address space.
 *
 * The request is a span of the call list: calls [first, first + count),
 * each an (input offset, output offset) pair in the data region.  The
 * worker writes the list (ev_khost_calls) whenever it likes between
 * requests and may change any input or output between two requests, so
 * a batch can be run as one request or as groups of calls with inputs
 * prepared between them.  Request and completion are two futex words of
 * the control block: the worker bumps `req`, the host sets `done` to it;
 * each side spins for spin_ns on the word it waits for (back-to-back
 * batches then cost no wake-up) before it sleeps on it, saying so in its
 * asleep flag, and each wakes the other only when that flag says it
 * sleeps (the flag and the word are sequentially consistent, so no wake-up
 * is lost).  Only where the protocol gives the job CPUs of its own
 * (cpu_set, two or more) does anything spin, across two CPUs: on shared
 * CPUs a spinner waits for a CPU someone else holds.  Otherwise the
 * worker's thread and the host are put on the one CPU the worker is on
 * when it starts the host, and take turns there (measured on a loaded
 * 2-vCPU host: docs/defenses.md).
 *
 * What the host may do (khost_main.c): while it loads the shared object,
 * read-only opens with O_CLOEXEC (the loader's), confined by Landlock to
 * that one file where the kernel has Landlock, the loader's reads and
 * mappings, futex and exit; then only futex, anonymous memory without
 * execute permission, the clock, yielding and sleeping, writes to its
 * stderr, and exit.  Any other system call (open, fork, clone, ptrace,
 * process_vm_readv, kill, socket, ...) is stopped (SECCOMP_RET_TRAP): the
 * host writes the call into the control block and exits, and the job
 * fails naming it.  No thread, no process, no file, no other process's
 * memory.
 */
#ifndef EV_KHOST_H
#define EV_KHOST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "status.h"

#define EV_KHOST_MAGIC   0x484b5645u /* "EVKH" */
#define EV_KHOST_VERSION 1u
#define EV_KHOST_PROGRAM "evident-kernel-host"
/* The kernel host's address space for its program, its libraries, stack
 * and loader, beyond the shared memory and the kernel's memory_mb. */
#define EV_KHOST_BASE_MB 512

/* The host's state (ev_khost_ctl.state, a futex word). */
enum {
    EV_KHOST_LOADING = 0, /* started, loading the shared object */
    EV_KHOST_READY = 1,   /* the entry resolved, the last filter in place */
    EV_KHOST_FAILED = 2,  /* the shared object or its entry could not be loaded: error says why */
    EV_KHOST_STOPPED = 3, /* a system call was stopped: violation_* say which */
    EV_KHOST_FAULTED = 4  /* a memory fault (SIGSEGV, SIGBUS): fault_* say where */
};

/* A part of the data region as the host maps it (khost_main.c applies
 * them after the shared object is loaded, before the steady filter, which
 * has no mprotect): inputs read-only, guard pages inaccessible, outputs
 * and their guard bytes read-write.  A fault in any of them stops the
 * host with its offset, which the worker names by region. */
typedef struct ev_khost_region {
    uint64_t off, len; /* page aligned, within the data region */
    uint32_t prot;     /* PROT_NONE, PROT_READ, or PROT_READ | PROT_WRITE */
    char name[44];     /* "input set 0", "the guard page after input set 1", ... */
} ev_khost_region;

#define EV_KHOST_MAX_REGIONS 16

/* One call: ENTRY(data + in_off, data + out_off, rows, cols, stride). */
typedef struct ev_khost_call {
    uint64_t in_off, out_off;
} ev_khost_call;

/* The control block, at offset 0 of the shared memory. */
typedef struct ev_khost_ctl {
    uint32_t magic, version;
    uint32_t state;         /* futex: EV_KHOST_* */
    uint32_t req;           /* futex: bumped by the worker, one per request */
    uint32_t done;          /* futex: set to req by the host when the request ended */
    uint32_t host_asleep;   /* 1 while the host sleeps on req: the worker wakes it only then */
    uint32_t worker_asleep; /* 1 while the worker sleeps on done: the host wakes it only then */
    int64_t spin_ns;        /* how long either side spins before it sleeps (0 when both share one CPU) */
    int32_t result;         /* the request's: 0, or the first non-zero return of the entry */
    int64_t calls_ns;       /* the request's calls as the host timed them (its own clock, on a page the
                             kernel shares: a diagnostic, never a measurement) */
    uint64_t failed_call;   /* the call (list index) that returned non-zero */
    int64_t rows, cols, stride;
    uint64_t first, count;         /* the request: calls [first, first + count) */
    uint64_t calls_off;            /* where the call list lies in the mapping */
    uint64_t calls_cap;            /* its capacity */
    uint64_t data_off, data_bytes; /* the data region */
    int32_t landlock_abi;          /* the Landlock ABI the host confined itself with; 0: none here */
    int32_t caps_dropped;          /* 1: the host holds no capability */
    ev_khost_region regions[EV_KHOST_MAX_REGIONS]; /* how the host maps the data region */
    uint32_t n_regions;
    int32_t fault_signal; /* EV_KHOST_FAULTED: SIGSEGV or SIGBUS */
    int64_t fault_off;    /* its address's offset from the data region, -1: outside it */
    uint64_t fault_addr;  /* the address itself */
    int64_t violation_nr; /* the system call stopped, -1: none */
    uint64_t violation_args[3];
    char violation_path[256]; /* the path an open-family call named, "" */
    char error[512];          /* why the shared object could not be loaded */
} ev_khost_ctl;

typedef struct ev_khost ev_khost;

/*
 * Starts the kernel host of arm name (for messages) for the shared object
 * lib and its entry: a memfd
 * of one control page, calls_cap calls and data_bytes of data, mapped
 * here (the call list read-only in the host), with regions[0..n_regions)
 * describing the data region (ev_khost_region; data_bytes page aligned);
 * with own_cpus (the CPUs are the job's own: a protocol's cpu_set) and two
 * or more CPUs in this process's affinity, the handshake spins;
 * the host started from the worker's own directory with the memfd
 * on fd 3, in this process's group, killed when this process dies; waits
 * until it is ready.  The worker makes itself non-dumpable first (no
 * process without CAP_SYS_PTRACE may read its memory through /proc).
 * memory_mb > 0: the host's address space is limited (RLIMIT_AS, which
 * it cannot raise) to the shared memory, EV_KHOST_BASE_MB for its program
 * and libraries, and memory_mb: an allocation past it fails (the kernel's
 * entry sees NULL or MAP_FAILED) instead of taking the host's memory from
 * the worker, the supervisor and the jobs after it.
 * OUT: *out (ev_khost_stop).  EV_EINVAL naming what the host said (the
 * object cannot be loaded, the entry is missing); EV_EPROC when it cannot
 * be started or died.
 */
ev_status ev_khost_start(const char *name, const char *lib, const char *entry, size_t calls_cap,
                         size_t data_bytes, const ev_khost_region *regions, size_t n_regions, int own_cpus,
                         int64_t memory_mb, ev_khost **out, ev_err *err);

/* 1 when the handshake spins (own_cpus, and two CPUs or more), else 0. */
int ev_khost_spins(const ev_khost *h);

/* The shared data region (data_bytes, page aligned): the inputs and
 * outputs the calls name by offset. */
unsigned char *ev_khost_data(ev_khost *h);

/* Writes calls[0..n) into the call list from index at (at + n <= cap),
 * and the shape every call gets. */
void ev_khost_calls(ev_khost *h, size_t at, const ev_khost_call *calls, size_t n, int64_t rows, int64_t cols,
                    int64_t stride);

/*
 * Runs calls [first, first + count) of the list and waits until the host
 * says they ended.  EV_EPROC when an entry returned non-zero (naming the
 * call and the value), when the host stopped a system call (naming it:
 * "... made a system call its process may not make: openat(\"/proc/1/mem\")"),
 * when it faulted (naming the region: "... wrote to input set 0 (byte N),
 * which its process maps read-only: it wrote its own input"), or when the
 * host died (its signal or status).  A held host (ev_khost_hold) is continued
 * once the request is written.
 */
ev_status ev_khost_run(ev_khost *h, uint64_t first, uint64_t count, ev_err *err);

/* 1 when the host is idle: asleep waiting for its next request, or held
 * (its scheduler state S or T in /proc), 0 while it runs (late work), -1
 * unknown. */
int ev_khost_idle(ev_khost *h);

/*
 * Holds the host's process stopped (SIGSTOP) until the next request, and
 * waits until it is (at most 1 s): between requests the worker does the
 * untimed work of the next timed op (a cold sample's plants, then its
 * flush), and a host left running could do that op's work then, before
 * its timer (tests/cheats/coldshift.c).  ev_khost_run continues it
 * (SIGCONT) after its request is written, so it resumes with the request
 * already there.  Called where the worker's untimed work begins (after a
 * validation's call, a cold op, a hot sample's late-work wait); a no-op
 * when held already or ended.
 */
void ev_khost_hold(ev_khost *h);

/* Continues a held host (SIGCONT) now, before a timed request whose input
 * it cannot know yet (a hot sample: its plants are written inside the
 * timer), so that the timer does not hold its wake from the stop; a no-op
 * when not held.  A cold op leaves it to ev_khost_run: its input is
 * planted before its timer. */
void ev_khost_release(ev_khost *h);

/* The host's CPU time so far in ns (its CPU clock), -1 when unknown. */
int64_t ev_khost_cpu_ns(ev_khost *h);

/* The last request's calls as the host itself timed them, in ns (the
 * handshake excluded): a diagnostic only, since the kernel shares the
 * page it is written on. */
int64_t ev_khost_calls_ns(const ev_khost *h);

/* The host's pid. */
pid_t ev_khost_pid(const ev_khost *h);

/* Kills and reaps the host, unmaps the memory; NULL-safe. */
void ev_khost_stop(ev_khost *h);

/* The rules the kernel host cannot hold on cpu, one sentence each, NULL
 * terminated: the one list docs/defenses.md names and every run with an
 * external kernel on cpu records in its environment ("kernel_isolation",
 * sup_finish.c), so the bundle says them too. */
extern const char *const ev_khost_not_held[];

/* The Landlock ABI this host's kernel offers (the host confines itself
 * with it), 0 where it has none. */
int ev_khost_landlock_abi(void);

/* The name of system call nr on this architecture ("openat"), or NULL. */
const char *ev_khost_syscall_name(int64_t nr);

#endif
