/*
 * json_split.c — a structural scan that finds the node lists of a model text (and, by key
 * paths, the big arrays of a plan text for the verifier: gm_json_split_scan_paths).
 *
 * Why: parsed in one go, a 200,000-node model becomes ~3 M cJSON items (~325 MB) that live only
 * until the walk has copied them into the IR, and freeing them all at once sets glibc's malloc
 * consolidating its free lists for a quarter of a second. Nearly all of that is the "nodes"
 * arrays. So the reader parses the text without their contents (the skeleton) and then each
 * node on its own, deleting each small tree before the next: the memory is recycled while it
 * is hot and the peak stays small.
 *
 * This scan only has to find where those arrays and their elements are. It is not a validator:
 * cJSON stays the judge of syntax, since the reader parses the skeleton and every element with
 * it. What the scan must get right is to never split where cJSON would not, and it cannot be
 * wrong about that for a text whose skeleton cJSON accepts: outside strings, JSON's structure
 * is fixed by the brackets, commas and the key/value alternation it tracks here. Whenever it
 * cannot be sure (brackets unbalanced or mismatched, a string that never ends, a key on the
 * path written with escapes, nesting deeper than cJSON allows) it gives up, and the reader
 * parses the whole text as one, exactly as before.
 */
#include "io/json_split.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/alloc.h"

_Static_assert(GM_JSON_SPLIT_NESTING == CJSON_NESTING_LIMIT, "the scanner gives up where cJSON does");

/* Levels of the path, by nesting depth: inside the root object (1), the outer array (2), one
 * of its element objects (3), the inner array being recorded (4). */
enum { AT_ROOT = 1, AT_OUTER = 2, AT_ELEMENT = 3, AT_INNER = 4 };

/* The offset of the quote that ends the string opened at text[open], or len when it never
 * ends. A backslash always takes the next byte with it, so an escaped quote is skipped. */
static size_t string_end(const char *t, size_t len, size_t open)
{
    /* memchr to the next quote (the text is mostly strings), then: a quote is escaped when an
     * odd number of backslashes runs up to it (each backslash takes the next byte) */
    size_t i = open + 1;
    while (i < len) {
        const char *q = memchr(t + i, '"', len - i);
        if (!q) return len;
        size_t e = (size_t)(q - t), k = e;
        while (k > open + 1 && t[k - 1] == '\\') k--;
        if ((e - k) % 2 == 0) return e;
        i = e + 1;
    }
    return len;
}

static bool key_is(const char *t, const gm_json_split_key *k, const char *want)
{
    return k->len == strlen(want) && memcmp(t + k->begin, want, k->len) == 0;
}

/* Steps *i to e, the end of the string opening there; when k wants its key, that string is it.
 * False when a wanted key holds an escape (cJSON compares keys after unescaping, raw bytes only
 * match when unescaped). */
static bool take_string_to(const char *text, size_t *i, size_t e, gm_json_split_key *k)
{
    if (k && k->want) {
        if (memchr(text + *i + 1, '\\', e - *i - 1)) return false;
        k->begin = *i + 1;
        k->len = e - *i - 1;
        k->want = false;
    }
    *i = e;
    return true;
}

/* The same, finding the end; false also when the string never ends. */
static bool take_string(const char *text, size_t len, size_t *i, gm_json_split_key *k)
{
    size_t e = string_end(text, len, *i);
    return e != len && take_string_to(text, i, e, k);
}

/* Notes whether the container opening at depth is an object; false past cJSON's nesting. */
static bool open_container(uint8_t *is_object, size_t depth, unsigned char c)
{
    if (depth == CJSON_NESTING_LIMIT) return false;
    if (c == '{') is_object[depth / 8] |= (uint8_t)(1u << depth % 8);
    else is_object[depth / 8] &= (uint8_t)~(1u << depth % 8);
    return true;
}

/* Does the bracket c close the container opened at depth? */
static bool closes(const uint8_t *is_object, size_t depth, unsigned char c)
{
    return ((is_object[depth / 8] >> depth % 8) & 1) == (c == '}');
}

/* A new array at `open`, reached by path number `path`. */
static bool record_array(gm_json_split *out, size_t open, size_t path)
{
    if (out->n_arrays == out->cap_arrays &&
        gm_grow((void **)&out->arrays, sizeof *out->arrays, out->n_arrays + 1, &out->cap_arrays))
        return false;
    out->arrays[out->n_arrays++] = (gm_json_array_split){open, 0, out->n_ends, 0, path};
    return true;
}

static bool push_end(gm_json_split *s, size_t at)
{
    if (s->n_ends == s->cap_ends && gm_grow((void **)&s->ends, sizeof *s->ends, s->n_ends + 1, &s->cap_ends))
        return false;
    s->ends[s->n_ends++] = at;
    return true;
}

/* Closes the recorded array at text[close]: its last element ends there, unless the array
 * holds white space only (cJSON's white space: every byte up to ' '). */
