/*
 * fuzz_json.c: libFuzzer target for the strict JSON reader (src/common/json.c).
 *
 * Runs ev_json_check and ev_json_parse over each input, with and without
 * EV_JSON_CANONICAL, and checks that they agree: the parse succeeds exactly
 * when the check does (cJSON must never be the one to refuse, nor to accept
 * what the lexer refused), and canonical input is also plain-valid input.
 */
#include <stdint.h>
#include <stdlib.h>

#include "json.h"

/* Returns the parse status under flags, freeing any tree. */
static ev_status parse(const uint8_t *data, size_t size, unsigned flags)
{
    cJSON *tree = NULL;
    ev_err err;
    ev_status rc = ev_json_parse((const char *)data, size, flags, &tree, &err);

    if (rc == EV_OK && !tree)
        abort();
    if (rc != EV_OK && tree)
        abort();
    cJSON_Delete(tree);
    return rc;
}

/* libFuzzer's entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ev_err err;
    ev_status plain = ev_json_check((const char *)data, size, 0, &err);
    ev_status canon = ev_json_check((const char *)data, size, EV_JSON_CANONICAL, &err);
    ev_status plain_parse = parse(data, size, 0);
    ev_status canon_parse = parse(data, size, EV_JSON_CANONICAL);

    if (plain != EV_OK && plain != EV_EFORMAT)
        abort();
    if (canon != EV_OK && canon != EV_EFORMAT)
        abort();
    if (canon == EV_OK && plain != EV_OK)
        abort(); /* canonical is stricter */
    if (plain_parse != EV_ENOMEM && (plain_parse == EV_OK) != (plain == EV_OK))
        abort();
    if (canon_parse != EV_ENOMEM && (canon_parse == EV_OK) != (canon == EV_OK))
        abort();
    return 0;
}
