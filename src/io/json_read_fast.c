/*
 * json_read_fast.c — a node of a split model read straight from its text, on the read-ahead
 * thread (json_read_ahead.h), without a cJSON tree.
 *
 * Why: at a million nodes the reading was two threads of near equal work, the read-ahead's
 * cJSON parse and number scan (~1.6 s) beside the walk that builds the IR from each tree
 * (~1.9 s). Building a node's own part on the read-ahead thread (its outputs and attributes)
 * only moved the bottleneck there. Read from the text, the common node costs a fraction of
 * its parse, and the thread has room to build the node's own part as well: the walk is left
 * to link the node in (gm_jr_fast.node, its inputs and control inputs by name).
 *
 * It is a fast path, not a second judge of the format. It takes only a strict subset of JSON:
 * - an object whose keys are name, type, inputs, control_inputs, stream, outputs, input_names,
 *   output_names and attrs, each at most once, written without escapes;
 * - strings without escapes or control bytes, names shorter than GM_JR_FAST_NAME_MAX;
 * - integers of plain decimal text;
 * - descs with only dtype (a known one), shape (dims the IR accepts), reuse_input (a bool),
 *   reuse_input_index (an integer >= 0) and attrs;
 * - inputs "producer:index", no more names than inputs or outputs.
 * Anything else, including every malformed or wrong node, is left to cJSON and the walk
 * untouched, which then read it or say what is wrong exactly as before. An attrs object (a
 * node's or a desc's) is handed to cJSON on its own (a small tree) and read by the walk's own
 * gm_jr_read_attrs: the attribute rules are written once. At a million nodes 99.7% of the
 * benchmark's nodes go this way, and the reading took 1.6-1.8 s instead of 1.9-2.1 s
 * (BENCHMARKS.md, issue 28's fifth part).
 */
#include "io/json_read_fast.h"

#include <string.h>

#include "io/json_numbers.h"
#include "ir/ir.h"
#include "util/alloc.h"
#include "util/json_cursor.h"

/* Names this long go the cJSON way (json_read_fast.h); so do shapes of more dims. */
enum { FAST_NAME_MAX = GM_JR_FAST_NAME_MAX, FAST_DIMS_MAX = 16, FAST_SKIP_DEPTH = 16 };

/* Past any JSON value whose strings may hold escapes (an attrs object, for cJSON to judge):
 * false where it cannot tell the value's end (nesting too deep, a string that does not end). */
static bool skip_value(gm_jc *k, int depth)
{
    gm_jc_ws(k);
    if (k->i >= k->e) return false;
    char c = k->t[k->i];
    if (c == '"') {
        for (k->i++; k->i < k->e; k->i++) {
            if (k->t[k->i] == '\\') k->i++;
            else if (k->t[k->i] == '"') return ++k->i <= k->e;
        }
        return false;
    }
    if (c == '[' || c == '{') {
        if (depth >= FAST_SKIP_DEPTH) return false;
        char close = c == '[' ? ']' : '}';
        k->i++;
        if (gm_jc_take(k, close)) return true;
        do {
            if (close == '}') {
                if (!skip_value(k, depth + 1) || !gm_jc_take(k, ':')) return false;
            }
            if (!skip_value(k, depth + 1)) return false;
        } while (gm_jc_take(k, ','));
        return gm_jc_take(k, close);
    }
    /* a number or a word: up to the next delimiter (cJSON judges it) */
    size_t b = k->i;
    while (k->i < k->e && !memchr(",]}: \t\r\n", k->t[k->i], 8)) k->i++;
    return k->i > b;
}

/* s copied, NUL-terminated, into buf (FAST_NAME_MAX); false when it does not fit or is empty. */
static bool copy_name(gm_jc_str s, char *buf)
{
    if (s.n == 0 || s.n >= FAST_NAME_MAX) return false;
    memcpy(buf, s.s, s.n);
    buf[s.n] = '\0';
    return true;
}

