/*
 * json_read.c — the JSON model reader (docs/graph-format.md, version 1).
 *
 * The text is checked for UTF-8 first (cJSON does not), parsed with cJSON, then walked field
 * by field into the IR builder; gm_model_finalize then resolves names and validates the
 * structure. This file owns the format's own rules: known keys only, no duplicate keys, the
 * JSON type of every field, dtype / memory-type / shape / size values, and attribute kinds.
 * Every message starts with the source name and says where: graph, node, field. Tensor descs
 * and attributes are read in json_read_values.c.
 *
 * A big model is never held as one cJSON tree (json_split.c says why): the text is parsed
 * without the contents of the graphs' "nodes" arrays (the skeleton), and each node is parsed
 * from its own piece of the text when the walk reaches it, read, and deleted before the next.
 * The messages must not depend on how the text was cut, so:
 *  - anything the skeleton stage finds wrong sends the reader back to parsing the whole text
 *    as one tree (the "whole" reading, which is also used when the split cannot be trusted);
 *  - a node's syntax errors are reported at the offset the whole-text parse would give;
 *  - the whole reading reports the first syntax error of the text before anything else, then
 *    the first bad number or string, then the first problem of the walk; so when the split
 *    reading stops on a problem, the nodes not parsed yet are checked first (settle()).
 */
#include <assert.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/json_read_ahead.h"
#include "io/json_read_internal.h"
#include "ir/ir.h"
#include "ops/attr_table.h"
#include "util/alloc.h"
#include "util/parallel.h"
#include "util/strmap.h"
#include "util/utf8.h"

/* ---- places and errors ----------------------------------------------------------------- */

static const jplace k_options_place = {NULL, "options", NULL, 0, P_BARE};

/* Appends to buf (cap bytes, *k used), cutting what does not fit as snprintf does. */
static void put(char *buf, size_t cap, size_t *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char *buf, size_t cap, size_t *k, const char *fmt, ...)
{
    if (*k + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *k, cap - *k, fmt, ap);
    va_end(ap);
    if (w > 0) *k = (size_t)w < cap - *k ? *k + (size_t)w : cap - 1;
}

void gm_jr_render_place(const jplace *p, char *buf, size_t cap, size_t *k)
{
    if (!p) return;
    gm_jr_render_place(p->up, buf, cap, k);
    if (p->up) put(buf, cap, k, ": ");
    switch (p->style) {
    case P_INDEX: put(buf, cap, k, "%s %zu", p->label, p->index); break;
    case P_NAME: put(buf, cap, k, "%s '%s'", p->label, p->name); break;
    case P_SUBSCRIPT: put(buf, cap, k, "%s[%zu]", p->label, p->index); break;
    case P_BARE: put(buf, cap, k, "%s", p->label); break;
    }
}

/* GM_ERR_INPUT "<source>: <place>: <message>"; place may be NULL (the model itself). */
gm_status gm_jr_fail(jr *r, const jplace *place, const char *fmt, ...)
{
    char where[PLACE_CAP], msg[768];
    size_t k = 0;
    where[0] = '\0';
    gm_jr_render_place(place, where, sizeof where, &k);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gm_error_set(r->err, GM_ERR_INPUT, "%s: %s%s%s", r->src, where, *where ? ": " : "", msg);
}

/* The same with the line:column of a byte offset instead of a place. */
static gm_status fail_at(jr *r, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status fail_at(jr *r, size_t offset, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t line, col;
    gm_text_position(r->text, r->len, offset, &line, &col);
    return gm_error_set(r->err, GM_ERR_INPUT, "%s:%zu:%zu: %s", r->src, line, col, msg);
}

gm_status gm_jr_oom(jr *r) { return gm_error_set(r->err, GM_ERR_NOMEM, "%s: out of memory", r->src); }

/* ---- syntax and lexical errors -------------------------------------------------------- */

static bool only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
    }
    return true;
}

/* How the text ends: inside a string (*str_start = its opening quote) or with brackets
 * still open (*open_brackets > 0). */
static bool ends_in_string(const char *t, size_t n, size_t *str_start, size_t *open_brackets)
{
    size_t depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
            *str_start = i;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && depth) {
            depth--;
        }
    }
    *open_brackets = depth;
    return in_str;
}

/* cJSON reports where it stopped: the last byte when it ran off the end, the opening quote
 * of a string it could not finish. Say "end of text" when the text simply stopped early,
 * else show the text where cJSON stopped. */
static gm_status malformed(jr *r, const char *stop)
{
    r->kind = ERR_SYNTAX;
    size_t off = stop && stop >= r->text && stop <= r->text + r->len ? (size_t)(stop - r->text) : r->len;
    if (only_space(r->text, r->len)) return fail_at(r, r->len, "malformed JSON: the text is empty");
    size_t str_start = 0, open = 0;
    bool in_str = ends_in_string(r->text, r->len, &str_start, &open);
    if ((in_str && off >= str_start) || (!in_str && open > 0 && off + 1 >= r->len))
        return fail_at(r, r->len, "malformed JSON: unexpected end of text%s", in_str ? " (inside a string)" : "");
    char near[24];
    size_t k = 0;
    for (size_t i = off; i < r->len && k < 16 && r->text[i] != '\n' && r->text[i] != '\r'; i++) near[k++] = r->text[i];
    near[k] = '\0';
    return fail_at(r, off, "malformed JSON near '%s'", near);
}

