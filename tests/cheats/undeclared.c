/* cheat-undeclared: the kernel's work is in a header the protocol does not
 * declare (undeclared.h, beside it), so the bundle would not hold the bytes
 * that ran: whoever verifies it could not see or rebuild what was measured.
 * The sum itself is honest.  The compiler's dependency list names the
 * header, and the build fails naming it (failed-exit: "undeclared.c
 * includes undeclared.h, which the protocol does not declare"); before
 * the dependency list was checked this arm completed and verified. */
#include "undeclared.h"
