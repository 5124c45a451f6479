/*
 * onnx_internal.h — what the ONNX reader, writer and shape inference share: the element-type
 * map, the tensor facts shape inference works on, and the text codec of the "graphmem.*"
 * records that carry what ONNX cannot say natively (the encoding is described in
 * onnx_write.c). Nothing here is exported from the library.
 */
#ifndef GM_ONNX_INTERNAL_H
#define GM_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"
#include "onnx.pb-c.h"
#include "util/strmap.h"

/* ---- element types (onnx_shape.c) ---------------------------------------------------------- */

/* TensorProto.DataType -> gm_dtype; false for a number graphmem has no type for. 0 maps to
 * GM_DT_UNDEFINED. */
bool gm_onnx_dtype_to_gm(int32_t onnx, gm_dtype *out);
/* gm_dtype -> TensorProto.DataType; 0 when ONNX has no such type. */
int32_t gm_onnx_dtype_from_gm(gm_dtype dt);

/* ---- tensor facts for shape inference (onnx_shape*.c) --------------------------------------- */

/* Ranks above this are unknown to inference (a file graphmem wrote keeps any rank). */
#define GM_ONNX_MAX_RANK 16
/* Element values are tracked for small tensors only: shape arithmetic (Shape -> Gather ->
 * Concat -> Reshape) never needs more. */
#define GM_ONNX_MAX_VALUES 8

typedef enum gm_onnx_vkind { GM_ONNX_VAL_NONE = 0, GM_ONNX_VAL_INT, GM_ONNX_VAL_FLOAT } gm_onnx_vkind;

/* An integer element whose value is not known (Shape of a shape with a symbolic dim): shape
 * arithmetic keeps the known elements. A real INT64_MIN is read as unknown, which is safe. */
#define GM_ONNX_UNKNOWN_VALUE INT64_MIN

typedef struct gm_onnx_info {
    gm_dtype dtype;                  /* GM_DT_UNDEFINED: unknown */
    int32_t rank;                    /* -1: unknown rank */
    int64_t dims[GM_ONNX_MAX_RANK];  /* -1: unknown dim */
    gm_onnx_vkind vkind;             /* element values, when known (then rank and dims are known) */
    int32_t nval;
    int64_t ival[GM_ONNX_MAX_VALUES];
    double fval[GM_ONNX_MAX_VALUES];
} gm_onnx_info;

void gm_onnx_info_unknown(gm_onnx_info *t);
/* Elements of a known shape, or -1. */
int64_t gm_onnx_info_numel(const gm_onnx_info *t);
/* dtype, dims and (for small tensors whose data is in the file) values of a TensorProto. Data
 * kept outside the file is never read. */
void gm_onnx_info_from_tensor(const Onnx__TensorProto *tp, gm_onnx_info *out);
/* What the file declares wins where it says something; inference fills the rest. */
void gm_onnx_info_merge_decl(gm_onnx_info *inferred, const gm_onnx_info *decl);
/* a := a joined with b: what holds for both (a dim both agree on, a value both agree on). For
 * control flow, where either branch or any iteration may produce the tensor. */
void gm_onnx_info_join(gm_onnx_info *a, const gm_onnx_info *b);
bool gm_onnx_info_same(const gm_onnx_info *a, const gm_onnx_info *b);

/* Infers the outputs of one node from its inputs (in[i] NULL: an absent optional input). The
 * outputs start unknown; whatever cannot be derived stays unknown, never guessed. Control flow
 * (If, Loop, Scan) is the reader's: it needs the bodies. */
void gm_onnx_infer(const Onnx__NodeProto *node, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out,
                   size_t n_out);

/* Attribute helpers shared by the inference files. */
const Onnx__AttributeProto *gm_onnx_attr(const Onnx__NodeProto *n, const char *name);
int64_t gm_onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);
/* The INTS of an attribute; NULL (and *count 0) when absent. */
const int64_t *gm_onnx_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count);

/* Families, one file each; each returns false when it does not know the op type. */
bool gm_onnx_infer_elementwise(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in,
                               gm_onnx_info *out, size_t n_out);
bool gm_onnx_infer_nn(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in, gm_onnx_info *out,
                      size_t n_out);
bool gm_onnx_infer_tensor(const Onnx__NodeProto *n, const gm_onnx_info *const *in, size_t n_in,
                          gm_onnx_info *out, size_t n_out);

