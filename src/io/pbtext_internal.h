/*
 * pbtext_internal.h — what the text-format parser (pbtext.c) and printer (pbtext_print.c)
 * share: a growable byte buffer, member addressing, and element sizes of repeated fields.
 */
#ifndef GM_PBTEXT_INTERNAL_H
#define GM_PBTEXT_INTERNAL_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <string.h>

#include "util/alloc.h"

/* Bytes of a member of `msg` at `off`. */
#define MEMBER(msg, off) ((void *)((char *)(msg) + (off)))
#define CMEMBER(msg, off) ((const void *)((const char *)(msg) + (off)))

typedef struct sbuf {
    char *v;
    size_t n, cap;
} sbuf;

/* Appends n bytes, keeping the buffer NUL-terminated; -1 when out of memory. */
static inline int sbuf_put(sbuf *b, const char *s, size_t n)
{
    if (gm_grow((void **)&b->v, 1, b->n + n + 1, &b->cap)) return -1;
    memcpy(b->v + b->n, s, n);
    b->n += n;
    b->v[b->n] = '\0';
    return 0;
}

/* Bytes of one element of field f (a repeated field's array stride). */
static inline size_t elem_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        return 8;
    case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
    case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    }
    return 8;
}

#endif
