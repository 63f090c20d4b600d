/*
 * check_cli.c: the command line's conventions, with the built programs
 * run as real processes on fixtures made here (a small cpu protocol run
 * into a store, its bundle, files of other kinds, a directory that cannot
 * be written).  docs/cli.md's exit-status table is read and every row run:
 * its exit status, a refusal in one line on stderr, and the words that
 * line must say.  Then what the table cannot say: fit's stdout is only
 * model.json and the store is written only with --record; `-` is stdout
 * for export and report; --backend cuda on a build without nvcc records
 * nothing; every command names an unknown option as unknown.
 */
#include <check.h>

#include "progress.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "buf.h"
#include "run_prog.h"

static char g_dir[256];  /* the fixtures */
static char g_ro[300];   /* a directory that cannot be written, "" when none could be made */
static int g_ro_mounted; /* g_ro is a read-only tmpfs (root) */
static int g_has_cuda;   /* the worker was built with the cuda backend */
static int g_git;        /* the working directory is a git checkout */

static const char tiny_protocol[] =
    "{\"seed\": 8, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, \"target_sample_ms\": "
    "2, \"cold_samples\": 1,\n"
    " \"host_threads\": 2, \"reference_arms\": false,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\"],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4}]}\n";

static const char faulty_protocol[] =
    "{\"seed\": 8, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 5, \"target_sample_ms\": "
    "2, \"cold_samples\": 1,\n"
    " \"host_threads\": 2, \"reference_arms\": false,\n"
    " \"reference\": {\"cpu\": {\"ceiling_max_bytes\": 1048576}},\n"
    " \"arms\": [\"default\", \"fault-exit\"], \"allow_fault_arms\": true,\n"
    " \"fault_arms\": [{\"name\": \"fault-exit\", \"kind\": \"exit\", \"code\": 3}],\n"
    " \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 17, \"cols\": 1024, \"dtype\": \"fp16\", "
    "\"default_rows\": 4}]}\n";

/* g_dir/name into out[cap]. */
static void fixture(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
}

/* Runs argv (argv[0] "evident", "verify-bundle" or "evident-worker": the
 * built program) with its stdout and stderr kept in the fixtures'
 * directory (run_prog.h; no check assertion: the fixtures are made with
 * it before any test runs). */
static void run_argv(char *const *argv, ev_ran *r)
{
    ev_prog_run(g_dir, argv, 0, r);
}

/* ---- fixtures ---------------------------------------------------------------- */

/* Writes text to g_dir/name. */
static void put(const char *name, const void *text, size_t n)
{
    char p[400];
    ev_err err;
    fixture(name, p, sizeof p);
    if (ev_write_file(p, text, n, &err)) {
        fprintf(stderr, "check_cli: %s\n", err.msg);
        exit(1);
    }
}