/* Numpy broadcasting of two shapes (out may alias a); false when they cannot broadcast. */
bool gm_onnx_broadcast(const gm_onnx_info *a, const gm_onnx_info *b, gm_onnx_info *out);
/* The int values of a (1-D or scalar) input, every element known; false otherwise. */
bool gm_onnx_int_values(const gm_onnx_info *t, const int64_t **v, int32_t *n);
/* The same where elements may be GM_ONNX_UNKNOWN_VALUE. */
bool gm_onnx_int_values_partial(const gm_onnx_info *t, const int64_t **v, int32_t *n);
/* Copies shape and dtype. */
void gm_onnx_info_copy_shape(gm_onnx_info *dst, const gm_onnx_info *src);

/* ---- the graphmem.* text codec (onnx_meta.c) ------------------------------------------------ */

/* A growing text buffer; on allocation failure `oom` is set and later output is dropped. */
typedef struct gm_onnx_text {
    char *p;
    size_t len, cap;
    bool oom;
} gm_onnx_text;

void gm_onnx_text_free(gm_onnx_text *t);

/* Which fields of a desc to encode. */
enum { GM_ONNX_DESC_DTYPE = 1, GM_ONNX_DESC_SHAPE = 2, GM_ONNX_DESC_REST = 4, GM_ONNX_DESC_ALL = 7 };

void gm_onnx_enc_value(gm_onnx_text *t, const gm_attr *a); /* "<kind> <payload>" */
void gm_onnx_enc_desc(gm_onnx_text *t, const gm_tensor_desc *d, unsigned fields);
void gm_onnx_enc_attrs(gm_onnx_text *t, const gm_attr *list);
/* Does the desc carry anything in the REST fields (size, memory type, reuse, layout, attrs)? */
bool gm_onnx_desc_has_rest(const gm_tensor_desc *d);

/* A node that becomes a graph input, initializer or the graph outputs is described by one
 * record: everything the JSON format says about a node except its data inputs. */
typedef struct gm_onnx_record {
    char *name, *type;
    bool has_pos;
    int64_t pos;      /* position in its graph's node list */
    int64_t stream;
    char **ctrl;      /* control inputs */
    size_t n_ctrl;
    char **in_names, **out_names; /* "" = the op default */
    size_t n_in_names, n_out_names;
    gm_attr *attrs;
    gm_tensor_desc *outs, *ins;
    size_t n_outs, n_ins;
} gm_onnx_record;

void gm_onnx_enc_record(gm_onnx_text *t, const gm_node *n, uint32_t pos);
void gm_onnx_record_free(gm_onnx_record *r);

/* Decoders: on failure they return GM_ERR_INPUT (why says what is wrong) or GM_ERR_NOMEM. */
gm_status gm_onnx_dec_value(const char *text, size_t len, gm_attr **list, const char *name, char *why, size_t cap);
gm_status gm_onnx_dec_desc(const char *text, size_t len, gm_tensor_desc *d, char *why, size_t cap); /* overlays d */
gm_status gm_onnx_dec_attrs(const char *text, size_t len, gm_attr **list, char *why, size_t cap);
gm_status gm_onnx_dec_record(const char *text, size_t len, gm_onnx_record *r, char *why, size_t cap);

/* The prefix of every graphmem-specific key, attribute and record. */
#define GM_ONNX_PREFIX "graphmem."
/* The prefix a node's graphmem attributes are written with: "__" is ONNX's internal-symbol form,
 * which onnx.checker lets through on any operator. Files written before it used GM_ONNX_PREFIX
 * alone; the reader takes both (gm_onnx_meta_name). */
#define GM_ONNX_NODE_PREFIX "__" GM_ONNX_PREFIX
/* A node attribute's name with the "__" of GM_ONNX_NODE_PREFIX taken off. */
const char *gm_onnx_meta_name(const char *name);
/* Domain of node types ONNX does not define. */
#define GM_ONNX_DOMAIN "ai.graphmem"
/* Marks a file graphmem wrote (model metadata key; value "1"). */
#define GM_ONNX_FORMAT_KEY "graphmem.format"
/* Starts every record kept in a doc_string. */
#define GM_ONNX_RECORD_MAGIC "graphmem:"
/* The root graph's record of the operator sets a plain file imports ("<domain>:<version>", the
 * default domain as ai.onnx) and of its IR version: the writer imports the same, so the node forms
 * of an older opset (Unsqueeze's axes attribute, Add's broadcast ...) stay valid where they are. */
#define GM_ONNX_OPSETS_ATTR "_onnx_opset_import"
#define GM_ONNX_IR_VERSION_ATTR "_onnx_ir_version"
/* Location of the data of an initializer graphmem writes without its data (a graph that came
 * from JSON, or an ONNX one whose weights were external): there is none. */
