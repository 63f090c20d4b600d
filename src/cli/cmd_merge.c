/*
 * cmd_merge.c: `evident merge SHARD.db... --out MERGED.db`: the shards'
 * stores of one sharded run into one store (src/runner/merge.h; the rules
 * in docs/runner.md, "Shards").  Exit 0 merged, 1 a store failure while
 * writing (nothing is left at --out), 2 usage, a path that cannot be read,
 * or stores that do not make the whole phase (the reason names them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "runner/merge.h"
#include "vocab.h"

static const char merge_usage[] =
    "usage: evident merge SHARD.db... --out MERGED.db\n"
    "\n"
    "Merges the stores of the shards of one run (evident run --shard I/N --phase\n"
    "main|rest) into a new store: the key-disjoint union of their records, every\n"
    "planned job of the phase exactly once (a result or a recorded failure).  Two\n"
    "stores of one shard, a job in two stores, a job in the wrong shard's store, a\n"
    "missing shard or job, or stores of different protocols, sources or backends\n"
    "are refused with the stores named, and nothing is written.  After the main\n"
    "phase, the merge is the --main of every shard's --phase rest; after the rest,\n"
    "it is the whole run: evident export and verify-bundle read it as any store.\n"
    "--out must not exist (a merge never replaces a store).\n"
    "exit: 0 merged, 1 a store failure, 2 usage, an unreadable path or a refusal.\n";

int ev_cmd_merge(int argc, char **argv)
{
    enum { OPT_OUT };
    static const ev_cli_opt opts[] = {{"--out", 1}};
    ev_cli cli;
    const char *v = NULL, *out = NULL;
    const char **paths = calloc((size_t)(argc > 0 ? argc : 1), sizeof *paths);
    size_t n = 0;
    ev_merge_result res;
    ev_err err = {""};
    ev_status rc;
    int k, code = EV_EXIT_OK;

    if (!paths) {
        fprintf(stderr, "evident merge: out of memory\n");
        return EV_EXIT_FAIL;
    }
    ev_cli_init(&cli, "evident merge", opts, sizeof opts / sizeof opts[0], argc, argv);
    while ((k = ev_cli_next(&cli, &v)) != EV_CLI_END) {
        switch (k) {
        case EV_CLI_HELP:
            fputs(merge_usage, stdout);
            goto out;
        case EV_CLI_VERSION:
            printf("evident merge %s\n", EV_VERSION);
            goto out;
        case EV_CLI_BAD:
            code = EV_EXIT_USAGE;
            goto out;
        case EV_CLI_POSITIONAL:
            if (ev_cli_is_std(v)) {
                code = ev_cli_usage(cli.cmd, "'-' is not a store: give the shards' store files");
                goto out;
            }
            paths[n++] = v;
            break;
        case OPT_OUT:
            out = v;
            break;
        }
    }
    if (!out || !n) {
        code = ev_cli_usage(cli.cmd, "give the shards' stores and --out MERGED.db");
        goto out;
    }
    if (ev_cli_is_std(out)) {
        code = ev_cli_usage(cli.cmd, "--out -: the merged store is a file, not stdout");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((code = ev_cli_input(cli.cmd, "store", paths[i])))
            goto out;
    if ((code = ev_cli_output(cli.cmd, "--out", out)))
        goto out;
    rc = ev_merge(paths, n, out, &res, &err);
    if (rc) {
        fprintf(stderr, "evident merge: %s\n", err.msg[0] ? err.msg : ev_strerror(rc));
        code =
            rc == EV_EUSAGE || rc == EV_EIO || rc == EV_ECORRUPT || rc == EV_EFORMAT || rc == EV_EUNSUPPORTED
                ? EV_EXIT_USAGE
                : EV_EXIT_FAIL;
        goto out;
    }
    printf("merged %lld shards (%s phase): %zu jobs, %zu attempts%s%s%s%s into %s in %.3f s\n",
           (long long)res.shard_count, res.rest ? "rest" : ev_phase_name(EV_PHASE_MAIN), res.jobs,
           res.attempts, res.status[0] ? "; run " : "", res.status, res.rescue[0] ? ", " : "", res.rescue,
           out, res.wall_s);
out:
    free(paths);
    return code;
}