/* Makes every fixture the table names; exits on failure (before any test). */
static void build_fixtures(void)
{
    char tiny[400], store[400], bundle[400];
    memset(&g_dir, 0, sizeof g_dir);
    snprintf(g_dir, sizeof g_dir, "%s/evident-cli-XXXXXX", ev_test_tmp());
    if (!mkdtemp(g_dir)) {
        perror("check_cli: mkdtemp");
        exit(1);
    }
    put("tiny.json", tiny_protocol, sizeof tiny_protocol - 1);
    put("faulty.json", faulty_protocol, sizeof faulty_protocol - 1);
    put("bad.csv",
        "op,rows,cols,dtype,default_rows,schedule,median_us\nreduce_sum,17,1024,fp16,4,rows9,1.0\n", 87);
    put("bad.zip", "this is not a zip archive\n", 26);
    {
        char fifo[400];
        fixture("fifo", fifo, sizeof fifo);
        if (mkfifo(fifo, 0644)) {
            perror("check_cli: mkfifo");
            exit(1);
        }
    }
    {
        char junk[4096];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (char)(i * 131 + 7);
        put("bad.db", junk, sizeof junk);
    }
    fixture("tiny.json", tiny, sizeof tiny);
    fixture("store.db", store, sizeof store);
    fixture("bundle.zip", bundle, sizeof bundle);
    char *run[] = {"evident", "run", "--protocol", tiny, "--backend", "cpu", "--db", store, NULL};
    char *exp[] = {"evident", "export", "--db", store, "--out", bundle, NULL};
    char *backends[] = {"evident-worker", "--backends", NULL};
    ev_ran r;
    run_argv(run, &r);
    if (r.rc) {
        fprintf(stderr, "check_cli: the fixture run failed (%d): %s\n", r.rc, r.err.data);
        exit(1);
    }
    ev_ran_free(&r);
    run_argv(exp, &r);
    if (r.rc) {
        fprintf(stderr, "check_cli: the fixture export failed (%d): %s\n", r.rc, r.err.data);
        exit(1);
    }
    ev_ran_free(&r);
    run_argv(backends, &r);
    g_has_cuda = r.rc == 0 && strstr(r.out.data, "cuda") != NULL;
    ev_ran_free(&r);
    g_git = system("git rev-parse --git-dir >/dev/null 2>&1") == 0;

    /* RO: a directory no one can write in (a read-only tmpfs as root, who
     * ignores permissions; mode 0555 otherwise) */
    fixture("ro", g_ro, sizeof g_ro);
    if (mkdir(g_ro, 0755)) {
        g_ro[0] = '\0';
    } else if (geteuid() == 0) {
        if (mount("tmpfs", g_ro, "tmpfs", MS_RDONLY, "size=64k") == 0)
            g_ro_mounted = 1;
        else
            g_ro[0] = '\0';
    } else if (chmod(g_ro, 0555)) {
        g_ro[0] = '\0';
    }
}

static void remove_fixtures(void)
{
    char cmd[700];
    if (g_ro_mounted)
        umount(g_ro);
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", g_dir, g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "check_cli: could not remove %s\n", g_dir);
}

/* ---- docs/cli.md's table ---------------------------------------------------------- */

/* One row of the table. */
typedef struct row {
    char command[64], when[256], example[512], says[128];
    int exit;
    int line; /* in docs/cli.md */
} row;

/* Trims spaces around s in place; returns s. */
static char *trim(char *s)
{
    size_t n;
    while (*s == ' ')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Copies s without its enclosing backticks into out[cap]. */
static void unquote(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '`' && s[n - 1] == '`')
        snprintf(out, cap, "%.*s", (int)(n - 2), s + 1);
    else
        snprintf(out, cap, "%s", s);
}

/* Reads docs/cli.md's exit-status table (after its marker) into *rows. */
static size_t read_table(row **rows)
{
    FILE *f = fopen("docs/cli.md", "r");
    char line[2048];
    int at = 0, in = 0;
    size_t n = 0;

    ck_assert_msg(f != NULL, "docs/cli.md not found (run from the repository root)");
    *rows = calloc(200, sizeof **rows);
    ck_assert_ptr_nonnull(*rows);
    while (fgets(line, sizeof line, f)) {
        at++;
        if (strstr(line, "<!-- exit-status table: tests/check_cli.c runs every row -->")) {
            in = 1;
            continue;
        }
        if (!in)
            continue;
        if (line[0] != '|')
            break;
        if (!strncmp(line, "| command", 9) || !strncmp(line, "|---", 4))
            continue;
        char *cells[6];
        size_t k = 0;
        char *p = line + 1;
        while (k < 6 && p) {
            char *bar = strstr(p, " |");
            if (bar)
                *bar = '\0';
            cells[k++] = trim(p);
            p = bar ? bar + 2 : NULL;
        }
        ck_assert_msg(k >= 5, "docs/cli.md:%d: a row of the exit-status table needs 5 cells", at);
        ck_assert_uint_lt(n, 200);
        row *r = &(*rows)[n++];
        r->line = at;
        unquote(cells[0], r->command, sizeof r->command);
        {
            char *end;
            long e = strtol(cells[1], &end, 10);
            /* 3: evident compare's inconclusive pairs, its one use */
            ck_assert_msg(*cells[1] && !*end && e >= 0 && (e <= 2 || (e == 3 && strstr(cells[0], "compare"))),
                          "docs/cli.md:%d: exit '%s' is not 0, 1 or 2 (3 for evident compare)", at, cells[1]);
            r->exit = (int)e;
        }
        snprintf(r->when, sizeof r->when, "%s", cells[2]);
        unquote(cells[3], r->example, sizeof r->example);
        snprintf(r->says, sizeof r->says, "%s", cells[4]);
    }
    fclose(f);
    return n;
}

