/*
 * cli.h: the command layer of build/evident.  Each subcommand lives in its
 * own src/cli/cmd_<name>.c, parses its own arguments with the parser
 * below, prints its own results (data on stdout, messages on stderr) and
 * returns the process exit code of docs/cli.md's exit-status table:
 * 0 success, 1 the work itself failed, 2 usage error or a path that cannot
 * be read or written.
 *
 * cli_args.c owns the rules every command shares: how options are read
 * (an unknown option is named as unknown, a missing value as missing, an
 * option given twice is refused), what a path must be before a command
 * starts its work (an input that exists and is a file, an output whose
 * directory exists and is writable, `-` meaning stdout), and where an
 * installed program finds its worker and data (cli_paths.c).
 */
#ifndef EV_CLI_H
#define EV_CLI_H

#include <stddef.h>

#include "buf.h"

#define EV_EXIT_OK           0
#define EV_EXIT_FAIL         1
#define EV_EXIT_USAGE        2
#define EV_EXIT_INCONCLUSIVE 3 /* evident compare: pairs too few or too noisy to call */

int ev_cmd_run(int argc, char **argv);     /* cmd_run.c */
int ev_cmd_fit(int argc, char **argv);     /* cmd_fit.c */
int ev_cmd_export(int argc, char **argv);  /* cmd_export.c */
int ev_cmd_report(int argc, char **argv);  /* cmd_report.c */
int ev_cmd_results(int argc, char **argv); /* cmd_results.c */
int ev_cmd_compare(int argc, char **argv); /* cmd_compare.c */
int ev_cmd_stamp(int argc, char **argv);   /* cmd_stamp.c */
int ev_cmd_keygen(int argc, char **argv);  /* cmd_sign.c */
int ev_cmd_sign(int argc, char **argv);    /* cmd_sign.c */
int ev_cmd_merge(int argc, char **argv);   /* cmd_merge.c */

/* ---- options (cli_args.c) ------------------------------------------------ */

/* One option a command accepts: its name ("--db") and whether a value
 * follows it. */
typedef struct ev_cli_opt {
    const char *name;
    int takes_value;
} ev_cli_opt;

/* The parser's state over one command's argv[1..argc). */
typedef struct ev_cli {
    const char *cmd; /* "evident run": the prefix of every message */
    const ev_cli_opt *opts;
    size_t n_opts; /* at most 32 */
    int argc;
    char **argv;
    int i;              /* the next argument */
    unsigned long seen; /* bit k: opts[k] was given */
} ev_cli;

/* What ev_cli_next found, when not an option (an option gives its index). */
#define EV_CLI_END        (-1) /* no arguments left */
#define EV_CLI_POSITIONAL (-2) /* an argument that is not an option: *val */
#define EV_CLI_HELP       (-3) /* --help or -h */
#define EV_CLI_VERSION    (-4) /* --version */
#define EV_CLI_BAD        (-5) /* refused: the one-line reason is printed on stderr */

/* Starts a parser over argv[1..argc) of command cmd with its options. */
void ev_cli_init(ev_cli *p, const char *cmd, const ev_cli_opt *opts, size_t n_opts, int argc, char **argv);

/*
 * Reads the next argument.  Returns the index in opts of the option read
 * (OUT: *val its value, or NULL for an option without one), or one of
 * EV_CLI_*: for EV_CLI_POSITIONAL, *val is the argument.  EV_CLI_BAD
 * after printing "CMD: unknown option --x", "CMD: --x needs a value" or
 * "CMD: --x given twice" (each with "(try 'CMD --help')").  A value that
 * starts with "--" is a missing value (`--db --out x`); "-" is a value.
 */
int ev_cli_next(ev_cli *p, const char **val);

/* What ev_cli_step answered itself: the command returns *code. */
#define EV_CLI_EXIT (-6)

/*
 * ev_cli_next with the answers every command gives alike, so that a
 * command's option loop holds only its own options: --help prints usage
 * on stdout and --version "CMD EV_VERSION" (*code EV_EXIT_OK), a refused
 * option (its reason already printed by ev_cli_next) gives *code
 * EV_EXIT_USAGE; each returns EV_CLI_EXIT.  Otherwise returns what
 * ev_cli_next does (an option's index, EV_CLI_POSITIONAL, EV_CLI_END).
 */
int ev_cli_step(ev_cli *p, const char *usage, const char **val, int *code);

/* For a command that takes no positional argument: prints "CMD:
 * unexpected argument 'ARG' (try 'CMD --help')" and returns
 * EV_EXIT_USAGE. */
int ev_cli_unexpected(const ev_cli *p, const char *arg);

/* Prints "CMD: <message> (try 'CMD --help')" on stderr and returns
 * EV_EXIT_USAGE: the one form of every usage error. */
int ev_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- paths (cli_args.c) -------------------------------------------------- */

/* 1 when path is "-": standard output (or input) instead of a file. */
int ev_cli_is_std(const char *path);

/*
 * An input file: "-" (stdin) is accepted; otherwise path must exist, not
 * be a directory, and be readable.  Returns 0, or prints "CMD: WHAT PATH: does
 * not exist | is a directory | <errno text>" and returns EV_EXIT_USAGE.
 */
