/*
 * cmd_export.c: 'evident export --db FILE [--run ID] --out FILE.zip'.
 *
 * Packs one run of the store into delivery.zip (src/bundle/export.h) and
 * prints the root digest (64 hex digits) on stdout; with --out - the
 * archive goes to stdout and the root to stderr.  Exit 0 on success, 1
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
#include "bundle/zipwrite.h"

static const char export_usage[] =
    "usage: evident export --db FILE [--run ID] --out FILE.zip\n"
    "\n"
    "Writes the evidence of run ID (default: the newest run) of the store FILE\n"
    "as a deterministic delivery.zip (docs/bundle-format.md) and prints its\n"
    "root digest, the SHA-256 of receipts.json.\n"
    "\n"
    "  --db FILE      the SQLite evidence store (opened read-only)\n"
    "  --run ID       the run to export (a positive integer)\n"
    "  --out FILE     the archive to write (temporary file, then rename);\n"
    "                 '-': to stdout, and the root to stderr\n"
    "  --help         this text\n"
    "  --version      the version\n"
    "\n"
    "exit status: 0 success, 1 the export failed (a damaged store), 2 usage, a store\n"
    "that cannot be read, a run that does not exist, an output that cannot be written\n";

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
    enum { OPT_DB, OPT_OUT, OPT_RUN };
    static const ev_cli_opt opts[] = {{"--db", 1}, {"--out", 1}, {"--run", 1}};
    const char *db = NULL, *out = NULL, *v = NULL;
    int64_t run_id = 0;
    ev_cli cli;
    int k, code = EV_EXIT_OK;
    ev_err err = {""};
    ev_store *store = NULL;
    ev_bundle *bundle = NULL;
    ev_buf zip = EV_BUF_INIT;
    struct timespec t0, t1;
    size_t n_members = 0;
    const ev_member *m;
    ev_status rc;

    ev_cli_init(&cli, "evident export", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_step(&cli, export_usage, &v, &code)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_EXIT:
            return code;
        case EV_CLI_POSITIONAL:
            return ev_cli_unexpected(&cli, v);
        case OPT_DB:
            db = v;
            break;
        case OPT_OUT:
            out = v;
            break;
        case OPT_RUN:
            if (parse_run_id(v, &run_id))
                return ev_cli_usage(cli.cmd, "--run: '%s' is not a positive run id", v);
            break;
        }
    }
    if (!db || !out)
        return ev_cli_usage(cli.cmd, "--db and --out are required");
    if (ev_cli_is_std(db))
        return ev_cli_usage(cli.cmd, "--db -: the store is a file, not stdin");
    if ((code = ev_cli_input(cli.cmd, "--db", db)) || (code = ev_cli_output(cli.cmd, "--out", out)))
        return code;

    rc = ev_store_open(db, EV_STORE_READONLY | EV_STORE_FULLCHECK, &store, &err);
    if (rc) {
        /* Unopenable: a path problem (2); a damaged store: the work failed (1). */
        code = rc == EV_ECORRUPT ? EV_EXIT_FAIL : EV_EXIT_USAGE;
        goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = ev_export_build(store, run_id, &bundle, &err);
    if (rc) {
        code = rc == EV_ENOTFOUND ? EV_EXIT_USAGE : EV_EXIT_FAIL;
        goto out;
    }
    m = ev_bundle_members(bundle, &n_members);
    if ((rc = ev_zip_build(m, n_members, &zip, &err))) {
        code = EV_EXIT_FAIL;
        goto out;
    }
    if ((code = ev_cli_write(cli.cmd, out, zip.data, zip.len)))
        goto out;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* the root is the data; with the archive on stdout it is a message */
    if (ev_cli_is_std(out))
        fprintf(stderr, "evident export: root %s\n", ev_bundle_root(bundle));
    else
        printf("%s\n", ev_bundle_root(bundle));
    /* the export's share of a run's wall (docs/runner.md, "Where a run's time goes") */
    fprintf(stderr, "evident export: %zu members in %.2f s\n", n_members,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
out:
    if (rc)
        fprintf(stderr, "evident export: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
    ev_buf_free(&zip);
    ev_bundle_free(bundle);
    ev_store_close(store);
    return code;
}