static bool close_array(gm_json_split *s, const char *text, size_t close)
{
    gm_json_array_split *a = &s->arrays[s->n_arrays - 1];
    a->close = close;
    bool blank = s->n_ends == a->first; /* no comma, so at most one element: look */
    for (size_t j = a->open + 1; blank && j < close; j++) blank = (unsigned char)text[j] <= ' ';
    if (!blank && !push_end(s, close)) return false;
    a->count = s->n_ends - a->first;
    s->removed += close - a->open - 1;
    return true;
}

gm_json_split_result gm_json_split_scan(const char *text, size_t len, const char *outer, const char *inner,
                                        gm_json_split *out)
{
    /* One bit per open container (1 = object) to check that each closing bracket matches;
     * deeper than cJSON's own limit the whole-text parse must give cJSON's answer anyway. */
    uint8_t is_object[CJSON_NESTING_LIMIT / 8 + 1];
    size_t depth = 0;
    size_t on_path = 0;        /* how many of the open containers are on the path */
    gm_json_split_key keys[2] = {{0}}; /* the root object's, the element object's */
    /* Where we are, updated when a container opens or closes: in an object on the path (k is
     * its key state), directly in a recorded array (in_inner), or elsewhere. */
    gm_json_split_key *k = NULL;
    bool in_inner = false;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '"':
            if (!take_string(text, len, &i, k)) return GM_JSON_SPLIT_GIVE_UP;
            continue;
        case '{':
        case '[':
            if (!open_container(is_object, depth, c)) return GM_JSON_SPLIT_GIVE_UP;
            if (on_path == depth) {
                /* The next step of the path, when this container is it. */
                bool step = (depth == 0 && c == '{') || (depth == AT_ROOT && c == '[' && key_is(text, k, outer)) ||
                            (depth == AT_OUTER && c == '{') ||
                            (depth == AT_ELEMENT && c == '[' && key_is(text, k, inner));
                if (step) {
                    on_path++;
                    if (on_path == AT_ROOT || on_path == AT_ELEMENT)
                        keys[on_path / 2] = (gm_json_split_key){0, 0, true};
                    if (on_path == AT_INNER && !record_array(out, i, 0)) return GM_JSON_SPLIT_NOMEM;
                }
            }
            depth++;
            break;
        case '}':
        case ']':
            if (depth == 0) return GM_JSON_SPLIT_GIVE_UP;
            depth--;
            if (!closes(is_object, depth, c)) return GM_JSON_SPLIT_GIVE_UP;
            if (on_path == depth + 1) {
                if (on_path == AT_INNER && !close_array(out, text, i)) return GM_JSON_SPLIT_NOMEM;
                on_path--;
            }
            /* The root value ended: what follows is the skeleton parse's business. */
            if (depth == 0) return GM_JSON_SPLIT_OK;
            break;
        case ',':
            if (in_inner) {
                if (!push_end(out, i)) return GM_JSON_SPLIT_NOMEM;
            } else if (k) {
                k->want = true;
            }
            continue;
        default:
            continue; /* white space, numbers, true/false/null, ':' */
        }
        k = depth == on_path && (depth == AT_ROOT || depth == AT_ELEMENT) ? &keys[depth / 2] : NULL;
        in_inner = depth == AT_INNER && on_path == AT_INNER;
    }
    return depth == 0 ? GM_JSON_SPLIT_OK : GM_JSON_SPLIT_GIVE_UP;
}

/* ---- arrays at key paths from the root ---------------------------------------------------- */

/* Splits each path at its '/'; false for more paths or keys than allowed, or an empty key. */
static bool parse_paths(const char *const *paths, size_t n_paths, gm_json_split_path_keys *pk)
{
    if (n_paths > GM_JSON_SPLIT_MAX_PATHS) return false;
    for (size_t p = 0; p < n_paths; p++) {
        pk[p].n = 0;
        for (const char *s = paths[p];;) {
            const char *slash = strchr(s, '/');
            size_t l = slash ? (size_t)(slash - s) : strlen(s);
            if (!l || pk[p].n == GM_JSON_SPLIT_MAX_KEYS) return false;
            pk[p].key[pk[p].n] = s;
            pk[p].len[pk[p].n++] = l;
            if (!slash) break;
            s = slash + 1;
        }
    }
    return true;
}

/* The paths of `alive` whose key at `level` is the raw key k. */
static unsigned paths_with_key(const gm_json_split_path_keys *pk, size_t n_paths, unsigned alive, size_t level,
                               const char *t, const gm_json_split_key *k)
{
    unsigned m = 0;
    for (size_t p = 0; p < n_paths; p++)
        if ((alive >> p & 1) && pk[p].n > level && pk[p].len[level] == k->len &&
            memcmp(pk[p].key[level], t + k->begin, k->len) == 0)
            m |= 1u << p;
    return m;
}

bool gm_json_split_scanner_init(gm_json_split_scanner *sc, const char *const *paths, size_t n_paths)
{
    memset(sc, 0, sizeof *sc);
    sc->n_paths = n_paths;
    return parse_paths(paths, n_paths, sc->pk);
}

