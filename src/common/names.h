/*
 * names.h: the one rule for the name of a bundle member, which is also the
 * rule for a file the runner snapshots (it becomes sources/<path>): 1 to
 * EV_NAME_MAX bytes of [A-Za-z0-9._-] in '/'-separated components, none
 * empty, "." or "..", no leading '/'.  The runner checks its snapshot
 * against it before anything is measured, the exporter and the zip writer
 * before they write a member, the verifier's zip reader on every entry: a
 * name one of them accepts, all accept.  Also the redaction rule for the
 * free text a bundle carries.
 */
#ifndef EV_NAMES_H
#define EV_NAMES_H

#include <stddef.h>

#include "buf.h"
#include "status.h"

#define EV_NAME_MAX 255

/*
 * Returns NULL when s[0..len) follows the rule, else a reason: a static
 * string, or why[size] written with the offending character or length.
 */
const char *ev_name_problem(const char *s, size_t len, char *why, size_t size);

/*
 * Absolute-path redaction of free text (docs/bundle-format.md,
 * "Redaction"): appends s with each absolute path replaced by
 * "<redacted>/" + its last component.  Idempotent.  NULL s appends nothing.
 * The exporter applies it to the store's free text; the verifier requires
 * that it changes nothing in a bundle's.
 */
ev_status ev_bundle_redact(const char *s, ev_buf *out);

#endif