static bool push_link(gm_jr_links *l, size_t b, size_t n, int32_t idx)
{
    if (n >= FAST_NAME_MAX || gm_grow((void **)&l->v, sizeof *l->v, l->n + 1, &l->cap)) return false;
    l->v[l->n++] = (gm_jr_link){b, n, idx};
    return true;
}

/* "producer:index": the last ':' splits (names may hold ':'), as the walk reads it. */
static bool get_input(gm_jc *k, gm_jr_links *l)
{
    gm_jc_str s;
    if (!gm_jc_str_plain(k, &s) || s.n == 0) return false;
    const char *t = s.s;
    size_t colon = s.n;
    while (colon > 0 && t[colon - 1] != ':') colon--;
    if (colon < 2 || colon == s.n) return false; /* no producer, or no index */
    int64_t idx = 0;
    for (size_t j = colon; j < s.n; j++) {
        if (t[j] < '0' || t[j] > '9' || j - colon > 9) return false;
        idx = idx * 10 + (t[j] - '0');
    }
    if (idx > INT32_MAX) return false;
    return push_link(l, (size_t)(s.s - k->t), colon - 1, (int32_t)idx);
}

enum { LINK_INPUT, LINK_CTRL = -1, LINK_NAME = -2 };

/* An array of inputs ("producer:index"), control inputs (names, none empty) or input names
 * ("" too) appended to l: *first and *n say where. */
static bool get_links(gm_jc *k, gm_jr_links *l, int kind, size_t *first, size_t *n)
{
    if (!gm_jc_take(k, '[')) return false;
    *first = l->n;
    if (!gm_jc_take(k, ']')) {
        do {
            gm_jc_str s;
            if (kind == LINK_INPUT ? !get_input(k, l)
                                   : !gm_jc_str_plain(k, &s) || (kind == LINK_CTRL && s.n == 0) ||
                                         !push_link(l, (size_t)(s.s - k->t), s.n, (int32_t)kind))
                return false;
        } while (gm_jc_take(k, ','));
        if (!gm_jc_take(k, ']')) return false;
    }
    *n = l->n - *first;
    return true;
}

/* The fields' places, found in one pass; the node is built after (name may come last). */
enum {
    F_NAME = 1, F_TYPE = 2, F_INPUTS = 4, F_CTRL = 8, F_STREAM = 16, F_OUTPUTS = 32, F_ATTRS = 64,
    F_INAMES = 128, F_ONAMES = 256
};

/* Where a value lies in the text, [b, e): one read after the fields are found. */
typedef struct range {
    size_t b, e;
} range;

typedef struct fields {
    unsigned seen;
    gm_jc_str name, type;
    range outputs, onames, attrs; /* the outputs and output_names arrays, the attrs object */
    int64_t stream;
} fields;

static bool skip_range(gm_jc *k, range *r)
{
    gm_jc_ws(k);
    r->b = k->i;
    if (!skip_value(k, 0)) return false;
    r->e = k->i;
    return true;
}

