/*
 * khost_main.c: build/evident-kernel-host, the process an external
 * kernel's host code runs in on the cpu backend (khost.h).
 *
 *   evident-kernel-host --lib SO --entry NAME
 *   (the shared memory on fd 3, read-write; the same memory on fd 4,
 *   read-only: the inputs and the call list are mapped from it)
 *
 * Started by the worker (khost.c), never by hand.  In order, before any
 * byte of the kernel's code runs: map the shared memory (inputs and the
 * call list from the read-only descriptor, guard pages inaccessible),
 * close every other
 * descriptor but stdin, stdout and stderr, catch SIGSYS (the filters' trap:
 * the stopped call is written into the control block and the process
 * exits), drop every capability, set no_new_privs, confine the file system
 * with Landlock to the shared object alone (where the kernel has Landlock:
 * its ABI is written into the control block), and install the loader's
 * filter.  Then dlopen (the object's constructors run under that filter),
 * dlsym, the steady filter, READY, and the request loop.  Nothing here
 * links evident's library: the process holds nothing but the kernel, its
 * loader and the shared memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "evident_kernel.h"
#include "runner/khost.h"

#if defined(__x86_64__)
#define ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NATIVE AUDIT_ARCH_AARCH64
#else
#error "evident-kernel-host: seccomp filters for x86_64 and aarch64 only"
#endif

/* Exit statuses the worker reads (khost.c). */
#define EXIT_USAGE   2
#define EXIT_LOAD    3
#define EXIT_STOPPED 4

static ev_khost_ctl *ctl;
static const struct sock_fprog *steady_fp; /* compiled before the loader's filter names it */

/* A futex wake of every waiter on the shared word w. */
static void wake(uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Index of the argument that names a path for system call nr, -1 none. */
static int path_arg(long nr)
{
    switch (nr) {
    case SYS_openat:
#ifdef SYS_openat2
    case SYS_openat2:
#endif
    case SYS_newfstatat:
    case SYS_execveat:
    case SYS_unlinkat:
    case SYS_mkdirat:
    case SYS_faccessat:
        return 1;
    case SYS_execve:
#ifdef SYS_open
    case SYS_open:
    case SYS_creat:
    case SYS_unlink:
    case SYS_mkdir:
    case SYS_stat:
    case SYS_lstat:
    case SYS_access:
#endif
        return 0;
    default:
        return -1;
    }
}

/*
 * SIGSYS from a filter's SECCOMP_RET_TRAP: writes the call and its first
 * arguments (and the path an open-family call named, read last: a bad
 * pointer may fault here, after the number is written) into the control
 * block, wakes the worker and exits.  Nothing returns to the kernel.
 */
static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    uint64_t a[3];
    int pa;
    (void)sig;
#if defined(__x86_64__)
    a[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RDI];
    a[1] = (uint64_t)uc->uc_mcontext.gregs[REG_RSI];
    a[2] = (uint64_t)uc->uc_mcontext.gregs[REG_RDX];
#else
    a[0] = uc->uc_mcontext.regs[0];
    a[1] = uc->uc_mcontext.regs[1];
    a[2] = uc->uc_mcontext.regs[2];
#endif
    ctl->violation_nr = si->si_syscall;
    memcpy(ctl->violation_args, a, sizeof a);
    __atomic_store_n(&ctl->state, EV_KHOST_STOPPED, __ATOMIC_RELEASE);
    wake(&ctl->state);
    wake(&ctl->done);
    pa = path_arg(si->si_syscall);
    if (pa >= 0 && a[pa]) {
        const char *p = (const char *)(uintptr_t)a[pa];
        size_t i = 0;
        for (; i + 1 < sizeof ctl->violation_path && p[i]; i++)
            ctl->violation_path[i] = p[i];
        ctl->violation_path[i] = '\0';
    }
    syscall(SYS_exit_group, EXIT_STOPPED);
}

/* SIGSEGV or SIGBUS: writes where the fault was (its offset in the data
 * region, -1 outside it) into the control block, wakes the worker and
 * exits. */
static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    uintptr_t a = (uintptr_t)si->si_addr, d = (uintptr_t)ctl + ctl->data_off;
    (void)ucv;
    ctl->fault_signal = sig;
    ctl->fault_addr = a;
    ctl->fault_off = a >= d && a - d < ctl->data_bytes ? (int64_t)(a - d) : -1;
    __atomic_store_n(&ctl->state, EV_KHOST_FAULTED, __ATOMIC_RELEASE);
    wake(&ctl->state);
    wake(&ctl->done);
    syscall(SYS_exit_group, EXIT_STOPPED);
}