#define GM_ONNX_NO_DATA "graphmem:no-data"

/* ---- the reader (onnx_read*.c): its state and the functions its files share -------------- */

/* One ONNX value of a graph scope. */
typedef struct gm_onnx_rtensor {
    const char *name;          /* ONNX value name (borrowed from the protobuf); NULL: an output "" */
    const char *producer;      /* IR name of its producer */
    gm_node *node;             /* the producer, once created */
    uint32_t out;              /* output index of the producer */
    int32_t parent_index;      /* a subgraph Data: the parent's input it reads; else -1 */
    int32_t init;              /* an initializer: its index in the graph; else -1 */
    bool from_record;          /* its desc came whole from a graphmem record */
    const Onnx__ValueInfoProto *vi;   /* what the file declares, or NULL */
    const Onnx__AttributeProto *overlay; /* graphmem.output.<k> of its producer, or NULL */
} gm_onnx_rtensor;

/* Shape facts of a value, kept only for plain files (graphmem's own files say everything). */
typedef struct gm_onnx_facts {
    gm_onnx_info decl; /* what the file declares */
    gm_onnx_info info; /* what inference found, merged with decl */
} gm_onnx_facts;

/* The control flow a node is: GM_ONNX_CF_SCAN8 is Scan before opset 9, whose input 0 is
 * sequence_lens (body input k is parent input k + 1) and whose values have a batch axis 0. */
typedef enum gm_onnx_cf {
    GM_ONNX_CF_NONE,
    GM_ONNX_CF_IF,
    GM_ONNX_CF_LOOP,
    GM_ONNX_CF_SCAN,
    GM_ONNX_CF_SCAN8,
    GM_ONNX_CF_OTHER
} gm_onnx_cf;

struct gm_onnx_rgraph;

/* One ONNX node and the IR node made from it. */
typedef struct gm_onnx_rnode {
    const Onnx__NodeProto *np;
    gm_node *node;
    int32_t *in, *out;         /* tensor indices of the IR inputs (-1 unconnected) and outputs */
    uint32_t n_in, n_out;
    uint32_t n_onnx_in;        /* inputs before the captured outer values */
    struct gm_onnx_rgraph **sub;
    uint32_t n_sub;
    gm_onnx_cf cf;
} gm_onnx_rnode;

/* Outer values a control-flow node's bodies read: they become its extra inputs. */
typedef struct gm_onnx_capture {
    const char **names;
    size_t n, cap;
    uint32_t base;             /* parent input index of the first */
} gm_onnx_capture;

typedef struct gm_onnx_rgraph {
    const Onnx__GraphProto *gp;
    gm_graph *g;
    struct gm_onnx_rgraph *outer;
    gm_onnx_capture *cap;      /* the owning node's captures; NULL for the root */
    gm_onnx_capture own_cap;   /* scratch for the node being built here (one at a time) */
    gm_onnx_rtensor *t;
    gm_onnx_facts *facts;      /* parallel to t; NULL when reading graphmem's own file */
    size_t nt, capt, capf;
    gm_strmap map;             /* value name -> tensor index + 1 */
    gm_onnx_rnode *nodes;
    size_t nn;
    int32_t *outputs;          /* tensor index of each graph output (-1: "") */
    size_t n_outputs;
} gm_onnx_rgraph;

/* Shape inference over a built graph and its bodies (onnx_read_infer.c); false: out of memory. */
bool gm_onnx_infer_graph(gm_onnx_rgraph *rg);
/* The declared type of a value (dims fixes applied): dtype and shape. false: an element type
 * graphmem does not know (*bad_type receives it). */
bool gm_onnx_decl_from_vi(const Onnx__ValueInfoProto *vi, const char *const *dims, gm_onnx_info *out,
                          int32_t *bad_type);

/* The reader's state over one model. */
typedef struct gm_onnx_reader {
    gm_model *m;
    const char *src;
    gm_error *err;
    bool faithful;
    int64_t opset;        /* of the default domain (INT64_MAX when the file names none) */
    const char *const *dims;
    gm_strmap used;       /* node names taken (keys owned by `names`) */
    gm_strmap onnx_names; /* every non-empty ONNX node name -> count (borrowed keys) */
    gm_strmap reserved;   /* graph input and initializer names (borrowed keys) */
    gm_strmap type_next;  /* op type -> next k of "<type>_<k>" (borrowed keys) */
    char **names;
    size_t n_names, cap_names;
    char **values;        /* value names copied out of STRINGS attributes (bytes, no NUL) */
    size_t n_values, cap_values;
    gm_onnx_rgraph **graphs;
    size_t ng, capg;
} gm_onnx_reader;

