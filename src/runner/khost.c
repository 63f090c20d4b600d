/*
 * khost.c: the worker's side of the kernel host (khost.h): the shared
 * memory, the host's start, requests and their completion, and what the
 * worker says when the host stops.
 */
#include "khost.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u

/* A pause between two reads of a word another CPU writes. */
#if defined(__x86_64__)
#define RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RELAX() __asm__ volatile("yield")
#else
#define RELAX() ((void)0)
#endif

/* How long the worker waits on a futex before it looks at the host's
 * process (a host that died wakes nobody). */
#define POLL_NS 20000000L

struct ev_khost {
    unsigned char *base; /* the whole mapping */
    size_t len;
    ev_khost_ctl *ctl;
    unsigned char *data;
    ev_khost_call *calls;
    size_t calls_cap;
    ev_khost_region regions[EV_KHOST_MAX_REGIONS]; /* the worker's own copy, to name a fault */
    size_t n_regions;
    pid_t pid;
    int reaped, status;
    int held; /* 1: stopped by ev_khost_hold, continued by the next request */
    clockid_t cpu_clock;
    int have_clock;
    char name[40]; /* the arm, for messages */
    char entry[64];
};

/* 1 in a build under AddressSanitizer (make asan), whose host reserves
 * terabytes of shadow address space at start: there the host's address
 * space is not limited (ev_khost_start). */
#if defined(__SANITIZE_ADDRESS__)
#define EV_KHOST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EV_KHOST_SANITIZED 1
#endif
#endif
#ifndef EV_KHOST_SANITIZED
#define EV_KHOST_SANITIZED 0
#endif

/* Rounds n up to whole pages. */
static size_t pages(size_t n)
{
    return (n + PAGE - 1) / PAGE * PAGE;
}

/* Monotonic time in ns. */
static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* How long each side spins before it sleeps (khost.h): 100 us where the
 * caller says the CPUs are the job's own (a protocol's cpu_set) and this
 * process may run on two or more of them, else none. */
static int64_t spin_ns(int own_cpus)
{
    cpu_set_t set;
    return own_cpus && !sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 1 ? 100000 : 0;
}

/* A futex wait on the shared word w while it holds val, at most POLL_NS. */
static void wait_on(uint32_t *w, uint32_t val)
{
    struct timespec t = {0, POLL_NS};
    syscall(SYS_futex, w, FUTEX_WAIT, val, &t, NULL, 0);
}

/* Reaps the host when it has ended (without waiting).  Returns 1 when it
 * has. */
static int ended(ev_khost *h)
{
    int st;
    if (h->reaped)
        return 1;
    if (waitpid(h->pid, &st, WNOHANG) == h->pid) {
        h->reaped = 1;
        h->status = st;
        return 1;
    }
    return 0;
}

static const struct {
    long nr;
    const char *name;
} names[] = {
#define N(x)                                                                                                 \
    {                                                                                                        \
        SYS_##x, #x                                                                                          \
    }
    N(read),
    N(write),
    N(close),
    N(openat),
    N(newfstatat),
    N(mmap),
    N(mprotect),
    N(munmap),
    N(brk),
    N(ioctl),
    N(pread64),
    N(pwrite64),
    N(readv),
    N(writev),
    N(pipe2),
    N(dup),
    N(dup3),
    N(socket),
    N(connect),
    N(accept),
    N(sendto),
    N(recvfrom),
    N(bind),
    N(listen),
    N(clone),
    N(clone3),
    N(execve),
    N(execveat),
    N(kill),
    N(tkill),
    N(tgkill),
    N(ptrace),
    N(process_vm_readv),
    N(process_vm_writev),
    N(setsid),
    N(setpgid),
    N(prctl),
    N(unshare),
    N(setns),
    N(mount),
    N(chroot),
    N(unlinkat),
    N(mkdirat),
    N(renameat2),
    N(fchmodat),
    N(fchownat),
    N(madvise),
    N(mremap),
    N(rt_sigaction),
    N(rt_sigprocmask),
    N(sched_setaffinity),
    N(sched_getaffinity),
    N(getdents64),
    N(memfd_create),
    N(pidfd_open),
    N(pidfd_getfd),
    N(bpf),
    N(perf_event_open),
    N(io_uring_setup),
    N(seccomp),
    N(faccessat),
    N(statx),
    N(readlinkat),
    N(wait4),
    N(exit_group),
#ifdef SYS_open
    N(open),
    N(creat),
    N(fork),
    N(vfork),
    N(unlink),
    N(mkdir),
    N(stat),
    N(lstat),
    N(access),
    N(readlink),
#endif
#ifdef SYS_openat2
    N(openat2),
#endif
#undef N
};