/* A problem the pre-scan found (json_numbers.h). */
static gm_status lexical_error(jr *r, gm_json_lex lx, size_t at, size_t len)
{
    r->kind = ERR_LEXICAL;
    switch (lx) {
    case GM_JSON_LEX_OK: break;
    case GM_JSON_LEX_NOMEM: return gm_jr_oom(r);
    case GM_JSON_LEX_BAD_NUMBER:
        return fail_at(r, at, "malformed JSON: bad number '%.*s'", (int)(len < 32 ? len : 32), r->text + at);
    case GM_JSON_LEX_CONTROL:
        return fail_at(r, at, "malformed JSON: control character 0x%02x in a string", (unsigned char)r->text[at]);
    case GM_JSON_LEX_NUL_ESCAPE:
        return fail_at(r, at, "a string holds \\u0000 (NUL characters are not supported)");
    }
    return GM_OK;
}

/* Pre-scans text[begin, end) into nums (NULL: check only) and reports what it finds. */
static gm_status scan_range(jr *r, size_t begin, size_t end, gm_json_nums *nums)
{
    size_t at = 0, len = 0;
    gm_json_lex lx = gm_json_scan_numbers(r->text, begin, end, nums, &at, &len);
    return lx == GM_JSON_LEX_OK ? GM_OK : lexical_error(r, lx, at, len);
}

static gm_status scan_disagrees(jr *r)
{
    return gm_error_set(r->err, GM_ERR_INTERNAL, "%s: number scan disagrees with the JSON parser", r->src);
}

/* ---- JSON value helpers ---------------------------------------------------------------- */

/* An integer JSON number (integer text that fits int64). */
bool gm_jr_get_int(const jr *r, const cJSON *it, int64_t *v)
{
    if (!cJSON_IsNumber(it) || (it->type & (GM_JSON_FLOAT_TEXT | GM_JSON_INT_OVERFLOW))) return false;
    *v = r->nums->v[it->valueint].value;
    return true;
}

const char *gm_jr_type_name(const cJSON *it)
{
    if (cJSON_IsBool(it)) return "a bool";
    if (cJSON_IsNull(it)) return "null";
    if (cJSON_IsNumber(it)) return "a number";
    if (cJSON_IsString(it)) return "a string";
    if (cJSON_IsArray(it)) return "an array";
    if (cJSON_IsObject(it)) return "an object";
    return "invalid";
}

gm_status gm_jr_want(jr *r, const jplace *place, const char *field, const cJSON *it, const char *what)
{
    return gm_jr_fail(r, place, "field '%s' must be %s, not %s", field, what, gm_jr_type_name(it));
}

/* A string field (NULL item = absent: *out stays). */
gm_status gm_jr_get_string_field(jr *r, const jplace *place, const char *field, const cJSON *it,
                                  const char **out)
{
    if (!it) return GM_OK;
    if (!cJSON_IsString(it)) return gm_jr_want(r, place, field, it, "a string");
    *out = it->valuestring;
    return GM_OK;
}

/* An integer field (absent: *out stays, *given false). */
gm_status gm_jr_get_int_field(jr *r, const jplace *place, const char *field, const cJSON *it,
                               int64_t *out, bool *given)
{
    if (given) *given = false;
    if (!it) return GM_OK;
    if (!cJSON_IsNumber(it)) return gm_jr_want(r, place, field, it, "an integer");
    if (it->type & GM_JSON_INT_OVERFLOW)
        return gm_jr_fail(r, place, "field '%s' is too large for a 64-bit integer", field);
    if (!gm_jr_get_int(r, it, out)) return gm_jr_fail(r, place, "field '%s' must be an integer, not %.17g", field,
                                          it->valuedouble);
    if (given) *given = true;
    return GM_OK;
}

/* ---- objects: known keys, no duplicates ------------------------------------------------- */

/* Fills items[i] with the member named keys[i]; rejects unknown and duplicate keys. */
gm_status gm_jr_take_fields(jr *r, const jplace *place, const cJSON *obj, const char *const *keys,
                             size_t nkeys, const cJSON **items)
{
    for (size_t i = 0; i < nkeys; i++) items[i] = NULL;
    for (const cJSON *c = obj->child; c; c = c->next) {
        size_t i = 0;
        /* The first byte settles most comparisons without a call (a tenth of the reading
         * time of a big model went to strcmp here). */
        while (i < nkeys && (keys[i][0] != c->string[0] || strcmp(keys[i], c->string) != 0)) i++;
        if (i == nkeys) {
            char list[512];
            size_t k = 0;
            list[0] = '\0';
            for (size_t j = 0; j < nkeys && k < sizeof list; j++) {
                int w = snprintf(list + k, sizeof list - k, "%s%s", j ? ", " : "", keys[j]);
                if (w < 0) break;
                k += (size_t)w;
            }
            return gm_jr_fail(r, place, "unknown key '%s' (expected %s)", c->string, list);
        }
        if (items[i]) return gm_jr_fail(r, place, "duplicate key '%s'", c->string);
        items[i] = c;
    }
    return GM_OK;
}

/* Rejects duplicate keys in a free-form object (attrs, options). Small objects, the usual
 * case, are checked pairwise; big ones through a hash map so the check stays linear. */
gm_status gm_jr_check_unique_keys(jr *r, const jplace *place, const cJSON *obj)
{
    size_t n = 0;
    for (const cJSON *c = obj->child; c; c = c->next) n++;
    if (n <= 16) {
        for (const cJSON *a = obj->child; a; a = a->next) {
            for (const cJSON *b = a->next; b; b = b->next) {
                if (strcmp(a->string, b->string) == 0) return gm_jr_fail(r, place, "duplicate key '%s'", a->string);
            }
        }
        return GM_OK;
    }
    gm_strmap seen = {0};
    gm_status st = GM_OK;
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) {
        if (gm_strmap_get(&seen, c->string)) st = gm_jr_fail(r, place, "duplicate key '%s'", c->string);
        else if (gm_strmap_put(&seen, c->string, (void *)c)) st = gm_jr_oom(r);
    }
    gm_strmap_free(&seen);
    return st;
}

