/*
 * graphmem/graph.h — the graph IR: a model (root graph + named subgraphs), nodes, anchors,
 * tensor descs and attributes with GE's concepts and names.
 *
 * The structs are opaque; read them through the accessors below. Passes inside the library use
 * src/ir/ir.h, which defines them.
 *
 * Conventions of the whole API (every public header in include/graphmem):
 *  - Errors: a function that can fail returns gm_status and, when its `gm_error *err` is not
 *    NULL, fills it with the code and a message naming the file, graph, node and field where it
 *    applies. gm_status_exit_code maps a status to the command's exit status. Functions that
 *    return a pointer return NULL on failure.
 *  - Ownership: objects made by a *_new, a reader or a builder (gm_model_new,
 *    gm_model_read_file, gm_plan_build, ...) belong to the caller and are released by the
 *    matching *_free, which accepts NULL. Graphs, nodes, tensor descs and attributes belong to
 *    their model and live until it is freed (or the node is removed by an edit). Strings returned
 *    by accessors are borrowed: valid while their object is unchanged, never to be freed.
 *    Buffers documented as malloc'ed are the caller's to free with free(). Input strings are
 *    copied; the caller keeps its own.
 *  - Thread safety: the library keeps no global state but the log settings (log.h) and the
 *    runtime's devices (runtime.h, which says how they are locked). Distinct models may be used
 *    from different threads freely. One model is not locked: calls that
 *    modify it (setters, edits, finalize, the passes) need exclusive access; calls taking a
 *    const model only read, and may run on several threads at once (the planner does), except
 *    gm_node_input_desc, which may allocate.
 *  - Preconditions: handles passed in must be valid (not NULL) unless a function says
 *    otherwise; the accessors do not check.
 */
#ifndef GRAPHMEM_GRAPH_H
#define GRAPHMEM_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version (the CMake package's and graphmem.pc's). */
#define GM_VERSION_STRING "0.1.0"

/* ---- status and errors ------------------------------------------------------------------- */

/* What a call came to. Every value but GM_OK is an error; err->message says which. */
typedef enum gm_status {
    GM_OK = 0,
    GM_ERR_INPUT,    /* bad input: malformed or invalid model, bad option (exit 2) */
    GM_ERR_USAGE,    /* bad command line (exit 2) */
    GM_ERR_IO,       /* cannot open/read/write a file (exit 2) */
    GM_ERR_NOMEM,    /* allocation failed */
    GM_ERR_PROBLEM,  /* the work was done and found a problem (exit 1) */
    GM_ERR_INTERNAL, /* a bug: an invariant broke */
    GM_ERR_UNSUPPORTED, /* the backend or build lacks the feature (e.g. CUDA without a GPU) */
    GM_ERR_DEVICE,   /* the device runtime reported a failure (a CUDA error, a lost worker) */
} gm_status;

/* A status with its message; callers own it (usually on the stack) and pass it to every call. */
typedef struct gm_error {
    gm_status code;
    char message[1024]; /* names the file, graph, node and field where it applies */
} gm_error;