static bool scan_fields(gm_jc *k, gm_jr_links *l, gm_jr_fast *out, fields *f)
{
    if (!gm_jc_take(k, '{') || gm_jc_take(k, '}')) return false;
    do {
        gm_jc_str key;
        unsigned bit;
        if (!gm_jc_str_plain(k, &key) || !gm_jc_take(k, ':')) return false;
        if (gm_jc_str_is(key, "name")) {
            if (!gm_jc_str_plain(k, &f->name)) return false;
            bit = F_NAME;
        } else if (gm_jc_str_is(key, "type")) {
            if (!gm_jc_str_plain(k, &f->type)) return false;
            bit = F_TYPE;
        } else if (gm_jc_str_is(key, "inputs")) {
            if ((f->seen & F_INPUTS) || !get_links(k, l, LINK_INPUT, &out->first_in, &out->n_in)) return false;
            bit = F_INPUTS;
        } else if (gm_jc_str_is(key, "control_inputs")) {
            if ((f->seen & F_CTRL) || !get_links(k, l, LINK_CTRL, &out->first_ctrl, &out->n_ctrl)) return false;
            bit = F_CTRL;
        } else if (gm_jc_str_is(key, "stream")) {
            if (!gm_jc_int(k, 18, &f->stream)) return false;
            bit = F_STREAM;
        } else if (gm_jc_str_is(key, "outputs")) {
            if (!skip_range(k, &f->outputs)) return false;
            bit = F_OUTPUTS;
        } else if (gm_jc_str_is(key, "input_names")) {
            /* names set by the walk once the inputs are linked; "" keeps the op's default */
            if ((f->seen & F_INAMES) || !get_links(k, l, LINK_NAME, &out->first_iname, &out->n_iname)) return false;
            bit = F_INAMES;
        } else if (gm_jc_str_is(key, "output_names")) {
            if (!skip_range(k, &f->onames)) return false;
            bit = F_ONAMES;
        } else if (gm_jc_str_is(key, "attrs")) {
            if (!skip_range(k, &f->attrs)) return false;
            bit = F_ATTRS;
        } else {
            return false;
        }
        if (f->seen & bit) return false; /* given twice: the walk says so */
        f->seen |= bit;
    } while (gm_jc_take(k, ','));
    if (!gm_jc_take(k, '}')) return false;
    gm_jc_ws(k);
    /* more input names than inputs: the walk says so */
    return k->i == k->e && (f->seen & (F_NAME | F_TYPE)) == (F_NAME | F_TYPE) && out->n_iname <= out->n_in;
}

static bool read_attrs(jr *r, gm_attr **list, range a, gm_json_nums *nums);

/* One desc of the simple kind (json_read_fast.c's top) into a new output. */
static bool read_desc(jr *r, gm_jc *k, gm_node *n, gm_json_nums *nums)
{
    if (!gm_jc_take(k, '{')) return false;
    gm_tensor_desc *d = gm_node_add_output(n);
    if (!d) return false;
    if (gm_jc_take(k, '}')) return true;
    bool dtype = false, shape = false, reuse_seen = false, reuse = false, index_seen = false, attrs = false;
    int64_t index = 0;
    do {
        gm_jc_str key;
        if (!gm_jc_str_plain(k, &key) || !gm_jc_take(k, ':')) return false;
        if (gm_jc_str_is(key, "dtype") && !dtype) {
            gm_jc_str s;
            char buf[FAST_NAME_MAX];
            gm_dtype dt;
            if (!gm_jc_str_plain(k, &s) || !copy_name(s, buf) || !gm_dtype_from_name(buf, &dt)) return false;
            gm_desc_set_dtype(d, dt);
            dtype = true;
        } else if (gm_jc_str_is(key, "shape") && !shape) {
            int64_t dims[FAST_DIMS_MAX];
            int nd = 0;
            if (!gm_jc_take(k, '[')) return false;
            if (!gm_jc_take(k, ']')) {
                do {
                    if (nd == FAST_DIMS_MAX || !gm_jc_int(k, 18, &dims[nd])) return false;
                    nd++;
                } while (gm_jc_take(k, ','));
                if (!gm_jc_take(k, ']')) return false;
            }
            if (gm_shape_bad_dim(dims, (size_t)nd) >= 0 || gm_desc_set_shape(d, dims, nd) != GM_OK) return false;
            shape = true;
        } else if (gm_jc_str_is(key, "reuse_input") && !reuse_seen) {
            if (gm_jc_word(k, "true")) reuse = true;
            else if (!gm_jc_word(k, "false")) return false;
            reuse_seen = true;
        } else if (gm_jc_str_is(key, "attrs") && !attrs) {
            range a;
            if (!skip_range(k, &a) || !read_attrs(r, gm_desc_attrs(d), a, nums)) return false;
            attrs = true;
        } else if (gm_jc_str_is(key, "reuse_input_index") && !index_seen) {
            if (!gm_jc_int(k, 18, &index) || index < 0) return false;
            index_seen = true;
        } else {
            return false;
        }
    } while (gm_jc_take(k, ','));
    /* as the walk sets it: given either way, the pair is the desc's */
    if (reuse || index_seen) gm_desc_set_reuse_input(d, reuse, index);
    return gm_jc_take(k, '}');
}