/* The same walk as gm_json_split_scan; the open containers on the path are the root object
 * (level 0), the objects at its keys down a path (levels 1..), and last, when one is being
 * recorded, an array at a path's end. alive[l] holds the paths still possible at level l.
 * The walk's place lives in the scanner, so that it can stop where the text written so far ends
 * and go on when there is more: the only token longer than a byte it takes whole is a string,
 * and a string not yet ended is looked at again from its quote. */
gm_json_split_result gm_json_split_scanner_run(gm_json_split_scanner *sc, const char *text, size_t upto, bool final,
                                               gm_json_split *out)
{
    const gm_json_split_path_keys *pk = sc->pk;
    const size_t n_paths = sc->n_paths;
    size_t depth = sc->depth, on_path = sc->on_path;
    bool recording = sc->recording;
    gm_json_split_key *keys = sc->keys;
    unsigned *alive = sc->alive;
    gm_json_split_key *k = sc->k_level ? &keys[sc->k_level - 1] : NULL;
    size_t i = sc->at;

    for (; i < upto; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '"': {
            size_t e = string_end(text, upto, i);
            if (e == upto && !final) goto more; /* not all written yet */
            if (e == upto || !take_string_to(text, &i, e, k)) return GM_JSON_SPLIT_GIVE_UP;
            continue;
        }
        case '{':
        case '[':
            if (!open_container(sc->is_object, depth, c)) return GM_JSON_SPLIT_GIVE_UP;
            if (depth == 0 && c == '{') {
                on_path = 1;
                alive[0] = n_paths ? (unsigned)((1ull << n_paths) - 1) : 0;
                keys[0] = (gm_json_split_key){0, 0, true};
            } else if (k && depth == on_path) {
                /* a value directly in an object on the path, k its key */
                size_t level = depth - 1;
                unsigned m = paths_with_key(pk, n_paths, alive[level], level, text, k);
                for (size_t p = 0; c == '[' && p < n_paths && !recording; p++)
                    if ((m >> p & 1) && pk[p].n == level + 1) {
                        if (!record_array(out, i, p)) return GM_JSON_SPLIT_NOMEM;
                        recording = true;
                        on_path++;
                    }
                unsigned deeper = 0;
                for (size_t p = 0; c == '{' && p < n_paths; p++)
                    if ((m >> p & 1) && pk[p].n > level + 1) deeper |= 1u << p;
                if (deeper) {
                    alive[level + 1] = deeper;
                    keys[level + 1] = (gm_json_split_key){0, 0, true};
                    on_path++;
                }
            }
            depth++;
            break;
        case '}':
        case ']':
            if (depth == 0) return GM_JSON_SPLIT_GIVE_UP;
            depth--;
            if (!closes(sc->is_object, depth, c)) return GM_JSON_SPLIT_GIVE_UP;
            if (on_path == depth + 1) {
                if (recording && !close_array(out, text, i)) return GM_JSON_SPLIT_NOMEM;
                recording = false;
                on_path--;
            }
            if (depth == 0) return GM_JSON_SPLIT_OK;
            break;
        case ',':
            if (recording && depth == on_path) {
                if (!push_end(out, i)) return GM_JSON_SPLIT_NOMEM;
            } else if (k) {
                k->want = true;
            }
            continue;
        default:
            continue;
        }
        k = depth == on_path && depth > 0 && !recording ? &keys[depth - 1] : NULL;
    }
    if (final) return depth == 0 ? GM_JSON_SPLIT_OK : GM_JSON_SPLIT_GIVE_UP;
more:
    sc->at = i;
    sc->depth = depth;
    sc->on_path = on_path;
    sc->recording = recording;
    sc->k_level = k ? (size_t)(k - keys) + 1 : 0;
    return GM_JSON_SPLIT_MORE;
}

gm_json_split_result gm_json_split_scan_paths(const char *text, size_t len, const char *const *paths,
                                              size_t n_paths, gm_json_split *out)
{
    gm_json_split_scanner sc;
    if (!gm_json_split_scanner_init(&sc, paths, n_paths)) return GM_JSON_SPLIT_GIVE_UP;
    return gm_json_split_scanner_run(&sc, text, len, true, out);
}

void gm_json_split_element(const gm_json_split *s, const gm_json_array_split *a, size_t i, size_t *begin,
                           size_t *end)
{
    *begin = i == 0 ? a->open + 1 : s->ends[a->first + i - 1] + 1;
    *end = s->ends[a->first + i];
}

char *gm_json_split_skeleton(const char *text, size_t len, const gm_json_split *s, size_t *out_len)
{
    size_t n = len - s->removed;
    char *sk = gm_malloc(n + 1);
    if (!sk) return NULL;
    size_t from = 0, k = 0;
    for (size_t a = 0; a < s->n_arrays; a++) {
        size_t upto = s->arrays[a].open + 1; /* keep the '[' */
        memcpy(sk + k, text + from, upto - from);
        k += upto - from;
        from = s->arrays[a].close; /* resume at the ']' */
    }
    memcpy(sk + k, text + from, len - from);
    k += len - from;
    sk[k] = '\0';
    *out_len = k;
    return sk;
}

void gm_json_split_free(gm_json_split *s)
{
    gm_free(s->arrays);
    gm_free(s->ends);
    *s = (gm_json_split){0};
}