/* ---- seccomp ------------------------------------------------------------ */

/* (args[arg] & mask) == value (!= value when ne) on the argument's low
 * 32 bits, or its high 32 bits when hi. */
typedef struct cond {
    int arg, hi, ne;
    uint32_t mask, value;
} cond;

/* A system call allowed, when every one of its conditions holds (n of
 * them); n = -1: refused with EPERM, not trapped (REFUSE). */
typedef struct rule {
    long nr;
    int n;
    cond c[4];
} rule;

#define MAX_INSNS 256

typedef struct prog {
    struct sock_filter f[MAX_INSNS];
    unsigned short n;
} prog;

static void emit(prog *p, unsigned short code, unsigned char jt, unsigned char jf, uint32_t k)
{
    if (p->n < MAX_INSNS)
        p->f[p->n++] = (struct sock_filter){code, jt, jf, k};
}

/* The offset of the low 32 bits of argument i (both architectures are
 * little-endian). */
#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args) + 8u * (uint32_t)(i))

/*
 * Compiles into *p a filter allowing rules[0..n) and trapping every other
 * call of this architecture (another architecture, or x32, is killed).
 * Returns 0, or -1 when it does not fit.
 */
static int compile(const rule *rules, size_t n, prog *p)
{
    p->n = 0;

    emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, arch));
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, ARCH_NATIVE);
    emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
    emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
    emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, 0x40000000u); /* the x32 ABI */
    emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
#endif
    for (size_t i = 0; i < n; i++) {
        const rule *r = &rules[i];
        if (r->n < 0) {
            emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)r->nr);
            emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
            continue;
        }
        if (!r->n) {
            emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)r->nr);
            emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
            continue;
        }
        /* jeq nr; per condition: ld arg, [and mask], jeq value (else to the
         * trap); ret allow; ret trap.  The nr's jf skips the whole block. */
        unsigned len = 1, at;
        for (int c = 0; c < r->n; c++)
            len += 2 + (r->c[c].mask != 0xffffffffu);
        len += 2;
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, (unsigned char)(len - 1), (uint32_t)r->nr);
        at = 1;
        for (int c = 0; c < r->n; c++) {
            emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LO(r->c[c].arg) + (r->c[c].hi ? 4u : 0u));
            at++;
            if (r->c[c].mask != 0xffffffffu) {
                emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, r->c[c].mask);
                at++;
            }
            /* the trap is the block's last instruction, index len - 1 */
            if (r->c[c].ne)
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, (unsigned char)(len - 1 - at - 1), 0, r->c[c].value);
            else
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, (unsigned char)(len - 1 - at - 1), r->c[c].value);
            at++;
        }
        emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);
        emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_TRAP);
    }
    emit(p, BPF_RET | BPF_K, 0, 0, SECCOMP_RET_TRAP);
    return p->n >= MAX_INSNS ? -1 : 0;
}

/* Installs compiled filter fp (seccomp(2): the loader's filter allows this
 * call only for the steady filter's fp).  Filters stack: a later one can
 * only take away.  SECCOMP_FILTER_FLAG_SPEC_ALLOW: without it the kernel
 * turns speculative store bypass off for the process (SSBD), which would
 * slow down some external kernels against the same code in the worker: a
 * bias against them, not a defence.  Returns 0, or -1. */
static int install(const struct sock_fprog *fp)
{
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, fp) ? -1 : 0;
}

#define ALLOW(nr)                                                                                            \
    {                                                                                                        \
        (nr), 0,                                                                                             \
        {                                                                                                    \
            {                                                                                                \
                0, 0, 0, 0, 0                                                                                \
            }                                                                                                \
        }                                                                                                    \
    }
/* A call that fails with EPERM: its callers have a way without it. */
#define REFUSE(nr)                                                                                           \
    {                                                                                                        \
        (nr), -1,                                                                                            \
        {                                                                                                    \
            {                                                                                                \
                0, 0, 0, 0, 0                                                                                \
            }                                                                                                \
        }                                                                                                    \
    }
/* A condition on an argument's low 32 bits: equal, or not equal (NE). */
#define C(arg, mask, value)                                                                                  \
    {                                                                                                        \
        (arg), 0, 0, (mask), (value)                                                                         \
    }
#define NE(arg, value)                                                                                       \
    {                                                                                                        \
        (arg), 0, 1, 0xffffffffu, (value)                                                                    \
    }

