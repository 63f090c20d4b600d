/*
 * utf8.c: the UTF-8 rule (utf8.h).
 */
#include "utf8.h"

/* See utf8.h. */
size_t ev_utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xbf;
    size_t len, i;

    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

/* See utf8.h. */
int ev_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t len = ev_utf8_seq_len(s + i, n - i);
        if (!len)
            return 0;
        i += len;
    }
    return 1;
}
