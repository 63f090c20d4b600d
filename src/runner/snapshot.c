/*
 * snapshot.c: the measurement closure's bytes, the source-tree hash, git
 * provenance, path redaction and host hashes (snapshot.h).
 */
#include "snapshot.h"
#include "build_id.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "closure.h"
#include "json.h"
#include "names.h"
#include "proc.h"
#include "sha256.h"
#include "member.h"

/* The first entry the closure walk could not read (its odd callback). */
typedef struct walk_error {
    int seen;
    char text[600];
} walk_error;

/* A link or other non-regular entry is skipped (the snapshot holds regular
 * files only); an unreadable or too deep one stops the snapshot. */
static void on_odd(void *ctx, ev_closure_odd kind, const char *rel, const char *why)
{
    walk_error *w = ctx;
    if (kind != EV_CLOSURE_NOT_REGULAR && !w->seen++)
        snprintf(w->text, sizeof w->text, "%s: %s", rel, why);
}

ev_status ev_snapshot_take(const char *root, ev_snapshot *out, ev_err *err)
{
    return ev_snapshot_take_with(root, NULL, NULL, 0, out, err);
}

/* qsort comparator: snapshot files by path, bytewise. */
static int file_cmp(const void *a, const void *b)
{
    return strcmp(((const ev_source_file *)a)->path, ((const ev_source_file *)b)->path);
}

ev_status ev_snapshot_take_with(const char *root, const char *const *name, const char *const *path,
                                size_t n_extra, ev_snapshot *out, ev_err *err)
{
    struct {
        char **v;
        size_t n;
    } l = {NULL, 0};
    walk_error we = {0, ""};
    ev_snapshot s = {NULL, 0, "", ""};
    size_t total;
    ev_status rc;

    if ((rc = ev_closure_list(root, on_odd, &we, &l.v, &l.n)))
        return ev_err_set(err, rc, "snapshot: out of memory");
    if (we.seen) {
        rc = ev_err_set(err, EV_EIO, "snapshot: %s", we.text);
        goto out;
    }
    /* Every measured file becomes the member sources/<path>: a name the
     * bundle could not hold is refused now, before anything is measured. */
    total = l.n + n_extra;
    for (size_t i = 0; i < total; i++) {
        char member[EV_NAME_MAX + 16], why[96];
        const char *bad, *rel = i < l.n ? l.v[i] : name[i - l.n];
        int len = snprintf(member, sizeof member, EV_MEMBER_SOURCES "%s", rel);
        bad = len < 0 || (size_t)len >= sizeof member ? "name too long"
                                                      : ev_name_problem(member, (size_t)len, why, sizeof why);
        if (bad) {
            rc = ev_err_set(err, EV_EUSAGE,
                            "snapshot: '%s' cannot be a bundle member (sources/%s): %s; rename it (the "
                            "measurement closure, " EV_CLOSURE_LIST ", or the protocol's kernels name it)",
                            rel, rel, bad);
            goto out;
        }
    }
    s.files = calloc(total ? total : 1, sizeof *s.files);
    if (!s.files) {
        rc = ev_err_set(err, EV_ENOMEM, "snapshot: out of memory");
        goto out;
    }
    for (size_t i = 0; i < total; i++) {
        char full[4096];
        ev_buf b = EV_BUF_INIT;
        if (i < l.n) {
            snprintf(full, sizeof full, "%s/%s", root, l.v[i]);
            rc = ev_read_file(full, &b, err);
        } else {
            rc = ev_read_file_max(path[i - l.n], EV_SNAPSHOT_EXTRA_MAX, &b, err);
            if (rc == EV_ERANGE || rc == EV_EIO)
                rc = EV_EUSAGE; /* the user's file: err names it and why */
        }
        if (rc)
            goto out;
        if (i < l.n) {
            s.files[i].path = l.v[i];
            l.v[i] = NULL;
        } else if (!(s.files[i].path = strdup(name[i - l.n]))) {
            ev_buf_free(&b);
            rc = ev_err_set(err, EV_ENOMEM, "snapshot: out of memory");
            goto out;
        }
        s.files[i].len = b.len;
        s.files[i].bytes = (unsigned char *)ev_buf_steal(&b, NULL);
        s.n = i + 1;
        if ((rc = ev_sha256_hex(s.files[i].bytes ? (void *)s.files[i].bytes : (void *)"", s.files[i].len,
                                s.files[i].sha256))) {
            ev_err_set(err, rc, "snapshot: sha256 failed");
            goto out;
        }
    }
    /* the closure's files are sorted (ev_closure_list) and come first */
    if ((rc = ev_tree_hash(s.files, l.n, s.closure_hash))) {
        ev_err_set(err, rc, "snapshot: tree hash failed");
        goto out;
    }
    qsort(s.files, s.n, sizeof *s.files, file_cmp);
    for (size_t i = 1; i < s.n; i++)
        if (!strcmp(s.files[i - 1].path, s.files[i].path)) {
            rc = ev_err_set(err, EV_EUSAGE, "snapshot: two files would be the member sources/%s",
                            s.files[i].path);
            goto out;
        }
    if ((rc = ev_tree_hash(s.files, s.n, s.tree_hash))) {
        ev_err_set(err, rc, "snapshot: tree hash failed");
        goto out;
    }
out:
    ev_closure_free(l.v, l.n);
    if (rc)
        ev_snapshot_free(&s);
    else
        *out = s;
    return rc;
}

