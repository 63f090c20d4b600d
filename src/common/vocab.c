/*
 * vocab.c: the vocabulary's tables, names and parsers, each made from the
 * lists of vocab.h (nothing here spells a word).
 */
#include "vocab.h"

#include <string.h>

/* ---- the tables, from the lists ------------------------------------------ */

#define OP_NAME_(id, name, combine, fin, a)    #name,
#define OP_COMBINE_(id, name, combine, fin, a) EV_COMBINE_##combine,
#define OP_FINISH_(id, name, combine, fin, a)  EV_FINISH_##fin,
#define DTYPE_NAME_(id, name, bytes, a)        #name,
#define DTYPE_BYTES_(id, name, bytes, a)       bytes,
static const char *const op_names[EV_OP_COUNT] = {EV_OPS(OP_NAME_, _)};
static const ev_combine op_combines[EV_OP_COUNT] = {EV_OPS(OP_COMBINE_, _)};
static const ev_finish op_finishes[EV_OP_COUNT] = {EV_OPS(OP_FINISH_, _)};
static const char *const dtype_names[EV_DTYPE_COUNT] = {EV_DTYPES(DTYPE_NAME_, _)};
static const size_t dtype_bytes[EV_DTYPE_COUNT] = {EV_DTYPES(DTYPE_BYTES_, _)};

#define NAME_ROW_(id, name, a)            name,
#define SCHED_NAME_(id, name, rows, a)    name,
#define SCHED_ROWS_(id, name, rows, a)    rows,
#define ARM_NAME_(id, name, pre, peer, a) name,
#define ARM_PRE_(id, name, pre, peer, a)  pre,
#define ARM_PEER_(id, name, pre, peer, a) peer,
static const char *const role_names[EV_ROLE_COUNT] = {EV_ROLES(NAME_ROW_, _)};
static const char *const phase_names[EV_PHASE_COUNT] = {EV_PHASES(NAME_ROW_, _)};
static const char *const sched_names[EV_SCHED_COUNT] = {EV_SCHEDS(SCHED_NAME_, _)};
static const int64_t sched_rows[EV_SCHED_COUNT] = {EV_SCHEDS(SCHED_ROWS_, _)};
static const char *const arm_names[EV_ARM_KIND_COUNT] = {EV_ARM_KINDS(ARM_NAME_, _)};
static const char *const arm_prefixes[EV_ARM_KIND_COUNT] = {EV_ARM_KINDS(ARM_PRE_, _)};
static const int arm_peers[EV_ARM_KIND_COUNT] = {EV_ARM_KINDS(ARM_PEER_, _)};

/* The lists as text: ", w1, w2" (a separator before each word; the
 * functions below skip the first). */
#define OP_WORD_(id, name, combine, fin, a) ", " #name
#define DTYPE_WORD_(id, name, bytes, a)     ", " #name
#define NAME_WORD_(id, name, a)             ", " name
#define SCHED_WORD_(id, name, rows, a)      ", " name
static const char op_words[] = "" EV_OPS(OP_WORD_, _);
static const char dtype_words[] = "" EV_DTYPES(DTYPE_WORD_, _);
static const char role_words[] = "" EV_ROLES(NAME_WORD_, _);
static const char phase_words[] = "" EV_PHASES(NAME_WORD_, _);
static const char sched_words[] = "" EV_SCHEDS(SCHED_WORD_, _);

/* Returns the index of name in names[0..n) (NULL entries never match), or
 * -1; NULL name is none. */
static int find(const char *name, const char *const *names, size_t n)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (names[i] && !strcmp(name, names[i]))
            return (int)i;
    return -1;
}

/* ---- ops ------------------------------------------------------------------ */

/* Returns op's name; "?" out of range. */
const char *ev_op_name(ev_op op)
{
    return (unsigned)op < EV_OP_COUNT ? op_names[op] : "?";
}

/* Returns 0 and sets *out when name is an op; -1 otherwise. */
int ev_op_parse(const char *name, ev_op *out)
{
    int i = find(name, op_names, EV_OP_COUNT);
    if (i < 0)
        return -1;
    *out = (ev_op)i;
    return 0;
}

/* Returns 1 when name is op's name. */
int ev_is_op(const char *name, ev_op op)
{
    return (unsigned)op < EV_OP_COUNT && name && !strcmp(name, op_names[op]);
}

/* Returns op's combine; SUM out of range. */
ev_combine ev_op_combine(ev_op op)
{
    return (unsigned)op < EV_OP_COUNT ? op_combines[op] : EV_COMBINE_SUM;
}

/* Returns op's finish; NONE out of range. */
ev_finish ev_op_finish(ev_op op)
{
    return (unsigned)op < EV_OP_COUNT ? op_finishes[op] : EV_FINISH_NONE;
}

/* Returns the ops' names, comma-separated. */
const char *ev_op_words(void)
{
    return op_words + 2;
}

/* ---- dtypes --------------------------------------------------------------- */

/* Returns d's name; "?" out of range. */
const char *ev_dtype_name(ev_dtype d)
{
    return (unsigned)d < EV_DTYPE_COUNT ? dtype_names[d] : "?";
}

/* Returns 0 and sets *out when name is a dtype; -1 otherwise. */
int ev_dtype_parse(const char *name, ev_dtype *out)
{
    int i = find(name, dtype_names, EV_DTYPE_COUNT);
    if (i < 0)
        return -1;
    *out = (ev_dtype)i;
    return 0;
}

