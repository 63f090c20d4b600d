/*
 * evident_main.c: build/evident, the dispatcher for run, fit, merge,
 * export, report, results, compare, stamp, keygen and sign.  Each subcommand answers --help and --version itself.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: evident <command> [options]\n"
    "\n"
    "commands:\n"
    "  run     --protocol FILE [--backend cuda|cpu] [--db FILE] [--resume] [--strict]\n"
    "          [--shard I/N --phase main|rest [--main MERGED.db]]\n"
    "  fit     (--db FILE [--run ID] [--record] | --observations FILE.csv --sms N)\n"
    "          [--threshold 0.05] [--out FILE]\n"
    "  merge   SHARD.db... --out MERGED.db (the stores of a run's shards)\n"
    "  export  --db FILE [--run ID] --out FILE.zip\n"
    "  report  BUNDLE.zip [--markdown] --out FILE\n"
    "  results BUNDLE.zip --json|--csv [--out FILE] (one row per case and arm)\n"
    "  compare A.zip B.zip [--markdown|--json] [--fail-slower PCT] [--out FILE]\n"
    "  stamp   [--out FILE] (writes .evident-stamp for a copy of this checkout)\n"
    "  keygen  --out KEY (an Ed25519 key pair: KEY and KEY.pub)\n"
    "  sign    BUNDLE.zip --key KEY [--out FILE] [--sigstore-bundle FILE]\n"
    "\n"
    "'evident <command> --help' describes each command.  A FILE of '-' is stdout\n"
    "(stdin for an input); data goes to stdout, messages to stderr.\n"
    "exit status: 0 success, 1 the work failed, 2 usage, a path that cannot be read\n"
    "or written, or what this build or host cannot run\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "evident: a command is needed: run, fit, export, report, results, compare or stamp "
                        "(try 'evident --help')\n");
        return EV_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, stdout);
        return EV_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("evident %s\n", EV_VERSION);
        return EV_EXIT_OK;
    }
    if (!strcmp(argv[1], "run"))
        return ev_cmd_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "fit"))
        return ev_cmd_fit(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge"))
        return ev_cmd_merge(argc - 1, argv + 1);
    if (!strcmp(argv[1], "export"))
        return ev_cmd_export(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report"))
        return ev_cmd_report(argc - 1, argv + 1);
    if (!strcmp(argv[1], "results"))
        return ev_cmd_results(argc - 1, argv + 1);
    if (!strcmp(argv[1], "compare"))
        return ev_cmd_compare(argc - 1, argv + 1);
    if (!strcmp(argv[1], "stamp"))
        return ev_cmd_stamp(argc - 1, argv + 1);
    if (!strcmp(argv[1], "keygen"))
        return ev_cmd_keygen(argc - 1, argv + 1);
    if (!strcmp(argv[1], "sign"))
        return ev_cmd_sign(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        fprintf(stderr, "evident: unknown option %s (try 'evident --help')\n", argv[1]);
    else
        fprintf(stderr, "evident: unknown command '%s' (try 'evident --help')\n", argv[1]);
    return EV_EXIT_USAGE;
}
