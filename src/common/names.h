/*
 * names.h: the one rule for the name of a bundle member, which is also the
 * rule for a file the runner snapshots (it becomes sources/<path>): 1 to
 * EV_NAME_MAX bytes of [A-Za-z0-9._-] in '/'-separated components, none
 * empty, "." or "..", no leading '/'.  The runner checks its snapshot
 * against it before anything is measured, the exporter and the zip writer
 * before they write a member, the verifier's zip reader on every entry: a
 * name one of them accepts, all accept.
 */
#ifndef EV_NAMES_H
#define EV_NAMES_H

#include <stddef.h>

#define EV_NAME_MAX 255

/*
 * Returns NULL when s[0..len) follows the rule, else a reason: a static
 * string, or why[size] written with the offending character or length.
 */
const char *ev_name_problem(const char *s, size_t len, char *why, size_t size);

#endif
