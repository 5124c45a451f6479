/*
 * json_split.h — finds the node lists of a JSON model text without parsing it, so that the
 * reader can parse the rest of the text (the "skeleton") and then each node on its own instead
 * of holding the whole model in one cJSON tree (see json_split.c for why and how).
 */
#ifndef GM_JSON_SPLIT_H
#define GM_JSON_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One array found on the path: text[open] == '[' and text[close] == ']'. Element i is the text
 * between the comma (or the '[') before it and gm_json_split.ends[first + i] (the comma after
 * it, or the ']'), white space included; it may be empty or blank when the text is not JSON,
 * which cJSON will then say. count is 0 when the interior holds white space only. */
typedef struct gm_json_array_split {
    size_t open, close;
    size_t first, count;
    size_t path; /* gm_json_split_scan_paths: which of its paths led here (0 for gm_json_split_scan) */
} gm_json_array_split;

typedef struct gm_json_split {
    gm_json_array_split *arrays; /* in document order */
    size_t n_arrays, cap_arrays;
    size_t *ends; /* element ends, all arrays one after another */
    size_t n_ends, cap_ends;
    size_t removed; /* bytes between the arrays' brackets, all together: what the skeleton leaves out */
} gm_json_split;

typedef enum gm_json_split_result {
    GM_JSON_SPLIT_OK,
    GM_JSON_SPLIT_GIVE_UP, /* read the text as one: the split could not be trusted */
    GM_JSON_SPLIT_NOMEM,
    GM_JSON_SPLIT_MORE, /* gm_json_split_scanner_run: the text so far is scanned, more is to come */
} gm_json_split_result;

/* Records every array at the path root object -> key `outer` (an array) -> any object element
 * -> key `inner` (an array), in document order, empty ones too. Keys are compared by their raw
 * bytes, so the scan gives up when a key of the root object or of an element object holds a
 * backslash; it also gives up when the text is unbalanced, brackets do not match, a string
 * never ends or the nesting is deeper than cJSON accepts. *out must be zeroed; free it with
 * gm_json_split_free whatever the result. */
gm_json_split_result gm_json_split_scan(const char *text, size_t len, const char *outer, const char *inner,
                                        gm_json_split *out);

/* At most this many paths, of at most this many keys, for gm_json_split_scan_paths. */
enum { GM_JSON_SPLIT_MAX_PATHS = 8, GM_JSON_SPLIT_MAX_KEYS = 4 };
/* cJSON's nesting limit, past which the scans give up (checked against it in json_split.c). */
enum { GM_JSON_SPLIT_NESTING = 1000 };

/* Records every array at one of `paths` (n_paths of them), in document order, empty ones too,
 * each tagged with its path's number. A path is a chain of object keys from the root object,
 * separated by '/': "symbols" is the array at root -> "symbols", "summary/witness" the one at
 * root -> "summary" (an object) -> "witness". An array found again on the same path (a
 * duplicate key) is recorded again: the caller decides. Gives up as gm_json_split_scan does,
 * and also on a path key of an object on the way written with a backslash. *out must be
 * zeroed; free it with gm_json_split_free whatever the result. */
gm_json_split_result gm_json_split_scan_paths(const char *text, size_t len, const char *const *paths,
                                              size_t n_paths, gm_json_split *out);

/* The same scan in steps, over a text that is still being written (the planner scans its plan
 * on another thread as it writes it): each run goes as far as `upto` and keeps its place.
 *
 *     gm_json_split_scanner sc;
 *     if (!gm_json_split_scanner_init(&sc, paths, n)) -> give up
 *     while ((r = gm_json_split_scanner_run(&sc, text, written, done, &out)) == GM_JSON_SPLIT_MORE) ...
 *
 * A run with `final` false answers GM_JSON_SPLIT_MORE when it reached `upto` (a string not yet
 * closed there is read again from its quote next time); with `final` true, `upto` is the whole
 * length and the answer is gm_json_split_scan_paths's. text[0, upto) must not change between
 * runs; the text itself may move (the scanner keeps offsets). */
typedef struct gm_json_split_key {
    size_t begin, len; /* the last key seen in an object on the path: raw bytes between the quotes */
    bool want;         /* the next string there is a key */
} gm_json_split_key;
typedef struct gm_json_split_path_keys {
    const char *key[GM_JSON_SPLIT_MAX_KEYS];
    size_t len[GM_JSON_SPLIT_MAX_KEYS];
    size_t n;
} gm_json_split_path_keys;
typedef struct gm_json_split_scanner {
    gm_json_split_path_keys pk[GM_JSON_SPLIT_MAX_PATHS];
    size_t n_paths;
    size_t at;                 /* the next byte to look at */
    size_t depth, on_path;
    bool recording;
    size_t k_level;            /* 1 + the level whose key state is current; 0: none */
    gm_json_split_key keys[GM_JSON_SPLIT_MAX_KEYS + 1];
    unsigned alive[GM_JSON_SPLIT_MAX_KEYS + 1];
    uint8_t is_object[GM_JSON_SPLIT_NESTING / 8 + 1];
} gm_json_split_scanner;

/* False for paths gm_json_split_scan_paths gives up on. */
bool gm_json_split_scanner_init(gm_json_split_scanner *sc, const char *const *paths, size_t n_paths);
gm_json_split_result gm_json_split_scanner_run(gm_json_split_scanner *sc, const char *text, size_t upto, bool final,
                                               gm_json_split *out);

/* [*begin, *end) of element i of array a. */
void gm_json_split_element(const gm_json_split *s, const gm_json_array_split *a, size_t i, size_t *begin,
                           size_t *end);

/* The text with every recorded array's interior removed ("[...]" becomes "[]"), NUL-terminated,
 * length in *len; NULL when out of memory. Offsets in it differ from the text's after the first
 * array, so it is only for parsing: the reader reads the whole text again for any error in it. */
char *gm_json_split_skeleton(const char *text, size_t len, const gm_json_split *s, size_t *out_len);

void gm_json_split_free(gm_json_split *s);

#endif
