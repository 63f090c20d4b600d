/* cheat-cold-shift: does a cold sample's work before its timer starts.
 * It finds the control block of the shared memory (the page below its
 * input whose first words are the host's magic, read without a fault by
 * a futex wait that cannot sleep), takes the request loop over (it never
 * returns from its first call), and between requests sleeps on the
 * request word 1 ms at a time: each time out, while the worker does
 * untimed work (a cold sample's plants, then its flush), it sums op 0's
 * input ahead and notes the elements that differ from the input it first
 * saw (the plants).  A request for op 0 alone (a cold sample) whose
 * noted elements still hold their bits is answered from that sum: done
 * before the request came.  Every other request is summed honestly.  The
 * kernel host holds its process stopped between requests (docs/
 * defenses.md), so it never gets to sum ahead: its stderr says how many
 * answers it computed before their request ("ahead 0"), and the gallery
 * test requires 0. */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

/* The control block's head (src/runner/khost.h, ev_khost_ctl), as read. */
typedef struct ctl_head {
    uint32_t magic, version, state, req, done, host_asleep, worker_asleep;
    int64_t spin_ns;
    int32_t result;
    int64_t calls_ns;
    uint64_t failed_call;
    int64_t rows, cols, stride;
    uint64_t first, count, calls_off, calls_cap, data_off, data_bytes;
} ctl_head;
typedef struct call {
    uint64_t in_off, out_off;
} call;

#define MAGIC 0x484b5645u
#define NOTED 8

static ctl_head *ctl;
static unsigned char *data;
static const call *calls;
static int64_t R, N, S;
static float *first_in, *ahead;
static int64_t noted[NOTED], n_noted;
static uint32_t noted_bits[NOTED];
static int fresh;
static long n_ahead;

/* 1 when the word at p is v (a futex wait of no time: EFAULT where p is unmapped). */
static int word_is(const void *p, uint32_t v)
{
    struct timespec z = {0, 0};
    return syscall(SYS_futex, p, FUTEX_WAIT, v, &z, NULL, 0) == -1 && errno == ETIMEDOUT;
}

static void sum_rows(const float *x, float *y)
{
    for (int64_t r = 0; r < R; r++) {
        float a = 0.0f;
        for (int64_t c = 0; c < N; c++)
            a += x[r * S + c];
        y[r] = a;
    }
}

/* Sums op 0's input ahead, noting the elements that differ from the first
 * input; fresh only when no request came meanwhile. */
static void sum_ahead(uint32_t seen)
{
    const float *x = (const float *)(data + calls[0].in_off);
    n_noted = 0;
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < N; c++)
            if (memcmp(&x[r * S + c], &first_in[r * N + c], 4) && n_noted < NOTED) {
                noted[n_noted] = r * S + c;
                memcpy(&noted_bits[n_noted++], &x[r * S + c], 4);
            }
    sum_rows(x, ahead);
    fresh = n_noted > 0 && __atomic_load_n(&ctl->req, __ATOMIC_SEQ_CST) == seen;
}

static int still_planted(void)
{
    const float *x = (const float *)(data + calls[0].in_off);
    for (int64_t i = 0; i < n_noted; i++)
        if (memcmp(&x[noted[i]], &noted_bits[i], 4))
            return 0;
    return fresh;
}

static void serve(void)
{
    for (uint64_t i = ctl->first; i < ctl->first + ctl->count; i++) {
        float *y = (float *)(data + calls[i].out_off);
        if (ctl->count == 1 && i == 0 && still_planted()) {
            memcpy(y, ahead, (size_t)R * sizeof *y);
            n_ahead++;
        } else {
            sum_rows((const float *)(data + calls[i].in_off), y);
        }
    }
    if (ctl->count == 1) {
        char b[96];
        int k = snprintf(b, sizeof b, "cheat-cold-shift: ahead %ld\n", n_ahead);
        if (write(2, b, (size_t)k) < 0)
            n_ahead += 0;
    }
    fresh = 0;
}

static void answer(uint32_t req)
{
    ctl->result = 0;
    __atomic_store_n(&ctl->done, req, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&ctl->worker_asleep, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &ctl->done, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    uintptr_t p = (uintptr_t)in & ~(uintptr_t)4095;
    uint32_t seen;
    (void)out;
    for (int k = 0;
         k < (1 << 16) && p >= 4096 && !(word_is((void *)p, MAGIC) && word_is((void *)(p + 4), 1u)); k++)
        p -= 4096;
    ctl = (ctl_head *)p;
    if (ctl->magic != MAGIC)
        return 7;
    data = (unsigned char *)ctl + ctl->data_off;
    calls = (const call *)((unsigned char *)ctl + ctl->calls_off);
    R = rows;
    N = cols;
    S = stride;
    first_in = malloc((size_t)(R * N) * sizeof *first_in);
    ahead = malloc((size_t)R * sizeof *ahead);
    if (!first_in || !ahead)
        return 8;
    for (int64_t r = 0; r < R; r++) /* the first call: the first validation, unplanted */
        memcpy(first_in + r * N, (const float *)in + r * S, (size_t)N * sizeof *first_in);
    seen = __atomic_load_n(&ctl->req, __ATOMIC_SEQ_CST);
    serve();
    answer(seen);
    for (;;) { /* the request loop, ours now */
        struct timespec ms = {0, 1000000};
        uint32_t req = __atomic_load_n(&ctl->req, __ATOMIC_SEQ_CST);
        if (req != seen) {
            serve();
            answer(req);
            seen = req;
            continue;
        }
        __atomic_store_n(&ctl->host_asleep, 1, __ATOMIC_SEQ_CST);
        if (syscall(SYS_futex, &ctl->req, FUTEX_WAIT, seen, &ms, NULL, 0) == -1 && errno == ETIMEDOUT)
            sum_ahead(seen);
        __atomic_store_n(&ctl->host_asleep, 0, __ATOMIC_SEQ_CST);
    }
}