const char *const ev_khost_not_held[] = {
    "the kernel shares the CPUs, their caches and the memory bus with the worker: only its process, its "
    "memory and its system calls are apart, not the hardware it could time or disturb",
    "it can read the clock (clock_gettime is a vDSO call no filter sees) and so tell a timed batch from an "
    "untimed call by their pace",
    "it shares the control block's page, so it can say its batch ended before it did: the late-work rule's "
    "wall clock (the host back asleep) catches that only past its margin (1.5 x + 20 ms), as it does a side "
    "stream on cuda",
    "the input variants and every output slot are shared memory: it can read any variant and write any "
    "slot during a request (the planted checks and the guards, not the process boundary, hold it to its "
    "ops; the pristine base and the plants' table stay in the worker)",
    "its shared object's constructors run before the last filter: they may open files read-only with "
    "O_CLOEXEC, confined by Landlock to the object itself where the kernel has Landlock (landlock_abi 0: "
    "not confined)",
    "foreign CPU time is counted in the kernel's ticks (proc's stat file, 10 ms on most hosts) where it "
    "keeps no scheduler statistics (proc's schedstat file)",
    NULL,
};

int ev_khost_landlock_abi(void)
{
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */);
    return abi > 0 ? (int)abi : 0;
}

const char *ev_khost_syscall_name(int64_t nr)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].nr == nr)
            return names[i].name;
    return NULL;
}

/* What a kernel that made system call nr tried to do, in words. */
static const char *attempt_of(int64_t nr)
{
    static const struct {
        long nr;
        const char *what;
    } what[] = {
        {SYS_clone, "start a process or thread"},
        {SYS_clone3, "start a process or thread"},
        {SYS_execve, "run a program"},
        {SYS_execveat, "run a program"},
        {SYS_openat, "reach the file system"},
        {SYS_newfstatat, "reach the file system"},
        {SYS_statx, "reach the file system"},
        {SYS_faccessat, "reach the file system"},
        {SYS_readlinkat, "reach the file system"},
        {SYS_unlinkat, "reach the file system"},
        {SYS_mkdirat, "reach the file system"},
        {SYS_renameat2, "reach the file system"},
        {SYS_getdents64, "reach the file system"},
        {SYS_process_vm_readv, "read another process's memory"},
        {SYS_process_vm_writev, "write another process's memory"},
        {SYS_ptrace, "trace another process"},
        {SYS_pidfd_getfd, "take another process's descriptor"},
        {SYS_kill, "signal a process"},
        {SYS_tkill, "signal a thread"},
        {SYS_tgkill, "signal a thread"},
        {SYS_socket, "open a socket"},
        {SYS_connect, "connect a socket"},
        {SYS_setsid, "start a session of its own"},
        {SYS_rt_sigprocmask, "block its signals (as pthread_create does to start a thread, or fork)"},
        {SYS_setpgid, "change its process group"},
#ifdef SYS_open
        {SYS_open, "reach the file system"},
        {SYS_creat, "reach the file system"},
        {SYS_stat, "reach the file system"},
        {SYS_lstat, "reach the file system"},
        {SYS_access, "reach the file system"},
        {SYS_unlink, "reach the file system"},
        {SYS_mkdir, "reach the file system"},
        {SYS_readlink, "reach the file system"},
        {SYS_fork, "start a process or thread"},
        {SYS_vfork, "start a process or thread"},
#endif
#ifdef SYS_openat2
        {SYS_openat2, "reach the file system"},
#endif
    };
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++)
        if (what[i].nr == nr)
            return what[i].what;
    return "make a system call its process may not make";
}

/* The region of h holding data offset off, or NULL. */
static const ev_khost_region *region_of(const ev_khost *h, int64_t off)
{
    for (size_t i = 0; off >= 0 && i < h->n_regions; i++)
        if ((uint64_t)off >= h->regions[i].off && (uint64_t)off - h->regions[i].off < h->regions[i].len)
            return &h->regions[i];
    return NULL;
}

