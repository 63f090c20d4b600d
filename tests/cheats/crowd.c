/* cheat-late-crowd: the late cheat (late.c) hiding behind a crowd.  With
 * its side thread it starts 300 idle threads, more than the 256 thread ids
 * the cpu backend records at bind (backend_cpu.c, BIND_THREADS), hoping
 * the late-work check, which cannot hold them all, reads "no new thread".
 * Caught as late.c is (by the check node, or else: a process with more
 * threads than bind could record has a new one, so the wall clock waits
 * and the sample fails, failed-protocol).  Before the thirteenth session's review the check
 * returned "none" there and this cheat completed with a good time.  On
 * cuda the arm runs late.cu: a device has no host threads to crowd. */
#define CHEAT_CROWD 300
#include "late.c"
