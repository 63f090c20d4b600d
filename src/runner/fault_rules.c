/*
 * fault_rules.c: a fault arm's line and the rule its process record keeps
 * (fault_rules.h).
 */
#include "fault_rules.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int ev_fault_line(const ev_proto_fault *f, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    if (!f || (f->kind != EV_FAULT_EXIT && f->kind != EV_FAULT_SIGNAL))
        return -1;
    snprintf(out, cap, "evident-worker: fault arm %s: %s %" PRId64, f->name,
             f->kind == EV_FAULT_EXIT ? "exit" : "signal", f->value);
    return 0;
}

const char *ev_fault_problem(const ev_protocol *proto, const char *arm, int retry, const ev_process_facts *f,
                             const char *stderr_tail, char *why, size_t cap)
{
    const ev_proto_fault *ft = proto && arm ? ev_protocol_fault(proto, arm) : NULL;
    char line[200];

    if (!ft || ev_fault_line(ft, line, sizeof line) || (ft->original_only && retry) || !f->has_process ||
        f->timed_out || f->interrupted || f->skipped)
        return NULL;
    if (f->has_exit && f->exit_code == 0)
        snprintf(why, cap, "fault arm %s (%s %" PRId64 ") exited 0: its worker never does", ft->name,
                 ft->kind == EV_FAULT_EXIT ? "exit" : "signal", ft->value);
    else if (!stderr_tail || !stderr_tail[0])
        snprintf(why, cap,
                 "fault arm %s ended without a word on stderr: its worker says why it ends ('%s' when the "
                 "fault fires)",
                 ft->name, line);
    else if (strstr(stderr_tail, line) &&
             (ft->kind == EV_FAULT_EXIT
                  ? !(f->has_exit && f->exit_code == ft->value)
                  : !((f->has_signal && f->signal == ft->value) || (f->has_exit && f->exit_code == 125))))
        snprintf(why, cap, "fault arm %s: its stderr says '%s', but the process record shows %s %" PRId64,
                 ft->name, line, f->has_exit ? "exit" : "signal", f->has_exit ? f->exit_code : f->signal);
    else
        return NULL;
    return why;
}