/* ---- nodes ----------------------------------------------------------------------------- */

enum {
    N_NAME, N_TYPE, N_INPUTS, N_CONTROL_INPUTS, N_SUBGRAPHS, N_STREAM, N_OUTPUTS, N_INPUT_DESCS,
    N_INPUT_NAMES, N_OUTPUT_NAMES, N_ATTRS, N_COUNT
};
static const char *const k_node_keys[N_COUNT] = {"name", "type", "inputs", "control_inputs", "subgraphs",
                                                 "stream", "outputs", "input_descs", "input_names",
                                                 "output_names", "attrs"};

/* Parses "producer:index" ("" = unconnected). The last ':' splits, so producer names may
 * hold ':' themselves. */
static gm_status read_input(jr *r, const jplace *place, gm_node *n, size_t i, const cJSON *v)
{
    if (!cJSON_IsString(v)) return gm_jr_fail(r, place, "input %zu must be a string \"producer:index\", not %s", i,
                                        gm_jr_type_name(v));
    const char *s = v->valuestring;
    if (!*s) return gm_node_add_input_by_name(n, NULL, 0) == GM_OK ? GM_OK : gm_jr_oom(r);
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return gm_jr_fail(r, place, "input %zu '%s': expected \"producer:index\" (or \"\" for unconnected)", i, s);
    const char *d = colon + 1;
    int64_t idx = 0;
    if (!*d) return gm_jr_fail(r, place, "input %zu '%s': missing output index after ':'", i, s);
    for (; *d; d++) {
        if (*d < '0' || *d > '9') return gm_jr_fail(r, place, "input %zu '%s': bad output index '%s'", i, s, colon + 1);
        idx = idx * 10 + (*d - '0');
        if (idx > INT32_MAX) return gm_jr_fail(r, place, "input %zu '%s': output index too large", i, s);
    }
    /* The IR keeps its own copy of the producer's name, so a usual one is cut off on the stack
     * (an allocation per input showed in the profile of big models). */
    size_t plen = (size_t)(colon - s);
    char small[128];
    char *src = plen < sizeof small ? small : gm_malloc(plen + 1);
    if (!src) return gm_jr_oom(r);
    memcpy(src, s, plen);
    src[plen] = '\0';
    gm_status st = gm_node_add_input_early(n, src, (int32_t)idx);
    if (src != small) gm_free(src);
    return st == GM_OK ? GM_OK : gm_jr_oom(r);
}

/* An array field whose entries must all be strings (non-empty when `nonempty`). */
static gm_status check_string_array(jr *r, const jplace *place, const char *field, const cJSON *arr, bool nonempty)
{
    if (!cJSON_IsArray(arr)) return gm_jr_want(r, place, field, arr, "an array of strings");
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e))
            return gm_jr_fail(r, place, "field '%s': entry %zu must be a string, not %s", field, i, gm_jr_type_name(e));
        if (nonempty && !*e->valuestring) return gm_jr_fail(r, place, "field '%s': entry %zu is empty", field, i);
    }
    return GM_OK;
}

static gm_status read_node_links(jr *r, const jplace *place, gm_node *n, const cJSON **f)
{
    gm_status st;
    if (f[N_INPUTS]) {
        if (!cJSON_IsArray(f[N_INPUTS])) return gm_jr_want(r, place, "inputs", f[N_INPUTS], "an array of strings");
        size_t i = 0;
        for (const cJSON *e = f[N_INPUTS]->child; e; e = e->next, i++) {
            if ((st = read_input(r, place, n, i, e)) != GM_OK) return st;
        }
    }
    if (f[N_CONTROL_INPUTS]) {
        if ((st = check_string_array(r, place, "control_inputs", f[N_CONTROL_INPUTS], true)) != GM_OK) return st;
        const char *names[GM_CTRL_EARLY_MAX];
        size_t k = 0;
        for (const cJSON *e = f[N_CONTROL_INPUTS]->child; e; e = e->next) {
            if (k == GM_CTRL_EARLY_MAX) { /* a long list, in parts */
                if (gm_node_add_control_inputs_early(n, names, k) != GM_OK) return gm_jr_oom(r);
                k = 0;
            }
            names[k++] = e->valuestring;
        }
        if (gm_node_add_control_inputs_early(n, names, k) != GM_OK) return gm_jr_oom(r);
    }
    if (f[N_SUBGRAPHS]) {
        if ((st = check_string_array(r, place, "subgraphs", f[N_SUBGRAPHS], true)) != GM_OK) return st;
        for (const cJSON *e = f[N_SUBGRAPHS]->child; e; e = e->next) {
            if (gm_node_add_subgraph_by_name(n, e->valuestring) != GM_OK) return gm_jr_oom(r);
        }
    }
    return GM_OK;
}

