/*
 * utf8.h: the one UTF-8 rule (RFC 3629: no overlong forms, no surrogates,
 * nothing beyond U+10FFFF) for the JSON lexer, the CSV reader and the
 * verifier's text members.
 */
#ifndef EV_UTF8_H
#define EV_UTF8_H

#include <stddef.h>

/* The length (2..4) of the valid sequence starting with the byte >= 0x80
 * at p[0..n), or 0 when invalid (bad lead, bad or missing continuation,
 * overlong, surrogate, beyond U+10FFFF). */
size_t ev_utf8_seq_len(const unsigned char *p, size_t n);
/* 1 when s[0..n) is valid UTF-8, else 0. */
int ev_utf8_valid(const unsigned char *s, size_t n);

#endif
