/*
 * json_read_internal.h — what the JSON reader's files share: the reader state, the places
 * named in messages (rendered only when a message is written), the error helpers, and the
 * field helpers. json_read.c walks models, graphs and nodes; json_read_values.c reads tensor
 * descs and attributes.
 */
#ifndef GM_JSON_READ_INTERNAL_H
#define GM_JSON_READ_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "io/json_numbers.h"
#include "io/json_split.h"

/* What kind of error was reported last; the whole reading reports them in this order of
 * precedence (highest last). */
enum { ERR_WALK, ERR_LEXICAL, ERR_SYNTAX };

/* Reader state. */
typedef struct jr {
    const char *src;  /* source name, first in every message */
    const char *text; /* the whole text (after a BOM) */
    size_t len;
    gm_error *err;
    gm_model *m;
    gm_json_nums *nums;     /* the number tokens of the tree being read: one of the two below */
    gm_json_nums tree_nums; /* the whole text's or the skeleton's */
    gm_json_nums node_nums; /* the current node's, when split */
    const gm_json_split *split; /* NULL: the whole text is one tree */
    size_t arr, elem;           /* split: the first element not parsed yet (array, index) */
    int kind;                   /* ERR_*: the kind of the error reported */
    /* Graphs (by their index in the text) with a node whose outputs' sizes are not all known,
     * noted while each node's descs are hot: the graphs' known shape is then set after finalize,
     * not found by a walk of every node's descs later (json_read.c). */
    size_t graph;
    uint8_t *unknown;
    size_t n_unknown, cap_unknown;
    bool unknown_nomem;
} jr;

/*
 * Where a message points ("graph 'root': node 'n': output 0: attribute 'x'"), as a chain of
 * frames on the stack, one per level of the walk. It is rendered only when a message is
 * written: formatting it eagerly for every node, output and attribute cost a tenth of a
 * second on a 200,000-node model.
 */
typedef enum { P_INDEX, P_NAME, P_SUBSCRIPT, P_BARE } place_style;

typedef struct jplace {
    const struct jplace *up;
    const char *label;
    const char *name; /* P_NAME: "label 'name'" */
    size_t index;     /* P_INDEX: "label 3"; P_SUBSCRIPT: "label[3]" */
    place_style style;
} jplace;

/* Places were formatted into buffers of this size (longer ones cut); rendering keeps that. */
#define PLACE_CAP 512

/* GM_ERR_INPUT "<source>: <place>: <message>" (place may be NULL). */
gm_status gm_jr_fail(jr *r, const jplace *place, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
gm_status gm_jr_oom(jr *r);
/* Appends the text of a place ("graph 'g': node 'n': output 0") to buf at *k. */
void gm_jr_render_place(const jplace *p, char *buf, size_t cap, size_t *k);
/* An integer JSON number (integer text that fits int64). */
bool gm_jr_get_int(const jr *r, const cJSON *it, int64_t *v);
const char *gm_jr_type_name(const cJSON *it);
/* "field 'f' must be <what>, not <type>". */
gm_status gm_jr_want(jr *r, const jplace *place, const char *field, const cJSON *it, const char *what);
/* A string / integer field; NULL item = absent: *out stays (and *given false). */
gm_status gm_jr_get_string_field(jr *r, const jplace *place, const char *field, const cJSON *it, const char **out);
gm_status gm_jr_get_int_field(jr *r, const jplace *place, const char *field, const cJSON *it, int64_t *out,
                              bool *given);
/* Fills items[i] with the member named keys[i]; rejects unknown and duplicate keys. */
gm_status gm_jr_take_fields(jr *r, const jplace *place, const cJSON *obj, const char *const *keys, size_t nkeys,
                            const cJSON **items);
/* Rejects duplicate keys in a free-form object (attrs, options). */
gm_status gm_jr_check_unique_keys(jr *r, const jplace *place, const cJSON *obj);

/* Element text[b, e) of a split array parsed on its own, its numbers scanned into nums and
 * tied to the tree; *parsed: its syntax passed (a failure after that is in its numbers).
 * Uses r's text, source, error and kind only (the read-ahead thread has its own r). */
gm_status gm_jr_parse_element(jr *r, size_t b, size_t e, cJSON **node, gm_json_nums *nums, bool *parsed);

/* json_read_values.c: a tensor desc object, and an "attrs" object into an attribute list. */
gm_status gm_jr_read_desc(jr *r, const jplace *place, gm_tensor_desc *d, const cJSON *obj);
gm_status gm_jr_read_attrs(jr *r, const jplace *place, gm_attr **list, const cJSON *obj);

#endif
