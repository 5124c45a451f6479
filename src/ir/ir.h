/*
 * ir.h — the definitions behind the opaque IR types of graphmem/graph.h, for the library's own
 * modules (readers, passes, analysis). Code outside src/ uses the accessors instead.
 *
 * Invariants (hold after gm_model_finalize and after every edit function):
 *  - every connected input slot points at a live producer output in the same graph, and that
 *    output's consumer list holds the slot exactly once;
 *  - control edges are mirrored: a in b->ctrl_in  <=>  b in a->ctrl_out;
 *  - node names are unique in the model and the name map holds exactly the live nodes.
 */
#ifndef GM_IR_H
#define GM_IR_H

#include "graphmem/graph.h"
#include "util/strmap.h"

struct gm_attr {
    struct gm_attr *next;
    const char *name;  /* a GE attribute's name points into the attr table; others are owned */
    gm_attr_kind kind;
    bool name_owned;
    union {
        bool b;
        int64_t i;
        double f;
        struct { char *data; size_t len; } s;           /* STRING, BYTES (NUL-terminated) */
        struct { int64_t *v; size_t n; } li;            /* LIST_INT */
        struct { double *v; size_t n; } lf;             /* LIST_FLOAT */
        struct { char **v; size_t n; } ls;              /* LIST_STRING */
        struct { bool *v; size_t n; } lb;               /* LIST_BOOL */
        struct { int64_t **rows; size_t *lens; size_t n; } lli; /* LIST_LIST_INT */
        struct gm_tensor_desc *td;                      /* TENSOR_DESC */
    } u;
};

struct gm_tensor_desc {
    gm_dtype dtype;
    int32_t ndims;          /* -1: no shape given */
    int64_t *dims;
    int64_t size;           /* explicit bytes when size_given */
    bool size_given;
    gm_mem_type mem_type;
    bool mem_type_given;    /* written back only when given */
    bool reuse_input;
    int64_t reuse_input_index;
    char *layout;
    gm_attr *attrs;
};

/* One data-input slot: the producer (NULL = unconnected) and its output index. Before
 * finalize the producer is known by name only. */
typedef struct gm_in_slot {
    struct gm_node *src;
    int32_t src_index;
    char *src_name; /* builder form; freed once resolved */
} gm_in_slot;

/* One consumer of an output: node + input index. */
typedef struct gm_use {
    struct gm_node *node;
    int32_t index;
} gm_use;

typedef struct gm_out_slot {
    gm_tensor_desc desc;
    char *name;    /* explicit IR output name or NULL */
    gm_use *uses;
    uint32_t n_uses, cap_uses;
} gm_out_slot;

typedef struct gm_node_vec {
    struct gm_node **v;
    uint32_t n, cap;
} gm_node_vec;

struct gm_node {
    char *name;                  /* stored right after the struct, in its allocation */
    const char *type;            /* interned in model->types: few distinct types, many nodes */
    struct gm_graph *graph;
    const struct gm_op_info *op; /* from the op table, by type */
    int64_t stream;
    int64_t topo_id;             /* index into model->order; -1 before sorting */
    int64_t order_key;           /* topo tie-break among ready nodes: the given order, with
                                    inserted nodes keyed next to the node they serve */
    uint32_t given_pos;          /* position in the graph's node list (set by each sort) */
    bool dead;                   /* removed by an edit; freed at the next sort */
    bool in_desc_owned;          /* in_desc is this node's own array (see in_desc) */

    gm_in_slot *in;              /* one allocation holds in and in_name */
    gm_tensor_desc *in_desc;     /* parallel to in: READ it directly; to change one, get it from
                                    gm_node_input_desc(), which gives the node its own array —
                                    until then it points at a shared read-only array of defaults
                                    (most inputs never get a desc of their own) */
    char **in_name;              /* parallel to in; NULL entries = use op default */
    uint32_t n_in, cap_in;

    gm_out_slot *out;
    uint32_t n_out, cap_out;

    gm_node_vec ctrl_in, ctrl_out;
    char **ctrl_in_names;        /* builder form, resolved at finalize */
    struct gm_graph **sub;
    char **sub_names;            /* builder form, resolved at finalize */
    uint32_t n_ctrl_in_names;
    uint32_t n_sub;

    gm_attr *attrs;
};

