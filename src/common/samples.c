/*
 * samples.c: samples.csv's columns and the per-op time (samples.h).
 */
#include "samples.h"

const char *const ev_samples_columns[] = {
    "run_id",       "job_id",     "attempt",         "op",           "rows",
    "cols",         "stride",     "dtype",           "default_rows", "role",
    "arm",          "phase",      "label",           "outcome",      "timing",
    "sample_index", "replays",    "ops_per_graph",   "elapsed_ms",   "per_op_us",
    "job_key",      "attempt_id", "attempt_outcome", "sm_clock_mhz",
};
const size_t ev_samples_ncols = sizeof ev_samples_columns / sizeof ev_samples_columns[0];

ev_status ev_samples_header(ev_buf *out)
{
    ev_status rc = EV_OK;
    for (size_t i = 0; i < ev_samples_ncols && !rc; i++)
        rc = ev_buf_printf(out, "%s%s", ev_samples_columns[i], i + 1 < ev_samples_ncols ? "," : "\n");
    return rc;
}

ev_status ev_per_op_us(double elapsed_ms, int64_t replays, int64_t ops_per_graph, double *out)
{
    if (replays < 1 || ops_per_graph < 1 || replays > (INT64_C(1) << 53) / ops_per_graph)
        return EV_ERANGE;
    *out = elapsed_ms * 1000.0 / (double)(replays * ops_per_graph);
    return EV_OK;
}
