/*
 * verify_fast.c — a plan symbol read straight from its text, without a cJSON tree.
 *
 * Why: even element by element, cJSON makes ~20 small items of each symbol (a million symbols:
 * 20 M mallocs and frees) and finds each field by comparing keys one by one. The planner
 * writes every symbol the same simple way, so this reader takes that shape directly.
 *
 * It is a fast path, not a second judge of the format: it accepts only a strict subset of
 * JSON — an object of keys without escapes whose known fields hold what they must (strings
 * without escapes or control bytes, integers of at most 15 digits, null) and whose other
 * fields are such values or arrays/objects of them — and anything else, including every
 * malformed or wrong symbol, it leaves to cJSON (verify_read.c) untouched, which then accepts
 * it or says what is wrong exactly as before. On the subset, what it reads is what cJSON and
 * verify_read.c's checks would make of the same text: JSON integers that small are exact
 * doubles, and a key given twice sends the symbol to cJSON (which takes the first).
 */
#include <string.h>

#include "graphmem/graph.h"
#include "ir/ir.h"
#include "plan/verify_internal.h"
#include "util/json_cursor.h"

enum { MAX_SKIP_DEPTH = 4, MAX_NAME = 64 };

/* A value of a field not read: a string, an integer, true/false/null or (a few levels) an
 * array or object of them. */
static bool skip_value(gm_jc *k, int depth)
{
    gm_jc_str s;
    int64_t v;
    if (gm_jc_peek(k, '"')) return gm_jc_str_plain(k, &s);
    if (gm_jc_peek(k, '[') || gm_jc_peek(k, '{')) {
        char close = k->t[k->i] == '[' ? ']' : '}';
        bool obj = close == '}';
        k->i++;
        if (depth >= MAX_SKIP_DEPTH) return false;
        if (gm_jc_take(k, close)) return true;
        do {
            if (obj && (!gm_jc_str_plain(k, &s) || !gm_jc_take(k, ':'))) return false;
            if (!skip_value(k, depth + 1)) return false;
        } while (gm_jc_take(k, ','));
        return gm_jc_take(k, close);
    }
    return gm_jc_int(k, 15, &v) || gm_jc_word(k, "null") || gm_jc_word(k, "true") || gm_jc_word(k, "false");
}

/* An integer >= 0, or (null_ok) null: *has says which. */
static bool get_offset(gm_jc *k, int64_t *v, bool *has)
{
    if (gm_jc_word(k, "null")) return *has = false, true;
    return gm_jc_int(k, 15, v) && *v >= 0 && (*has = true);
}

/* One anchor object; 0 not simple, 1 done, -1 no memory. */
static int fast_anchor(gm_vfy *c, gm_jc *k, size_t si)
{
    if (!gm_jc_take(k, '{')) return 0;
    enum { K_NODE = 1, K_IDX = 2, K_OFF = 4 };
    unsigned seen = 0;
    gm_jc_str node = {0};
    int64_t idx = -1, off = 0;
    bool out = false, has_off = false;
    if (!gm_jc_take(k, '}')) {
        do {
            gm_jc_str key;
            unsigned bit;
            if (!gm_jc_str_plain(k, &key) || !gm_jc_take(k, ':')) return 0;
            if (gm_jc_str_is(key, "node")) {
                if ((seen & (bit = K_NODE)) || !gm_jc_str_plain(k, &node)) return 0;
            } else if (gm_jc_str_is(key, "out") || gm_jc_str_is(key, "in")) {
                if ((seen & (bit = K_IDX)) || !gm_jc_int(k, 15, &idx) || idx < 0 || idx > INT32_MAX) return 0;
                out = key.n == 3;
            } else if (gm_jc_str_is(key, "offset")) {
                if ((seen & (bit = K_OFF)) || !get_offset(k, &off, &has_off)) return 0;
            } else {
                bit = 0;
                if (!skip_value(k, 1)) return 0;
            }
            seen |= bit;
        } while (gm_jc_take(k, ','));
        if (!gm_jc_take(k, '}')) return 0;
    }
    if (!(seen & K_NODE) || !(seen & K_IDX)) return 0;
    gm_vfy_anchor *a = gm_vfy_new_anchor(c);
    const char *name = a ? gm_vfy_scratch(c, node.s, node.n) : NULL;
    if (!name) return -1;
    memset(a, 0, sizeof *a);
    a->node = gm_model_find_node(c->m, name);
    a->name = a->node ? a->node->name : gm_vfy_keep(c, node.s, node.n);
    if (!a->name) return -1;
    a->index = (uint32_t)idx;
    a->out = out;
    a->has_offset = has_off;
    a->offset = has_off ? off : 0;
    a->sym = (int32_t)si;
    c->n_anc++;
    return 1;
}

