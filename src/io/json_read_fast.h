/*
 * json_read_fast.h — a split model's node read straight from its text on the read-ahead thread
 * (json_read_fast.c says which nodes, and why): the node built detached with its outputs and
 * attributes, and where the text names its inputs and control inputs, for the walk to link.
 */
#ifndef GM_JSON_READ_FAST_H
#define GM_JSON_READ_FAST_H

#include "io/json_read_internal.h"

/* Every name the fast way takes (a node's, a type, a producer's, an input's) is shorter than
 * this: the walk copies them on its stack. */
#define GM_JR_FAST_NAME_MAX 256

/* An input ("producer:index": the producer's name at text[b, b + n), idx >= 0), a control
 * input (its name; idx -1) or an input's name (idx -2). */
typedef struct gm_jr_link {
    size_t b, n;
    int32_t idx;
} gm_jr_link;

/* Links of the nodes of one batch, one after another. */
typedef struct gm_jr_links {
    gm_jr_link *v;
    size_t n, cap;
} gm_jr_links;

typedef struct gm_jr_fast {
    gm_node *node;           /* detached (gm_ir_node_new_detached): outputs and attributes read */
    size_t type, type_len;   /* the type's text, to intern when the node is placed */
    int64_t stream;
    size_t first_in, n_in;   /* its inputs among the batch's links */
    size_t first_ctrl, n_ctrl;
    size_t first_iname, n_iname; /* its input names ("" keeps the default; idx -2) */
} gm_jr_fast;

/* Element text[b, e) of a split nodes array read the fast way into *out, its links appended
 * to links; nums is scratch for an attrs object's numbers. False when the element is not of
 * the simple kind or memory runs out: nothing is kept (the links as they were, the error in r
 * to be cleared) and the element goes to cJSON. */
bool gm_jr_fast_node(jr *r, size_t b, size_t e, gm_jr_links *links, gm_json_nums *nums, gm_jr_fast *out);

#endif
