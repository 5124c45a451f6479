/*
 * json_cursor.h — a cursor over JSON text for the fast readers that take the common, simple
 * shape of a big array's elements straight from the text (io/json_read_fast.c: a model's
 * nodes; plan/verify_fast.c: a plan's symbols). Each reader accepts only what these take and
 * leaves anything else to cJSON: they read a strict subset, never judge the format.
 */
#ifndef GM_JSON_CURSOR_H
#define GM_JSON_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* text[i, e) still to read */
typedef struct gm_jc {
    const char *t;
    size_t i, e;
} gm_jc;

/* A string's contents, where they are in the text. */
typedef struct gm_jc_str {
    const char *s;
    size_t n;
} gm_jc_str;

/* White space as cJSON skips it: every byte up to ' '. */
static inline void gm_jc_ws(gm_jc *k)
{
    while (k->i < k->e && (unsigned char)k->t[k->i] <= ' ') k->i++;
}

static inline bool gm_jc_take(gm_jc *k, char ch)
{
    gm_jc_ws(k);
    if (k->i < k->e && k->t[k->i] == ch) {
        k->i++;
        return true;
    }
    return false;
}

static inline bool gm_jc_peek(gm_jc *k, char ch)
{
    gm_jc_ws(k);
    return k->i < k->e && k->t[k->i] == ch;
}

/* A string with no escape and no control byte. */
static inline bool gm_jc_str_plain(gm_jc *k, gm_jc_str *out)
{
    if (!gm_jc_take(k, '"')) return false;
    size_t b = k->i;
    while (k->i < k->e) {
        unsigned char c = (unsigned char)k->t[k->i];
        if (c == '"') {
            *out = (gm_jc_str){k->t + b, k->i - b};
            k->i++;
            return true;
        }
        if (c == '\\' || c < 0x20) return false;
        k->i++;
    }
    return false;
}

/* -?[0-9]{1,max_digits} without a leading zero, a fraction or an exponent: integer text that
 * JSON allows and that is exact (max_digits <= 18: in int64; <= 15: as a double too). */
static inline bool gm_jc_int(gm_jc *k, size_t max_digits, int64_t *out)
{
    gm_jc_ws(k);
    size_t j = k->i;
    bool neg = j < k->e && k->t[j] == '-';
    j += neg;
    size_t b = j;
    int64_t v = 0;
    while (j < k->e && k->t[j] >= '0' && k->t[j] <= '9' && j - b < max_digits) v = v * 10 + (k->t[j++] - '0');
    size_t n = j - b;
    if (n == 0 || (n > 1 && k->t[b] == '0')) return false;
    if (j < k->e && (k->t[j] == '.' || k->t[j] == 'e' || k->t[j] == 'E' || (k->t[j] >= '0' && k->t[j] <= '9')))
        return false; /* a fraction, an exponent, or more digits than max_digits */
    k->i = j;
    *out = neg ? -v : v;
    return true;
}

/* A literal (true, false, null) not run on into a longer word. */
static inline bool gm_jc_word(gm_jc *k, const char *w)
{
    gm_jc_ws(k);
    size_t n = strlen(w);
    if (k->e - k->i < n || memcmp(k->t + k->i, w, n) != 0) return false;
    if (k->i + n < k->e && !memchr(",]} \t\r\n", k->t[k->i + n], 7)) return false;
    k->i += n;
    return true;
}

static inline bool gm_jc_str_is(gm_jc_str s, const char *w)
{
    size_t n = strlen(w);
    return s.n == n && memcmp(s.s, w, n) == 0;
}

#endif