/* The example's words with the placeholders replaced (into store[cap],
 * pointers in argv[max], NULL-terminated).  NEW is a path of its own for
 * each row.  Returns 0, or -1 when the row needs RO and there is none. */
static int expand(const row *r, char *store, size_t cap, char **argv, size_t max)
{
    char words[512], *save = NULL, *w;
    size_t used = 0, n = 0;

    snprintf(words, sizeof words, "%s", r->example);
    for (w = strtok_r(words, " ", &save); w && n + 1 < max; w = strtok_r(NULL, " ", &save)) {
        char val[600];
        if (!strcmp(w, "TINY"))
            fixture("tiny.json", val, sizeof val);
        else if (!strcmp(w, "FAULTY"))
            fixture("faulty.json", val, sizeof val);
        else if (!strcmp(w, "STORE"))
            fixture("store.db", val, sizeof val);
        else if (!strcmp(w, "BUNDLE"))
            fixture("bundle.zip", val, sizeof val);
        else if (!strcmp(w, "BADZIP"))
            fixture("bad.zip", val, sizeof val);
        else if (!strcmp(w, "FIFO"))
            fixture("fifo", val, sizeof val);
        else if (!strcmp(w, "BADDB"))
            fixture("bad.db", val, sizeof val);
        else if (!strcmp(w, "BADCSV"))
            fixture("bad.csv", val, sizeof val);
        else if (!strcmp(w, "CSV"))
            snprintf(val, sizeof val, "tests/fixtures/seed16.csv");
        else if (!strcmp(w, "DIR"))
            snprintf(val, sizeof val, "%s", g_dir);
        else if (!strcmp(w, "MISSING"))
            snprintf(val, sizeof val, "%s/no-such-dir/file", g_dir);
        else if (!strcmp(w, "NEW"))
            snprintf(val, sizeof val, "%s/new-%d", g_dir, r->line);
        else if (!strncmp(w, "RO/", 3)) {
            if (!g_ro[0])
                return -1;
            snprintf(val, sizeof val, "%s/%s", g_ro, w + 3);
        } else
            snprintf(val, sizeof val, "%s", w);
        size_t len = strlen(val) + 1;
        ck_assert_uint_le(used + len, cap);
        memcpy(store + used, val, len);
        argv[n++] = store + used;
        used += len;
    }
    argv[n] = NULL;
    return 0;
}

/* 1 when tests/<file> defines START_TEST(<name>): a row run by that test. */
static int test_exists(const char *ref)
{
    char file[256], name[256], want[300];
    ev_buf b = EV_BUF_INIT;
    ev_err err;
    int found;

    if (sscanf(ref, "tests/%255[^:]: %255s", file, name) != 2)
        return 0;
    snprintf(want, sizeof want, "tests/%s", file);
    if (ev_read_file(want, &b, &err) || ev_buf_puts(&b, ""))
        return 0;
    snprintf(want, sizeof want, "START_TEST(%s)", name);
    found = strstr(b.data, want) != NULL;
    ev_buf_free(&b);
    return found;
}

