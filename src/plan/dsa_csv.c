/*
 * dsa_csv.c — MiniMalloc's CSV format for offset-assignment instances: a header row naming the
 * columns (id, lower, upper, size; optional alignment and offset), then one buffer per row.
 * Every error names file:line so a bad row in a 60,000-row trace can be found.
 *
 * The buffers and the copies of their id strings live in one allocation, so one gm_dsa_free
 * releases everything and a half-read file never leaks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/dsa.h"
#include "graphmem/io.h"
#include "util/alloc.h"

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_ALIGN, COL_OFFSET, COL_COUNT };
static const char *const col_names[COL_COUNT] = {"id", "lower", "upper", "size", "alignment",
                                                 "offset"};

/* Trims spaces and a trailing CR in place; returns the new start. */
static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    *end = '\0';
    return s;
}

static bool parse_i64(const char *s, int64_t *v)
{
    if (!*s) return false;
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (errno || *e) return false;
    *v = (int64_t)x;
    return true;
}

/* Splits line (NUL-terminated, modified) at commas into at most cap fields; returns the count. */
static size_t split(char *line, char **fields, size_t cap)
{
    size_t k = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        char *end = c ? c : p + strlen(p);
        if (k < cap) fields[k] = trim(p, end);
        k++;
        if (!c) break;
        p = c + 1;
    }
    return k;
}

gm_status gm_dsa_parse_csv(const char *text, size_t len, const char *what, gm_dsa_buffer **out,
                           size_t *n, gm_error *err)
{
    *out = NULL;
    *n = 0;
    size_t rows = 0;
    for (size_t i = 0; i < len; i++) rows += text[i] == '\n';
    rows++;
    /* One block: the buffer array, then a copy of the text whose id fields become the names. */
    size_t head = rows * sizeof(gm_dsa_buffer);
    char *block = gm_malloc(head + len + 1);
    if (!block) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", what);
    gm_dsa_buffer *b = (gm_dsa_buffer *)(void *)block;
    char *copy = block + head;
    memcpy(copy, text, len);
    copy[len] = '\0';

    int col[COL_COUNT];
    for (int c = 0; c < COL_COUNT; c++) col[c] = -1;
    size_t count = 0, line_no = 0, ncols = 0;
    char *fields[64];
    char *p = copy, *end = copy + len;
    gm_status st = GM_OK;
    while (p < end || line_no == 0) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *le = nl ? nl : end;
        line_no++;
        char *line = trim(p, le);
        p = nl ? nl + 1 : end;
        if (!*line) {
            if (line_no == 1) {
                st = gm_error_set(err, GM_ERR_INPUT, "%s:1: empty file, expected a header", what);
                goto fail;
            }
            if (!nl) break;
            continue;
        }
        if (ncols == 0) { /* the header */
            ncols = split(line, fields, 64);
            if (ncols > 64) {
                st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: too many columns (%zu)", what, line_no, ncols);
                goto fail;
            }
            for (size_t k = 0; k < ncols; k++)
                for (int c = 0; c < COL_COUNT; c++)
                    if (strcmp(fields[k], col_names[c]) == 0 ||
                        (c == COL_ALIGN && strcmp(fields[k], "align") == 0)) {
                        if (col[c] >= 0) {
                            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: column '%s' given twice", what,
                                              line_no, col_names[c]);
                            goto fail;
                        }
                        col[c] = (int)k;
                    }
            for (int c = 0; c <= COL_SIZE; c++)
                if (col[c] < 0) {
                    st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: header lacks column '%s'", what,
                                      line_no, col_names[c]);
                    goto fail;
                }
            continue;
        }
        size_t k = split(line, fields, 64);
        if (k != ncols) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: %zu fields, the header has %zu", what,
                              line_no, k, ncols);
            goto fail;
        }
        gm_dsa_buffer *x = &b[count];
        int64_t v[COL_COUNT] = {0, 0, 0, 0, 1, -1};
        for (int c = COL_LOWER; c < COL_COUNT; c++) {
            if (col[c] < 0) continue;
            if (!parse_i64(fields[col[c]], &v[c])) {
                st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: %s '%s' is not an integer", what,
                                  line_no, col_names[c], fields[col[c]]);
                goto fail;
            }
        }
        x->name = fields[col[COL_ID]];
        if (!*x->name) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: empty id", what, line_no);
            goto fail;
        }
        if (!parse_i64(x->name, &x->id)) x->id = (int64_t)count;
        x->lower = v[COL_LOWER];
        x->upper = v[COL_UPPER];
        x->size = v[COL_SIZE];
        x->align = v[COL_ALIGN];
        x->offset = v[COL_OFFSET];
        if (x->lower < 0 || x->upper <= x->lower) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: buffer %s: lifetime [%" PRId64 ", %" PRId64
                              ") is empty or negative", what, line_no, x->name, x->lower, x->upper);
            goto fail;
        }
        /* The cap keeps every sum of sizes (heights, LOAD) far from int64 overflow. */
        if (x->size <= 0 || x->size > ((int64_t)1 << 46)) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: buffer %s: size %" PRId64 " out of range (1..2^46)",
                              what, line_no, x->name, x->size);
            goto fail;
        }
        if (x->align <= 0 || x->align > ((int64_t)1 << 40)) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s:%zu: buffer %s: alignment %" PRId64 " must be positive",
                              what, line_no, x->name, x->align);
            goto fail;
        }
        count++;
    }
    if (ncols == 0) {
        st = gm_error_set(err, GM_ERR_INPUT, "%s:1: empty file, expected a header", what);
        goto fail;
    }
    *out = b;
    *n = count;
    return GM_OK;
fail:
    gm_free(block);
    return st;
}

gm_status gm_dsa_read_csv(const char *path, gm_dsa_buffer **out, size_t *n, gm_error *err)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return gm_error_set(err, GM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    gm_status st = GM_OK;
    for (;;) {
        if (gm_grow((void **)&text, 1, len + 65536, &cap)) {
            st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        st = gm_error_set(err, GM_ERR_IO, "%s: read error", path);
        goto done;
    }
    st = gm_dsa_parse_csv(text, len, path, out, n, err);
done:
    gm_free(text);
    fclose(f);
    return st;
}

void gm_dsa_free(gm_dsa_buffer *b) { gm_free(b); }

gm_status gm_dsa_csv_text(const gm_dsa_buffer *b, size_t n, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    *len = 0;
    bool aligned = false;
    for (size_t i = 0; i < n; i++) aligned |= b[i].align > 1;
    FILE *f = open_memstream(text, len);
    if (!f) return gm_error_set(err, GM_ERR_NOMEM, "out of memory writing the offsets");
    fprintf(f, aligned ? "id,lower,upper,size,alignment,offset\n" : "id,lower,upper,size,offset\n");
    for (size_t i = 0; i < n; i++) {
        const gm_dsa_buffer *x = &b[i];
        if (x->name) fputs(x->name, f);
        else fprintf(f, "%" PRId64, x->id);
        fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64, x->lower, x->upper, x->size);
        if (aligned) fprintf(f, ",%" PRId64, x->align);
        fprintf(f, ",%" PRId64 "\n", x->offset);
    }
    bool bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        free(*text);
        *text = NULL;
        *len = 0;
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory writing the offsets");
    }
    return GM_OK;
}

gm_status gm_dsa_write_csv(const char *path, const gm_dsa_buffer *b, size_t n, gm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    gm_status st = gm_dsa_csv_text(b, n, &text, &len, err);
    if (st == GM_OK) st = gm_write_file(path, text, len, err);
    free(text);
    return st;
}
