/*
 * pbtext.h — protobuf text format (the format of GE's ge_proto_*.txt dumps) for any message
 * type, driven by protobuf-c descriptors, so one parser and one printer serve every .proto the
 * build compiles.
 *
 * Parsing builds the message with protobuf-c's own layout (descriptor->fields: offset,
 * quantifier_offset, label, type) from the library's allocator, whose blocks are plain
 * malloc/realloc blocks, so protobuf_c_message_free_unpacked(msg, NULL) frees everything.
 * The message stays consistent while it is built, so a failed parse frees it the same way.
 *
 * Accepted: `field: value`, `field { ... }` / `field < ... >` (the ':' optional before a
 * message), repeated fields as repeated occurrences or `[a, b]` lists, every scalar type (bool as
 * true/false/True/False/t/f/1/0, floats with inf/nan and an f suffix, integers in decimal, hex and
 * octal), enums by name or number, strings with C escapes and adjacent-string concatenation,
 * map fields as `key`/`value` entries, oneofs, `#` comments, optional ',' or ';' after a field.
 * Rejected with "<source>:<line>:<col>: ...": unknown fields (naming the message type),
 * extension or Any fields (`[...]`), a non-repeated field given twice, a second member of a oneof,
 * type mismatches, unknown enum names, numbers out of range, strings with bad escapes, string
 * fields that are not UTF-8 or hold a NUL, NUL bytes in the text, messages nested deeper than
 * GM_PBTEXT_MAX_DEPTH. Floats a little above FLT_MAX round to it, as in IEEE 754.
 */
#ifndef GM_PBTEXT_H
#define GM_PBTEXT_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graphmem/graph.h"

/* Deepest message nesting accepted (the top-level message is depth 0), like protobuf's own
 * default recursion limit: bounds the parser's recursion on hostile input. */
#define GM_PBTEXT_MAX_DEPTH 100

/* Where a parsed field occurrence starts in the text, so that a reader can name the line of a
 * problem it finds only after parsing (an input naming an unknown op). */
typedef struct gm_pbtext_pos {
    const void *msg; /* the message holding the field */
    uint32_t field;  /* field number; 0 = the message itself (where the field holding it starts) */
    uint32_t index;  /* element index of a repeated field, else 0 */
    size_t offset;   /* byte offset in the text */
} gm_pbtext_pos;

typedef struct gm_pbtext_posmap {
    gm_pbtext_pos *v;
    size_t n, cap;
} gm_pbtext_posmap;

/* Parses text[0..len) as a message of type `desc`. `source` names the text in messages. When
 * `pos` is not NULL it receives a position for every field occurrence (free it with
 * gm_pbtext_posmap_free, also after a failure). On success *out is the message (free it with
 * protobuf_c_message_free_unpacked(*out, NULL)); on failure *out is NULL and err says why:
 * GM_ERR_INPUT with "<source>:<line>:<col>: ...", or GM_ERR_NOMEM. */
gm_status gm_pbtext_parse(const ProtobufCMessageDescriptor *desc, const char *text, size_t len,
                          const char *source, gm_pbtext_posmap *pos, ProtobufCMessage **out, gm_error *err);

/* The offset recorded for (msg, field, index); false when none was (a field left at its
 * default, a message built in memory). Lookups scan: they are for error paths. */
bool gm_pbtext_pos_find(const gm_pbtext_posmap *pm, const void *msg, uint32_t field, uint32_t index,
                        size_t *offset);
void gm_pbtext_posmap_free(gm_pbtext_posmap *pm);

/* 1-based line and column of a byte offset of the parsed text, as the parser reports them. */
void gm_pbtext_line_col(const char *text, size_t len, size_t offset, size_t *line, size_t *col);

/* Prints msg in text format: fields in field-number order (which in ge_ir.proto is also the
 * declaration order GE's own dumps follow), two spaces of indent per level,
 * `name: value` for scalars, `name {` ... `}` for messages, one line per repeated element,
 * proto3 fields at their default omitted (a set oneof member is always printed), strings
 * escaped. *text is malloc'ed and NUL-terminated; *len excludes the NUL. */
gm_status gm_pbtext_print(const ProtobufCMessage *msg, char **text, size_t *len, gm_error *err);

/* Calls visit on msg (depth 0) and on every message below it, parents first (of a oneof, only
 * the member that is set), and stops at the first status visit returns that is not GM_OK. The
 * walk recurses as deep as the messages go: a visitor that refuses a depth bounds it. */
typedef gm_status (*gm_pb_visit)(ProtobufCMessage *msg, int depth, void *ctx);
gm_status gm_pb_walk(ProtobufCMessage *msg, gm_pb_visit visit, void *ctx);

#endif