/* Why the host is gone, or stopped, as one line into err (EV_EPROC). */
static ev_status why_gone(ev_khost *h, ev_err *err)
{
    ev_khost_ctl *c = h->ctl;
    uint32_t state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
    if (state == EV_KHOST_STOPPED && c->violation_nr >= 0) {
        const char *name = ev_khost_syscall_name(c->violation_nr);
        char path[sizeof c->violation_path];
        memcpy(path, c->violation_path, sizeof path);
        path[sizeof path - 1] = '\0';
        return ev_err_set(err, EV_EPROC,
                          "external kernel %s tried to %s: %s%s%s%s (system call %lld), stopped by the "
                          "seccomp filter of its process (a process of its own, which may only run its calls "
                          "on the shared memory: no file, no process, no thread, no other process's memory)",
                          h->name, attempt_of(c->violation_nr), name ? name : "a system call",
                          path[0] ? "(\"" : "", path, path[0] ? "\")" : "", (long long)c->violation_nr);
    }
    if (state == EV_KHOST_FAULTED) {
        const ev_khost_region *r = region_of(h, c->fault_off);
        int wrote_input = r && !strncmp(r->name, "input", 5);
        if (r)
            return ev_err_set(err, EV_EPROC,
                              "external kernel %s touched %s at byte %lld of it, which its process maps %s "
                              "(signal %d)%s",
                              h->name, r->name, (long long)(c->fault_off - (int64_t)r->off),
                              r->prot == PROT_NONE ? "inaccessible: it read or wrote outside its input and "
                                                     "output"
                                                   : "read-only",
                              (int)c->fault_signal, wrote_input ? ": it wrote its own input" : "");
        return ev_err_set(err, EV_EPROC,
                          "external kernel %s faulted (signal %d) at an address outside the shared memory",
                          h->name, (int)c->fault_signal);
    }
    if (state == EV_KHOST_FAILED) {
        char e[sizeof c->error];
        memcpy(e, c->error, sizeof e);
        e[sizeof e - 1] = '\0';
        return ev_err_set(err, EV_EINVAL, "external kernel %s: %s", h->name, e);
    }
    if (ended(h)) {
        if (WIFSIGNALED(h->status) && WTERMSIG(h->status) == SIGSYS)
            return ev_err_set(err, EV_EPROC,
                              "external kernel %s: its process was killed by its seccomp filter (SIGSYS) for "
                              "a system call it may not make, made with SIGSYS blocked",
                              h->name);
        if (WIFSIGNALED(h->status))
            return ev_err_set(err, EV_EPROC, "external kernel %s: its process died of signal %d (%s)",
                              h->name, WTERMSIG(h->status), strsignal(WTERMSIG(h->status)));
        return ev_err_set(err, EV_EPROC, "external kernel %s: its process exited with status %d", h->name,
                          WIFEXITED(h->status) ? WEXITSTATUS(h->status) : -1);
    }
    return EV_OK;
}

/* The path of the host program: beside this process's executable. */
static int host_path(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;
    if (n <= 0)
        return -1;
    self[n] = '\0';
    if (!(slash = strrchr(self, '/')))
        return -1;
    *slash = '\0';
    return (size_t)snprintf(out, cap, "%s/%s", self, EV_KHOST_PROGRAM) < cap ? 0 : -1;
}