int ev_cli_input(const char *cmd, const char *what, const char *path);

/*
 * An output file written by temporary file and rename: "-" is accepted
 * (stdout); otherwise path must not be a directory, and its directory
 * must exist and be writable.  Returns 0, or prints the reason and
 * returns EV_EXIT_USAGE.
 */
int ev_cli_output(const char *cmd, const char *what, const char *path);

/*
 * A store evident run writes: an existing path must be a regular file
 * that can be read and written; its directory must exist and be writable
 * (the store's journal and lock file live beside it).  Returns 0, or
 * prints the reason and returns EV_EXIT_USAGE.
 */
int ev_cli_store_rw(const char *cmd, const char *what, const char *path);

/*
 * Writes data[0..n) to path, or to stdout when path is "-".  Returns 0,
 * or prints "CMD: <reason>" and returns EV_EXIT_USAGE (the file could not
 * be written) or EV_EXIT_FAIL (stdout could not).
 */
int ev_cli_write(const char *cmd, const char *path, const void *data, size_t n);

/* Reads path, or stdin when path is "-", into out.  Returns 0, or prints
 * "CMD: <reason>" and returns EV_EXIT_USAGE (EV_EXIT_FAIL for memory). */
int ev_cli_read(const char *cmd, const char *path, ev_buf *out);

/* A bundle read into memory: its bytes and its members, pointing into them. */
typedef struct ev_cli_bundle {
    ev_buf zip;
    struct ev_zip *z;
    struct ev_member *m; /* n members (ev_members_read_zip) */
    size_t n;
} ev_cli_bundle;

/*
 * Reads the bundle at path ("-": stdin) with ev_cli_read, then lists its
 * members with the one bundle reader (ev_members_read_zip).  Returns 0
 * (OUT: *b, freed with ev_cli_bundle_free), or prints "CMD: <reason>" and
 * returns EV_EXIT_USAGE (the path cannot be read) or EV_EXIT_FAIL ("CMD:
 * PATH: not a readable bundle: ...", or no memory).  *b holds nothing
 * that needs freeing on failure.
 */
int ev_cli_read_bundle(const char *cmd, const char *path, ev_cli_bundle *b);

/*
 * Verifies the bundle file at path (verify-bundle's checks 1-6, under
 * their bounds: docs/bundle-format.md, "Reading bounds"), as report,
 * results and compare do before they show a figure.  Returns 0 when it
 * passes; 1 with problem[cap] naming its first failure when it does not
 * (or when it could not be verified: the reason); 2, with problem saying
 * so, when its only failure is its own report.html (a page an earlier
 * version drew: every figure's members verify, and a bundle is never
 * refused for its age).  A bundle read from stdin ("-") is not verified
 * here (0): the caller says so in one line.
 */
int ev_cli_verify_problem(const char *path, char *problem, size_t cap);
void ev_cli_bundle_free(ev_cli_bundle *b); /* NULL-safe, leaves *b empty */

/* ---- one shard per device (cmd_gpus.c) ------------------------------------ */

/* What `evident run --gpus` runs. */
typedef struct ev_gpus_run {
    const char *protocol, *backend, *db;
    const char *stage;  /* --stage-ahead as given, or NULL */
    const char *python; /* --python as given, or NULL */
    int strict;
    int dev[64]; /* the devices, one shard each */
    int n;
} ev_gpus_run;

/*
 * Reads --gpus: "all" (cuda: every device `nvidia-smi -L` lists; cpu: one)
 * or a list of distinct device numbers "0,1,3", at most 64.  OUT:
 * dev[0..*n) (written only on success).  Returns 0, or the usage exit
 * code after the one-line reason.
 */
int ev_cli_gpus_parse(const char *cmd, const char *spec, const char *backend, int *dev, int *n);

/*
 * Runs the protocol as one shard per device at once (each with its device
 * alone visible and a disjoint slice of this process's CPUs), the main
 * phase, its merge, the rest phase, and the merge of the whole run into
 * g->db (which must be new).  Returns the exit code; prints its progress.
 */
int ev_cli_run_gpus(const char *cmd, const ev_gpus_run *g);

/* ---- where the programs' files are (cli_paths.c) -------------------------- */

/* Where this program finds what `evident run` needs. */
typedef struct ev_cli_paths {
    char worker[4096];      /* evident-worker */
    char peer_script[4096]; /* peer_torch.py */
    char source_root[4096]; /* the measurement closure's root (snapshot, git) */
    int installed;          /* 1: PREFIX/bin/evident, 0: a build tree */
} ev_cli_paths;

/*
 * Finds them from this program's own location: beside it in a build tree
 * (BUILD/evident-worker; the source root is the working directory when it
 * is the repository root, else BUILD's parent when that is one; the peer
 * script its kernels/peer_torch.py), or, when
 * it was installed as PREFIX/bin/evident, PREFIX/libexec/evident/ (the
 * worker and the peer script) and PREFIX/share/evident/ (the closure and
 * the protocols).  Returns 0 (OUT: *p), or prints what is missing and
 * how to get it, and returns EV_EXIT_USAGE.
 */
int ev_cli_find_paths(const char *cmd, ev_cli_paths *p);

#endif