START_TEST(test_every_row_of_the_readme_exit_status_table_holds)
{
    row *rows;
    size_t n = read_table(&rows), run = 0, by_test = 0;
    int seen[4] = {0, 0, 0, 0}; /* 3: compare's too few or too noisy rounds */

    ck_assert_msg(n >= 40, "docs/cli.md's exit-status table has %zu rows", n);
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char store[4096], *argv[32];
        ev_ran x;
        seen[r->exit] = 1;
        if (!strncmp(r->example, "tests/", 6)) {
            ck_assert_msg(test_exists(r->example), "docs/cli.md:%d: no such test: %s", r->line, r->example);
            by_test++;
            continue;
        }
        /* what this build or checkout cannot show */
        if (strstr(r->when, "without nvcc") && g_has_cuda) {
            fprintf(stderr, "check_cli: docs/cli.md:%d not run: this build has the cuda backend\n", r->line);
            continue;
        }
        if (strstr(r->when, "git checkout") && !g_git) {
            fprintf(stderr, "check_cli: docs/cli.md:%d not run: not a git checkout\n", r->line);
            continue;
        }
        if (expand(r, store, sizeof store, argv, 32)) {
            fprintf(stderr, "check_cli: docs/cli.md:%d not run: no unwritable directory could be made\n",
                    r->line);
            continue;
        }
        ck_assert_msg(!strcmp(argv[0], "evident") || !strcmp(argv[0], "verify-bundle"),
                      "docs/cli.md:%d: the example runs neither evident nor verify-bundle", r->line);
        run_argv(argv, &x);
        ck_assert_msg(x.rc == r->exit, "docs/cli.md:%d: `%s` exited %d, the table says %d; stderr: %s",
                      r->line, r->example, x.rc, r->exit, x.err.data);
        if (r->exit == 2)
            ck_assert_msg(ev_prog_lines(&x.err) == 1,
                          "docs/cli.md:%d: `%s`: the refusal is %zu lines, not one: %s", r->line, r->example,
                          ev_prog_lines(&x.err), x.err.data);
        if (r->says[0])
            ck_assert_msg(strstr(x.err.data, r->says), "docs/cli.md:%d: `%s`: stderr does not say '%s': %s",
                          r->line, r->example, r->says, x.err.data);
        ev_ran_free(&x);
        run++;
    }
    ck_assert_msg(seen[0] && seen[1] && seen[2], "the table lacks an exit status");
    fprintf(stderr,
            "check_cli: %zu rows of docs/cli.md's exit-status table run here, %zu by the tests they name\n",
            run, by_test);
    free(rows);
}
END_TEST

/* ---- what the table cannot say ---------------------------------------------------- */

/* Copies the fixture store to g_dir/name.  OUT: copy[cap] its path,
 * *before its bytes (an empty ev_buf on entry). */
static void store_copy(const char *name, char *copy, size_t cap, ev_buf *before)
{
    char store[400], cmd[900];
    ev_err err;
    fixture("store.db", store, sizeof store);
    fixture(name, copy, cap);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", store, copy);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(ev_read_file(copy, before, &err), EV_OK);
}

/* Asserts that path still holds the bytes of *before, and frees them. */
static void assert_unchanged(const char *path, ev_buf *before)
{
    ev_buf after = EV_BUF_INIT;
    ev_err err;
    ck_assert_int_eq(ev_read_file(path, &after, &err), EV_OK);
    ck_assert_msg(before->len == after.len && !memcmp(before->data, after.data, after.len), "%s was written",
                  path);
    ev_buf_free(before);
    ev_buf_free(&after);
}

START_TEST(test_fit_prints_only_model_json_on_stdout_and_writes_the_store_only_with_record)
{
    char copy[400];
    ev_buf before = EV_BUF_INIT;
    store_copy("fit-copy.db", copy, sizeof copy, &before);

    char *csv[] = {"evident", "fit", "--observations", "tests/fixtures/seed16.csv", "--sms", "24", NULL};
    ev_ran x;
    run_argv(csv, &x);
    ck_assert_int_eq(x.rc, 0);
    cJSON *j = cJSON_Parse(x.out.data);
    ck_assert_msg(j != NULL, "fit's stdout is not JSON: %.200s", x.out.data);
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(j, "model"));
    cJSON_Delete(j);
    ck_assert_ptr_nonnull(strstr(x.err.data, "fit: a0="));
    ev_ran_free(&x);

    /* from the store: read-only without --record (the file is unchanged) */
    char *db[] = {"evident", "fit", "--db", copy, NULL};
    run_argv(db, &x);
    ck_assert_msg(x.rc == 0 || x.rc == 1, "%s", x.err.data);
    ck_assert_ptr_null(strstr(x.out.data, "fit:"));
    ck_assert_ptr_null(strstr(x.err.data, "recorded"));
    ev_ran_free(&x);
    assert_unchanged(copy, &before);
}
END_TEST