ev_status ev_khost_start(const char *name, const char *lib, const char *entry, size_t calls_cap,
                         size_t data_bytes, const ev_khost_region *regions, size_t n_regions, int own_cpus,
                         int64_t memory_mb, ev_khost **out, ev_err *err)
{
    ev_khost *h = calloc(1, sizeof *h);
    char prog[PATH_MAX + 32], abs_lib[PATH_MAX];
    size_t calls_len = pages((calls_cap ? calls_cap : 1) * sizeof(ev_khost_call));
    int fd = -1, ro = -1;
    pid_t parent = getpid();
    ev_status rc = EV_OK;

    if (!h)
        return ev_err_set(err, EV_ENOMEM, "kernel host: out of memory");
    h->pid = -1;
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->entry, sizeof h->entry, "%s", entry);
    if (n_regions > EV_KHOST_MAX_REGIONS || data_bytes % PAGE) {
        rc = ev_err_set(err, EV_EINVAL, "kernel host: %zu regions, %zu data bytes", n_regions, data_bytes);
        goto fail;
    }
    /* the object by its absolute path: ld.so would call getcwd for a
     * relative one, which the loader's filter stops */
    if (!realpath(lib, abs_lib)) {
        rc = ev_err_set(err, EV_EINVAL, "external kernel %s: %s: %s", name, lib, strerror(errno));
        goto fail;
    }
    if (host_path(prog, sizeof prog) || access(prog, X_OK)) {
        rc = ev_err_set(err, EV_EPROC, "kernel host: no %s beside the worker (run make)", EV_KHOST_PROGRAM);
        goto fail;
    }
    h->len = PAGE + calls_len + data_bytes;
    fd = memfd_create("evident-kernel-host", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)h->len)) {
        rc = ev_err_set(err, EV_ENOMEM, "kernel host: shared memory of %zu bytes: %s", h->len,
                        strerror(errno));
        goto fail;
    }
    h->base = mmap(NULL, h->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h->base == MAP_FAILED) {
        h->base = NULL;
        rc = ev_err_set(err, EV_ENOMEM, "kernel host: cannot map %zu bytes: %s", h->len, strerror(errno));
        goto fail;
    }
    h->ctl = (ev_khost_ctl *)h->base;
    h->calls = (ev_khost_call *)(h->base + PAGE);
    h->calls_cap = calls_cap;
    h->data = h->base + PAGE + calls_len;
    h->ctl->magic = EV_KHOST_MAGIC;
    h->ctl->version = EV_KHOST_VERSION;
    h->ctl->calls_off = PAGE;
    h->ctl->calls_cap = calls_cap;
    h->ctl->data_off = PAGE + calls_len;
    h->ctl->data_bytes = data_bytes;
    h->ctl->violation_nr = -1;
    h->ctl->fault_off = -1;
    h->ctl->spin_ns = spin_ns(own_cpus);
    memcpy(h->ctl->regions, regions, n_regions * sizeof *regions);
    h->ctl->n_regions = (uint32_t)n_regions;
    memcpy(h->regions, regions, n_regions * sizeof *regions);
    h->n_regions = n_regions;
    /* nothing without CAP_SYS_PTRACE reads this process's memory through
     * /proc (the host drops every capability) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    {
        /* the same memory read-only, for the host's inputs and call list */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        ro = open(self, O_RDONLY | O_CLOEXEC);
        if (ro < 0) {
            rc = ev_err_set(err, EV_EPROC, "kernel host: cannot reopen the shared memory read-only: %s",
                            strerror(errno));
            goto fail;
        }
    }
    if (!h->ctl->spin_ns) {
        /* no CPUs of the job's own: the worker's thread and the host share
         * the CPU the worker is on, taking turns at each request (the same
         * placement for every job, no spinner waiting on a CPU another
         * process holds: docs/defenses.md, "What the process costs") */
        cpu_set_t one;
        int cpu = sched_getcpu();
        CPU_ZERO(&one);
        if (cpu >= 0) {
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
        }
    }
    h->pid = fork();
    if (h->pid < 0) {
        rc = ev_err_set(err, EV_EPROC, "kernel host: fork: %s", strerror(errno));
        goto fail;
    }
    if (h->pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        char *argv[] = {prog, "--lib", abs_lib, "--entry", (char *)entry, NULL};
        /* the worker's process group (the watchdog's kill reaches it), dead with the worker */
        /* moved above 4 first, so neither lands on the other (nor stays close-on-exec as 3 or 4) */
        int rw_hi = fcntl(fd, F_DUPFD, 10), ro_hi = fcntl(ro, F_DUPFD, 10);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent || rw_hi < 0 || ro_hi < 0 ||
            dup2(rw_hi, 3) < 0 || dup2(ro_hi, 4) < 0 || (nul >= 0 && dup2(nul, 0) < 0) || dup2(2, 1) < 0)
            _exit(126);
        signal(SIGPIPE, SIG_DFL);
        if (memory_mb > 0 && !EV_KHOST_SANITIZED) { /* the shared memory, the program's own, the kernel's */
            rlim_t as = (rlim_t)h->len + ((rlim_t)EV_KHOST_BASE_MB + (rlim_t)memory_mb) * 1048576u;
            struct rlimit lim = {as, as};
            if (setrlimit(RLIMIT_AS, &lim))
                _exit(126);
        }
        execv(prog, argv);
        _exit(127);
    }
    close(fd);
    close(ro);
    fd = ro = -1;
    if (!clock_getcpuclockid(h->pid, &h->cpu_clock))
        h->have_clock = 1;
    for (;;) {
        uint32_t st = __atomic_load_n(&h->ctl->state, __ATOMIC_ACQUIRE);
        if (st == EV_KHOST_READY)
            break;
        if (st != EV_KHOST_LOADING || ended(h)) {
            rc = why_gone(h, err);
            if (!rc)
                rc = ev_err_set(err, EV_EPROC, "kernel host: it stopped while loading");
            goto fail;
        }
        wait_on(&h->ctl->state, EV_KHOST_LOADING);
    }
    *out = h;
    return EV_OK;
