/*
 * zipread.h: hardened reading of a whole zip archive held in memory
 * (verify-bundle check 1, "archive").  It lives in src/common because every
 * reader of a bundle uses it: the verifier, the report and the signer
 * (common/member.h ev_members_read_zip), the runner's --model-from
 * (runner/model_from.c) and the command layer's path checks.
 *
 * The reader never touches the file system and never follows a member name.
 * It first parses the end record, the central directory and every local
 * header itself, within bounds, and refuses what libzip 1.7.3 would let
 * through (prepended or trailing bytes, overlapping or gapped entries,
 * count mismatches, ZIP64, data descriptors); only an archive whose layout
 * is clean is handed to libzip (ZIP_CHECKCONS | ZIP_RDONLY), whose every
 * member is then inflated into memory, read until zip_fread returns 0 (so
 * the CRC is checked), held to its declared size, CRC-checked again and
 * hashed with SHA-256.
 *
 * Member-level rules (names from the allow-list, regular files only, no
 * encryption, store or deflate only, caps on count, size, total and ratio)
 * are applied from the central directory BEFORE anything is inflated, and
 * the size caps again while inflating.
 *
 * A verdict is either a list of members (EV_OK) or a list of problems
 * (EV_EVERIFY), each with a check name ("archive"), a member name (printable:
 * hostile bytes escaped as \xNN; "-" when the problem is the whole archive)
 * and a reason, so the verifier can print every one of them as
 *     verify-bundle: FAIL archive: <member>: <reason>
 * The rules and their reasons are described in docs/zip-reading.md.
 */
#ifndef EV_ZIPREAD_H
#define EV_ZIPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "status.h"

/* Caps applied from the declared sizes before inflating, and again while
 * inflating.  A zero field means "use the default". */
typedef struct ev_zip_limits {
    size_t max_members;       /* entries in the central directory */
    uint64_t max_member_size; /* declared uncompressed size of one member */
    uint64_t max_total_size;  /* sum of the declared uncompressed sizes */
    uint64_t max_ratio;       /* uncompressed / compressed, for members ... */
    uint64_t ratio_min_size;  /* ... whose declared size exceeds this */
} ev_zip_limits;

#define EV_ZIP_DEFAULT_MAX_MEMBERS     100000u
#define EV_ZIP_DEFAULT_MAX_MEMBER_SIZE (UINT64_C(1) << 30) /* 1 GiB */
#define EV_ZIP_DEFAULT_MAX_TOTAL_SIZE  (UINT64_C(2) << 30) /* 2 GiB */
#define EV_ZIP_DEFAULT_MAX_RATIO       200u
#define EV_ZIP_DEFAULT_RATIO_MIN_SIZE  (UINT64_C(1) << 20) /* 1 MiB */

/* Longest member name accepted (bytes). */
#define EV_ZIP_MAX_NAME 512

/* Fills *lim with the defaults above. */
void ev_zip_limits_default(ev_zip_limits *lim);

/* One member, as read.  Owned by the ev_zip that returned it. */
typedef struct ev_zip_member {
    const char *name;          /* allow-listed, NUL-terminated */
    uint64_t size;             /* declared uncompressed size == bytes read */
    uint64_t comp_size;        /* declared compressed size */
    uint16_t method;           /* 0 store, 8 deflate */
    uint32_t crc32;            /* declared and recomputed: equal */
    const unsigned char *data; /* size bytes, plus a NUL after them; NULL when streamed */
    uint8_t sha256[EV_SHA256_LEN];
    char sha256_hex[EV_SHA256_HEX_LEN + 1];
} ev_zip_member;

typedef struct ev_zip ev_zip; /* opaque: the members of a read archive */

/* Members in central-directory order. */
size_t ev_zip_count(const ev_zip *z);
/* Member i (0-based), or NULL when i >= count. */
const ev_zip_member *ev_zip_at(const ev_zip *z, size_t i);
/* Member with exactly this name, or NULL (names are unique). */
const ev_zip_member *ev_zip_find(const ev_zip *z, const char *name);
/* Frees the members and their bytes; NULL-safe. */
void ev_zip_free(ev_zip *z);

/* The check name of every problem of a zip reading. */
#define EV_ZIP_CHECK "archive"

/* One problem found in an archive. */
typedef struct ev_zip_problem {
    const char *check;  /* "archive" */
    const char *member; /* printable member name, or "-" */
    const char *reason; /* one line, no trailing newline */
} ev_zip_problem;

typedef struct ev_zip_problems ev_zip_problems; /* opaque, growable list */

/* OUT: *out, an empty list.  EV_ENOMEM on failure. */
ev_status ev_zip_problems_new(ev_zip_problems **out);
void ev_zip_problems_free(ev_zip_problems *p); /* NULL-safe */
size_t ev_zip_problems_count(const ev_zip_problems *p);
/* Problem i (0-based) in the order found, or NULL when i >= count. */
const ev_zip_problem *ev_zip_problems_at(const ev_zip_problems *p, size_t i);
/*
 * Appends a problem (strings are copied; member NULL means "-"; member_len
 * is the member's length in bytes, or SIZE_MAX for a NUL-terminated string;
 * member bytes outside printable ASCII, and '\\', are escaped as \xNN).  The list keeps at most
 * EV_ZIP_MAX_PROBLEMS entries; later ones are counted and summed up in one
 * last entry.  Exported so the verifier may add its own.  EV_ENOMEM on
 * failure.
 */
#define EV_ZIP_MAX_PROBLEMS 1000u
ev_status ev_zip_problems_add(ev_zip_problems *p, const char *check, const char *member, size_t member_len,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Reads the archive p[0..n) (not kept: p may be freed once this returns).
 * lim NULL means the defaults.
 * Returns:
 *   EV_OK       no problem; OUT: *out, the members (free with ev_zip_free)
 *   EV_EVERIFY  the archive is refused; every problem found is appended to
 *               probs (at least one); *out untouched
 *   EV_ENOMEM / EV_EINVAL (NULL arguments)  the reader itself failed;
 *               err says why; no verdict
 */
ev_status ev_zip_read_mem(const void *p, size_t n, const ev_zip_limits *lim, ev_zip **out,
                          ev_zip_problems *probs, ev_err *err);

/*
 * One member read piece by piece instead of kept whole: its bytes are
 * handed to put in order, each piece after it was counted against the
 * declared size, CRC'd and hashed, in pieces of at most 1 MiB that are
 * only valid during the call.  The reading of the member and of the
 * archive goes on as always (every rule and problem is the same); the
 * member's data is then NULL, its size, CRC and digest set as for any
 * other.  Whether the pieces were the whole member is known only from the
 * result: EV_OK means they were, and were right.
 */
typedef struct ev_zip_stream {
    const char *name; /* the member to stream */
    /* a piece p[0..n) of a member whose declared size is `size` */
    void (*put)(void *ctx, const unsigned char *p, size_t n, uint64_t size);
    void *ctx;
} ev_zip_stream;

/* ev_zip_read_mem with the member stream->name (when present) streamed
 * to stream->put; stream NULL is ev_zip_read_mem. */
ev_status ev_zip_read_mem_stream(const void *p, size_t n, const ev_zip_limits *lim,
                                 const ev_zip_stream *stream, ev_zip **out, ev_zip_problems *probs,
                                 ev_err *err);

#endif