/* check_model.c holds the recording of a fit that succeeds
 * (test_evident_fit_db_record_records_the_fit_it_writes); here the tiny
 * run's fit fails (one geometry; on a noisy host a job may even be
 * failed-protocol, another reason): --record then writes nothing and
 * says why in one line. */
START_TEST(test_fit_record_of_a_fit_that_fails_writes_nothing_and_says_why)
{
    char copy[400];
    ev_buf before = EV_BUF_INIT;
    store_copy("record-copy.db", copy, sizeof copy, &before);
    char *rec[] = {"evident", "fit", "--db", copy, "--record", NULL};
    ev_ran x;
    run_argv(rec, &x);
    ck_assert_msg(x.rc == 1 && ev_prog_lines(&x.err) == 1, "rc %d: %s", x.rc, x.err.data);
    ck_assert_ptr_nonnull(strstr(x.err.data, "evident fit: "));
    ck_assert_uint_eq(x.out.len, 0);
    ev_ran_free(&x);
    assert_unchanged(copy, &before);
}
END_TEST

START_TEST(test_dash_is_stdout_for_export_and_report)
{
    char store[400], bundle[400], dash[400];
    ev_buf file = EV_BUF_INIT;
    ev_err err;
    fixture("store.db", store, sizeof store);
    fixture("bundle.zip", bundle, sizeof bundle);
    ck_assert_int_eq(ev_read_file(bundle, &file, &err), EV_OK);

    char *exp[] = {"evident", "export", "--db", store, "--out", "-", NULL};
    ev_ran x;
    run_argv(exp, &x);
    ck_assert_int_eq(x.rc, 0);
    ck_assert_uint_eq(x.out.len, file.len);
    ck_assert(!memcmp(x.out.data, file.data, file.len)); /* the same bytes as the file */
    ck_assert_ptr_nonnull(strstr(x.err.data, "evident export: root "));
    ev_ran_free(&x);

    char *rep[] = {"evident", "report", bundle, "--markdown", "--out", "-", NULL};
    run_argv(rep, &x);
    ck_assert_int_eq(x.rc, 0);
    ck_assert_ptr_nonnull(strstr(x.out.data, "| reduce_sum 17x1024 fp16 B4 |"));
    ev_ran_free(&x);
    fixture("-", dash, sizeof dash);
    ck_assert_msg(access(dash, F_OK) != 0, "a file named '-' was written");
    ck_assert_msg(access("-", F_OK) != 0, "a file named '-' was written in the working directory");
    ev_buf_free(&file);
}
END_TEST

START_TEST(test_cuda_on_a_build_without_nvcc_is_refused_in_one_line_and_records_nothing)
{
    char tiny[400], db[400];
    if (g_has_cuda) {
        fprintf(stderr,
                "check_cli: this build has the cuda backend: the build-without-nvcc refusal not run\n");
        return;
    }
    fixture("tiny.json", tiny, sizeof tiny);
    fixture("cuda.db", db, sizeof db);
    char *argv[] = {"evident", "run", "--protocol", tiny, "--backend", "cuda", "--db", db, NULL};
    ev_ran x;
    run_argv(argv, &x);
    ck_assert_int_eq(x.rc, 2);
    ck_assert_uint_eq(ev_prog_lines(&x.err), 1);
    ck_assert_ptr_nonnull(strstr(x.err.data, "this build has no cuda backend"));
    ck_assert_msg(access(db, F_OK) != 0, "a store was created");
    ev_ran_free(&x);
}
END_TEST

/* Runs script with /bin/sh in the repository (the test's working
 * directory), its stderr into err (lines kept as written).  Returns its
 * exit status. */
