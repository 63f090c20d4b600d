/*
 * tree_hash.c: the source-tree hash (tree_hash.h).
 */
#include "tree_hash.h"

#include <string.h>

#include "buf.h"
#include "sha256.h"

ev_status ev_tree_hash(const ev_source_file *files, size_t n, char hex[65])
{
    ev_buf b = EV_BUF_INIT;
    ev_status rc = EV_OK;

    for (size_t i = 0; i < n && !rc; i++) {
        if ((rc = ev_buf_append(&b, files[i].path, strlen(files[i].path) + 1)) ||
            (rc = ev_buf_append(&b, files[i].sha256, 64)))
            break;
        rc = ev_buf_append(&b, "\n", 1);
    }
    if (!rc)
        rc = ev_sha256_hex(b.data ? b.data : "", b.len, hex);
    ev_buf_free(&b);
    return rc;
}