/* What running the calls needs: the request's futex, anonymous memory
 * without execute permission (a kernel's scratch: malloc), signal
 * handlers but for the three the host keeps (SIGSYS, SIGSEGV, SIGBUS),
 * unblocking signals but not blocking them (a blocked SIGSYS would turn
 * the filter's trap into a death without a record: pthread_create blocks
 * every signal before its clone3, and is stopped here instead), the clock,
 * yielding and sleeping (and resuming a sleep stopped between requests:
 * restart_syscall, ev_khost_hold), its stderr, exit.  The inputs and the call list
 * are mapped from a read-only descriptor: no mprotect makes them
 * writable.  mremap fails (EPERM) whatever it is asked: growing a
 * read-write mapping of the shared memory (the control block's, an
 * output's) with MREMAP_MAYMOVE maps the file's later offsets, the inputs
 * among them, read-write at a new address, and old size 0 makes a second
 * view; glibc's realloc of a large block, mremap's one use a kernel
 * needs, falls back to malloc, copy and free when it fails
 * (tests/cheats/remap.c). */
static const rule steady[] = {
    ALLOW(SYS_futex),
    ALLOW(SYS_brk),
    {SYS_mmap, 2, {C(3, MAP_ANONYMOUS, MAP_ANONYMOUS), C(2, PROT_EXEC, 0)}},
    {SYS_mprotect, 1, {C(2, PROT_EXEC, 0)}},
    ALLOW(SYS_munmap),
    REFUSE(SYS_mremap),
    ALLOW(SYS_madvise),
    ALLOW(SYS_getrandom),
    {SYS_rt_sigaction, 3, {NE(0, SIGSYS), NE(0, SIGSEGV), NE(0, SIGBUS)}},
    {SYS_rt_sigprocmask, 1, {C(0, 0xffffffffu, SIG_UNBLOCK)}},
    ALLOW(SYS_rt_sigreturn),
    ALLOW(SYS_clock_gettime),
    ALLOW(SYS_clock_nanosleep),
    ALLOW(SYS_nanosleep),
    ALLOW(
        SYS_restart_syscall), /* a sleep with a timeout, resumed after the worker held the process stopped */
    ALLOW(SYS_gettimeofday),
    ALLOW(SYS_getpid),
    ALLOW(SYS_getppid),
    ALLOW(SYS_gettid),
    ALLOW(SYS_sched_yield),
    {SYS_write, 1, {C(0, 0xffffffffu, 2)}},
    ALLOW(SYS_exit),
    ALLOW(SYS_exit_group),
};

/* What the loader needs besides the steady set (steady[], below, is
 * added after these: a filter stacked on this one could not allow what
 * this one traps) to map the shared object, and so what its constructors
 * get: read-only opens with O_CLOEXEC, as ld.so makes them, reads, stat
 * of an open descriptor, executable mappings; main adds seccomp(2) for
 * the steady filter alone (its address). */
static const rule loader_extra[] = {
    {SYS_openat, 1, {C(2, 0xffffffffu, O_RDONLY | O_CLOEXEC)}},
    ALLOW(SYS_read),
    ALLOW(SYS_pread64),
    ALLOW(SYS_close),
    ALLOW(SYS_fstat),
    ALLOW(SYS_newfstatat),
    ALLOW(SYS_lseek),
    ALLOW(SYS_mmap),
    ALLOW(SYS_mprotect),
    ALLOW(SYS_rt_sigprocmask),
};

/* ---- Landlock ------------------------------------------------------------- */

/* The ABI's structures and rights, spelled here: older kernel headers
 * lack the later fields. */
struct evl_ruleset_attr {
    uint64_t handled_access_fs, handled_access_net, scoped;
};
struct evl_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));
#define EVL_CREATE_VERSION  1u
#define EVL_RULE_PATH       1
#define EVL_FS_EXECUTE      (1ull << 0)
#define EVL_FS_READ_FILE    (1ull << 2)
#define EVL_SCOPE_ABSTRACT  (1ull << 0)
#define EVL_SCOPE_SIGNAL    (1ull << 1)
#define EVL_NET_BIND_TCP    (1ull << 0)
#define EVL_NET_CONNECT_TCP (1ull << 1)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule       445
#define SYS_landlock_restrict_self  446
#endif

/*
 * Confines the file system to reading (and mapping) lib alone, and, where
 * the ABI has them, TCP and signals or abstract sockets outside the
 * process.  Returns the ABI used (>= 1), 0 where the kernel has no
 * Landlock, -1 when it has one and confining failed.
 */
