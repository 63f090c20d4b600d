/* cheat-undeclared (cuda): the kernel's work is in a header the protocol
 * does not declare (undeclared.cuh, beside it), so the bundle would not
 * hold the bytes that ran.  The build fails naming the header (nvcc's
 * dependency list names it): failed-exit. */
#include "undeclared.cuh"