static int fast_anchors(gm_vfy *c, gm_jc *k, size_t si)
{
    if (!gm_jc_take(k, '[')) return 0;
    if (gm_jc_take(k, ']')) return 1;
    do {
        int r = fast_anchor(c, k, si);
        if (r <= 0) return r;
    } while (gm_jc_take(k, ','));
    return gm_jc_take(k, ']') ? 1 : 0;
}

static bool small_name(gm_jc_str s, char *buf)
{
    if (s.n >= MAX_NAME) return false;
    memcpy(buf, s.s, s.n);
    buf[s.n] = '\0';
    return true;
}

/* The symbol's fields; 0 not simple, 1 done, -1 no memory. Anchors go straight to c->anc. */
static int fast_fields(gm_vfy *c, gm_jc *k, size_t i, gm_vfy_sym *y, gm_jc_str *id, gm_jc_str *region, gm_jc_str *mt,
                       gm_jc_str *label)
{
    enum { K_ID = 1, K_ANC = 2, K_REG = 4, K_MT = 8, K_OFF = 16, K_SIZE = 32, K_LABEL = 64 };
    unsigned seen = 0;
    if (!gm_jc_take(k, '{') || gm_jc_take(k, '}')) return 0;
    do {
        gm_jc_str key;
        unsigned bit = 0;
        bool ok;
        if (!gm_jc_str_plain(k, &key) || !gm_jc_take(k, ':')) return 0;
        if (gm_jc_str_is(key, "id")) ok = !(seen & (bit = K_ID)) && gm_jc_str_plain(k, id);
        else if (gm_jc_str_is(key, "region")) ok = !(seen & (bit = K_REG)) && gm_jc_str_plain(k, region);
        else if (gm_jc_str_is(key, "memory_type")) ok = !(seen & (bit = K_MT)) && gm_jc_str_plain(k, mt);
        else if (gm_jc_str_is(key, "offset")) ok = !(seen & (bit = K_OFF)) && get_offset(k, &y->offset, &y->has_offset);
        else if (gm_jc_str_is(key, "size")) ok = !(seen & (bit = K_SIZE)) && gm_jc_int(k, 15, &y->size) && y->size >= 0;
        else if (gm_jc_str_is(key, "batch_label"))
            ok = !(seen & (bit = K_LABEL)) && (gm_jc_word(k, "null") || gm_jc_str_plain(k, label));
        else if (gm_jc_str_is(key, "anchors")) {
            if (seen & (bit = K_ANC)) return 0;
            int r = fast_anchors(c, k, i);
            if (r <= 0) return r;
            ok = true;
        } else {
            ok = skip_value(k, 1);
        }
        if (!ok) return 0;
        seen |= bit;
    } while (gm_jc_take(k, ','));
    if (!gm_jc_take(k, '}')) return 0;
    gm_jc_ws(k);
    const unsigned need = K_ID | K_ANC | K_REG | K_SIZE;
    return k->i == k->e && (seen & need) == need ? 1 : 0;
}

void gm_vfy_fast_prefetch(const gm_vfy *c, size_t b, size_t e)
{
    static const char key[] = "\"node\":\"";
    const size_t kn = sizeof key - 1;
    const gm_strmap *map = &c->m->node_by_name;
    const char *p = c->text + b, *end = c->text + e;
    while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
        if ((size_t)(end - p) <= kn || memcmp(p, key, kn) != 0) {
            p++;
            continue;
        }
        p += kn;
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q) return;
        gm_strmap_prefetch(map, p, (size_t)(q - p));
        p = q + 1;
    }
}

int gm_vfy_fast_symbol(gm_vfy *c, size_t b, size_t e, size_t i)
{
    gm_jc k = {c->text, b, e};
    gm_vfy_sym *y = &c->syms[i];
    memset(y, 0, sizeof *y);
    y->first_anchor = (uint32_t)c->n_anc;
    gm_jc_str id = {0}, region = {0}, mt = {NULL, 0}, label = {"", 0};
    int r = fast_fields(c, &k, i, y, &id, &region, &mt, &label);
    char rname[MAX_NAME], mname[MAX_NAME];
    gm_mem_type m = GM_MEM_HBM;
    bool mt_ok = !mt.s || (small_name(mt, mname) && gm_mem_type_from_name(mname, &m));
    if (r == 1 && !(small_name(region, rname) && mt_ok)) r = 0;
    if (r == 1) {
        y->id = gm_vfy_keep(c, id.s, id.n);
        y->label = gm_vfy_keep(c, label.s, label.n);
        y->region = gm_vfy_find_region(c, rname, m);
        if (y->region == -3) r = 0; /* a region not listed: added on the one-thread reading */
        else if (!y->id || !y->label || y->region < 0) r = -1;
    }
    if (r != 1) {
        c->n_anc = y->first_anchor; /* cJSON reads it again from the start */
        return r;
    }
    y->n_anchors = (uint32_t)(c->n_anc - y->first_anchor);
    c->n_syms = i + 1;
    return 1;
}