static int sh_repo(const char *script, ev_buf *err)
{
    char cmd[4096], path[500];
    ev_err e;
    snprintf(path, sizeof path, "%s/sh-stderr.txt", g_dir);
    snprintf(cmd, sizeof cmd, "(%s) >/dev/null 2>'%s'", script, path);
    int st = system(cmd);
    ev_buf_free(err);
    ck_assert_int_eq(ev_read_file(path, err, &e), EV_OK);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/*
 * `make check` names what it lacks before it starts (mk/deps-check.sh): a
 * program a test runs that is not on PATH (here openssl, left out of a PATH
 * that holds everything else), each on a line of its own with its package
 * and the fix, on a DEPS= build the vendored fix; a build directory that
 * cannot be written (make check itself stops there, exit 2, and builds
 * nothing); a temporary directory short of room.  Exit 2 each time.
 */
START_TEST(test_make_check_names_a_missing_tool_an_unwritable_build_directory_and_short_room_in_one_line_each)
{
    ev_buf err = EV_BUF_INIT;
    char script[2048], bin[500];
    snprintf(bin, sizeof bin, "%s/bin", g_dir);
    mkdir(bin, 0755);
    /* each tool a script that runs it by its own path, not a link: a
     * virtual environment's python3 linked elsewhere looks for its
     * pyvenv.cfg beside the link, finds none and runs as the base python
     * without the environment's packages (the GPU host's torch python:
     * numpy seen missing) */
    snprintf(
        script, sizeof script,
        "for t in sh cc python3 git setpriv dirname; do p=$(command -v $t) || exit 9; "
        "printf '#!/bin/sh\\nexec \"%%s\" \"$@\"\\n' \"$p\" > '%s'/$t && chmod +x '%s'/$t || exit 9; done",
        bin, bin);
    ck_assert_int_eq(sh_repo(script, &err), 0);
    /* On a DEPS= build (the GPU host's `make DEPS=.deps check`, EV_DEPS)
     * check.h is only in the vendored tree: the compiler is shown it, as
     * make shows it (Makefile, DEP_CPPFLAGS), so that openssl is all that
     * is missing there too */
    const char *deps = getenv("EV_DEPS");
    char cpp[1200] = "";
    if (deps && *deps)
        snprintf(cpp, sizeof cpp, "CPPFLAGS='-I%s/root/usr/include -I%s/root/usr/include/x86_64-linux-gnu' ",
                 deps, deps);
    /* DEPS empty: on a DEPS= build make hands DEPS to the tests, and
     * $DEPS/bin holds openssl */
    snprintf(script, sizeof script, "%sPATH='%s' DEPS= sh mk/deps-check.sh tests", cpp, bin);
    ck_assert_int_eq(sh_repo(script, &err), 2);
    ck_assert_str_eq(err.data,
                     "make check: openssl: not found (Debian package openssl): make deps installs it (as "
                     "root; or: sudo apt-get install -y openssl)\n"
                     "make check: on a host without network: 'make vendor-debs' on a connected machine, "
                     "copy .deps/, then 'make DEPS=.deps ...'\n");
    snprintf(script, sizeof script, "%sPATH='%s' DEPS=/nowhere sh mk/deps-check.sh tests", cpp, bin);
    ck_assert_int_eq(sh_repo(script, &err), 2);
    ck_assert_str_eq(err.data,
                     "make check: openssl: not found (Debian package openssl): DEPS=/nowhere lacks it: "
                     "'make vendor-debs' on a connected machine fetches it into .deps/debs; copy that "
                     "here\n");
    if (g_ro[0]) {
        snprintf(script, sizeof script, "make -s BUILD='%s/build' DEPS='%s' check", g_ro, deps ? deps : "");
        ck_assert_int_eq(sh_repo(script, &err), 2);
        ck_assert_msg(strstr(err.data, "make check: ") == err.data &&
                          strstr(err.data, "/build (the build directory): cannot be written (") &&
                          strstr(err.data, "): make BUILD=DIR check builds in a directory you can write\n"),
                      "%s", err.data);
        ck_assert_uint_eq(ev_prog_lines(&err), 2); /* the line, and make's own "Error 2" */
        snprintf(script, sizeof script, "test ! -e '%s/build'", g_ro);
        ck_assert_int_eq(sh_repo(script, &err), 0);
    }
    ck_assert_int_eq(sh_repo("ROOM_TMP_MB=1000000000 sh mk/deps-check.sh room", &err), 2);
    ck_assert_msg(strstr(err.data,
                         "MiB free, 1000000000 MiB needed: free some, or TMPDIR=DIR make check uses a "
                         "larger one\n") &&
                      ev_prog_lines(&err) == 1,
                  "%s", err.data);
    ev_buf_free(&err);
}
END_TEST

/* The checkable-case rule (runner/validate.h): evident run refuses a case whose
 * validation passes an all-zero output in one line, naming the case and
 * what to declare, before the store is touched (exit 2: bad input). */
START_TEST(test_run_refuses_a_case_validation_cannot_tell_from_zeros_and_records_nothing)
{
    static const char blind[] =
        "{\"seed\": 7, \"cpu_priority\": \"realtime\", \"samples\": 3, \"warmup_ms\": 1, "
        "\"target_sample_ms\": 1, \"arms\": "
        "[\"default\"], \"cases\": [{\"op\": \"reduce_sum\", \"rows\": 4, \"cols\": 131072, "
        "\"dtype\": \"fp32\", \"default_rows\": 4}]}";
    char proto[400], db[400];
    put("blind.json", blind, sizeof blind - 1);
    fixture("blind.json", proto, sizeof proto);
    fixture("blind.db", db, sizeof db);
    char *argv[] = {"evident", "run", "--protocol", proto, "--backend", "cpu", "--db", db, NULL};
    ev_ran x;
    run_argv(argv, &x);
    ck_assert_int_eq(x.rc, 2);
    ck_assert_uint_eq(ev_prog_lines(&x.err), 1);
    ck_assert_msg(strstr(x.err.data, "cases[0] (reduce_sum 4x131072 fp32): an all-zero output passes"), "%s",
                  x.err.data);
    ck_assert_msg(access(db, F_OK) != 0, "a store was created");
    ev_ran_free(&x);
}
END_TEST

START_TEST(test_every_command_names_an_unknown_option_as_unknown)
{
    static const char *const cmds[][3] = {{"evident", "run", NULL},     {"evident", "fit", NULL},
                                          {"evident", "export", NULL},  {"evident", "report", NULL},
                                          {"evident", "stamp", NULL},   {"evident", "results", NULL},
                                          {"evident", "compare", NULL}, {"verify-bundle", NULL, NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *argv[4];
        size_t n = 0;
        for (; n < 2 && cmds[i][n]; n++)
            argv[n] = (char *)cmds[i][n];
        argv[n++] = "--bogus";
        argv[n] = NULL;
        ev_ran x;
        run_argv(argv, &x);
        ck_assert_int_eq(x.rc, 2);
        ck_assert_uint_eq(ev_prog_lines(&x.err), 1);
        ck_assert_msg(strstr(x.err.data, "unknown option") && strstr(x.err.data, "--bogus") &&
                          !strstr(x.err.data, "needs a value"),
                      "%s %s: %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "", x.err.data);
        ev_ran_free(&x);
    }
}
END_TEST

/* Mounts a tmpfs at dir (made here), copies the files src[0..n) into it
 * and remounts it read-only: read-only media, which root cannot write
 * either.  Returns 0, or -1 when this host cannot (not root, no mount). */
static int ro_media(const char *dir, const char *const *src, size_t n)
{
    char cmd[1200];
    if (geteuid() != 0 || mkdir(dir, 0755) || mount("tmpfs", dir, "tmpfs", 0, "size=64m"))
        return -1;
    for (size_t i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/'", src[i], dir);
        ck_assert_int_eq(system(cmd), 0);
    }
    ck_assert_int_eq(mount("tmpfs", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, "size=64m"), 0);
    return 0;
}

/* A store on read-only media (no -shm can be made beside it) exports the
 * same bundle as the writable original, read as immutable, and nothing
 * is written there. */
START_TEST(test_a_store_on_read_only_media_exports_the_same_bundle)
{
    char store[400], ro[400], rodb[500], out[400];
    const char *src[1] = {store};
    ev_buf want = EV_BUF_INIT, got = EV_BUF_INIT;
    ev_err err;
    fixture("store.db", store, sizeof store);
    fixture("media", ro, sizeof ro);
    if (ro_media(ro, src, 1)) {
        fprintf(stderr, "check_cli: no read-only mount could be made here: read-only media not tested\n");
        return;
    }
    snprintf(rodb, sizeof rodb, "%s/store.db", ro);
    fixture("from-media.zip", out, sizeof out);
    char *exp[] = {"evident", "export", "--db", rodb, "--out", out, NULL};
    ev_ran x;
    run_argv(exp, &x);
    umount(ro);
    ck_assert_msg(x.rc == 0, "export from read-only media: %d: %s", x.rc, x.err.data);
    ev_ran_free(&x);
    fixture("bundle.zip", store, sizeof store);
    ck_assert_int_eq(ev_read_file(store, &want, &err), EV_OK);
    ck_assert_int_eq(ev_read_file(out, &got, &err), EV_OK);
    ck_assert_msg(want.len == got.len && !memcmp(want.data, got.data, got.len),
                  "the bundle from read-only media differs");
    ev_buf_free(&want);
    ev_buf_free(&got);
}
END_TEST

/* Export checks the whole file (integrity_check), not only its pages: a
 * store whose index disagrees with its table (two writers at once did
 * that, through a hard link) is refused, exit 1, naming the finding. */
START_TEST(test_export_refuses_a_store_whose_index_disagrees_with_its_table)
{
    char copy[400], out[400];
    ev_buf before = EV_BUF_INIT;
    sqlite3 *db = NULL;
    store_copy("index-copy.db", copy, sizeof copy, &before);
    ev_buf_free(&before);
    ck_assert_int_eq(sqlite3_open(copy, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db,
                                  "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE INDEX "
                                  "attempts_by_job ON attempts(started_ns)' WHERE name = 'attempts_by_job'; "
                                  "PRAGMA writable_schema = OFF",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    fixture("index.zip", out, sizeof out);
    char *exp[] = {"evident", "export", "--db", copy, "--out", out, NULL};
    ev_ran x;
    run_argv(exp, &x);
    ck_assert_msg(x.rc == 1 && strstr(x.err.data, "integrity_check") && strstr(x.err.data, "attempts_by_job"),
                  "rc %d: %s", x.rc, x.err.data);
    ck_assert_msg(access(out, F_OK) != 0, "a bundle was written from a damaged store");
    ev_ran_free(&x);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("commands");
    tcase_set_timeout(t, 900);
    tcase_add_test(t, test_every_row_of_the_readme_exit_status_table_holds);
    tcase_add_test(t, test_fit_prints_only_model_json_on_stdout_and_writes_the_store_only_with_record);
    tcase_add_test(t, test_fit_record_of_a_fit_that_fails_writes_nothing_and_says_why);
    tcase_add_test(t, test_dash_is_stdout_for_export_and_report);
    tcase_add_test(t, test_cuda_on_a_build_without_nvcc_is_refused_in_one_line_and_records_nothing);
    tcase_add_test(t, test_every_command_names_an_unknown_option_as_unknown);
    tcase_add_test(
        t,
        test_make_check_names_a_missing_tool_an_unwritable_build_directory_and_short_room_in_one_line_each);
    tcase_add_test(t, test_run_refuses_a_case_validation_cannot_tell_from_zeros_and_records_nothing);
    tcase_add_test(t, test_a_store_on_read_only_media_exports_the_same_bundle);
    tcase_add_test(t, test_export_refuses_a_store_whose_index_disagrees_with_its_table);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    build_fixtures();
    int failed = ev_check_suite(cli_suite());
    remove_fixtures();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
