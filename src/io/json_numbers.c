/*
 * json_numbers.c — the lexical pre-scan of the JSON reader (see json_numbers.h).
 *
 * cJSON keeps one double per number and forgets its text, but the format types attribute
 * values by their text (1 is an int, 1.0 a float) and sizes need all 64 bits. It also lets
 * through what the IR cannot hold (raw control characters and \u0000 in strings) and numbers
 * JSON forbids ("01", "1."), because it hands numbers to strtod. So each range cJSON parsed is
 * scanned once more here, cheaply, with no tree.
 */
#include "io/json_numbers.h"

#include <limits.h>
#include <string.h>

#include "util/alloc.h"

/* Classifies the number token text[b..e): float text, or its exact int64 value. */
static gm_json_num classify_number(const char *t, size_t b, size_t e)
{
    gm_json_num tok = {0, 0};
    for (size_t i = b; i < e; i++) {
        if (t[i] == '.' || t[i] == 'e' || t[i] == 'E') {
            tok.flags = GM_JSON_FLOAT_TEXT;
            return tok;
        }
    }
    bool neg = t[b] == '-';
    uint64_t mag = 0;
    for (size_t i = b + neg; i < e; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (mag > (UINT64_MAX - d) / 10) {
            tok.flags = GM_JSON_INT_OVERFLOW;
            return tok;
        }
        mag = mag * 10 + d;
    }
    /* -2^63 is the one magnitude that fits only when negative. */
    if (mag > (uint64_t)INT64_MAX + neg) {
        tok.flags = GM_JSON_INT_OVERFLOW;
        return tok;
    }
    tok.value = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return tok;
}

/* True when text[b..e) is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
 * cJSON hands its numbers to strtod, which also takes "01", "1." and "1.e5". */
static bool is_json_number(const char *t, size_t b, size_t e)
{
    size_t i = b;
    if (i < e && t[i] == '-') i++;
    if (i >= e || t[i] < '0' || t[i] > '9') return false;
    if (t[i++] != '0') {
        while (i < e && t[i] >= '0' && t[i] <= '9') i++;
    }
    if (i < e && t[i] == '.') {
        size_t d = ++i;
        while (i < e && t[i] >= '0' && t[i] <= '9') i++;
        if (i == d) return false;
    }
    if (i < e && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < e && (t[i] == '+' || t[i] == '-')) i++;
        size_t d = i;
        while (i < e && t[i] >= '0' && t[i] <= '9') i++;
        if (i == d) return false;
    }
    return i == e;
}

static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Skips the string starting at text[i] == '"'; *next receives the offset after its closing
 * quote (or end). Rejects what cJSON lets through but the IR cannot hold: raw control
 * characters and the escaped NUL (names and strings are C strings). */
static gm_json_lex scan_string(const char *t, size_t i, size_t end, size_t *next, size_t *at)
{
    for (i++; i < end; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '"') {
            *next = i + 1;
            return GM_JSON_LEX_OK;
        }
        if (c < 0x20) {
            *at = i;
            return GM_JSON_LEX_CONTROL;
        }
        if (c == '\\') {
            if (i + 5 < end && t[i + 1] == 'u' && memcmp(t + i + 2, "0000", 4) == 0) {
                *at = i;
                return GM_JSON_LEX_NUL_ESCAPE;
            }
            i++; /* the escaped character cannot end the string */
        }
    }
    *next = end;
    return GM_JSON_LEX_OK;
}

/* cJSON parsed the range, so its token structure is valid: numbers outside strings are
 * maximal runs of number characters, which is exactly what cJSON consumed. */
gm_json_lex gm_json_scan_numbers(const char *text, size_t begin, size_t end, gm_json_nums *out, size_t *at,
                                 size_t *len)
{
    size_t i = begin;
    while (i < end) {
        char c = text[i];
        if (c == '"') {
            gm_json_lex st = scan_string(text, i, end, &i, at);
            if (st != GM_JSON_LEX_OK) return st;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t b = i;
            while (i < end && is_number_char(text[i])) i++;
            if (!is_json_number(text, b, i)) {
                *at = b;
                *len = i - b;
                return GM_JSON_LEX_BAD_NUMBER;
            }
            if (out) {
                if (out->n == out->cap && gm_grow((void **)&out->v, sizeof *out->v, out->n + 1, &out->cap))
                    return GM_JSON_LEX_NOMEM;
                out->v[out->n++] = classify_number(text, b, i);
            }
        } else {
            i++; /* structure, white space, and the letters of true/false/null */
        }
    }
    return GM_JSON_LEX_OK;
}

/* Document order is pre-order. The type test is cJSON_IsNumber's, inline: the call into the
 * shared library cost more than the test on trees of millions of items. */
static bool tag_items(const gm_json_nums *nums, cJSON *item, size_t *k)
{
    for (; item; item = item->next) {
        if ((item->type & 0xFF) == cJSON_Number) {
            if (*k >= nums->n || *k > INT_MAX) return false;
            item->valueint = (int)*k;
            item->type |= nums->v[*k].flags;
            (*k)++;
        } else if (item->child && !tag_items(nums, item->child, k)) {
            return false;
        }
    }
    return true;
}

bool gm_json_tag_numbers(const gm_json_nums *nums, cJSON *root)
{
    size_t k = 0;
    return tag_items(nums, root, &k) && k == nums->n;
}