void ev_snapshot_free(ev_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->files[i].path);
        free(s->files[i].bytes);
    }
    free(s->files);
    memset(s, 0, sizeof *s);
}

/* Runs argv with stdout captured into out.  Returns 0 when it exited 0. */
static int run_capture(char *const argv[], ev_buf *out)
{
    return ev_proc_capture(argv, out, 0, (size_t)1 << 24) == 0 ? 0 : -1;
}

/* Reads root/.evident-stamp: its commit, dirty flag and tree hash ("" when
 * it has none).  Returns 0 when it exists and parses. */
static int read_stamp(const char *root, char commit[64], int *dirty, char tree[65])
{
    char path[4096];
    ev_buf stamp = EV_BUF_INIT;
    cJSON *j = NULL;
    int rc = -1;

    snprintf(path, sizeof path, "%s/.evident-stamp", root);
    if (!ev_read_file(path, &stamp, NULL) && !ev_json_parse(stamp.data, stamp.len, 0, &j, NULL)) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "commit");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "dirty");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "tree");
        if (cJSON_IsString(c) && strlen(c->valuestring) == 40 &&
            strspn(c->valuestring, "0123456789abcdef") == 40 && cJSON_IsBool(d)) {
            memcpy(commit, c->valuestring, 41);
            *dirty = cJSON_IsTrue(d) ? 1 : 0;
            tree[0] = '\0';
            if (cJSON_IsString(t) && strlen(t->valuestring) == 64)
                memcpy(tree, t->valuestring, 65);
            rc = 0;
        }
    }
    cJSON_Delete(j);
    ev_buf_free(&stamp);
    return rc;
}

void ev_git_info_tree(const char *root, const char *tree_hash, char commit[64], int *dirty, const char **from)
{
    char sc[64], st[65];
    int sd;

    /* A stamp written for exactly these measured files (its tree hash is
     * theirs) says where they came from, whatever a copied .git says. */
    if (tree_hash && !read_stamp(root, sc, &sd, st) && !strcmp(st, tree_hash)) {
        memcpy(commit, sc, 41);
        *dirty = sd;
        *from = "stamp";
        return;
    }
    ev_git_info(root, commit, dirty, from);
    if (tree_hash && !strcmp(*from, "stamp") && !read_stamp(root, sc, &sd, st) && st[0] &&
        strcmp(st, tree_hash))
        *dirty = 1; /* the stamp names a commit whose measured files these are not */
}

ev_status ev_stamp_text(const char *root, char text[256], ev_err *err)
{
    ev_snapshot snap;
    char commit[64];
    const char *from;
    int dirty;
    ev_status rc;

    if ((rc = ev_snapshot_take(root, &snap, err)))
        return rc;
    ev_git_info(root, commit, &dirty, &from);
    if (strcmp(from, "git")) {
        ev_snapshot_free(&snap);
        return ev_err_set(err, EV_EUSAGE, "stamp: %s is not a git checkout: a stamp is written where git is",
                          root);
    }
    snprintf(text, 256, "{\"commit\": \"%s\", \"dirty\": %s, \"tree\": \"%s\"}\n", commit,
             dirty ? "true" : "false", snap.tree_hash);
    ev_snapshot_free(&snap);
    return EV_OK;
}

ev_status ev_stamp_write(const char *root, ev_err *err)
{
    char path[4096], text[256];
    ev_status rc;

    if ((rc = ev_stamp_text(root, text, err)))
        return rc;
    snprintf(path, sizeof path, "%s/.evident-stamp", root);
    return ev_write_file(path, text, strlen(text), err);
}