fail:
    if (fd >= 0)
        close(fd);
    if (ro >= 0)
        close(ro);
    ev_khost_stop(h);
    return rc;
}

unsigned char *ev_khost_data(ev_khost *h)
{
    return h->data;
}

void ev_khost_calls(ev_khost *h, size_t at, const ev_khost_call *calls, size_t n, int64_t rows, int64_t cols,
                    int64_t stride)
{
    if (at <= h->calls_cap && n <= h->calls_cap - at)
        memcpy(h->calls + at, calls, n * sizeof *calls);
    h->ctl->rows = rows;
    h->ctl->cols = cols;
    h->ctl->stride = stride;
}

ev_status ev_khost_run(ev_khost *h, uint64_t first, uint64_t count, ev_err *err)
{
    ev_khost_ctl *c = h->ctl;
    uint32_t seq;
    ev_status rc;

    if (first > h->calls_cap || count > h->calls_cap - first)
        return ev_err_set(err, EV_EINVAL, "kernel host: calls %llu..%llu of %zu", (unsigned long long)first,
                          (unsigned long long)(first + count), h->calls_cap);
    if ((rc = why_gone(h, err)))
        return rc;
    c->first = first;
    c->count = count;
    seq = __atomic_load_n(&c->req, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&c->req, seq, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->host_asleep, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &c->req, FUTEX_WAKE, 1, NULL, NULL, 0);
    ev_khost_release(h); /* where held, it resumes with the request there: nothing of it ran before */
    /* spin first: a batch of quick calls ends within microseconds (khost.h) */
    if (c->spin_ns > 0) {
        int64_t until = mono_ns() + c->spin_ns;
        while (__atomic_load_n(&c->done, __ATOMIC_SEQ_CST) != seq && mono_ns() < until)
            RELAX();
    }
    for (;;) {
        uint32_t d = __atomic_load_n(&c->done, __ATOMIC_SEQ_CST);
        if (d == seq)
            break;
        if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != EV_KHOST_READY || ended(h)) {
            rc = why_gone(h, err);
            return rc ? rc : ev_err_set(err, EV_EPROC, "kernel host: it stopped during a request");
        }
        __atomic_store_n(&c->worker_asleep, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&c->done, __ATOMIC_SEQ_CST) == d)
            wait_on(&c->done, d);
        __atomic_store_n(&c->worker_asleep, 0, __ATOMIC_SEQ_CST);
    }
    if (c->result)
        return ev_err_set(err, EV_EPROC, "external kernel %s: its entry %s returned %d (call %llu)", h->name,
                          h->entry, (int)c->result, (unsigned long long)c->failed_call);
    return EV_OK;
}

/* The host's scheduler state (R, S, T, ...) from /proc, 0 unknown. */
static char proc_state(const ev_khost *h)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)h->pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ...": the state follows the last ')' */
    if (!(p = strrchr(buf, ')')) || p[1] != ' ')
        return 0;
    return p[2];
}

int ev_khost_idle(ev_khost *h)
{
    char s = proc_state(h);
    return !s ? -1 : s == 'S' || s == 'T';
}

void ev_khost_release(ev_khost *h)
{
    if (h && h->held) {
        kill(h->pid, SIGCONT);
        h->held = 0;
    }
}

void ev_khost_hold(ev_khost *h)
{
    if (!h || h->held || h->pid <= 0 || h->reaped || ended(h) || kill(h->pid, SIGSTOP))
        return;
    h->held = 1;
    for (int i = 0; i < 20000 && proc_state(h) != 'T' && !ended(h); i++) {
        struct timespec us50 = {0, 50000};
        nanosleep(&us50, NULL);
    }
}

int64_t ev_khost_cpu_ns(ev_khost *h)
{
    struct timespec t;
    if (!h || !h->have_clock || clock_gettime(h->cpu_clock, &t))
        return -1;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int ev_khost_spins(const ev_khost *h)
{
    return h->ctl->spin_ns > 0;
}

int64_t ev_khost_calls_ns(const ev_khost *h)
{
    return h->ctl->calls_ns;
}

pid_t ev_khost_pid(const ev_khost *h)
{
    return h->pid;
}

void ev_khost_stop(ev_khost *h)
{
    if (!h)
        return;
    if (h->pid > 0 && !h->reaped) {
        int st;
        kill(h->pid, SIGKILL);
        while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    if (h->base)
        munmap(h->base, h->len);
    free(h);
}