/* "<source>: <message>" into the reader's error; returns code. */
gm_status gm_onnx_reader_fail(gm_onnx_reader *r, gm_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Takes ownership of a malloc'ed node name and marks it used; NULL (s freed) when out of memory. */
const char *gm_onnx_reader_own_name(gm_onnx_reader *r, char *s);

/* onnx_read_attrs.c: attributes and graphmem's records. */
bool gm_onnx_has_prefix(const char *s, const char *prefix);
/* A plain ONNX attribute as a graphmem attribute `name` (TENSOR, GRAPH and rarer kinds skipped). */
gm_status gm_onnx_convert_attr(gm_onnx_reader *r, gm_attr **list, const char *name, const Onnx__AttributeProto *a);
/* "graphmem.attr.<name>" of a node graphmem wrote: the typed value into the node's attributes. */
gm_status gm_onnx_decode_attr_value(gm_onnx_reader *r, gm_node *n, const Onnx__AttributeProto *a);
/* A graphmem desc text (graphmem.output.<k>) onto d. */
gm_status gm_onnx_decode_attr_desc(gm_onnx_reader *r, const gm_node *n, const Onnx__AttributeProto *a,
                                   gm_tensor_desc *d);
/* The other graphmem.* attributes of a node graphmem wrote, once its inputs and outputs exist. */
gm_status gm_onnx_apply_meta_attrs(gm_onnx_reader *r, gm_onnx_rgraph *rg, gm_onnx_rnode *rn);
/* The record in a doc_string (*has false when there is none or the file is not graphmem's). */
gm_status gm_onnx_parse_record(gm_onnx_reader *r, const char *doc, const char *what, gm_onnx_record *rec,
                               bool *has);
/* A node from a record: everything but its data inputs; consumes the record's attrs and descs. */
gm_node *gm_onnx_node_from_record(gm_onnx_reader *r, gm_onnx_rgraph *rg, gm_onnx_record *rec, gm_status *st);
/* Input descs and names of a record node, once its inputs exist. */
gm_status gm_onnx_record_inputs(gm_onnx_reader *r, gm_onnx_rgraph *rg, gm_node *n, gm_onnx_record *rec);

/* onnx_read_scope.c: names and values. */
/* A node name: `base` itself when free (value_name: a Data/Const named after its value, or a
 * kept ONNX name, needs only to be unused; a made-up name must also not be an ONNX node or value
 * name, which keep priority), else "<base>_<n>" clashing with nothing. */
const char *gm_onnx_take_name(gm_onnx_reader *r, const char *base, bool value_name);
/* "<type>_<k>" with the next free k for that type. */
const char *gm_onnx_type_name(gm_onnx_reader *r, const char *type);
/* Counts the ONNX node names and reserves the value names of the whole model (plain files). */
gm_status gm_onnx_count_names(gm_onnx_reader *r, const Onnx__GraphProto *gp);
/* Every name of `dims` must be a symbolic dim (dim_param) somewhere in the model: a misspelt
 * one is an error naming those it has. Those of the root's inputs that `dims` lacks go to
 * gm_model_set_unfixed_dims. */
gm_status gm_onnx_check_dim_names(gm_onnx_reader *r, const Onnx__GraphProto *gp);
/* model_io.c: each of `dims` is NAME=VALUE with a whole VALUE >= 0 (the one wording of that
 * mistake, for every reader and format). */
gm_status gm_io_check_dims(const char *source, const char *const *dims, gm_error *err);
/* The desc of a value exactly as declared: no rank limit, no shape = ndims -1. */
gm_status gm_onnx_desc_from_vi(gm_onnx_reader *r, const Onnx__ValueInfoProto *vi, gm_tensor_desc *d);
/* A new value of rg (name NULL: an unnamed output); -1 and *st set on failure. */
int32_t gm_onnx_add_tensor(gm_onnx_reader *r, gm_onnx_rgraph *rg, const char *name, const char *producer,
                           uint32_t out, gm_status *st);
/* Records what the file declares for value idx. */
gm_status gm_onnx_declare(gm_onnx_reader *r, gm_onnx_rgraph *rg, int32_t idx, const Onnx__ValueInfoProto *vi);
/* The local value of a name, capturing an outer one into this body when needed; -1 with *st
 * unchanged: no such value. */
int32_t gm_onnx_resolve(gm_onnx_reader *r, gm_onnx_rgraph *rg, const char *name, gm_status *st);

#endif
