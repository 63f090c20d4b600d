/*
 * cli.h: the command layer of build/evident.  Each subcommand lives in its
 * own src/cli/cmd_<name>.c, parses its own arguments, prints its own
 * results and messages, and returns the process exit code of DESIGN.md:
 * 0 success, 1 the work itself failed, 2 usage error or unreadable path.
 */
#ifndef EV_CLI_H
#define EV_CLI_H

#define EV_EXIT_OK    0
#define EV_EXIT_FAIL  1
#define EV_EXIT_USAGE 2

int ev_cmd_run(int argc, char **argv);    /* cmd_run.c */
int ev_cmd_fit(int argc, char **argv);    /* cmd_fit.c */
int ev_cmd_export(int argc, char **argv); /* cmd_export.c */
int ev_cmd_report(int argc, char **argv); /* cmd_report.c */
int ev_cmd_stamp(int argc, char **argv);  /* cmd_stamp.c */

#endif