/* Returns 1 when name is d's name. */
int ev_is_dtype(const char *name, ev_dtype d)
{
    return (unsigned)d < EV_DTYPE_COUNT && name && !strcmp(name, dtype_names[d]);
}

/* Returns d's bytes per element; 0 out of range. */
size_t ev_dtype_size(ev_dtype d)
{
    return (unsigned)d < EV_DTYPE_COUNT ? dtype_bytes[d] : 0;
}

/* Returns the dtypes' names, comma-separated. */
const char *ev_dtype_words(void)
{
    return dtype_words + 2;
}

/* ---- roles, phases, schedules ----------------------------------------------- */

/* Returns r's name; "?" out of range. */
const char *ev_role_name(ev_role r)
{
    return (unsigned)r < EV_ROLE_COUNT ? role_names[r] : "?";
}

/* Returns 0 and sets *out when name is a role; -1 otherwise. */
int ev_role_parse(const char *name, ev_role *out)
{
    int i = find(name, role_names, EV_ROLE_COUNT);
    if (i < 0)
        return -1;
    *out = (ev_role)i;
    return 0;
}

/* Returns 1 when name is r's name. */
int ev_is_role(const char *name, ev_role r)
{
    return (unsigned)r < EV_ROLE_COUNT && name && !strcmp(name, role_names[r]);
}

/* Returns the roles' names, comma-separated. */
const char *ev_role_words(void)
{
    return role_words + 2;
}

/* Returns p's name; "?" out of range. */
const char *ev_phase_name(ev_phase p)
{
    return (unsigned)p < EV_PHASE_COUNT ? phase_names[p] : "?";
}

/* Returns 0 and sets *out when name is a phase; -1 otherwise. */
int ev_phase_parse(const char *name, ev_phase *out)
{
    int i = find(name, phase_names, EV_PHASE_COUNT);
    if (i < 0)
        return -1;
    *out = (ev_phase)i;
    return 0;
}

/* Returns 1 when name is p's name. */
int ev_is_phase(const char *name, ev_phase p)
{
    return (unsigned)p < EV_PHASE_COUNT && name && !strcmp(name, phase_names[p]);
}

/* Returns the phases' names, comma-separated. */
const char *ev_phase_words(void)
{
    return phase_words + 2;
}

/* Returns s's name; "?" out of range. */
const char *ev_sched_name(ev_sched s)
{
    return (unsigned)s < EV_SCHED_COUNT ? sched_names[s] : "?";
}

/* Returns 0 and sets *out when name is a schedule; -1 otherwise. */
int ev_sched_parse(const char *name, ev_sched *out)
{
    int i = find(name, sched_names, EV_SCHED_COUNT);
    if (i < 0)
        return -1;
    *out = (ev_sched)i;
    return 0;
}

/* Returns 1 when name is s's name. */
int ev_is_sched(const char *name, ev_sched s)
{
    return (unsigned)s < EV_SCHED_COUNT && name && !strcmp(name, sched_names[s]);
}

/* Returns the schedules' names, comma-separated. */
const char *ev_sched_words(void)
{
    return sched_words + 2;
}

/* Returns s's fixed rows per program; 0 for none and out of range. */
int64_t ev_sched_fixed_rows(ev_sched s)
{
    return (unsigned)s < EV_SCHED_COUNT ? sched_rows[s] : 0;
}

/* ---- arm kinds ---------------------------------------------------------------- */

/* Returns the one arm of kind k; NULL for a kind of many, and out of range. */
const char *ev_arm_kind_name(ev_arm_kind k)
{
    return (unsigned)k < EV_ARM_KIND_COUNT ? arm_names[k] : NULL;
}

/* Returns the prefix of k's declared arms; NULL where it has none. */
const char *ev_arm_kind_prefix(ev_arm_kind k)
{
    return (unsigned)k < EV_ARM_KIND_COUNT ? arm_prefixes[k] : NULL;
}

/* Returns 1 for a peer's kind. */
int ev_arm_kind_peer(ev_arm_kind k)
{
    return (unsigned)k < EV_ARM_KIND_COUNT && arm_peers[k];
}

/* Returns 1 when arm is the one arm of kind k. */
int ev_is_arm(const char *arm, ev_arm_kind k)
{
    const char *w = ev_arm_kind_name(k);
    return w && arm && !strcmp(arm, w);
}

/* See vocab.h: the kind (and schedule) an arm name means; -1 for none. */
int ev_arm_builtin(const char *arm, ev_arm_kind *kind, ev_sched *sched)
{
    ev_sched s;
    int i;

    if (!arm)
        return -1;
    if (!ev_sched_parse(arm, &s)) {
        *kind = EV_ARM_NATIVE;
        *sched = s;
        return 0;
    }
    if ((i = find(arm, arm_names, EV_ARM_KIND_COUNT)) >= 0) {
        *kind = (ev_arm_kind)i;
        *sched = EV_SCHED_COUNT;
        return 0;
    }
    for (i = 0; i < EV_ARM_KIND_COUNT; i++)
        if (arm_prefixes[i] && !strncmp(arm, arm_prefixes[i], strlen(arm_prefixes[i]))) {
            *kind = (ev_arm_kind)i;
            *sched = EV_SCHED_COUNT;
            return 0;
        }
    return -1;
}
