/*
 * cmd_export.c: 'evident export --db FILE [--run ID] --out FILE.zip'.
 *
 * Packs one run of the store into delivery.zip (src/bundle/export.h) and
 * prints the root digest (64 hex digits) on stdout.  Exit 0 on success, 1
 * when the export itself failed (a damaged store, a store that contradicts
 * itself), 2 on usage errors, a run that does not exist, a store that
 * cannot be opened and an output path that cannot be written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "bundle/export.h"

static const char export_usage[] =
    "usage: evident export --db FILE [--run ID] --out FILE.zip\n"
    "\n"
    "Writes the evidence of run ID (default: the newest run) of the store FILE\n"
    "as a deterministic delivery.zip (docs/bundle-format.md) and prints its\n"
    "root digest, the SHA-256 of receipts.json.\n"
    "\n"
    "  --db FILE      the SQLite evidence store (opened read-only)\n"
    "  --run ID       the run to export (a positive integer)\n"
    "  --out FILE     the archive to write (temporary file, then rename)\n"
    "  --help         this text\n"
    "  --version      the version\n"
    "\n"
    "exit status: 0 success, 1 the export failed, 2 usage or unreadable store\n";

/* Parses a positive decimal run id.  Returns 0 and sets *out, or -1. */
static int parse_run_id(const char *s, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end || end == s || v <= 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int ev_cmd_export(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    int64_t run_id = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(export_usage, stdout);
            return EV_EXIT_OK;
        }
        if (!strcmp(a, "--version")) {
            printf("evident export %s\n", EV_VERSION);
            return EV_EXIT_OK;
        }
        if ((!strcmp(a, "--db") || !strcmp(a, "--out") || !strcmp(a, "--run")) && i + 1 >= argc) {
            fprintf(stderr, "evident export: %s needs a value\n", a);
            return EV_EXIT_USAGE;
        }
        if (!strcmp(a, "--db")) {
            db = argv[++i];
        } else if (!strcmp(a, "--out")) {
            out = argv[++i];
        } else if (!strcmp(a, "--run")) {
            if (parse_run_id(argv[++i], &run_id)) {
                fprintf(stderr, "evident export: --run: '%s' is not a positive run id\n", argv[i]);
                return EV_EXIT_USAGE;
            }
        } else {
            fprintf(stderr, "evident export: unknown argument '%s' (try --help)\n", a);
            return EV_EXIT_USAGE;
        }
    }
    if (!db || !out) {
        fprintf(stderr, "evident export: --db and --out are required (try --help)\n");
        return EV_EXIT_USAGE;
    }
    FILE *f = fopen(db, "rb");
    if (!f) {
        fprintf(stderr, "evident export: %s: %s\n", db, strerror(errno));
        return EV_EXIT_USAGE;
    }
    fclose(f);

    ev_err err;
    err.msg[0] = '\0';
    ev_store *store = NULL;
    ev_bundle *bundle = NULL;
    int code = EV_EXIT_OK;
    ev_status rc = ev_store_open(db, EV_STORE_READONLY, &store, &err);
    if (rc) {
        /* Unopenable: a path problem (2); a damaged store: the work failed (1). */
        code = rc == EV_ECORRUPT ? EV_EXIT_FAIL : EV_EXIT_USAGE;
        goto out;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = ev_export_build(store, run_id, &bundle, &err);
    if (rc) {
        code = rc == EV_ENOTFOUND ? EV_EXIT_USAGE : EV_EXIT_FAIL;
        goto out;
    }
    rc = ev_bundle_write(bundle, out, &err);
    if (rc) {
        code = rc == EV_EIO ? EV_EXIT_USAGE : EV_EXIT_FAIL;
        goto out;
    }
    printf("%s\n", ev_bundle_root(bundle));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    {
        /* the export's share of a run's wall (docs/runner.md, "Where a run's time goes") */
        size_t n_members = 0;
        ev_bundle_members(bundle, &n_members);
        fprintf(stderr, "evident export: %zu members in %.2f s\n", n_members,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
out:
    if (rc)
        fprintf(stderr, "evident export: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
    ev_bundle_free(bundle);
    ev_store_close(store);
    return code;
}
