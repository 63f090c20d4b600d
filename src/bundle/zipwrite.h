/*
 * zipwrite.h: the deterministic zip writer of delivery.zip (libzip 1.7.3).
 *
 * The same members give the same archive bytes whatever the time zone,
 * locale or umask: members are added sorted by name (bytewise), each with
 * deflate at a fixed level, a fixed DOS date and time (1980-01-01 00:00,
 * set with zip_file_set_dostime: zip_file_set_mtime converts through the
 * local time zone), fixed Unix external attributes (regular file 0644), no
 * comments and no extra fields.  The archive is built in memory; writing it
 * to a path goes through a temporary file and a rename.
 */
#ifndef EV_ZIPWRITE_H
#define EV_ZIPWRITE_H

#include <stddef.h>

#include "buf.h"
#include "status.h"
#include "member.h"

#define EV_ZIP_LEVEL    6        /* deflate level of every member */
#define EV_ZIP_DOS_TIME 0x0000u  /* 00:00:00 */
#define EV_ZIP_DOS_DATE 0x0021u  /* 1980-01-01: (0 << 9) | (1 << 5) | 1 */
#define EV_ZIP_MODE     0100644u /* S_IFREG | 0644, in the high 16 bits */

/*
 * Builds the archive of m[0..n) in memory, members sorted by name (the
 * caller's order does not matter).  Names must pass ev_member_name_ok and
 * be distinct (EV_EINVAL otherwise).  OUT: the archive bytes appended to
 * *out (left as it was on failure).  libzip errors give EV_EZIP.
 */
ev_status ev_zip_build(const ev_member *m, size_t n, ev_buf *out, ev_err *err);

/* ev_zip_build, then writes the bytes to path atomically (temporary file,
 * fsync, rename).  On failure path is left as it was. */
ev_status ev_zip_write(const char *path, const ev_member *m, size_t n, ev_err *err);

#endif
