/*
 * ge_internal.h — what GE's readers (ge_read.c for text dumps, ge_om.c for offline models) and
 * the writer (ge_write.c) share:
 *  - the arena the writer builds its message trees in (ge_build.c);
 *  - the writer's AttrDef and TensorDescriptor for an IR attribute or desc (ge_build.c), which
 *    the reader also uses to tell which attributes would not come back as they were read;
 *  - the residual (ge_rest.c): what a GE message said that the IR does not hold, kept packed on
 *    the IR object it was read into and merged back by the writer, so that GE -> graphmem -> GE
 *    gives the file back;
 *  - GE's compressed attribute names (ge_names.c).
 */
#ifndef GM_IO_GE_INTERNAL_H
#define GM_IO_GE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ge_ir.pb-c.h"
#include "graphmem/graph.h"
#include "io/pbtext.h"

typedef Ge__Proto__ModelDef GeModelDef;
typedef Ge__Proto__GraphDef GeGraphDef;
typedef Ge__Proto__OpDef GeOpDef;
typedef Ge__Proto__TensorDescriptor GeTensorDesc;
typedef Ge__Proto__AttrDef GeAttrDef;
typedef Ge__Proto__AttrEntry GeAttrEntry;

/* ---- the arena (ge_build.c) ----------------------------------------------------------------
 * Message trees built to be printed live in one arena, borrow the IR's strings and arrays, and
 * are freed in one go with the messages unpacked from residuals. */
typedef struct gm_ge_ablock gm_ge_ablock;
typedef struct gm_ge_arena {
    gm_ge_ablock *blocks;
    ProtobufCMessage **unpacked; /* residuals unpacked for the merge, freed with the arena */
    size_t n_unpacked, cap_unpacked;
    bool oom; /* an allocation failed: the tree is incomplete */
    bool bad; /* a residual did not unpack: `bad_what` names it */
    char bad_what[160];
} gm_ge_arena;

/* Zeroed memory that lives until gm_ge_arena_free; NULL (and a->oom) when out of memory. */
void *gm_ge_alloc(gm_ge_arena *a, size_t n);
void *gm_ge_new(gm_ge_arena *a, const ProtobufCMessageDescriptor *d);
void *gm_ge_array(gm_ge_arena *a, size_t n, size_t elem); /* NULL when n is 0 */
void gm_ge_arena_free(gm_ge_arena *a);

/* ---- the writer's messages (ge_build.c) ---------------------------------------------------- */

/* An IR attribute as the writer prints it. */
GeAttrDef *gm_ge_build_attr(gm_ge_arena *a, const gm_attr *at);
/* A desc as the writer prints it, with its residual merged; name may be NULL. */
GeTensorDesc *gm_ge_build_desc(gm_ge_arena *a, const gm_tensor_desc *d, const char *name);
/* The entries of an attribute list for which keep() holds (all when NULL; the residual and
 * ONNX's kept protobuf always left out), then one extra entry when extra_key is not NULL. */
GeAttrEntry **gm_ge_build_attr_map(gm_ge_arena *a, const gm_attr *list, bool (*keep)(const gm_attr *),
                                   const char *extra_key, GeAttrDef *extra, size_t *n);
GeAttrEntry *gm_ge_entry(gm_ge_arena *a, const char *key, GeAttrDef *value);

/* ---- the residual (ge_rest.c) ---------------------------------------------------------------
 * On the reader's side: the fields of a message that say nothing the IR holds (an op's id and
 * has_out_attr, src_name/dst_name, a desc's device_type and real_dim_cnt, a graph's input and
 * output lists, the model's version and non-option attributes, attr groups), the attributes whose
 * IR form would not print back the same AttrDef, and an op's input_desc entries that describe no
 * input. They are packed into a message of the same type, kept in the bytes attribute
 * GM_ATTR_GE_REST of the node, desc or graph (GM_ATTR_GE_MODEL_REST of the root graph for the
 * model). The residual never holds what planning reads: edges, shapes, dtypes, sizes that were
 * given, streams, offsets and the attributes it can hold stay the IR's, so a pass's changes
 * always print. */

/* Packs rest into the bytes attribute `name` of list, even when it holds nothing. */
gm_status gm_ge_rest_keep(gm_attr **list, const char *name, const ProtobufCMessage *rest);
/* Starts the residual of `from` in kept (a message of from's type, initialized here): its owned
 * fields, zero values included, and `attrs` as its attributes (borrowed: kept is packed and
 * dropped before they go). The caller adds what is particular to its type. */
void gm_ge_rest_begin(ProtobufCMessage *kept, const ProtobufCMessage *from, GeAttrEntry **attrs, size_t n);
/* The residual of type d kept in attribute `name` of list, unpacked into the arena; NULL when
 * there is none, or when it does not unpack (a->bad then says so, naming `what`). */
ProtobufCMessage *gm_ge_rest_find(gm_ge_arena *a, const gm_attr *list, const char *name,
                                  const ProtobufCMessageDescriptor *d, const char *what);
/* Merges a residual into a message the writer built: the owned fields, then its attributes
 * (an entry of the residual replaces the built one of the same key). */
void gm_ge_rest_merge(gm_ge_arena *a, ProtobufCMessage *built, const ProtobufCMessage *rest);

/* ---- compressed attribute names (ge_names.c) ----------------------------------------------
 * Offline models may store attribute names as indices into the model attribute attr_name_enum
 * (key = a NUL byte, then the index in base 127, digits + 1), with string values as indices
 * into attr_value_enum where attrs_use_string_value says so. Decodes every key and value in
 * place and drops the tables; pos (may be NULL) locates an entry for messages. */
gm_status gm_ge_names_decode(GeModelDef *md, const char *source, const char *text, size_t len,
                             const gm_pbtext_posmap *pos, gm_error *err);

/* ---- the model reader shared by text dumps and offline models (ge_read.c) ---------------- */

/* A parsed ModelDef into a finalized model; text and pos locate errors when given. */
gm_status gm_ge_read_model_def(const GeModelDef *md, const char *source, const char *text, size_t len,
                               const gm_pbtext_posmap *pos, gm_model **out, gm_error *err);

#endif
