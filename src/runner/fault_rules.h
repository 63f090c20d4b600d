/*
 * fault_rules.h: what a fault arm's process record must show
 * (docs/runner.md, "Fault arms").  A fault arm of kind exit or signal ends
 * its worker after the first validation, and the worker says so on stderr
 * first (ev_fault_line, the one text the worker prints and the rule reads);
 * the exporter and the verifier hold every such attempt to it
 * (ev_fault_problem), so a process record edited to another end (exit 3
 * made 0, an exit made a signal) or its stderr emptied is refused.
 */
#ifndef EV_FAULT_RULES_H
#define EV_FAULT_RULES_H

#include <stddef.h>

#include "protocol.h"
#include "store/outcome.h"

/* Writes into out[cap] the line the worker prints on stderr before a fault
 * arm of kind exit or signal ends it ("evident-worker: fault arm NAME:
 * exit CODE" or "...: signal N"), without a newline.  Returns 0, or -1 for
 * a fault of another kind (out then empty). */
int ev_fault_line(const ev_proto_fault *f, char *out, size_t cap);

/*
 * Holds an attempt of arm `arm` (retry: a rescue job's attempt) to its
 * fault arm, when proto declares arm as one of kind exit or signal that
 * applies to it (a fault "when": "original" does not fire in a retry): an
 * attempt that ended by itself (neither timed out, interrupted nor
 * skipped) never exits 0, has a stderr tail (the worker says why it
 * ends), and when that tail holds the fault's line, the process shows
 * exactly that end (the exit code; the signal, or exit 125 for a signal
 * that does not kill).  Returns NULL when that holds, else the rule it
 * breaks, in why[cap].
 */
const char *ev_fault_problem(const ev_protocol *proto, const char *arm, int retry, const ev_process_facts *f,
                             const char *stderr_tail, char *why, size_t cap);

#endif
