/*
 * json_numbers.h — what cJSON forgets about a text: the exact text of its numbers, and string
 * contents the IR cannot hold. A lexical pre-scan of a range of the text, run over the same
 * range cJSON parsed, records each number token; gm_json_tag_numbers then ties them to the
 * number items of the tree, which come in the same (document) order.
 */
#ifndef GM_JSON_NUMBERS_H
#define GM_JSON_NUMBERS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tags on a cJSON number item, kept in item->type; the item's valueint becomes the index of
 * its token. The bits are safe there: cJSON's own type tests mask type with 0xFF, and
 * cJSON_Delete only looks at cJSON_IsReference (256) and cJSON_StringIsConst (512). valueint
 * is otherwise unused by the reader and the trees are never printed, so reusing it loses
 * nothing. */
#define GM_JSON_FLOAT_TEXT (1 << 14)   /* the text had '.', 'e' or 'E' */
#define GM_JSON_INT_OVERFLOW (1 << 15) /* integer text outside int64 */

typedef struct gm_json_num {
    int64_t value; /* exact value of integer text that fits int64 */
    int flags;     /* GM_JSON_FLOAT_TEXT, GM_JSON_INT_OVERFLOW */
} gm_json_num;

/* The tokens of one range, in document order; reused from range to range. */
typedef struct gm_json_nums {
    gm_json_num *v;
    size_t n, cap;
} gm_json_nums;

typedef enum gm_json_lex {
    GM_JSON_LEX_OK,
    GM_JSON_LEX_NOMEM,
    GM_JSON_LEX_BAD_NUMBER,  /* a number JSON does not allow though strtod (in cJSON) does */
    GM_JSON_LEX_CONTROL,     /* a raw control character in a string */
    GM_JSON_LEX_NUL_ESCAPE,  /* \u0000 in a string: names and strings are C strings */
} gm_json_lex;

/* Scans text[begin, end), which cJSON has parsed, and appends its number tokens to *out (when
 * not NULL; NULL only checks). On a problem, *at is its offset and *len the bad number's
 * length. */
gm_json_lex gm_json_scan_numbers(const char *text, size_t begin, size_t end, gm_json_nums *out, size_t *at,
                                 size_t *len);

/* Tags the number items of the tree `root` (as cJSON parsed it: no siblings) with nums' tokens; false
 * when the counts disagree (a bug: the pre-scan and cJSON saw different numbers). */
bool gm_json_tag_numbers(const gm_json_nums *nums, cJSON *root);

#endif
