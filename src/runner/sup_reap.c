/*
 * sup_reap.c: what a job leaves behind.  The supervisor is a child
 * subreaper (PR_SET_CHILD_SUBREAPER): a process a job started whose parent
 * has ended is re-parented to it, not to init, whatever session or
 * process group it moved to (setsid, setpgid), so after each job every
 * process still running below the supervisor that is not one it started
 * on purpose (a staged worker and what runs under it) is the job's
 * leftover.  Each is named (comm and pid, its threads counted), killed and
 * reaped, and the job fails (sup_jobs.c: its process record's
 * protocol_error, records_ok 0: failed-protocol, rescued like any
 * retryable failure; ev_outcome_derive is the one rule the supervisor,
 * the exporter and the verifier derive that from).  A leftover would go on
 * taking the CPU, or the device, from the jobs measured after it.
 */
#include "sup_int.h"

#include <dirent.h>
#include <sys/prctl.h>

/* A process as /proc/<pid>/stat shows it. */
typedef struct pstat {
    pid_t pid, ppid;
    char state;
    char comm[32];
    long threads;
} pstat;

/* Reads /proc/<pid>/stat.  Returns 0, or -1 when the process is gone. */
static int read_stat(pid_t pid, pstat *out)
{
    char path[64], buf[1024], *open_, *close_;
    FILE *f;
    size_t n;
    long ppid, threads = 0;
    char state;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid ... num_threads (field 20) ...": comm may hold anything but ")" ends it last */
    if (!(open_ = strchr(buf, '(')) || !(close_ = strrchr(buf, ')')) || close_ < open_)
        return -1;
    if (sscanf(close_ + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld", &state,
               &ppid, &threads) < 2)
        return -1;
    out->pid = pid;
    out->ppid = (pid_t)ppid;
    out->state = state;
    out->threads = threads;
    snprintf(out->comm, sizeof out->comm, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
    return 0;
}

/* Every process of this host, from /proc.  OUT: *v (malloc'd), *n. */
static ev_status scan(pstat **v, size_t *n)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t cap = 0;

    *v = NULL;
    *n = 0;
    if (!d)
        return EV_EIO;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        pstat p;
        if (*end || pid <= 0 || read_stat((pid_t)pid, &p))
            continue;
        if (ev_grow((void **)v, &cap, *n + 1, sizeof **v)) {
            closedir(d);
            free(*v);
            *v = NULL;
            return EV_ENOMEM;
        }
        (*v)[(*n)++] = p;
    }
    closedir(d);
    return EV_OK;
}

/* 1 when pid is a process the supervisor started and keeps (a staged
 * worker). */
static int kept(const sup *s, pid_t pid)
{
    for (size_t i = 0; i < s->n_staged; i++)
        if (s->staged[i].pid == pid)
            return 1;
    return 0;
}

void sup_subreaper(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

ev_status sup_sweep(sup *s, ev_buf *named)
{
    pid_t self = getpid();
    ev_status rc = EV_OK;
    pid_t seen[64];
    size_t n_seen = 0;

    /* a few rounds: one that forks while it is killed leaves children,
     * re-parented here, for the next round to find */
    for (int round = 0; round < 50 && !rc; round++) {
        pstat *v;
        size_t n, found = 0;
        char *mark;
        if ((rc = scan(&v, &n)))
            break;
        /* below this process: marked by their parent chain, to a fixed point
         * (1: a leftover, 2: a kept process or below one) */
        if (!(mark = calloc(n ? n : 1, 1))) {
            free(v);
            rc = EV_ENOMEM;
            break;
        }
        for (int changed = 1; changed;) {
            changed = 0;
            for (size_t i = 0; i < n; i++) {
                char m = 0;
                if (mark[i])
                    continue;
                if (v[i].ppid == self)
                    m = kept(s, v[i].pid) ? 2 : 1;
                for (size_t j = 0; j < n && !m; j++)
                    if (mark[j] && v[j].pid == v[i].ppid)
                        m = mark[j];
                if (m) {
                    mark[i] = m;
                    changed = 1;
                }
            }
        }
        for (size_t i = 0; i < n; i++) {
            int known = 0;
            if (mark[i] != 1)
                continue;
            found++;
            for (size_t k = 0; k < n_seen && !known; k++)
                known = seen[k] == v[i].pid;
            if (!known && v[i].state != 'Z') {
                if (n_seen < sizeof seen / sizeof seen[0])
                    seen[n_seen++] = v[i].pid;
                ev_buf_printf(named, "%s%s (pid %d%s", named->len ? ", " : "", v[i].comm, (int)v[i].pid,
                              v[i].threads > 1 ? ", " : ")");
                if (v[i].threads > 1)
                    ev_buf_printf(named, "%ld threads)", v[i].threads);
            }
            kill(v[i].pid, SIGKILL);
            if (v[i].ppid == self)
                waitpid(v[i].pid, NULL, WNOHANG);
        }
        free(mark);
        free(v);
        if (!found)
            break;
        {
            struct timespec ms = {0, 2000000};
            nanosleep(&ms, NULL);
        }
    }
    return rc;
}
