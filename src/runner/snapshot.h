/*
 * snapshot.h: what a run records about its own sources and host before the
 * first measurement: the measurement closure's bytes (mk/closure.list's
 * files and the list: common/closure.h), the source-tree hash, the git commit and
 * dirty flag (or the .evident-stamp of a copied tree), and the redacted
 * environment receipt.  Also the stderr redaction of absolute paths.
 */
#ifndef EV_SNAPSHOT_H
#define EV_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "tree_hash.h"
#include "status.h"

typedef struct ev_snapshot {
    ev_source_file *files; /* sorted by path (byte order) */
    size_t n;
    char tree_hash[65];    /* over every file */
    char closure_hash[65]; /* over the closure's files alone (not the extra files): what a stamp names */
} ev_snapshot;

/* Walks the closure under root (regular files only; symlinks and other
 * kinds are skipped), sorted by path.  OUT: *out (ev_snapshot_free). */
ev_status ev_snapshot_take(const char *root, ev_snapshot *out, ev_err *err);

/* The most bytes one file of a protocol's kernels may hold. */
#define EV_SNAPSHOT_EXTRA_MAX ((size_t)16 << 20)

/*
 * As ev_snapshot_take, with files from outside root too: a protocol's
 * external kernel files (ext_kernel.h, ev_ext_closure), file i read from
 * path[i] (on disk, wherever it lies) and kept under name[i] (its member
 * path, which no file of the closure has).  A name the closure already
 * holds, or a file that is not a regular one or holds more than
 * EV_SNAPSHOT_EXTRA_MAX bytes, is refused (EV_EUSAGE, naming it).
 */
ev_status ev_snapshot_take_with(const char *root, const char *const *name, const char *const *path,
                                size_t n_extra, ev_snapshot *out, ev_err *err);
void ev_snapshot_free(ev_snapshot *s); /* NULL-safe */

/* git commit (40 hex) and dirty flag of the tree at root, from
 * `git rev-parse HEAD` and `git status --porcelain` (the stamp file
 * itself ignored); without git, from root/.evident-stamp; otherwise
 * "unknown" and dirty.  OUT: commit[64], *dirty, *from (static: "git",
 * "stamp", "none"). */
void ev_git_info(const char *root, char commit[64], int *dirty, const char **from);

/* As ev_git_info for the measured files whose tree hash is tree_hash: a
 * stamp whose "tree" is that hash wins over git (a copied tree carries a
 * partial or stale .git; the stamp was written for exactly these files);
 * a stamp used without git whose tree differs gives dirty. */
void ev_git_info_tree(const char *root, const char *tree_hash, char commit[64], int *dirty,
                      const char **from);

/* The stamp of the tree at root, from git: one line of JSON,
 * {"commit", "dirty", "tree": the measured files' tree hash}.  OUT:
 * text[256].  EV_EUSAGE where root is not a git checkout. */
ev_status ev_stamp_text(const char *root, char text[256], ev_err *err);

/* Writes ev_stamp_text's line to root/.evident-stamp.  EV_EUSAGE where
 * root is not a git checkout; EV_EIO. */
ev_status ev_stamp_write(const char *root, ev_err *err);

/* Copies in[0..n) to out with every absolute path (a '/' that starts a
 * word, followed by a path character) replaced by "<path>". */
ev_status ev_redact_paths(const char *in, size_t n, ev_buf *out);

/* Salted SHA-256 of a host identifier ("evident-host-v1\0" + id). */
ev_status ev_host_hash(const char *id, char hex[65]);

#endif