struct gm_graph {
    char *name;
    struct gm_model *model;
    char *parent_name;           /* builder form */
    struct gm_node *parent;      /* NULL for the root */
    gm_node_vec nodes;           /* given order; topological after sort */
    gm_attr *attrs;
    int64_t key_lo, key_hi;      /* smallest and largest order_key in use */
    uint32_t depth;              /* subgraphs above it: 0 for the root (set by each sort) */
    int8_t known_shape;          /* cached "every output size known": -1 not computed. Passes
                                    copy descs and never make one dynamic, so a known graph stays
                                    known unless a node added since the last sort is not; a
                                    re-sort checks just those (gm_model_toposort) */
    uint32_t sorted_n;           /* nodes.v[0, sorted_n) were there at the last sort (compaction
                                    keeps it so); the rest came since */
    uint32_t intact;             /* nodes.v[0, intact) stand as the last sort left them: at
                                    position i, key i * GM_ORDER_KEY_GAP (set by compaction) */
};

typedef struct gm_option {
    char *key, *value;
} gm_option;

struct gm_model {
    char *name;
    char *source;
    char *unfixed_dims;          /* ONNX symbolic dims the reader left unfixed ("a, b"), or NULL */
    char **fixed_dims;           /* the "NAME=VALUE" dims it was read with, NULL-terminated, or NULL */
    gm_option *options;
    size_t n_options, cap_options;
    struct gm_graph **graphs;
    size_t n_graphs, cap_graphs;
    gm_strmap node_by_name;
    gm_strmap graph_by_name;
    gm_strmap types;             /* interned op type strings (owned) */
    gm_node_vec order;           /* GetAllNodes order; valid when sorted */
    bool resolved;               /* builder names resolved */
    uint32_t n_dead;             /* nodes marked dead since the last compaction (gm_node_mark_dead) */
    bool ctrl_deferred;          /* a node's control inputs were left to finalize by name: those
                                    of later nodes are too (gm_node_add_control_inputs_early) */
    bool sorted;                 /* order and topo ids are current (edits clear it) */
    uint64_t edits;              /* edits so far (gm_model_touch): what was built from the model
                                    (a symbol table) is current while this is unchanged */
};

/* Marks a node removed: it is freed, and dropped from its graph's list, by the next sort. */
static inline void gm_node_mark_dead(gm_node *n)
{
    n->dead = true;
    n->graph->model->n_dead++;
}

/* Marks the model's order stale: every edit that adds nodes or changes edges calls it. */
static inline void gm_model_touch(gm_model *m)
{
    m->sorted = false;
    m->edits++;
}

/* The one definition of a tensor of run-time size, that `graphmem info`, `plan` and `run` count
 * by (gm_model_get_stats' dynamic_tensors) and the runtime allocator assumes a size by: a size
 * known only at run time, because a dim or the rank is unknown until the graph runs (the model
 * left it open, shape inference could not derive it, no --dim fixed it), so gm_desc_size has no
 * bytes for it (GM_SIZE_DYNAMIC). An empty tensor (a dim of 0) has a known size, 0 bytes. */
bool gm_desc_size_at_run_time(const gm_tensor_desc *d);
/* Whether d says nothing: no dtype, shape, size, memory type, reuse, layout, and no attribute
 * but a format's kept protobuf (what an input without a desc of its own reads as). */
bool gm_desc_is_blank(const gm_tensor_desc *d);
/* Whether every output of n has a size known before run time. */
bool gm_node_outputs_known(const gm_node *n);
/* A graph's known shape (the passes' rule, gm_pass_graph_known_shape) given whether every node's
 * outputs are known: and no _dynamic_shape_partitioned attribute. */
bool gm_graph_shape_known(const gm_graph *g, bool nodes_known);

/* GE's dims: >= 0, -1 unknown (UNKNOWN_DIM), and -2 (UNKNOWN_DIM_NUM) only as the one dim of
 * an unknown-rank shape [-2]. Every reader (JSON, ONNX, GE text) and finalize refuse anything
 * else with this one rule (gm_shape_dim_ok: one dim of a shape of ndims dims); gm_shape_bad_dim is
 * the index of the first dim it refuses, or -1 when all are good. GM_SHAPE_DIM_RULE is the
 * phrase their messages end with. */
#define GM_DIM_UNKNOWN_RANK (-2)
#define GM_SHAPE_DIM_RULE "dims are >= 0, -1 unknown, or [-2] alone for an unknown rank"
bool gm_shape_dim_ok(int64_t dim, size_t ndims);
int64_t gm_shape_bad_dim(const int64_t *dims, size_t ndims);

/* GE's name-based ref pair (MarkRefRelations, reference §1.2): the first input whose IR name is
 * output `out`'s IR name, or -1. Whether the pair counts as a ref (`reference`) is the caller's
 * question; finalize and gm_ref_input_of_output share this one definition of "same name". */
