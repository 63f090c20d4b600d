/*
 * torch_peer.h: the torch-compile peer's job (torch_peer.c), run by the
 * worker for the torch-compile arm, and the environment its python gets.
 */
#ifndef EV_TORCH_PEER_H
#define EV_TORCH_PEER_H

#include "job.h"
#include "record.h"
#include "status.h"

/*
 * The torch-compile job (src/runner/torch_peer.c): writes the case's input
 * bytes (ev_job_input) to a file in a fresh temporary directory, runs
 * `python peer_script` as a child in this process's group (so the
 * supervisor's watchdog and stop end it too), relays its records byte for
 * byte, then validates the two output files it wrote (--out-first,
 * --out-final) with ev_output_check and writes the validation records and
 * the end record.  A peer that cannot run here (torch does not import, no
 * CUDA device, the cpu backend) writes hello, skip (the host's own error
 * text) and end; so does an interpreter that cannot be started.  Returns
 * EV_OK after the end record; otherwise a failure with err set (the peer's
 * own exit status or signal named) and no end record.
 */
ev_status ev_worker_torch(const ev_worker_args *a, ev_rec_out *out, ev_err *err);

/*
 * Sets the torch peer's environment in a child about to exec python: the
 * run's compile cache under cache (cuda only; NULL: none) and one inductor
 * compile thread.  The one place both the timed job and the ahead-of-time
 * compile (compile_ahead.h) take it from, so their cache keys agree.
 * Returns 0, or -1 when setenv failed.
 */
int ev_torch_env(const char *cache, const char *backend);

#endif
