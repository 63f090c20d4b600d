/* cheat-late: the cpu's side stream.  The first call (the one the first
 * validation reads) does the work; every later call hands its work to a
 * thread it started and returns at once, so the timed batch holds none of
 * it (work launched on a side stream the timer misses).  The outputs are
 * right by the time they are read.  Caught by the check node, which runs
 * inside the timed batch right after the last op and finds planted rows
 * its thread has not written yet (failed-validation); where the thread
 * was quick enough, by the late-work rule: the backend's wall clock
 * around a hot sample waits until no thread beyond those at bind is left
 * (up to a second), and a sample whose wall exceeds 1.5 x its timed
 * interval + 20 ms fails the attempt (failed-protocol). */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

typedef struct slot {
    const float *in;
    float *out;
    int64_t rows, cols, stride;
} slot;

/* one slot per output pointer (the two input sets); the side thread polls
 * (no futex: a thread blocked in one at exit upset the sanitizers' exit) */
static slot slots[2];
static volatile int pending[2];
static uint64_t calls;

static void sum(const slot *j)
{
    for (int64_t r = 0; r < j->rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < j->cols; c++)
            a += j->in[r * j->stride + c];
        j->out[r] = a;
    }
}

static void *side(void *arg)
{
    (void)arg;
    for (;;) {
        int busy = 0;
        for (int k = 0; k < 2; k++)
            if (__atomic_load_n(&pending[k], __ATOMIC_ACQUIRE)) {
                slot j = slots[k];
                __atomic_store_n(&pending[k], 0, __ATOMIC_RELEASE);
                sum(&j);
                busy = 1;
            }
        if (!busy) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

#ifdef CHEAT_CROWD
/* crowd.c's idle threads: they sleep until the process exits */
static void *idle(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Starts CHEAT_CROWD idle threads (small stacks); 1 when one cannot start. */
static int crowd(void)
{
    pthread_attr_t a;
    int bad = pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 65536);
    for (int i = 0; i < CHEAT_CROWD && !bad; i++) {
        pthread_t t;
        bad = pthread_create(&t, &a, idle, NULL) || pthread_detach(t);
    }
    pthread_attr_destroy(&a);
    return bad;
}
#endif

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    slot j = {in, out, rows, cols, stride};
    if (calls++ == 0) {
        sum(&j);
        return 0;
    }
    if (calls == 2) {
        pthread_t t;
        if (pthread_create(&t, NULL, side, NULL))
            return 1;
        pthread_detach(t);
#ifdef CHEAT_CROWD
        if (crowd())
            return 1;
#endif
    }
    int k = slots[0].out == out || slots[0].out == NULL ? 0 : 1;
    slots[k] = j; /* the same pointers every call of a set: a copy the side thread takes mid-write is whole */
    __atomic_store_n(&pending[k], 1, __ATOMIC_RELEASE);
    return 0;
}