static gm_status read_node_descs(jr *r, const jplace *place, gm_node *n, const cJSON **f)
{
    gm_status st;
    if (f[N_OUTPUTS]) {
        if (!cJSON_IsArray(f[N_OUTPUTS])) return gm_jr_want(r, place, "outputs", f[N_OUTPUTS], "an array of tensor descs");
        size_t k = 0;
        for (const cJSON *e = f[N_OUTPUTS]->child; e; e = e->next, k++) {
            gm_tensor_desc *d = gm_node_add_output(n);
            if (!d) return gm_jr_oom(r);
            const jplace p = {place, "output", NULL, k, P_INDEX};
            if ((st = gm_jr_read_desc(r, &p, d, e)) != GM_OK) return st;
        }
    }
    if (f[N_INPUT_DESCS]) {
        const cJSON *arr = f[N_INPUT_DESCS];
        if (!cJSON_IsArray(arr)) return gm_jr_want(r, place, "input_descs", arr, "an array of tensor descs");
        size_t cnt = (size_t)cJSON_GetArraySize(arr);
        if (cnt > gm_node_input_count(n))
            return gm_jr_fail(r, place, "field 'input_descs' has %zu entries but the node has %zu inputs", cnt,
                        gm_node_input_count(n));
        size_t i = 0;
        for (const cJSON *e = arr->child; e; e = e->next, i++) {
            const jplace p = {place, "input_descs", NULL, i, P_SUBSCRIPT};
            gm_tensor_desc *d = gm_node_input_desc(n, i);
            st = d ? gm_jr_read_desc(r, &p, d, e) : gm_jr_oom(r);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* input_names / output_names: "" keeps the op table's default for that slot. */
static gm_status read_io_names(jr *r, const jplace *place, gm_node *n, const cJSON *arr, bool inputs)
{
    const char *field = inputs ? "input_names" : "output_names";
    gm_status st = check_string_array(r, place, field, arr, false);
    if (st != GM_OK) return st;
    size_t have = inputs ? gm_node_input_count(n) : gm_node_output_count(n);
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (cnt > have)
        return gm_jr_fail(r, place, "field '%s' has %zu entries but the node has %zu %s", field, cnt, have,
                    inputs ? "inputs" : "outputs");
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!*e->valuestring) continue;
        st = inputs ? gm_node_set_input_name(n, i, e->valuestring) : gm_node_set_output_name(n, i, e->valuestring);
        if (st != GM_OK) return gm_jr_oom(r);
    }
    return GM_OK;
}

/* The graph being read has a node with an output of unknown size. Out of memory, nothing is
 * known (the passes then look for themselves). */
static void note_unknown(jr *r)
{
    if (r->graph >= r->n_unknown) {
        if (gm_grow((void **)&r->unknown, 1, r->graph + 1, &r->cap_unknown)) {
            r->unknown_nomem = true;
            return;
        }
        memset(r->unknown + r->n_unknown, 0, r->graph + 1 - r->n_unknown);
        r->n_unknown = r->graph + 1;
    }
    r->unknown[r->graph] = 1;
}

/* After finalize: each graph's known shape as the passes define it, from what the nodes
 * showed as they were read. */
static void set_known_shapes(jr *r)
{
    if (r->unknown_nomem) return;
    for (size_t i = 0; i < r->m->n_graphs; i++) {
        gm_graph *g = r->m->graphs[i];
        g->known_shape = gm_graph_shape_known(g, !(i < r->n_unknown && r->unknown[i]));
    }
}

static gm_status read_node(jr *r, gm_graph *g, const jplace *gplace, size_t idx, const cJSON *obj)
{
    jplace node_place = {gplace, "node", NULL, idx, P_INDEX};
    const jplace *place = &node_place;
    if (!cJSON_IsObject(obj)) return gm_jr_fail(r, place, "must be an object, not %s", gm_jr_type_name(obj));
    /* Name the node in messages as soon as it has a usable name. */
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (cJSON_IsString(nm) && *nm->valuestring) {
        node_place.name = nm->valuestring;
        node_place.style = P_NAME;
    }

    const cJSON *f[N_COUNT];
    gm_status st = gm_jr_take_fields(r, place, obj, k_node_keys, N_COUNT, f);
    if (st != GM_OK) return st;
    if (!f[N_NAME]) return gm_jr_fail(r, place, "missing field 'name'");
    if (!f[N_TYPE]) return gm_jr_fail(r, place, "missing field 'type'");
    const char *name = NULL, *type = NULL;
    if ((st = gm_jr_get_string_field(r, place, "name", f[N_NAME], &name)) != GM_OK) return st;
    if ((st = gm_jr_get_string_field(r, place, "type", f[N_TYPE], &type)) != GM_OK) return st;

    gm_node *n = gm_graph_add_node(g, name, type, r->err);
    if (!n) return r->err ? r->err->code : GM_ERR_INPUT;

    int64_t stream = 0;
    if ((st = gm_jr_get_int_field(r, place, "stream", f[N_STREAM], &stream, NULL)) != GM_OK) return st;
    gm_node_set_stream(n, stream);
    if ((st = read_node_links(r, place, n, f)) != GM_OK) return st;
    if ((st = read_node_descs(r, place, n, f)) != GM_OK) return st;
    if (!gm_node_outputs_known(n)) note_unknown(r);
    if (f[N_INPUT_NAMES] && (st = read_io_names(r, place, n, f[N_INPUT_NAMES], true)) != GM_OK) return st;
    if (f[N_OUTPUT_NAMES] && (st = read_io_names(r, place, n, f[N_OUTPUT_NAMES], false)) != GM_OK) return st;
    return gm_jr_read_attrs(r, place, gm_node_attrs(n), f[N_ATTRS]);
}

/* ---- nodes one at a time (the split reading) ------------------------------------------- */

/* Parses element text[begin, end) of a split "nodes" array on its own. cJSON is given the
 * text from the element to the end, as in the whole-text parse, so it stops and reports where
 * that parse would have (a failing string is reported one byte on, which can be the comma
 * after the element); it returns after the value, which ends before `end`. What differs is
 * only around the element, handled here: an empty element ("[a,]", "[,]"), anything after
 * the value (a missing comma), and a byte order mark, which cJSON skips at the start of its
 * buffer but is just a bad byte inside a text. */
static gm_status parse_element(jr *r, size_t begin, size_t end, cJSON **out)
{
    *out = NULL;
    r->kind = ERR_SYNTAX;
    size_t b = begin;
    while (b < end && (unsigned char)r->text[b] <= ' ') b++; /* cJSON's white space */
    if (b == end) return malformed(r, r->text + end);        /* where the value should start */
    if ((unsigned char)r->text[b] == 0xEF) return malformed(r, r->text + b);
    const char *stop = NULL;
    cJSON *item = cJSON_ParseWithLengthOpts(r->text + b, r->len - b, &stop, false);
    if (!item) return malformed(r, stop ? stop : r->text + b);
    size_t used = (size_t)(stop - r->text);
    if (used > end) { /* cannot be: the element is balanced */
        cJSON_Delete(item);
        return gm_error_set(r->err, GM_ERR_INTERNAL, "%s: a node ran past its end in the text", r->src);
    }
    while (used < end && (unsigned char)r->text[used] <= ' ') used++;
    if (used < end) {
        cJSON_Delete(item);
        return malformed(r, r->text + used);
    }
    r->kind = ERR_WALK;
    *out = item;
    return GM_OK;
}

/* The nodes of a graph when split: the skeleton holds the array emptied, and its elements are
 * those of the next recorded array (the walk meets the graphs in document order, as the scan
 * recorded them). Each node's tree lives only while it is read, with its own number tokens. */
gm_status gm_jr_parse_element(jr *r, size_t b, size_t e, cJSON **node, gm_json_nums *nums, bool *parsed)
{
    *parsed = false;
    gm_status st = parse_element(r, b, e, node);
    if (st != GM_OK) return st;
    *parsed = true;
    nums->n = 0;
    st = scan_range(r, b, e, nums);
    if (st == GM_OK && !gm_json_tag_numbers(nums, *node)) st = scan_disagrees(r);
    if (st != GM_OK) {
        cJSON_Delete(*node);
        *node = NULL;
    }
    return st;
}

/* The next element of a split array: from the read-ahead thread (its tree, or its node read
 * the fast way into *fast with its links), else parsed here. */
static gm_status next_element(jr *r, gm_jr_ahead *ahead, const gm_json_array_split *a, size_t i, cJSON **node,
                              gm_json_nums **nums, gm_jr_fast *fast, const gm_jr_links **links)
{
    bool parsed = false;
    gm_status st;
    fast->node = NULL;
    if (ahead) {
        st = gm_jr_ahead_next(ahead, r, node, nums, fast, links, &parsed);
    } else {
        size_t b, e;
        gm_json_split_element(r->split, a, i, &b, &e);
        *nums = &r->node_nums;
        st = gm_jr_parse_element(r, b, e, node, *nums, &parsed);
    }
    r->elem = parsed ? i + 1 : i; /* the first element not parsed yet (settle()) */
    if (st == GM_OK) r->kind = ERR_WALK;
    return st;
}

/* The name map's slots the next node will probe (its name, its producers', its control
 * inputs'), asked for before this node is read: on a million nodes the map is far from the
 * cache, and each probe was a wait. Only a look: a malformed node is told when it is read. */
static void prefetch_names(const jr *r, const gm_jr_ahead *ahead)
{
    const cJSON *next;
    const gm_jr_fast *fast;
    const gm_jr_links *links;
    if (!gm_jr_ahead_peek(ahead, &next, &fast, &links)) return;
    const gm_strmap *map = &r->m->node_by_name;
    if (fast) {
        gm_strmap_prefetch(map, fast->node->name, strlen(fast->node->name));
        for (size_t i = 0; i < fast->n_in; i++) {
            const gm_jr_link *l = &links->v[fast->first_in + i];
            gm_strmap_prefetch(map, r->text + l->b, l->n);
        }
        for (size_t i = 0; i < fast->n_ctrl; i++) {
            const gm_jr_link *l = &links->v[fast->first_ctrl + i];
            gm_strmap_prefetch(map, r->text + l->b, l->n);
        }
        return;
    }
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(next, "name");
    if (cJSON_IsString(nm)) gm_strmap_prefetch(map, nm->valuestring, strlen(nm->valuestring));
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(next, "inputs");
    for (const cJSON *e = cJSON_IsArray(in) ? in->child : NULL; e; e = e->next) {
        if (!cJSON_IsString(e)) continue;
        const char *colon = strrchr(e->valuestring, ':');
        if (colon) gm_strmap_prefetch(map, e->valuestring, (size_t)(colon - e->valuestring));
    }
    const cJSON *ctrl = cJSON_GetObjectItemCaseSensitive(next, "control_inputs");
    for (const cJSON *e = cJSON_IsArray(ctrl) ? ctrl->child : NULL; e; e = e->next)
        if (cJSON_IsString(e)) gm_strmap_prefetch(map, e->valuestring, strlen(e->valuestring));
}

/* A name of the text, NUL-terminated, in buf (json_read_fast.c takes none that does not fit). */
static const char *text_name(const jr *r, const gm_jr_link *l, char buf[GM_JR_FAST_NAME_MAX])
{
    assert(l->n < GM_JR_FAST_NAME_MAX);
    memcpy(buf, r->text + l->b, l->n);
    buf[l->n] = '\0';
    return buf;
}

/* A node read the fast way (json_read_fast.h) into its graph: placed (refused as read_node's
 * gm_graph_add_node would refuse it: the name taken), its stream set, its inputs and control
 * inputs linked as read_node_links links them, its input names set. Its outputs, output names
 * and attributes are read already; nothing else in it can be wrong (json_read_fast.c takes only
 * what the walk accepts). */
static gm_status read_fast_node(jr *r, gm_graph *g, gm_jr_fast *fast, const gm_jr_links *links)
{
    char buf[GM_JR_FAST_NAME_MAX];
    const gm_jr_link tl = {fast->type, fast->type_len, -1};
    gm_node *n = gm_ir_node_attach(g, fast->node, text_name(r, &tl, buf), r->err);
    fast->node = NULL;
    if (!n) return r->err ? r->err->code : GM_ERR_INPUT;
    gm_node_set_stream(n, fast->stream);
    for (size_t i = 0; i < fast->n_in; i++) {
        const gm_jr_link *l = &links->v[fast->first_in + i];
        if (gm_node_add_input_early(n, text_name(r, l, buf), l->idx) != GM_OK) return gm_jr_oom(r);
    }
    for (size_t i = 0; i < fast->n_ctrl;) {
        /* in parts of GM_CTRL_EARLY_MAX, as read_node_links gives them */
        char names[GM_CTRL_EARLY_MAX][GM_JR_FAST_NAME_MAX];
        const char *v[GM_CTRL_EARLY_MAX];
        size_t k = 0;
        for (; k < GM_CTRL_EARLY_MAX && i < fast->n_ctrl; k++, i++)
            v[k] = text_name(r, &links->v[fast->first_ctrl + i], names[k]);
        if (gm_node_add_control_inputs_early(n, v, k) != GM_OK) return gm_jr_oom(r);
    }
    if (!gm_node_outputs_known(n)) note_unknown(r);
    for (size_t i = 0; i < fast->n_iname; i++) {
        const gm_jr_link *l = &links->v[fast->first_iname + i];
        /* "" keeps the op table's name */
        if (l->n && gm_node_set_input_name(n, i, text_name(r, l, buf)) != GM_OK) return gm_jr_oom(r);
    }
    return GM_OK;
}

/* The nodes of a graph when split: the skeleton holds the array emptied, and its elements are
 * those of the next recorded array (the walk meets the graphs in document order, as the scan
 * recorded them). Each node's tree lives only while it is read, with its own number tokens;
 * a long array's nodes are parsed ahead on another thread (json_read_ahead.h), most of them
 * read there the fast way (json_read_fast.h). */
static gm_status read_split_nodes(jr *r, gm_graph *g, const jplace *gplace, const cJSON *arr)
{
    const gm_json_split *sp = r->split;
    if (arr->child || r->arr >= sp->n_arrays)
        return gm_error_set(r->err, GM_ERR_INTERNAL, "%s: the node lists disagree with the scan of the text", r->src);
    const gm_json_array_split *a = &sp->arrays[r->arr];
    gm_jr_ahead *ahead = gm_jr_ahead_start(r, a);
    gm_status st = GM_OK;
    for (size_t i = 0; i < a->count && st == GM_OK; i++) {
        cJSON *node = NULL;
        gm_json_nums *nums = NULL;
        gm_jr_fast fast;
        const gm_jr_links *links = NULL;
        st = next_element(r, ahead, a, i, &node, &nums, &fast, &links);
        if (st == GM_OK) {
            prefetch_names(r, ahead);
            if (fast.node) {
                st = read_fast_node(r, g, &fast, links);
            } else {
                r->nums = nums;
                st = read_node(r, g, gplace, i, node);
                r->nums = &r->tree_nums;
            }
        }
        if (!ahead) cJSON_Delete(node); /* the read-ahead's trees are lent */
    }
    gm_jr_ahead_stop(ahead);
    if (st != GM_OK) return st;
    r->arr++;
    r->elem = 0;
    return GM_OK;
}

/* ---- graphs and the model -------------------------------------------------------------- */

enum { G_NAME, G_PARENT, G_ATTRS, G_NODES, G_COUNT };
static const char *const k_graph_keys[G_COUNT] = {"name", "parent", "attrs", "nodes"};

static gm_status read_graph(jr *r, size_t idx, const cJSON *obj)
{
    jplace graph_place = {NULL, "graph", NULL, idx, P_INDEX};
    const jplace *place = &graph_place;
    if (!cJSON_IsObject(obj)) return gm_jr_fail(r, place, "must be an object, not %s", gm_jr_type_name(obj));
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (cJSON_IsString(nm) && *nm->valuestring) {
        graph_place.name = nm->valuestring;
        graph_place.style = P_NAME;
    }

    const cJSON *f[G_COUNT];
    gm_status st = gm_jr_take_fields(r, place, obj, k_graph_keys, G_COUNT, f);
    if (st != GM_OK) return st;
    if (!f[G_NAME]) return gm_jr_fail(r, place, "missing field 'name'");
    const char *name = NULL, *parent = NULL;
    if ((st = gm_jr_get_string_field(r, place, "name", f[G_NAME], &name)) != GM_OK) return st;
    if ((st = gm_jr_get_string_field(r, place, "parent", f[G_PARENT], &parent)) != GM_OK) return st;

    gm_graph *g = gm_model_add_graph(r->m, name, parent, r->err);
    if (!g) return r->err ? r->err->code : GM_ERR_INPUT;
    r->graph = r->m->n_graphs - 1;
    if ((st = gm_jr_read_attrs(r, place, gm_graph_attrs(g), f[G_ATTRS])) != GM_OK) return st;
    if (!f[G_NODES]) return GM_OK;
    if (!cJSON_IsArray(f[G_NODES])) return gm_jr_want(r, place, "nodes", f[G_NODES], "an array of nodes");
    if (r->split) return read_split_nodes(r, g, place, f[G_NODES]);
    size_t i = 0;
    for (const cJSON *e = f[G_NODES]->child; e; e = e->next, i++) {
        if ((st = read_node(r, g, place, i, e)) != GM_OK) return st;
    }
    return GM_OK;
}

static gm_status read_options(jr *r, const cJSON *obj)
{
    if (!cJSON_IsObject(obj)) return gm_jr_want(r, NULL, "options", obj, "an object of strings");
    gm_status st = gm_jr_check_unique_keys(r, &k_options_place, obj);
    for (const cJSON *c = obj->child; c && st == GM_OK; c = c->next) {
        if (!cJSON_IsString(c))
            return gm_jr_fail(r, &k_options_place, "option '%s' must be a string, not %s", c->string, gm_jr_type_name(c));
        if (gm_model_set_option(r->m, c->string, c->valuestring) != GM_OK) st = gm_jr_oom(r);
    }
    return st;
}

enum { M_VERSION, M_NAME, M_OPTIONS, M_GRAPHS, M_COUNT };
static const char *const k_model_keys[M_COUNT] = {"graphmem", "name", "options", "graphs"};

static gm_status read_model(jr *r, const cJSON *root)
{
    if (!cJSON_IsObject(root)) return gm_jr_fail(r, NULL, "the top level must be an object, not %s", gm_jr_type_name(root));
    const cJSON *f[M_COUNT];
    gm_status st = gm_jr_take_fields(r, NULL, root, k_model_keys, M_COUNT, f);
    if (st != GM_OK) return st;

    int64_t version = 0;
    if (!f[M_VERSION]) return gm_jr_fail(r, NULL, "missing field 'graphmem' (the format version, 1)");
    if (!gm_jr_get_int(r, f[M_VERSION], &version))
        return gm_jr_fail(r, NULL, "field 'graphmem' (the format version) must be the integer 1, not %s",
                    gm_jr_type_name(f[M_VERSION]));
    if (version != 1)
        return gm_jr_fail(r, NULL, "unsupported format version %lld (this graphmem reads version 1)", (long long)version);
    const char *name = "";
    if ((st = gm_jr_get_string_field(r, NULL, "name", f[M_NAME], &name)) != GM_OK) return st;
    if (!f[M_GRAPHS]) return gm_jr_fail(r, NULL, "missing field 'graphs'");
    if (!cJSON_IsArray(f[M_GRAPHS])) return gm_jr_want(r, NULL, "graphs", f[M_GRAPHS], "an array of graphs");
    if (!f[M_GRAPHS]->child) return gm_jr_fail(r, NULL, "field 'graphs' is empty (the first graph is the root)");

    if (!(r->m = gm_model_new(name)) || gm_model_set_source(r->m, r->src) != GM_OK) return gm_jr_oom(r);
    /* The split counted the nodes: size the name map once instead of rehashing as it fills. */
    if (r->split && gm_model_reserve_nodes(r->m, r->split->n_ends) != GM_OK) return gm_jr_oom(r);
    if (f[M_OPTIONS] && (st = read_options(r, f[M_OPTIONS])) != GM_OK) return st;
    size_t i = 0;
    for (const cJSON *g = f[M_GRAPHS]->child; g; g = g->next, i++) {
        if ((st = read_graph(r, i, g)) != GM_OK) return st;
    }
    return GM_OK;
}

/* ---- reading the text ------------------------------------------------------------------ */

/* What cJSON left after the root value is more than white space (a NUL ending the buffer is
 * allowed: some callers count it). */
static bool text_after_end(const char *text, size_t len, const char *end)
{
    size_t used = end ? (size_t)(end - text) : len;
    return used < len && !only_space(end, len - used) && !(text[used] == '\0' && used + 1 == len);
}

/* The first syntax error (or with !syntax, the first bad number or string) in the elements
 * not parsed yet, in document order; GM_OK when there is none. */
static gm_status check_rest(jr *r, bool syntax)
{
    const gm_json_split *sp = r->split;
    for (size_t a = r->arr; a < sp->n_arrays; a++) {
        for (size_t i = a == r->arr ? r->elem : 0; i < sp->arrays[a].count; i++) {
            size_t b, e;
            gm_json_split_element(sp, &sp->arrays[a], i, &b, &e);
            cJSON *node = NULL;
            gm_status st = syntax ? parse_element(r, b, e, &node) : scan_range(r, b, e, NULL);
            cJSON_Delete(node);
            if (st != GM_OK) return st;
        }
    }
    return GM_OK;
}

/* The whole reading stops at the first syntax error of the text, else at the first bad number
 * or string, before the walk begins. The split reading meets them in the walk's order, so when
 * it stops on a problem, the elements not parsed yet (everything before has passed every
 * check) are searched for an error of a kind that comes first, which then replaces it. This
 * costs a parse of the rest of the text, only when there is an error to report. */
static gm_status settle(jr *r, gm_status st)
{
    if (!r->split || st == GM_OK || st == GM_ERR_NOMEM) return st;
    int kind = r->kind;
    if (kind == ERR_SYNTAX) return st;
    gm_status found = check_rest(r, true);
    if (found == GM_OK && kind == ERR_WALK) found = check_rest(r, false);
    return found != GM_OK ? found : st;
}

/* The walk, then the IR's own checks. The tree is deleted first: the IR has copied every
 * string, and the memory is better given back before finalize allocates its own. */
static gm_status load(jr *r, cJSON *root)
{
    r->nums = &r->tree_nums;
    gm_status st = gm_json_tag_numbers(&r->tree_nums, root) ? read_model(r, root) : scan_disagrees(r);
    cJSON_Delete(root);
    if (st == GM_OK && r->split && r->arr != r->split->n_arrays)
        st = gm_error_set(r->err, GM_ERR_INTERNAL, "%s: the node lists disagree with the scan of the text", r->src);
    if (st == GM_OK) st = gm_model_finalize(r->m, r->err);
    if (st == GM_OK) set_known_shapes(r);
    return settle(r, st);
}

/* The text as one cJSON tree. */
static gm_status read_whole(jr *r)
{
    r->split = NULL;
    r->tree_nums.n = 0;
    r->n_unknown = 0; /* a split reading given up may have noted some */
    r->unknown_nomem = false;
    const char *end = NULL;
    cJSON *root = r->len ? cJSON_ParseWithLengthOpts(r->text, r->len, &end, false) : NULL;
    if (!root) return malformed(r, end);
    gm_status st = GM_OK;
    if (text_after_end(r->text, r->len, end))
        st = fail_at(r, (size_t)(end - r->text), "malformed JSON: text after the end of the model");
    if (st == GM_OK) st = scan_range(r, 0, r->len, &r->tree_nums);
    if (st != GM_OK) {
        cJSON_Delete(root);
        return st;
    }
    return load(r, root);
}

/* The skeleton, then each node on its own. Returns false, having reported nothing, when the
 * skeleton stage finds a problem: the whole reading then reports it as it always has (with
 * the right position, and an earlier error inside some node taking precedence). */
static bool read_split(jr *r, const gm_json_split *sp, gm_status *st)
{
    size_t slen;
    char *sk = gm_json_split_skeleton(r->text, r->len, sp, &slen);
    if (!sk) {
        *st = gm_jr_oom(r);
        return true;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(sk, slen, &end, false);
    bool ok = root && !text_after_end(sk, slen, end);
    gm_free(sk); /* cJSON copied what it keeps */

    /* The skeleton's numbers and strings are in the text between the arrays' interiors. */
    r->tree_nums.n = 0;
    size_t from = 0, at, len;
    for (size_t a = 0; ok && a <= sp->n_arrays; a++) {
        size_t upto = a < sp->n_arrays ? sp->arrays[a].open + 1 : r->len;
        gm_json_lex lx = gm_json_scan_numbers(r->text, from, upto, &r->tree_nums, &at, &len);
        if (lx == GM_JSON_LEX_NOMEM) {
            cJSON_Delete(root);
            *st = gm_jr_oom(r);
            return true;
        }
        ok = lx == GM_JSON_LEX_OK;
        if (a < sp->n_arrays) from = sp->arrays[a].close;
    }
    if (!ok) {
        cJSON_Delete(root);
        return false;
    }
    r->split = sp;
    r->arr = r->elem = 0;
    *st = load(r, root);
    return true;
}

/* The two scans of the whole text before any parse, side by side on a big text (both only read
 * it): UTF-8 validity, and where the node lists lie (json_split.h). An invalid text is reported
 * as before; its split is dropped. */
enum { SCANS_APART = 16 << 20 };

typedef struct first_scans {
    const char *text;
    size_t len;
    bool valid;
    size_t bad;
    gm_json_split sp;
    gm_json_split_result sr;
} first_scans;

static void first_scan(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    first_scans *f = ctx;
    if (part == 0) f->valid = gm_utf8_valid(f->text, f->len, &f->bad);
    else f->sr = gm_json_split_scan(f->text, f->len, "graphs", "nodes", &f->sp);
}

gm_status gm_model_read_json(const char *text, size_t len, const char *source, gm_model **out, gm_error *err)
{
    *out = NULL;
    jr r = {.src = source ? source : "", .text = text, .len = len, .err = err};
    /* A UTF-8 byte order mark is allowed (some editors write one); positions count after it. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        r.text += 3;
        r.len -= 3;
    }
    first_scans fs = {.text = r.text, .len = r.len};
    if (r.len >= SCANS_APART && gm_parallel_parts(0, 2) == 2) {
        gm_parallel_run(2, first_scan, &fs);
    } else {
        first_scan(&fs, 0, 1);
        if (fs.valid) first_scan(&fs, 1, 1);
    }
    gm_json_split sp = fs.sp;
    gm_json_split_result sr = fs.sr;
    if (!fs.valid) {
        gm_json_split_free(&sp);
        return fail_at(&r, fs.bad, "the text is not valid UTF-8 (byte 0x%02x)", (unsigned char)r.text[fs.bad]);
    }
    gm_status st = GM_OK;
    if (sr == GM_JSON_SPLIT_NOMEM) st = gm_jr_oom(&r);
    else if (sr != GM_JSON_SPLIT_OK || sp.n_arrays == 0 || !read_split(&r, &sp, &st)) st = read_whole(&r);
    gm_json_split_free(&sp);
    gm_free(r.tree_nums.v);
    gm_free(r.node_nums.v);
    gm_free(r.unknown);
    if (st != GM_OK) {
        gm_model_free(r.m);
        return st;
    }
    *out = r.m;
    return GM_OK;
}