static int confine(const char *lib)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, EVL_CREATE_VERSION);
    struct evl_ruleset_attr attr = {0, 0, 0};
    struct evl_path_beneath pb;
    size_t size = 8;
    int rs, fd, bad;

    if (abi < 1)
        return 0;
    /* every file-system right the ABI knows: 13 at 1, REFER at 2,
     * TRUNCATE at 3, IOCTL_DEV at 5 */
    attr.handled_access_fs = (1ull << 13) - 1;
    if (abi >= 2)
        attr.handled_access_fs |= 1ull << 13;
    if (abi >= 3)
        attr.handled_access_fs |= 1ull << 14;
    if (abi >= 5)
        attr.handled_access_fs |= 1ull << 15;
    if (abi >= 4) {
        attr.handled_access_net = EVL_NET_BIND_TCP | EVL_NET_CONNECT_TCP;
        size = 16;
    }
    if (abi >= 6) {
        attr.scoped = EVL_SCOPE_ABSTRACT | EVL_SCOPE_SIGNAL;
        size = 24;
    }
    rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return -1;
    fd = open(lib, O_PATH | O_CLOEXEC);
    pb.allowed_access = EVL_FS_READ_FILE | EVL_FS_EXECUTE;
    pb.parent_fd = fd;
    bad = fd < 0 || syscall(SYS_landlock_add_rule, rs, EVL_RULE_PATH, &pb, 0) ||
          syscall(SYS_landlock_restrict_self, rs, 0);
    if (fd >= 0)
        close(fd);
    close(rs);
    return bad ? -1 : (int)abi;
}

/* Drops every capability (effective, permitted, inheritable): uid 0
 * without CAP_SYS_PTRACE cannot read a non-dumpable worker's memory.
 * Returns 1 when dropped. */
static int drop_caps(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    return syscall(SYS_capset, &h, d) == 0;
}

/* Monotonic time in ns (a vDSO call: no system call, nothing to filter). */
static int64_t mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The next request after seen: spins for ctl->spin_ns (back-to-back
 * batches), then sleeps on req with host_asleep set (the worker wakes it
 * only then: khost.h). */
static uint32_t next_request(uint32_t seen)
{
    int64_t until = ctl->spin_ns > 0 ? mono() + ctl->spin_ns : 0;
    uint32_t req;
    for (;;) {
        if ((req = __atomic_load_n(&ctl->req, __ATOMIC_SEQ_CST)) != seen)
            return req;
        if (until && mono() < until)
            continue;
        __atomic_store_n(&ctl->host_asleep, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&ctl->req, __ATOMIC_SEQ_CST) == seen)
            syscall(SYS_futex, &ctl->req, FUTEX_WAIT, seen, NULL, NULL, 0);
        __atomic_store_n(&ctl->host_asleep, 0, __ATOMIC_SEQ_CST);
        until = 0;
    }
}

/* Records why the object cannot run and exits. */
static void fail_load(const char *fmt, const char *a, const char *b)
{
    snprintf(ctl->error, sizeof ctl->error, fmt, a, b);
    __atomic_store_n(&ctl->state, EV_KHOST_FAILED, __ATOMIC_RELEASE);
    wake(&ctl->state);
    _exit(EXIT_LOAD);
}

