/* cheat-late: the cpu's side stream.  The first call (the one the first
 * validation reads) does the work; every later call hands its work to a
 * thread it started and returns at once, so the timed batch holds none of
 * it (work launched on a side stream the timer misses).  The outputs are
 * right by the time they are read.  Caught by the late-work rule: the
 * backend's wall clock around a hot sample waits until no thread beyond
 * those at bind is left (up to a second), and a sample whose wall exceeds
 * 1.5 x its timed interval + 1 ms fails the attempt (failed-protocol). */
#include <pthread.h>
#include <stdint.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

typedef struct slot {
    const float *in;
    float *out;
    int64_t rows, cols, stride;
    int pending;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static slot slots[2]; /* one per output pointer: the two input sets */
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
        slot j;
        int k = -1;
        pthread_mutex_lock(&mu);
        while (!slots[0].pending && !slots[1].pending)
            pthread_cond_wait(&cv, &mu);
        k = slots[0].pending ? 0 : 1;
        j = slots[k];
        slots[k].pending = 0;
        pthread_mutex_unlock(&mu);
        sum(&j);
    }
    return NULL;
}

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    slot j = {in, out, rows, cols, stride, 1};
    if (calls++ == 0) {
        sum(&j);
        return 0;
    }
    if (calls == 2) {
        pthread_t t;
        if (pthread_create(&t, NULL, side, NULL))
            return 1;
        pthread_detach(t);
    }
    pthread_mutex_lock(&mu);
    int k = slots[0].out == out || slots[0].out == NULL ? 0 : 1;
    slots[k] = j;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    return 0;
}
