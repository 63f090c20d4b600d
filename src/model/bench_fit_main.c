/*
 * bench_fit_main.c: build/bench-fit, the benchmark of `evident fit`
 * (`make bench-fit`).  It times the whole command (fork, exec, read, fit
 * with LOGO, write model.json) on the seed table and on generated tables,
 * best and median of 7 runs each, and the library calls alone in process.
 *
 * A geometry [R, N, B, W] holds at most 2 ops x 3 dtypes x 4 schedules = 24
 * distinct observations, so 10,000 observations need at least 417
 * geometries; the generated tables are 200 geometries (4,800 observations)
 * and 417 geometries (10,008 observations), each geometry a LOGO fold.
 *
 * usage: bench-fit EVIDENT SEED.csv
 *        bench-fit --generate G FILE.csv   (writes a table of G geometries)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"

#define RUNS 7

/* Monotonic seconds. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sorts v[0..n) ascending (insertion: n is tiny). */
static void sort_small(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
}

/* Runs `evident fit --observations csv --sms S --out out` once; returns its
 * wall seconds, or -1 when it did not exit 0. */
static double time_cli(const char *exe, const char *csv, const char *sms, const char *out)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(exe, "evident", "fit", "--observations", csv, "--sms", sms, "--out", out, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return now_s() - t0;
}

/* Times the library alone (parse, fit, JSON) on the text of csv; returns
 * the best seconds of RUNS, or -1. */
static double time_lib(const char *csv, int64_t sms)
{
    ev_buf in = EV_BUF_INIT;
    ev_err err;
    double best = -1;
    if (ev_read_file(csv, &in, &err))
        return -1;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        ev_obs *obs = NULL;
        size_t n = 0;
        ev_fit *f = NULL;
        ev_buf out = EV_BUF_INIT;
        ev_status rc = ev_obs_from_csv(in.data, in.len, &obs, &n, &err);
        if (!rc) {
            ev_fit_input fi = {obs, n, NULL, 0, sms, 0.05, EV_SCHEDS_DEFAULT};
            rc = ev_model_fit(&fi, &f, &err);
        }
        if (!rc)
            rc = ev_fit_to_json(f, &out, &err);
        double t = now_s() - t0;
        ev_fit_free(f);
        free(obs);
        ev_buf_free(&out);
        if (rc) {
            fprintf(stderr, "bench-fit: %s: %s\n", csv, err.msg);
            best = -1;
            break;
        }
        if (best < 0 || t < best)
            best = t;
    }
    ev_buf_free(&in);
    return best;
}

/* Benchmarks one table and prints a line.  Returns 0, or 1 on failure. */
static int bench(const char *exe, const char *label, const char *csv, const char *sms, const char *dir)
{
    char out[600];
    double t[RUNS];
    snprintf(out, sizeof out, "%s/model.json", dir);
    fflush(stdout); /* the children must not repeat buffered lines */
    for (int r = 0; r < RUNS; r++)
        if ((t[r] = time_cli(exe, csv, sms, out)) < 0) {
            fprintf(stderr, "bench-fit: %s: evident fit failed\n", label);
            return 1;
        }
    sort_small(t, RUNS);
    double lib = time_lib(csv, strtoll(sms, NULL, 10));
    printf("%-44s evident fit: best %8.3f ms, median %8.3f ms; library parse+fit+json: best %8.3f ms\n",
           label, t[0] * 1e3, t[RUNS / 2] * 1e3, lib * 1e3);
    return lib < 0;
}

/* xorshift64* for the generated tables. */
static uint64_t st = 0x2545f4914f6cdd1dull;
static uint64_t next_u64(void)
{
    st ^= st >> 12;
    st ^= st << 25;
    st ^= st >> 27;
    return st * 2685821657736338717ull;
}

/* Writes a table of g distinct geometries x (ops x dtypes x 4) observations to path.
 * Medians follow the model (a0 0.9, aD 1.1e-4, S 132) with +-20% noise.
 * Returns the observation count, or 0 on failure. */
static size_t generate(const char *path, size_t g)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return 0;
    size_t n = 0;
    fprintf(fp, "op,rows,cols,dtype,default_rows,schedule,median_us\n");
    for (size_t i = 0; i < g; i++) {
        /* distinct geometries: R grows with i */
        int64_t R = 1 + (int64_t)i * 37 + (int64_t)(next_u64() % 37);
        int64_t N = 1 + (int64_t)(next_u64() % 16384);
        int64_t B = (next_u64() & 1) ? 4 : 8;
        for (int o = 0; o < EV_OP_COUNT; o++)
            for (int d = 0; d < EV_DTYPE_COUNT; d++)
                for (int s = 0; s < EV_MODEL_SCHEDS; s++) {
                    ev_features f;
                    if (ev_model_features(R, N, ev_sched_rows((ev_sched)s, B), 132, &f))
                        goto fail;
                    double noise = 0.8 + 0.4 * (double)(next_u64() >> 11) / 9007199254740992.0;
                    double q = (0.9 + 1.1e-4 * f.D) * noise;
                    fprintf(fp, "%s,%lld,%lld,%s,%lld,%s,%.6f\n", ev_op_name((ev_op)o), (long long)R,
                            (long long)N, ev_dtype_name((ev_dtype)d), (long long)B,
                            ev_sched_name((ev_sched)s), q);
                    n++;
                }
    }
    if (fclose(fp))
        return 0;
    return n;
fail:
    fclose(fp);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--generate")) {
        char *end = NULL;
        long g = strtol(argv[2], &end, 10);
        if (*end || g < 2 || g > 100000) {
            fprintf(stderr, "bench-fit: --generate needs 2..100000 geometries\n");
            return 2;
        }
        return generate(argv[3], (size_t)g) ? 0 : 1;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: bench-fit EVIDENT SEED.csv | bench-fit --generate G FILE.csv\n");
        return 2;
    }
    char dir[] = "/tmp/bench_fit_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench-fit: mkdtemp");
        return 2;
    }
    int bad = bench(argv[1], "seed table (48 obs, 8 geometries, S=24)", argv[2], "24", dir);
    static const size_t geoms[2] = {200, 417};
    for (int k = 0; k < 2; k++) {
        char csv[600], label[100];
        snprintf(csv, sizeof csv, "%s/gen%zu.csv", dir, geoms[k]);
        size_t n = generate(csv, geoms[k]);
        if (!n) {
            fprintf(stderr, "bench-fit: cannot write %s\n", csv);
            return 1;
        }
        snprintf(label, sizeof label, "generated (%zu obs, %zu geometries, S=132)", n, geoms[k]);
        bad |= bench(argv[1], label, csv, "132", dir);
        remove(csv);
    }
    char out[600];
    snprintf(out, sizeof out, "%s/model.json", dir);
    remove(out);
    rmdir(dir);
    return bad;
}