int32_t gm_node_input_named_as_output(const gm_node *n, uint32_t out);
/* a and b lifted to the lowest graph that holds both: each replaced by itself or by its ancestor
 * there (the node owning the subgraph it lies in, at that level). Equal afterwards when one lies
 * inside the other's subgraphs, or both inside one node's. Reads the graph depths of the last
 * sort (edges added since change none); costs the levels between them and where they meet. */
void gm_node_meet(const gm_node **a, const gm_node **b);
/* The same for a, starting from *a_up, an ancestor (or a itself) found before, when it is no
 * higher than b: one write met by its readers climbs its subgraphs once, not once per reader
 * (a value returned through 20,000 nested bodies). *a_up receives a's side of the meeting. */
void gm_node_meet_from(const gm_node *a, const gm_node **a_up, const gm_node **b);

/* Internal helpers shared by the IR files. */
gm_status gm_node_vec_push(gm_node_vec *v, gm_node *n);
bool gm_node_vec_remove(gm_node_vec *v, const gm_node *n);
bool gm_node_vec_contains(const gm_node_vec *v, const gm_node *n);
void gm_node_vec_free(gm_node_vec *v);

void gm_desc_init(gm_tensor_desc *d);
void gm_desc_fini(gm_tensor_desc *d);
void gm_attr_list_free(gm_attr *list);
gm_status gm_attr_list_clone(gm_attr **dst, const gm_attr *src);

/* Consumer-list maintenance (edges). */
gm_status gm_out_add_use(gm_out_slot *o, gm_node *node, int32_t index);
/* The same in (consumer position, input) order: finalize's resolution of an input named before
 * its producer, among the uses gm_node_add_input_early made (all of later consumers). */
gm_status gm_out_insert_use(gm_out_slot *o, gm_node *node, int32_t index);
bool gm_out_remove_use(gm_out_slot *o, const gm_node *node, int32_t index);

void gm_node_free(gm_node *n);
/* Creates a node in g (checks the name is new in the model), ordered just before `near`
 * (side < 0) or just after it (side > 0) among independent nodes; with near NULL, at the
 * graph's front (side < 0) or end (side > 0). O(1): the list is appended to, and the next
 * topological sort puts the node in place. */
gm_node *gm_ir_node_create(gm_graph *g, const char *name, const char *type, const gm_node *near, int side,
                           gm_error *err);
/* A node outside every graph: its name copied and its op looked up, nothing of the model
 * touched, so that a reader's second thread can build its outputs and attributes (nothing
 * else: inputs link to their producers) while the first walks the nodes before it. NULL when
 * out of memory. gm_node_free frees it. */
gm_node *gm_ir_node_new_detached(const char *name, const char *type);
/* A detached node into g, at its end, refused as gm_graph_add_node refuses (an empty name or
 * type, a name taken: the same messages); n is freed when refused or out of memory. */
gm_node *gm_ir_node_attach(gm_graph *g, gm_node *n, const char *type, gm_error *err);
/* Gap between consecutive order keys after a sort: room for nodes inserted between them. */
#define GM_ORDER_KEY_GAP 4096
/* Appends an unconnected input slot with a default desc. */
gm_status gm_ir_node_push_input(gm_node *n);
/* gm_node_add_input_by_name for a reader that gives nodes in order: an input naming a node
 * already complete in n's graph, with that output, is connected at once (no name kept, no
 * lookup at finalize); anything else keeps the name for finalize, which tells what is wrong
 * there as before. The uses end in the order finalize alone would give them. */
gm_status gm_node_add_input_early(gm_node *n, const char *src, int32_t src_index);
/* gm_node_add_control_input_by_name for the same reader, all of a node's control inputs at
 * once: when each names a node already read in n's graph (not n), they are connected at once
 * (no name copied, no lookup at finalize); else all keep their names, and so do those of every
 * node read after it in the model (ctrl_deferred), so that each producer's successors still end
 * in the order finalize alone would give them. */
gm_status gm_node_add_control_inputs_early(gm_node *n, const char *const *src, size_t count);
/* The most names one call connects at once (a longer list is given in parts of this many). */
#define GM_CTRL_EARLY_MAX 64
/* Frees the dead nodes and drops them from their graphs' lists. */
void gm_model_compact(gm_model *m);
/* "file: graph 'g': node 'n'" prefix used in every IR error. */
int gm_node_place(const gm_node *n, char *buf, size_t cap);

#endif
