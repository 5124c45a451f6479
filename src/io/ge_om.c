/*
 * ge_om.c — GE's offline models (.om, what ATC writes): the container, then the ModelDef
 * inside it, read by the same code as the text dumps (ge_read.c).
 *
 * The container, as the public loaders read it (little-endian):
 *  - a 256-byte header: magic "IMOD" (0x444F4D49) at 0, the header's size at 4, the format
 *    version at 8, a 64-byte checksum, the length of what follows at 76, is_encrypt at 80, the
 *    model name (32 bytes, NUL-padded) at 84, ...;
 *  - right after it the partition table: a count, then per partition its type, offset and size,
 *    as 32-bit fields (count 4 bytes, entries 12) or, in models too big for that, 64-bit ones
 *    (count 8 bytes, entries 24). The offsets count from the end of the table;
 *  - the partitions. Type 0 (MODEL_DEF) is the binary ge.proto.ModelDef; the others (weights,
 *    task info, kernels, ...) say nothing about the graph and are not read.
 * Which table width a file has is not written anywhere: a reading is taken when every partition
 * it describes lies inside the file and its MODEL_DEF unpacks, the 32-bit one first, as public
 * loaders do (they try one, then the other).
 *
 * Refused with exit 2 and the reason: a file too short for its header or table, a partition
 * beyond the end of the file, an encrypted model, no MODEL_DEF partition (a heterogeneous
 * model that holds only submodels), a MODEL_DEF that is no ModelDef. Offline models usually
 * compress their attribute names; ge_names.c gives them back.
 */
#include <stdint.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/ge_internal.h"
#include "util/alloc.h"

#define OM_HEADER_SIZE 256u
#define OM_MAGIC 0x444F4D49u
#define OM_MAX_PARTITIONS 1024u /* far more than the dozen types GE has */

enum { OM_MODEL_DEF = 0 };

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

typedef struct om_part {
    uint64_t type, offset, size;
} om_part;

typedef enum { TABLE_BAD, TABLE_NO_MODEL_DEF, TABLE_OK } table_fit;

/* The table at `at` read with 32-bit (wide = false) or 64-bit fields: whether it fits the
 * file with every partition inside it, and holds a MODEL_DEF that is not empty (a 64-bit table
 * read as 32-bit fields can fit by chance, with a MODEL_DEF of size 0). */
static table_fit read_table(const unsigned char *p, size_t len, size_t at, bool wide, om_part *model_def,
                            uint64_t *count)
{
    size_t head = wide ? 8 : 4, entry = wide ? 24 : 12;
    if (len < at || len - at < head) return TABLE_BAD;
    uint64_t n = wide ? le64(p + at) : le32(p + at);
    *count = n;
    if (n == 0 || n > OM_MAX_PARTITIONS || (len - at - head) / entry < n) return TABLE_BAD;
    size_t data = at + head + (size_t)n * entry;
    memset(model_def, 0, sizeof *model_def);
    for (uint64_t i = 0; i < n; i++) {
        const unsigned char *e = p + at + head + i * entry;
        om_part part = wide ? (om_part){le64(e), le64(e + 8), le64(e + 16)}
                            : (om_part){le32(e), le32(e + 4), le32(e + 8)};
        if (part.offset > len - data || part.size > len - data - part.offset) return TABLE_BAD;
        if (part.type == OM_MODEL_DEF && model_def->size == 0) {
            *model_def = part;
            model_def->offset += data;
        }
    }
    return model_def->size ? TABLE_OK : TABLE_NO_MODEL_DEF;
}

gm_status gm_model_read_ge_om(const void *bytes, size_t len, const char *source, gm_model **out, gm_error *err)
{
    *out = NULL;
    if (!source) source = "";
    const unsigned char *p = bytes;
    if (len < OM_HEADER_SIZE || le32(p) != OM_MAGIC)
        return gm_error_set(err, GM_ERR_INPUT, "%s: not a GE offline model (%s)", source,
                            len < OM_HEADER_SIZE ? "shorter than the 256-byte header" : "no IMOD magic");
    uint32_t head = le32(p + 4);
    if (head < OM_HEADER_SIZE || head > len)
        return gm_error_set(err, GM_ERR_INPUT, "%s: the header says it is %u bytes long (256 or more, within the file)",
                            source, head);
    if (p[80] != 0)
        return gm_error_set(err, GM_ERR_INPUT, "%s: the offline model is encrypted; graphmem reads plain ones only",
                            source);
    om_part narrow_md, wide_md;
    uint64_t n32 = 0, n64 = 0;
    table_fit narrow = read_table(p, len, head, false, &narrow_md, &n32);
    table_fit wide = read_table(p, len, head, true, &wide_md, &n64);
    if (narrow == TABLE_BAD && wide == TABLE_BAD)
        return gm_error_set(err, GM_ERR_INPUT,
                            "%s: offset %u: the partition table (%llu partitions as 32-bit entries) runs past the end "
                            "of the file (%zu bytes), and does not read as 64-bit entries either",
                            source, head, (unsigned long long)n32, len);
    if (narrow != TABLE_OK && wide != TABLE_OK)
        return gm_error_set(err, GM_ERR_INPUT,
                            "%s: the offline model has no MODEL_DEF partition (a model of submodels only is not "
                            "supported)",
                            source);
    /* Both widths can fit one file by chance: the one whose MODEL_DEF is a ModelDef wins. */
    GeModelDef *md = NULL;
    const om_part *md_part = narrow == TABLE_OK ? &narrow_md : &wide_md;
    if (narrow == TABLE_OK) md = ge__proto__model_def__unpack(NULL, (size_t)narrow_md.size, p + narrow_md.offset);
    if (!md && wide == TABLE_OK) {
        md = ge__proto__model_def__unpack(NULL, (size_t)wide_md.size, p + wide_md.offset);
        if (md || narrow != TABLE_OK) md_part = &wide_md;
    }
    if (!md)
        return gm_error_set(err, GM_ERR_INPUT, "%s: offset %llu: the MODEL_DEF partition (%llu bytes) is not a "
                            "ge.proto.ModelDef",
                            source, (unsigned long long)md_part->offset, (unsigned long long)md_part->size);
    gm_status st = gm_ge_names_decode(md, source, NULL, 0, NULL, err);
    /* An unnamed ModelDef takes the header's name (NUL-padded, at most 32 bytes). */
    char name[33] = "";
    memcpy(name, p + 84, 32);
    if (st == GM_OK && (!md->name || !*md->name) && *name) {
        char *copy = gm_strdup(name);
        if (!copy) st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", source);
        else {
            if (md->name != protobuf_c_empty_string) gm_free(md->name);
            md->name = copy;
        }
    }
    if (st == GM_OK) st = gm_ge_read_model_def(md, source, NULL, 0, NULL, out, err);
    ge__proto__model_def__free_unpacked(md, NULL);
    return st;
}