void ev_git_info(const char *root, char commit[64], int *dirty, const char **from)
{
    char *rev[] = {"git", "-C", (char *)root, "rev-parse", "HEAD", NULL};
    char *st[] = {"git", "-C", (char *)root, "status", "--porcelain", NULL};
    ev_buf b = EV_BUF_INIT, s = EV_BUF_INIT, stamp = EV_BUF_INIT;
    char path[4096];
    cJSON *j = NULL;

    snprintf(commit, 64, "unknown");
    *dirty = 1;
    *from = "none";
    if (!run_capture(rev, &b) && b.len >= 40 && strspn(b.data, "0123456789abcdef") == 40 &&
        !run_capture(st, &s)) {
        int d = 0;
        memcpy(commit, b.data, 40);
        commit[40] = '\0';
        /* Every porcelain line except the stamp file itself. */
        for (char *line = s.data; line && *line;) {
            char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            if (len > 3 &&
                !(len - 3 == strlen(".evident-stamp") && !strncmp(line + 3, ".evident-stamp", len - 3)))
                d = 1;
            line = nl ? nl + 1 : NULL;
        }
        *dirty = d;
        *from = "git";
        goto out;
    }
    snprintf(path, sizeof path, "%s/.evident-stamp", root);
    if (!ev_read_file(path, &stamp, NULL) && !ev_json_parse(stamp.data, stamp.len, 0, &j, NULL)) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "commit");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "dirty");
        if (cJSON_IsString(c) && strlen(c->valuestring) == 40 &&
            strspn(c->valuestring, "0123456789abcdef") == 40 && cJSON_IsBool(d)) {
            memcpy(commit, c->valuestring, 41);
            *dirty = cJSON_IsTrue(d) ? 1 : 0;
            *from = "stamp";
        }
    }
out:
    cJSON_Delete(j);
    ev_buf_free(&b);
    ev_buf_free(&s);
    ev_buf_free(&stamp);
}

ev_status ev_redact_paths(const char *in, size_t n, ev_buf *out)
{
    ev_status rc = EV_OK;
    size_t i = 0;

    while (i < n && !rc) {
        int starts = in[i] == '/' && (i == 0 || strchr(" \t\n\"'=:(<[,", in[i - 1])) && i + 1 < n &&
                     in[i + 1] != ' ' && in[i + 1] != '\n' && in[i + 1] != '/';
        if (starts) {
            size_t j = i;
            while (j < n && !strchr(" \t\n\"'),>]", in[j]) && in[j] != ':')
                j++;
            rc = ev_buf_puts(out, "<path>");
            i = j;
        } else {
            rc = ev_buf_append(out, in + i, 1);
            i++;
        }
    }
    if (!rc && !out->data)
        rc = ev_buf_puts(out, "");
    return rc;
}

ev_status ev_host_hash(const char *id, char hex[65])
{
    static const char salt[] = "evident-host-v1";
    ev_buf b = EV_BUF_INIT;
    ev_status rc;

    if (!(rc = ev_buf_append(&b, salt, sizeof salt)) && !(rc = ev_buf_puts(&b, id)))
        rc = ev_sha256_hex(b.data, b.len, hex);
    ev_buf_free(&b);
    return rc;
}

/* See build_id.h. */
int ev_build_code_path(const char *path)
{
    return strncmp(path, "protocols/", 10) != 0;
}

/* See build_id.h. */
ev_status ev_build_check(const char *root, ev_err *err)
{
    ev_snapshot snap;
    ev_source_file *code = NULL;
    size_t n = 0;
    char tree[65];
    ev_status rc = ev_snapshot_take(root, &snap, err);
    if (rc)
        return rc;
    if (!(code = calloc(snap.n ? snap.n : 1, sizeof *code))) {
        rc = ev_err_set(err, EV_ENOMEM, "build check: out of memory");
        goto out;
    }
    for (size_t i = 0; i < snap.n; i++)
        if (ev_build_code_path(snap.files[i].path))
            code[n++] = snap.files[i];
    if ((rc = ev_tree_hash(code, n, tree))) {
        ev_err_set(err, rc, "build check: tree hash failed");
        goto out;
    }
    if (strcmp(tree, ev_build_tree))
        rc = ev_err_set(
            err, EV_EUSAGE,
            "this evident was built from other measured code (the closure's code: tree %.12s..., "
            "commit %.12s%s) than the tree it would measure in %s "
            "(tree %.12s...): what ran would not be what the bundle names; run 'make' here, or run "
            "the evident built from this tree",
            ev_build_tree, ev_build_commit, ev_build_dirty ? ", dirty" : "", root, tree);
out:
    free(code);
    ev_snapshot_free(&snap);
    return rc;
}