/* Clears *err (code GM_OK, empty message). */
void gm_error_clear(gm_error *err);
/* Sets *err (when err is not NULL) and returns code, so callers can `return gm_error_set(...)`. */
gm_status gm_error_set(gm_error *err, gm_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The process exit status for a status: 0, 1 (problem found) or 2 (bad usage/input). */
int gm_status_exit_code(gm_status st);
/* "ok", "bad input", "bad usage" ... (a static string, "?" out of range): for messages when
 * err->message is empty. */
const char *gm_status_name(gm_status st);

/* ---- data types (GE's DataType ids) -------------------------------------------------------
 * The name functions below return static strings ("?" or similar for a value out of range);
 * they are thread-safe, as are the memory-type and attribute-kind names. */

typedef enum gm_dtype {
    GM_DT_UNDEFINED = 0, GM_DT_FLOAT = 1, GM_DT_FLOAT16 = 2, GM_DT_INT8 = 3, GM_DT_UINT8 = 4,
    GM_DT_INT16 = 5, GM_DT_UINT16 = 6, GM_DT_INT32 = 7, GM_DT_INT64 = 8, GM_DT_UINT32 = 9,
    GM_DT_UINT64 = 10, GM_DT_BOOL = 11, GM_DT_DOUBLE = 12, GM_DT_STRING = 13,
    GM_DT_DUAL_SUB_INT8 = 14, GM_DT_DUAL_SUB_UINT8 = 15, GM_DT_COMPLEX64 = 16,
    GM_DT_COMPLEX128 = 17, GM_DT_QINT8 = 18, GM_DT_QINT16 = 19, GM_DT_QINT32 = 20,
    GM_DT_QUINT8 = 21, GM_DT_QUINT16 = 22, GM_DT_RESOURCE = 23, GM_DT_STRING_REF = 24,
    GM_DT_DUAL = 25, GM_DT_VARIANT = 26, GM_DT_BF16 = 27, GM_DT_INT4 = 28, GM_DT_UINT1 = 29,
    GM_DT_INT2 = 30, GM_DT_UINT2 = 31, GM_DT_COMPLEX32 = 32, GM_DT_HIFLOAT8 = 33,
    GM_DT_FLOAT8_E5M2 = 34, GM_DT_FLOAT8_E4M3FN = 35, GM_DT_FLOAT8_E8M0 = 36,
    GM_DT_FLOAT6_E3M2 = 37, GM_DT_FLOAT6_E2M3 = 38, GM_DT_FLOAT4_E2M1 = 39,
    GM_DT_FLOAT4_E1M2 = 40, GM_DT_HIFLOAT4 = 41,
    GM_DT_COUNT
} gm_dtype;

/* Accepts graphmem names (float32, bfloat16 ...), GE names (DT_FLOAT ...) and ONNX names
 * (FLOAT, FLOAT16 ...). Returns false for an unknown name. */
bool gm_dtype_from_name(const char *name, gm_dtype *out);
/* graphmem's canonical name ("float32"); "undefined" for GM_DT_UNDEFINED. */
const char *gm_dtype_name(gm_dtype dt);
/* GE's name ("DT_FLOAT"). */
const char *gm_dtype_ge_name(gm_dtype dt);
/* Storage width in bits (e.g. 4 for int4); 0 when the type has no fixed width (string, resource). */
unsigned gm_dtype_bits(gm_dtype dt);

/* ---- memory types ------------------------------------------------------------------------- */

typedef enum gm_mem_type {
    GM_MEM_HBM = 0, /* default device memory */
    GM_MEM_P2P,     /* RT_MEMORY_P2P_DDR: reachable by peer devices */
    GM_MEM_TS,      /* RT_MEMORY_TS: task-scheduler memory */
    GM_MEM_HOST,
    GM_MEM_COUNT
} gm_mem_type;

/* "hbm", "p2p", "ts", "host", in any case; false for an unknown name. */
bool gm_mem_type_from_name(const char *name, gm_mem_type *out);
/* The short name ("hbm" ...), a static string. */
const char *gm_mem_type_name(gm_mem_type mt);
/* GE's "special" memory types (MemTypeUtils::IsMemoryTypeSpecial): p2p and ts. */
bool gm_mem_type_is_special(gm_mem_type mt);

/* ---- attributes --------------------------------------------------------------------------- */

/* The value types of attributes (GE's AttrValue kinds). */
typedef enum gm_attr_kind {
    GM_ATTR_BOOL, GM_ATTR_INT, GM_ATTR_FLOAT, GM_ATTR_STRING, GM_ATTR_BYTES,
    GM_ATTR_LIST_INT, GM_ATTR_LIST_FLOAT, GM_ATTR_LIST_STRING, GM_ATTR_LIST_BOOL,
    GM_ATTR_LIST_LIST_INT, GM_ATTR_TENSOR_DESC,
    GM_ATTR_KIND_COUNT
} gm_attr_kind;

/* "bool", "int", "list_int" ... (a static string). */
const char *gm_attr_kind_name(gm_attr_kind k);

/* ---- opaque IR objects -------------------------------------------------------------------- */

typedef struct gm_model gm_model;
typedef struct gm_graph gm_graph;
typedef struct gm_node gm_node;
typedef struct gm_tensor_desc gm_tensor_desc;
typedef struct gm_attr gm_attr;

/* Size of a tensor whose shape has unknown dims: allocated at run time. */
#define GM_SIZE_DYNAMIC (-1)

/* ---- model -------------------------------------------------------------------------------- */

/* An empty model (no graphs yet: gm_model_add_graph adds the root first). NULL when out of
 * memory. Free with gm_model_free. */
gm_model *gm_model_new(const char *name);
/* Frees the model with its graphs, nodes, descs and attributes: every handle into it becomes
 * invalid. NULL is a no-op. */
void gm_model_free(gm_model *m);

const char *gm_model_name(const gm_model *m);
/* The file the model came from ("" when built in memory); error messages start with it. */
const char *gm_model_source(const gm_model *m);
/* Copies path (GM_ERR_NOMEM when out of memory). */
gm_status gm_model_set_source(gm_model *m, const char *path);
/* The symbolic dims (ONNX dim_param names) of the model's inputs the reader was not given a
 * value for, as "a, b", or NULL when there are none: what depends on them is sized at run time
 * (dynamic), so a command can tell its user which `--dim NAME=VALUE` would make it static. */
const char *gm_model_unfixed_dims(const gm_model *m);
/* Copies names (NULL or "" clears); GM_ERR_NOMEM when out of memory. */
gm_status gm_model_set_unfixed_dims(gm_model *m, const char *names);
/* The symbolic dims the model was read with ("NAME=VALUE", as --dim gives them), NULL-terminated,
 * or NULL when none: a plan records them, so that verify reads the model the same way. */
const char *const *gm_model_fixed_dims(const gm_model *m);
/* Copies dims (NULL-terminated; NULL or empty clears); GM_ERR_NOMEM when out of memory. */
gm_status gm_model_set_fixed_dims(gm_model *m, const char *const *dims);

/* A hint for builders that know how many nodes are coming: sizes the name map once. */
gm_status gm_model_reserve_nodes(gm_model *m, size_t nodes);

/* Options: GE's ge.* keys, string to string. set replaces an existing key. */
gm_status gm_model_set_option(gm_model *m, const char *key, const char *value);
const char *gm_model_option(const gm_model *m, const char *key); /* NULL when unset */
size_t gm_model_option_count(const gm_model *m);
/* The i-th option (i < gm_model_option_count), in insertion order; both strings borrowed. */
void gm_model_option_at(const gm_model *m, size_t i, const char **key, const char **value);

/* Graphs: the root and every subgraph, in the order they were added. */
size_t gm_model_graph_count(const gm_model *m);
gm_graph *gm_model_graph(const gm_model *m, size_t i); /* 0 = root; NULL when out of range */
gm_graph *gm_model_root(const gm_model *m);            /* NULL before a graph is added */
/* By name; NULL when there is none. Node names are unique across the whole model. */
gm_graph *gm_model_find_graph(const gm_model *m, const char *name);
gm_node *gm_model_find_node(const gm_model *m, const char *name);

/* Every node, in the model's topological order (valid after gm_model_finalize): GE's
 * GetAllNodes — a graph's nodes in topological order, each node with subgraphs followed by
 * the nodes of its subgraphs, in the order the node lists them. */
size_t gm_model_node_count(const gm_model *m);
gm_node *gm_model_node_at(const gm_model *m, size_t topo_index);

/* Resolves the names given while building (inputs, control inputs, subgraphs, parents),
 * validates the model (every error of docs/graph-format.md) and computes the topological
 * order. Must be called after building and after a batch of edits. */
gm_status gm_model_finalize(gm_model *m, gm_error *err);
/* Recomputes the topological order after edits (the edits keep names resolved). */
gm_status gm_model_toposort(gm_model *m, gm_error *err);

/* ---- graph -------------------------------------------------------------------------------- */

/* parent_node: name of the node that owns this subgraph, NULL for the root (the first graph).
 * NULL with *err set on a duplicate graph name or out of memory. The graph belongs to m. */
gm_graph *gm_model_add_graph(gm_model *m, const char *name, const char *parent_node, gm_error *err);
const char *gm_graph_name(const gm_graph *g);
gm_model *gm_graph_model(const gm_graph *g); /* the model the graph belongs to */
gm_node *gm_graph_parent(const gm_graph *g); /* NULL for the root */
bool gm_graph_is_root(const gm_graph *g);
/* Nodes of this graph, in topological order once finalized (given order before). */
size_t gm_graph_node_count(const gm_graph *g);
gm_node *gm_graph_node(const gm_graph *g, size_t i);
/* The graph's attribute list, for the gm_attr_set_* functions below. */
gm_attr **gm_graph_attrs(gm_graph *g);

/* ---- node --------------------------------------------------------------------------------- */

/* A node of type `type` (GE's op type: "Add", "Assign", "HcomAllReduce" ...) with no inputs or
 * outputs yet. NULL with *err set when the name is taken in the model or out of memory. The
 * node belongs to the graph's model. */
gm_node *gm_graph_add_node(gm_graph *g, const char *name, const char *type, gm_error *err);
const char *gm_node_name(const gm_node *n);
const char *gm_node_type(const gm_node *n);
gm_graph *gm_node_graph(const gm_node *n); /* the graph it is in */
/* The stream the node runs on (GE's stream id; 0 by default). */
int64_t gm_node_stream(const gm_node *n);
void gm_node_set_stream(gm_node *n, int64_t stream);
/* Position in gm_model_node_at order; -1 before finalize. */
int64_t gm_node_topo_id(const gm_node *n);

/* Data inputs: builder form by producer name (resolved by gm_model_finalize). src NULL or ""
 * = unconnected input. These three return GM_ERR_NOMEM when out of memory; unknown names are
 * reported by gm_model_finalize. */
gm_status gm_node_add_input_by_name(gm_node *n, const char *src, int32_t src_index);
gm_status gm_node_add_control_input_by_name(gm_node *n, const char *src);
gm_status gm_node_add_subgraph_by_name(gm_node *n, const char *graph_name);

/* The edges, resolved (valid after gm_model_finalize). Indices must be in range. */
size_t gm_node_input_count(const gm_node *n);
/* Producer of input i; NULL when unconnected. *src_index receives the output index. */
gm_node *gm_node_input(const gm_node *n, size_t i, int32_t *src_index);
size_t gm_node_control_input_count(const gm_node *n);
gm_node *gm_node_control_input(const gm_node *n, size_t i);
size_t gm_node_control_output_count(const gm_node *n);
gm_node *gm_node_control_output(const gm_node *n, size_t i);
size_t gm_node_output_count(const gm_node *n);
/* Consumers of output k, in the order the edges were made. */
size_t gm_node_consumer_count(const gm_node *n, size_t k);
gm_node *gm_node_consumer(const gm_node *n, size_t k, size_t j, int32_t *dst_index);
size_t gm_node_subgraph_count(const gm_node *n);
gm_graph *gm_node_subgraph(const gm_node *n, size_t i);

/* Appends an output with a default desc (undefined dtype, no shape); NULL when out of memory. */
gm_tensor_desc *gm_node_add_output(gm_node *n);
gm_tensor_desc *gm_node_output_desc(const gm_node *n, size_t k); /* NULL when out of range */
/* Input descs run parallel to inputs; an input without one has a default desc. NULL when out of
 * range or out of memory (a node keeps default input descs shared until one is asked for). */
gm_tensor_desc *gm_node_input_desc(const gm_node *n, size_t i);

/* IR names: explicit (input_names / output_names) else the op table's defaults, else NULL. */
const char *gm_node_input_name(const gm_node *n, size_t i);
const char *gm_node_output_name(const gm_node *n, size_t k);
gm_status gm_node_set_input_name(gm_node *n, size_t i, const char *name);
gm_status gm_node_set_output_name(gm_node *n, size_t k, const char *name);

/* The node's attribute list, for the gm_attr_set_* functions below. */
gm_attr **gm_node_attrs(gm_node *n);
const gm_attr *gm_node_attr_list(const gm_node *n); /* read-only: for gm_attrs_get_* */

/* ---- tensor desc --------------------------------------------------------------------------
 * A tensor desc (GE's GeTensorDesc) describes one input or output: data type, shape, size,
 * memory type, layout and attributes. Descs belong to their node. */

gm_dtype gm_desc_dtype(const gm_tensor_desc *d);
void gm_desc_set_dtype(gm_tensor_desc *d, gm_dtype dt);
/* Shape: ndims < 0 means no shape given (treated as a scalar); dims may be -1 (unknown) or
 * -2 (unknown rank, GE's UNKNOWN_DIM_NUM). */
int32_t gm_desc_ndims(const gm_tensor_desc *d);
const int64_t *gm_desc_dims(const gm_tensor_desc *d); /* ndims values; borrowed */
/* Copies the dims (ndims < 0: no shape); GM_ERR_NOMEM when out of memory. */
gm_status gm_desc_set_shape(gm_tensor_desc *d, const int64_t *dims, int32_t ndims);
/* Whether an explicit size in bytes was set (GE's TensorUtils size), which gm_desc_size prefers. */
bool gm_desc_size_given(const gm_tensor_desc *d);
void gm_desc_set_size(gm_tensor_desc *d, int64_t size);
/* Bytes: the explicit size, else dtype x shape (sub-byte types rounded up to whole bytes);
 * GM_SIZE_DYNAMIC when a dim is unknown. -2 signals an overflow (validation rejects it). */
int64_t gm_desc_size(const gm_tensor_desc *d);
/* The memory the tensor lives in (GM_MEM_HBM by default). */
gm_mem_type gm_desc_mem_type(const gm_tensor_desc *d);
void gm_desc_set_mem_type(gm_tensor_desc *d, gm_mem_type mt);
/* GE's reuse_input: an output that is written in place over input *index. */
bool gm_desc_reuse_input(const gm_tensor_desc *d, int64_t *index);
void gm_desc_set_reuse_input(gm_tensor_desc *d, bool reuse, int64_t index);
/* The format ("NCHW", "ND" ...), copied; GM_ERR_NOMEM when out of memory. */
const char *gm_desc_layout(const gm_tensor_desc *d); /* NULL when unset */
gm_status gm_desc_set_layout(gm_tensor_desc *d, const char *layout);
/* The desc's attribute list, for the gm_attr_set_* functions below. */
gm_attr **gm_desc_attrs(gm_tensor_desc *d);

/* ---- attribute lists ----------------------------------------------------------------------
 * An attribute list is a `gm_attr *` head (NULL = empty) owned by its node/graph/desc; the
 * setters replace a value of the same name, keeping its position. Order is insertion order. */

/* Lookup and iteration: find is NULL when absent; next is NULL after the last. */
const gm_attr *gm_attr_find(const gm_attr *list, const char *name);
/* The bytes attribute in which the ONNX reader keeps an initializer's TensorProto, packed, on its
 * Const: the data inline, or the external reference as it was. The ONNX writer writes it back as
 * the initializer, so an ONNX model converted to ONNX keeps its weights; the JSON and GE writers
 * leave it out (their formats hold no weights), so a dump stays the size of the graph. */
#define GM_ATTR_ONNX_TENSOR "_onnx_tensor"
/* The same for the declared type of output k when it is no tensor's (a sequence, an optional, a
 * map): "_onnx_type.<k>", a packed TypeProto. */
#define GM_ATTR_ONNX_TYPE_PREFIX "_onnx_type."
/* And a node attribute of a kind the IR lacks (a TENSOR other than a Constant's value, a
 * SPARSE_TENSOR, a TYPE_PROTO, their lists): "_onnx_attr.<name>", the packed AttributeProto. */
#define GM_ATTR_ONNX_ATTR_PREFIX "_onnx_attr."
/* And the ONNX names of a node's output values (a list of strings), so that a model converted to
 * ONNX keeps the value names its users fetch outputs by. */
#define GM_ATTR_ONNX_VALUES "_onnx_values"
/* Whether attribute `name` is one of those: ONNX's protobuf bytes, which only the ONNX writer
 * gives back and the other formats leave out. */
bool gm_attr_is_onnx_proto(const char *name);
/* What a GE file said that the IR does not hold (an op's id, a desc's device_type, attributes
 * of kinds the IR lacks, the model's own attributes ...), kept by GE's readers as a packed
 * message of the same type on the node, desc or graph ("_ge_rest"; the model's on its root
 * graph, "_ge_model_rest"), so that the GE writer gives the file back. */
#define GM_ATTR_GE_REST "_ge_rest"
#define GM_ATTR_GE_MODEL_REST "_ge_model_rest"
bool gm_attr_is_ge_proto(const char *name);
/* Either format's kept protobuf: the JSON writer leaves both out, each writer the other's. */
bool gm_attr_is_kept_proto(const char *name);
const gm_attr *gm_attr_next(const gm_attr *a);
const char *gm_attr_name(const gm_attr *a);
gm_attr_kind gm_attr_get_kind(const gm_attr *a);
size_t gm_attr_count(const gm_attr *list);

/* Values: each getter expects its kind (gm_attr_get_kind) and indices in range (list_len,
 * list_list_len); strings and descs are borrowed from the attribute. */
bool gm_attr_bool(const gm_attr *a);
int64_t gm_attr_int(const gm_attr *a);
double gm_attr_float(const gm_attr *a);
const char *gm_attr_string(const gm_attr *a, size_t *len); /* STRING and BYTES */
size_t gm_attr_list_len(const gm_attr *a);
int64_t gm_attr_list_int(const gm_attr *a, size_t i);
double gm_attr_list_float(const gm_attr *a, size_t i);
const char *gm_attr_list_string(const gm_attr *a, size_t i);
bool gm_attr_list_bool(const gm_attr *a, size_t i);
size_t gm_attr_list_list_len(const gm_attr *a, size_t i);
int64_t gm_attr_list_list_int(const gm_attr *a, size_t i, size_t j);
const gm_tensor_desc *gm_attr_tensor_desc(const gm_attr *a);

/* Setters copy name and value into the list; GM_ERR_NOMEM when out of memory. */
gm_status gm_attr_set_bool(gm_attr **list, const char *name, bool v);
gm_status gm_attr_set_int(gm_attr **list, const char *name, int64_t v);
gm_status gm_attr_set_float(gm_attr **list, const char *name, double v);
gm_status gm_attr_set_string(gm_attr **list, const char *name, const char *v);
gm_status gm_attr_set_bytes(gm_attr **list, const char *name, const void *v, size_t len);
gm_status gm_attr_set_list_int(gm_attr **list, const char *name, const int64_t *v, size_t n);
gm_status gm_attr_set_list_float(gm_attr **list, const char *name, const double *v, size_t n);
gm_status gm_attr_set_list_string(gm_attr **list, const char *name, const char *const *v, size_t n);
gm_status gm_attr_set_list_bool(gm_attr **list, const char *name, const bool *v, size_t n);
/* rows[i] has lens[i] ints. */
gm_status gm_attr_set_list_list_int(gm_attr **list, const char *name, const int64_t *const *rows,
                                    const size_t *lens, size_t n);
gm_status gm_attr_set_tensor_desc(gm_attr **list, const char *name, const gm_tensor_desc *d);
/* Removes the attribute named; false when there was none. */
bool gm_attr_remove(gm_attr **list, const char *name);
/* Copies every attribute of src onto dst (replacing same-named ones). */
gm_status gm_attr_copy_all(gm_attr **dst, const gm_attr *src);

/* Typed lookups with a default, for the common cases. Lists of bools count for bool. */
bool gm_attrs_get_bool(const gm_attr *list, const char *name, bool dflt);
int64_t gm_attrs_get_int(const gm_attr *list, const char *name, int64_t dflt);
const char *gm_attrs_get_string(const gm_attr *list, const char *name); /* NULL when absent */

/* ---- statistics (src/ir/stats.c) --------------------------------------------------------- */

/* What `graphmem info` and the plan summary report about a model as it stands. Bytes are the
 * sums of output tensor sizes, each output counted on its own (before symbols and reuse). */
typedef struct gm_model_stats {
    size_t graphs, nodes, data_edges, control_edges, tensors;
    size_t streams;            /* distinct stream ids */
    int64_t max_stream;
    size_t dynamic_tensors;    /* outputs whose size is known only at run time */
    int64_t tensor_bytes;      /* every output of known size */
    int64_t fixed_bytes;       /* outputs of constants and variables (fixed addresses) */
    int64_t user_input_bytes;  /* outputs of root-graph Data nodes (zero copy) */
    int64_t bytes_by_mem_type[GM_MEM_COUNT];
} gm_model_stats;

/* Fills *st; reads the model only (a finalized one). */
void gm_model_get_stats(const gm_model *m, gm_model_stats *st);

/* ---- edits (src/ir/edit.c) ----------------------------------------------------------------
 * The graph edits the compiler passes make. New nodes get one output desc per input, cloned
 * from the desc of the producer they take over, the stream of the node they feed (insert
 * before) or follow (insert after), and are placed in the graph's node list next to that node.
 * The names must be unused in the model. After a batch of edits call gm_model_toposort. */

/* producer -> dst:in_idx becomes producer -> new:0, new:0 -> dst:in_idx. Fails (GM_ERR_INPUT)
 * when the input is unconnected. */
gm_node *gm_edit_insert_before(gm_node *dst, size_t in_idx, const char *name, const char *type,
                               gm_error *err);
/* src:out_idx -> {consumers} becomes src:out_idx -> new:0, new:0 -> {consumers}. */
gm_node *gm_edit_insert_after(gm_node *src, size_t out_idx, const char *name, const char *type,
                              gm_error *err);
/* One node with k inputs and k outputs (IdentityN-like) before k in-anchors:
 * producer_j -> dsts[j]:in_idx[j] becomes producer_j -> new:j, new:j -> dsts[j]:in_idx[j].
 * All dsts must be in one graph. */
gm_node *gm_edit_insert_before_many(gm_node *const *dsts, const size_t *in_idx, size_t k,
                                    const char *name, const char *type, gm_error *err);
/* Removes n, relinking the producer of its input 0 to every consumer of its output 0, handing
 * its control predecessors to its successors (data and control) and ordering the producer
 * before its control successors, so every order n implied is kept.
 * Other inputs and outputs must be unconsumed/unconnected (else GM_ERR_INPUT). */
gm_status gm_edit_isolate_and_remove(gm_node *n, gm_error *err);

/* src before dst: a no-op when the edge exists; GM_ERR_INPUT when src is dst or the two are in
 * different graphs; GM_ERR_NOMEM when out of memory. remove says whether there was one. */
gm_status gm_edit_add_control_edge(gm_node *src, gm_node *dst);
bool gm_edit_remove_control_edge(gm_node *src, gm_node *dst);
/* Control predecessors of `from` also precede `to`; move also removes them from `from`. */
gm_status gm_edit_copy_control_inputs(const gm_node *from, gm_node *to);
gm_status gm_edit_move_control_inputs(gm_node *from, gm_node *to);
/* Control successors of `from` also follow `to`; move also removes them from `from`. */
gm_status gm_edit_copy_control_outputs(const gm_node *from, gm_node *to);
gm_status gm_edit_move_control_outputs(gm_node *from, gm_node *to);
/* Data edge producer src:out -> dst:in (replacing what fed dst:in; the input must exist). */
gm_status gm_edit_set_input(gm_node *dst, size_t in_idx, gm_node *src, int32_t src_index);
/* Appends a data input to dst fed by src:src_index (src NULL = unconnected). */
gm_status gm_edit_add_input(gm_node *dst, gm_node *src, int32_t src_index);

/* Deep copy of src into dst (dst's previous contents are freed). */
gm_status gm_desc_copy(gm_tensor_desc *dst, const gm_tensor_desc *src);

#ifdef __cplusplus
}
#endif
#endif