int main(int argc, char **argv)
{
    const char *lib = NULL, *entry = NULL;
    struct stat st;
    struct sigaction sa;
    unsigned char *base, *data;
    ev_khost_call *calls;
    evident_cpu_entry fn;
    void *so;
    uint32_t seen = 0;
    int abi;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--lib"))
            lib = argv[i + 1];
        else if (!strcmp(argv[i], "--entry"))
            entry = argv[i + 1];
    }
    if (!lib || !entry || fstat(3, &st) || st.st_size < (off_t)sizeof *ctl) {
        fprintf(stderr,
                "usage: %s --lib SO --entry NAME (the shared memory on fd 3; started by "
                "evident-worker)\n",
                argv[0]);
        return EXIT_USAGE;
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
    if (base == MAP_FAILED)
        return EXIT_USAGE;
    ctl = (ev_khost_ctl *)base;
    if (ctl->magic != EV_KHOST_MAGIC || ctl->version != EV_KHOST_VERSION ||
        ctl->data_off + ctl->data_bytes > (uint64_t)st.st_size ||
        ctl->calls_off + ctl->calls_cap * sizeof(ev_khost_call) > (uint64_t)st.st_size)
        return EXIT_USAGE;
    data = base + ctl->data_off;
    calls = (ev_khost_call *)(base + ctl->calls_off);
    ctl->violation_nr = -1;
    /* the data region as the worker laid it out: inputs mapped again from
     * the read-only descriptor (fd 4), guard pages inaccessible; then the
     * call list, read-only too */
    for (uint32_t i = 0; i < ctl->n_regions && i < EV_KHOST_MAX_REGIONS; i++) {
        const ev_khost_region *r = &ctl->regions[i];
        int bad = r->off + r->len > ctl->data_bytes || r->off % 4096 || r->len % 4096;
        if (!bad && r->prot == PROT_READ)
            bad = mmap(data + r->off, r->len, PROT_READ, MAP_SHARED | MAP_FIXED, 4,
                       (off_t)(ctl->data_off + r->off)) == MAP_FAILED;
        else if (!bad)
            bad = mprotect(data + r->off, r->len, (int)r->prot) != 0;
        if (bad)
            fail_load("cannot map region %s of the shared memory as declared%s", r->name, "");
    }
    if (ctl->calls_cap && mmap(calls, (ctl->calls_cap * sizeof *calls + 4095) / 4096 * 4096, PROT_READ,
                               MAP_SHARED | MAP_FIXED, 4, (off_t)ctl->calls_off) == MAP_FAILED)
        fail_load("cannot map the call list read-only%s%s", "", "");
    for (int fd = 3; fd < 1024; fd++) /* the mappings stay; nothing else is reachable */
        close(fd);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigfillset(&sa.sa_mask);
    sigaction(SIGSYS, &sa, NULL);
    sa.sa_sigaction = on_fault;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    ctl->caps_dropped = drop_caps();
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        fail_load("cannot set no_new_privs: %s%s", strerror(errno), "");
    abi = confine(lib);
    if (abi < 0)
        fail_load("Landlock refused to confine the file system to %s: %s", lib, strerror(errno));
    ctl->landlock_abi = abi;
    {
        /* the loader's filter lets seccomp(2) install the steady filter and
         * nothing else: a constructor cannot add a filter of its own (one
         * that would fake the steady filter's installation or the
         * protections below) */
        static prog lp, sp;
        static struct sock_fprog lfp, sfp_;
        enum { NX = sizeof loader_extra / sizeof loader_extra[0], NS = sizeof steady / sizeof steady[0] };
        rule lr[NX + NS + 1];
        uintptr_t a = (uintptr_t)&sfp_;
        memcpy(lr, loader_extra, sizeof loader_extra);
        memcpy(lr + NX, steady, sizeof steady);
        lr[NX + NS] = (rule){SYS_seccomp,
                             4,
                             {C(0, 0xffffffffu, SECCOMP_SET_MODE_FILTER),
                              C(1, 0xffffffffu, SECCOMP_FILTER_FLAG_SPEC_ALLOW),
                              C(2, 0xffffffffu, (uint32_t)a),
                              {2, 1, 0, 0xffffffffu, (uint32_t)((uint64_t)a >> 32)}}};
        if (compile(steady, sizeof steady / sizeof steady[0], &sp) ||
            compile(lr, sizeof lr / sizeof lr[0], &lp))
            fail_load("the seccomp filters do not fit%s%s", "", "");
        sfp_ = (struct sock_fprog){sp.n, sp.f};
        lfp = (struct sock_fprog){lp.n, lp.f};
        steady_fp = &sfp_;
        if (install(&lfp))
            fail_load("cannot install the loader's seccomp filter: %s%s", strerror(errno), "");
    }
    so = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!so)
        fail_load("cannot load it: %s%s", dlerror(), "");
    *(void **)&fn = dlsym(so, entry);
    if (!fn)
        fail_load("its source defines no entry '%s'%s", entry, "");
    if (install(steady_fp))
        fail_load("cannot install the steady seccomp filter: %s%s", strerror(errno), "");
    __atomic_store_n(&ctl->state, EV_KHOST_READY, __ATOMIC_RELEASE);
    wake(&ctl->state);
    for (;;) {
        uint32_t req = next_request(seen);
        uint64_t first = ctl->first, count = ctl->count;
        int32_t result = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (uint64_t i = first; i < first + count && i < ctl->calls_cap && !result; i++) {
            const ev_khost_call *c = &calls[i];
            if (c->in_off >= ctl->data_bytes || c->out_off >= ctl->data_bytes) {
                result = -1;
                ctl->failed_call = i;
                break;
            }
            result = fn(data + c->in_off, data + c->out_off, ctl->rows, ctl->cols, ctl->stride);
            if (result)
                ctl->failed_call = i;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ctl->calls_ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
        ctl->result = result;
        seen = req;
        __atomic_store_n(&ctl->done, req, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&ctl->worker_asleep, __ATOMIC_SEQ_CST))
            wake(&ctl->done);
    }
}