static bool read_outputs(jr *r, gm_jc *k, gm_node *n, gm_json_nums *nums)
{
    if (!gm_jc_take(k, '[')) return false;
    if (gm_jc_take(k, ']')) return true;
    do {
        if (!read_desc(r, k, n, nums)) return false;
    } while (gm_jc_take(k, ','));
    return gm_jc_take(k, ']');
}

/* An attrs object, as the walk reads it: its own small tree, its numbers scanned and tagged. */
static bool read_attrs(jr *r, gm_attr **list, range a, gm_json_nums *nums)
{
    const char *stop = NULL;
    cJSON *tree = cJSON_ParseWithLengthOpts(r->text + a.b, a.e - a.b, &stop, false);
    bool ok = tree && stop == r->text + a.e && cJSON_IsObject(tree);
    size_t at = 0, len = 0;
    nums->n = 0;
    ok = ok && gm_json_scan_numbers(r->text, a.b, a.e, nums, &at, &len) == GM_JSON_LEX_OK &&
         gm_json_tag_numbers(nums, tree);
    if (ok) {
        gm_json_nums *was = r->nums;
        const jplace place = {NULL, "node", NULL, 0, P_INDEX};
        r->nums = nums;
        ok = gm_jr_read_attrs(r, &place, list, tree) == GM_OK;
        r->nums = was;
    }
    cJSON_Delete(tree);
    return ok;
}

/* output_names, strings ("" keeps the op's default), no more than the outputs. */
static bool read_output_names(const char *text, range at, gm_node *n)
{
    gm_jc k = {text, at.b, at.e};
    if (!gm_jc_take(&k, '[')) return false;
    if (gm_jc_take(&k, ']')) return true;
    size_t i = 0;
    do {
        gm_jc_str s;
        char buf[FAST_NAME_MAX];
        if (!gm_jc_str_plain(&k, &s) || i >= gm_node_output_count(n)) return false;
        if (s.n && (!copy_name(s, buf) || gm_node_set_output_name(n, i, buf) != GM_OK)) return false;
        i++;
    } while (gm_jc_take(&k, ','));
    return gm_jc_take(&k, ']');
}

bool gm_jr_fast_node(jr *r, size_t b, size_t e, gm_jr_links *links, gm_json_nums *nums, gm_jr_fast *out)
{
    size_t n_links = links->n;
    memset(out, 0, sizeof *out);
    gm_jc k = {r->text, b, e};
    fields f = {0};
    char name[FAST_NAME_MAX], type[FAST_NAME_MAX];
    if (!scan_fields(&k, links, out, &f) || !copy_name(f.name, name) || !copy_name(f.type, type)) {
        links->n = n_links;
        return false;
    }
    gm_node *n = gm_ir_node_new_detached(name, type);
    bool ok = n != NULL;
    if (ok && (f.seen & F_OUTPUTS)) {
        gm_jc o = {r->text, f.outputs.b, f.outputs.e};
        ok = read_outputs(r, &o, n, nums);
    }
    if (ok && (f.seen & F_ONAMES)) ok = read_output_names(r->text, f.onames, n);
    if (ok && (f.seen & F_ATTRS)) ok = read_attrs(r, gm_node_attrs(n), f.attrs, nums);
    if (!ok) {
        gm_node_free(n);
        links->n = n_links;
        memset(out, 0, sizeof *out);
        return false;
    }
    out->node = n;
    out->type = (size_t)(f.type.s - r->text);
    out->type_len = f.type.n;
    out->stream = f.stream;
    return true;
}
