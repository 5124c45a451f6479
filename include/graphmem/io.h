/*
 * graphmem/io.h — reading and writing models. Readers detect the format from the content
 * (a '{' first: JSON; 'graph {' or another text-format field: GE dump; else protobuf: ONNX),
 * build the model and finalize it (validation + topological order), so a model that comes
 * back from a reader is valid. Errors name the file and the place.
 *
 * Readers: on GM_OK *out is a new model, the caller's, freed with gm_model_free; on failure
 * *out is left NULL and nothing leaks. Malformed or invalid input is GM_ERR_INPUT, an unreadable
 * file GM_ERR_IO. Writers only read the model. Every function here is reentrant: different
 * models may be read and written on different threads at once.
 */
#ifndef GRAPHMEM_IO_H
#define GRAPHMEM_IO_H

#include "graphmem/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Model file formats. */
typedef enum gm_format {
    GM_FORMAT_UNKNOWN = 0,
    GM_FORMAT_JSON,    /* docs/graph-format.md */
    GM_FORMAT_ONNX,    /* ONNX ModelProto (protobuf) */
    GM_FORMAT_GE_TEXT, /* GE text dump: text-format ge.proto.ModelDef */
    GM_FORMAT_GE_OM,   /* GE offline model (.om): read, not written */
} gm_format;

/* "json", "onnx", "ge", "om", or "unknown" (static strings). */
const char *gm_format_name(gm_format f);
/* From the first bytes (skipping white space and a UTF-8 BOM). */
gm_format gm_format_detect(const void *data, size_t len);
/* From the file name: .json, .onnx, .txt / .pbtxt, .om. GM_FORMAT_UNKNOWN otherwise. */
gm_format gm_format_from_path(const char *path);
/* "json", "onnx", "ge" / "txt", "om" (for --to). */
gm_format gm_format_from_name(const char *name);

/* Reads a whole file; *data is NUL-terminated (len excludes the NUL); free with free(). */
gm_status gm_read_file(const char *path, char **data, size_t *len, gm_error *err);
/* Writes a whole file safely: to a temporary file beside it, then renamed over the target, so
 * a failure never leaves the user's file half-written. */
gm_status gm_write_file(const char *path, const void *data, size_t len, gm_error *err);
/* Files written together, all or none. gm_files_add writes each beside its target under a
 * temporary name (flushed to disk; a missing directory or a read-only one fails here, naming
 * the path), gm_files_commit renames them all into place, and gm_files_free removes what was
 * not committed. A command stages each output as it makes it and commits once everything has
 * succeeded, so a command that fails writes nothing. Devices and pipes (/dev/stdout) cannot be
 * renamed over: their bytes are kept and written at the commit. */
typedef struct gm_files gm_files;
gm_files *gm_files_new(void); /* NULL when out of memory */
gm_status gm_files_add(gm_files *fs, const char *path, const void *data, size_t len, gm_error *err);
gm_status gm_files_commit(gm_files *fs, gm_error *err);
/* Forgets the file added last, removing what it staged (a staged output withdrawn). */
void gm_files_drop_last(gm_files *fs);
void gm_files_free(gm_files *fs);

/* Reads, detects, parses and finalizes. */
gm_status gm_model_read_file(const char *path, gm_model **out, gm_error *err);
/* The same with ONNX symbolic dims fixed by name: `dims` holds "NAME=VALUE" strings,
 * NULL-terminated, or is NULL (other formats have no symbolic dims and ignore it). */
gm_status gm_model_read_file_dims(const char *path, const char *const *dims, gm_model **out, gm_error *err);
/* Parses a buffer in a known or detected (GM_FORMAT_UNKNOWN) format; `source` names it in
 * error messages. */
gm_status gm_model_read_buffer(const char *data, size_t len, gm_format fmt, const char *source,
                               gm_model **out, gm_error *err);
/* The JSON reader (docs/graph-format.md). */
gm_status gm_model_read_json(const char *text, size_t len, const char *source, gm_model **out,
                             gm_error *err);
/* The ONNX reader (src/io/onnx_read.c): ModelProto bytes; If/Loop/Scan bodies become
 * subgraphs; external data is never loaded. `dims` fixes symbolic dims by name
 * ("batch=1"), NULL-terminated, or NULL. */
gm_status gm_model_read_onnx(const void *data, size_t len, const char *source, const char *const *dims,
                             gm_model **out, gm_error *err);
/* The GE text-dump reader (src/io/ge_read.c): text-format ge.proto.ModelDef. */
gm_status gm_model_read_ge_text(const char *text, size_t len, const char *source, gm_model **out,
                                gm_error *err);
/* The GE offline-model reader (src/io/ge_om.c): the .om container, its MODEL_DEF partition
 * (a binary ge.proto.ModelDef), compressed attribute names given back. */
gm_status gm_model_read_ge_om(const void *data, size_t len, const char *source, gm_model **out, gm_error *err);
/* Writers: *data is malloc'ed, the caller's to free(). GM_ERR_INPUT when the model has
 * something the format cannot hold (the message says what). */
gm_status gm_model_write_onnx(const gm_model *m, void **data, size_t *len, gm_error *err);
gm_status gm_model_write_ge_text(const gm_model *m, char **text, size_t *len, gm_error *err);

/* The embedded example of docs/cli.md (examples/train_step.json compiled in). */
gm_status gm_model_read_embedded_example(gm_model **out, gm_error *err);
/* Source name used for the embedded example in messages. */
#define GM_EMBEDDED_EXAMPLE_NAME "<embedded example>"

/* Serializes in `fmt` (GM_FORMAT_UNKNOWN: from the path). */
gm_status gm_model_write_file(const gm_model *m, const char *path, gm_format fmt, gm_error *err);
/* The bytes gm_model_write_file would write for fmt (GM_FORMAT_UNKNOWN: JSON); free() them. */
gm_status gm_model_write_buffer(const gm_model *m, gm_format fmt, void **data, size_t *len, gm_error *err);
/* JSON text, nodes of each graph in planning (topological) order; *text is malloc'ed. */
gm_status gm_model_write_json(const gm_model *m, char **text, size_t *len, gm_error *err);

#ifdef __cplusplus
}
#endif
#endif
