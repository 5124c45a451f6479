/*
 * test_ge_om.c — GE's files in full: a text dump read and written back is the same ModelDef
 * (its residual keeps what the IR does not hold: src/io/ge_rest.c); compressed attribute
 * names (src/io/ge_names.c) in text and binary form; offline models (.om, src/io/ge_om.c)
 * with 32- and 64-bit partition tables, read as the text dumps they were made from; and every
 * way an .om can be broken, refused with the file and the reason.
 *
 * The .om files are built by tests/om_pack.h; the two in tests/data/ge are of them, checked here
 * to be what om_pack makes of their dumps (GM_WRITE_OM=1 rewrites them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "io_test_util.h"
#include "om_pack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ge_ir.pb-c.h"
#include "graphmem/io.h"
#include "io/pbtext.h"
#include "ir/ir.h"

static const char *const k_dumps[] = {"small_all_kinds.txt", "control_flow.txt", "fusion_stage.txt"};

static char *data_file(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/ge/%s", GM_TEST_DATA_DIR, name);
    return slurp(path, len);
}

/* ---- canonical ModelDefs ------------------------------------------------------------------ */

static int cmp_entry(const void *a, const void *b)
{
    const Ge__Proto__AttrEntry *x = *(Ge__Proto__AttrEntry *const *)a, *y = *(Ge__Proto__AttrEntry *const *)b;
    size_t n = x->key.len < y->key.len ? x->key.len : y->key.len;
    int c = n ? memcmp(x->key.data, y->key.data, n) : 0;
    return c ? c : (x->key.len > y->key.len) - (x->key.len < y->key.len);
}

/* Attribute maps have no order: every AttrEntry array sorted by key, at every depth. */
static gm_status sort_attrs(ProtobufCMessage *msg, int depth, void *ctx)
{
    (void)depth, (void)ctx;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label != PROTOBUF_C_LABEL_REPEATED || f->descriptor != &ge__proto__attr_entry__descriptor) continue;
        size_t n = *(size_t *)((char *)msg + f->quantifier_offset);
        void **v = *(void ***)((char *)msg + f->offset);
        if (n > 1) qsort(v, n, sizeof *v, cmp_entry);
    }
    return GM_OK;
}

static void canon(ProtobufCMessage *msg) { gm_pb_walk(msg, sort_attrs, NULL); }

static ProtobufCMessage *parse_ok(const char *text, const char *source)
{
    ProtobufCMessage *msg = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_pbtext_parse(&ge__proto__model_def__descriptor, text, strlen(text), source, NULL, &msg, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    canon(msg);
    return msg;
}

static char *print_ok(const ProtobufCMessage *msg)
{
    char *text = NULL;
    size_t len;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_pbtext_print(msg, &text, &len, &err), GM_OK);
    return text;
}

/* The same ModelDef, attribute order aside: equal packed bytes. */
static void assert_same_model_def(const char *want_text, const char *got_text)
{
    ProtobufCMessage *a = parse_ok(want_text, "want.txt"), *b = parse_ok(got_text, "got.txt");
    size_t na = protobuf_c_message_get_packed_size(a), nb = protobuf_c_message_get_packed_size(b);
    uint8_t *pa = malloc(na + 1), *pb = malloc(nb + 1);
    assert_true(pa && pb);
    protobuf_c_message_pack(a, pa);
    protobuf_c_message_pack(b, pb);
    bool same = na == nb && memcmp(pa, pb, na) == 0;
    if (!same) {
        char *ta = print_ok(a), *tb = print_ok(b);
        /* Whole, in files: cmocka cuts long messages. */
        FILE *f = fopen("ge_om_want.txt", "w"), *g = fopen("ge_om_got.txt", "w");
        if (f) fputs(ta, f), fclose(f);
        if (g) fputs(tb, g), fclose(g);
        print_message("the ModelDefs differ: see ge_om_want.txt and ge_om_got.txt\n");
        free(ta);
        free(tb);
    }
    assert_true(same);
    free(pa);
    free(pb);
    protobuf_c_message_free_unpacked(a, NULL);
    protobuf_c_message_free_unpacked(b, NULL);
}

static char *ge_text_of(const gm_model *m)
{
    char *text = NULL;
    size_t len = 0;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_write_ge_text(m, &text, &len, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    return text;
}

static gm_model *read_buffer_ok(const void *data, size_t len, const char *source)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_buffer(data, len, GM_FORMAT_UNKNOWN, source, &m, &err);
    if (st != GM_OK) print_message("%s\n", err.message);
    assert_int_equal(st, GM_OK);
    return m;
}

/* ---- text dumps ------------------------------------------------------------------------- */

/* dump -> graphmem -> dump: the ModelDef GE wrote, field for field (ids, has_out_attr,
 * device_type, real_dim_cnt, model and graph attributes, func/t/g/expression attributes, the
 * descs of optional inputs left out, sizes of -1). */
static void test_dump_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_dumps / sizeof *k_dumps; i++) {
        size_t len;
        char *text = data_file(k_dumps[i], &len);
        gm_model *m = read_buffer_ok(text, len, k_dumps[i]);
        char *back = ge_text_of(m);
        assert_same_model_def(text, back);
        gm_model_free(m);
        free(back);
        free(text);
    }
}

/* What the residual keeps is no part of the graph: the JSON of a dump holds none of it, and
 * the IR holds none of the attributes of kinds it lacks. */
static void test_residual_stays_out_of_the_graph(void **state)
{
    (void)state;
    size_t len;
    char *text = data_file("small_all_kinds.txt", &len);
    gm_model *m = read_buffer_ok(text, len, "small_all_kinds.txt");
    char *json = write_json_ok(m);
    assert_null(strstr(json, GM_ATTR_GE_REST));
    assert_null(strstr(json, "func_val"));
    assert_null(strstr(json, "memory_size"));
    gm_node *mm = gm_model_find_node(m, "mm");
    assert_non_null(mm);
    assert_null(gm_attr_find(*gm_node_attrs(mm), "func_val"));
    assert_non_null(gm_attr_find(*gm_node_attrs(mm), GM_ATTR_GE_REST));
    /* JSON -> GE: without a residual the writer makes the GE fields up, as before. */
    gm_model *j = read_json_ok(json);
    char *ge = ge_text_of(j);
    assert_non_null(strstr(ge, "has_out_attr: true"));
    assert_null(strstr(ge, "func_val"));
    free(ge);
    gm_model_free(j);
    free(json);
    gm_model_free(m);
    free(text);
}

/* A hand-written residual that is not one: the writer says so instead of printing garbage. */
static void test_bad_residual(void **state)
{
    (void)state;
    const char *json = "{\"graphmem\": 1, \"name\": \"r\", \"graphs\": [{\"name\": \"g\", \"nodes\": [\n"
                       " {\"name\": \"d\", \"type\": \"Data\", \"attrs\": {\"_ge_rest\": \"not a message\"},\n"
                       "  \"outputs\": [{\"dtype\": \"float32\", \"shape\": [2]}]}]}]}";
    gm_model *m = read_json_ok(json);
    char *text = NULL;
    size_t len;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_model_write_ge_text(m, &text, &len, &err), GM_ERR_INPUT);
    assert_null(text);
    assert_non_null(strstr(err.message, "attribute '_ge_rest' of an op is not a packed ge.proto.OpDef"));
    gm_model_free(m);
}

/* ---- compressed names ------------------------------------------------------------------- */

/* A dump whose names are compressed (as `protoc --decode` prints an .om's ModelDef) reads as
 * the plain one: names and string values given back, the tables gone. */
static void test_compressed_names_in_text(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_dumps / sizeof *k_dumps; i++) {
        size_t len;
        char *text = data_file(k_dumps[i], &len);
        ProtobufCMessage *msg = NULL;
        gm_error err;
        gm_error_clear(&err);
        assert_int_equal(gm_pbtext_parse(&ge__proto__model_def__descriptor, text, len, "t", NULL, &msg, &err), GM_OK);
        om_compress((Ge__Proto__ModelDef *)msg);
        char *compressed = print_ok(msg);
        protobuf_c_message_free_unpacked(msg, NULL);
        assert_non_null(strstr(compressed, "key: \"\\000"));
        gm_model *plain = read_buffer_ok(text, len, k_dumps[i]);
        gm_model *dec = read_buffer_ok(compressed, strlen(compressed), k_dumps[i]);
        char *a = write_json_ok(plain), *b = write_json_ok(dec);
        assert_string_equal(a, b);
        char *ga = ge_text_of(plain), *gb = ge_text_of(dec);
        assert_same_model_def(ga, gb);
        assert_null(strstr(gb, "attr_name_enum"));
        free(a);
        free(b);
        free(ga);
        free(gb);
        gm_model_free(plain);
        gm_model_free(dec);
        free(compressed);
        free(text);
    }
}

static void expect_error(const void *data, size_t len, const char *n1, const char *n2)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = gm_model_read_buffer(data, len, GM_FORMAT_UNKNOWN, "bad.om", &m, &err);
    bool ok = st == GM_ERR_INPUT && m == NULL && (!n1 || strstr(err.message, n1)) && (!n2 || strstr(err.message, n2));
    if (!ok) print_message("status %d, message: %s\n", (int)st, err.message);
    assert_true(ok);
}

static void expect_text_error(const char *text, const char *n1, const char *n2)
{
    expect_error(text, strlen(text), n1, n2);
}

static void test_compressed_name_errors(void **state)
{
    (void)state;
    const char *op = "graph { name: \"g\" op { name: \"a\" type: \"Data\" attr { key: \"%s\" value { %s } } } }\n%s";
    char t[1024];
    snprintf(t, sizeof t, op, "\\000\\001", "i: 1", "");
    expect_text_error(t, "bad.om:1:", "no attr_name_enum");
    const char *tables = "attr { key: \"attr_name_enum\" value { list { s: \"index\" s: \"kind\" } } }\n"
                         "attr { key: \"attrs_use_string_value\" value { list { b: false b: true } } }\n"
                         "attr { key: \"attr_value_enum\" value { list { s: \"only\" } } }\n";
    snprintf(t, sizeof t, op, "\\000\\004", "i: 1", tables);
    expect_text_error(t, "compressed attribute name 3", "attr_name_enum (2 names)");
    snprintf(t, sizeof t, op, "\\000\\002", "i: 5", tables);
    expect_text_error(t, "attribute 'kind': string value 5", "attr_value_enum (1 values)");
    snprintf(t, sizeof t, op, "\\000\\200", "i: 1", tables);
    expect_text_error(t, "no compressed name", "byte 1 is 128");
    snprintf(t, sizeof t, op, "a\\000b", "i: 1", tables);
    expect_text_error(t, "bad.om:1:", "an attribute key holds a NUL byte");
    /* The good forms: index 1 with its string value; index 0 written as a lone NUL. */
    snprintf(t, sizeof t, op, "\\000\\002", "list { i: [0, 0] }", tables);
    gm_model *m = read_buffer_ok(t, strlen(t), "ok.txt");
    const gm_attr *a = gm_attr_find(*gm_node_attrs(gm_model_find_node(m, "a")), "kind");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_STRING);
    assert_string_equal(gm_attr_list_string(a, 1), "only");
    gm_model_free(m);
    snprintf(t, sizeof t, op, "\\000", "i: 7", tables);
    m = read_buffer_ok(t, strlen(t), "ok.txt");
    assert_int_equal(gm_attrs_get_int(*gm_node_attrs(gm_model_find_node(m, "a")), "index", -1), 7);
    gm_model_free(m);
}

/* ---- offline models --------------------------------------------------------------------- */

static void test_om_reads_as_its_dump(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_dumps / sizeof *k_dumps; i++) {
        size_t len;
        char *text = data_file(k_dumps[i], &len);
        gm_model *plain = read_buffer_ok(text, len, k_dumps[i]);
        char *want_json = write_json_ok(plain), *want_ge = ge_text_of(plain);
        for (int v = 0; v < 4; v++) {
            uint8_t *om;
            size_t n;
            om_pack(text, v & 1, v & 2, &om, &n);
            assert_int_equal(gm_format_detect(om, n), GM_FORMAT_GE_OM);
            gm_model *m = read_buffer_ok(om, n, "m.om");
            char *json = write_json_ok(m), *ge = ge_text_of(m);
            if (strcmp(json, want_json) != 0) print_message("%s, compressed %d, wide %d\n", k_dumps[i], v & 1, v >> 1);
            assert_string_equal(json, want_json);
            assert_same_model_def(want_ge, ge);
            free(json);
            free(ge);
            gm_model_free(m);
            free(om);
        }
        free(want_json);
        free(want_ge);
        gm_model_free(plain);
        free(text);
    }
}

/* A data file is om_pack's: its provenance checked (GM_WRITE_OM=1 rewrites it); it reads by
 * name and by content. */
static gm_model *check_data_om(const char *dump, const char *om_name, bool compress, bool wide, const char *header)
{
    size_t len, n;
    char *text = data_file(dump, &len);
    uint8_t *om;
    om_pack(text, compress, wide, &om, &n);
    if (header) memcpy(om + 84, header, strlen(header));
    char path[512];
    snprintf(path, sizeof path, "%s/ge/%s", GM_TEST_DATA_DIR, om_name);
    const char *w = getenv("GM_WRITE_OM");
    if (w && *w == '1') {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(om, 1, n, f), n);
        fclose(f);
    }
    size_t flen;
    char *file = slurp(path, &flen);
    if (flen != n || memcmp(file, om, n) != 0) fail_msg("%s is not what om_pack makes (GM_WRITE_OM=1 rewrites it)", path);
    assert_int_equal(gm_format_from_path(path), GM_FORMAT_GE_OM);
    gm_model *m = read_file_ok(path);
    free(file);
    free(om);
    free(text);
    return m;
}

static void test_om_data_files(void **state)
{
    (void)state;
    /* Compressed names and string values, 32-bit table. */
    gm_model *m = check_data_om("small_all_kinds.txt", "small_all_kinds.om", true, false, NULL);
    assert_string_equal(gm_model_name(m), "small");
    assert_int_equal(gm_model_node_count(m), 6);
    const gm_attr *a = gm_attr_find(*gm_node_attrs(gm_model_find_node(m, "mm")), "list_s");
    assert_int_equal(gm_attr_get_kind(a), GM_ATTR_LIST_STRING);
    assert_string_equal(gm_attr_list_string(a, 1), "b");
    gm_model_free(m);
    /* Plain names, 64-bit table, the name in the header only; subgraphs. */
    m = check_data_om("control_flow.txt", "control_flow.om", false, true, "control_flow");
    assert_string_equal(gm_model_name(m), "control_flow");
    assert_int_equal(gm_model_graph_count(m), 5);
    gm_model_free(m);
}

/* An unnamed ModelDef takes the header's name. */
static void test_om_header_name(void **state)
{
    (void)state;
    const char *text = "graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { dtype: DT_FLOAT } } }";
    uint8_t *om;
    size_t n;
    om_pack(text, false, false, &om, &n);
    memcpy(om + 84, "om_header_name", 14);
    gm_model *m = read_buffer_ok(om, n, "h.om");
    assert_string_equal(gm_model_name(m), "om_header_name");
    gm_model_free(m);
    free(om);
}

static void test_om_errors(void **state)
{
    (void)state;
    size_t len, n;
    char *text = data_file("small_all_kinds.txt", &len);
    uint8_t *om;
    om_pack(text, true, false, &om, &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
#define FRESH() memcpy(b, om, n)
    FRESH();
    expect_error(b, 200, "bad.om: not a GE offline model", "256-byte header");
    FRESH();
    b[4] = 8;
    b[5] = 0;
    expect_error(b, n, "bad.om: the header says it is 8 bytes long", NULL);
    FRESH();
    b[80] = 1;
    expect_error(b, n, "bad.om: the offline model is encrypted", NULL);
    FRESH();
    expect_error(b, 256 + 4 + 3 * 12 + 20, "bad.om: offset 256: the partition table", "runs past the end");
    FRESH();
    b[256 + 4 + 12] = 5; /* MODEL_DEF's type: 5 */
    expect_error(b, n, "has no MODEL_DEF partition", NULL);
    FRESH();
    memset(b + 256 + 4 + 3 * 12 + 40, 0xFF, 16); /* the ModelDef's first bytes */
    expect_error(b, n, "the MODEL_DEF partition", "is not a ge.proto.ModelDef");
    FRESH();
    b[256] = 0; /* no partitions */
    expect_error(b, n, "the partition table", NULL);
#undef FRESH
    /* Never written. */
    gm_model *m = read_buffer_ok(om, n, "m.om");
    void *out = NULL;
    size_t olen = 0;
    gm_error err;
    gm_error_clear(&err);
    assert_int_equal(gm_model_write_buffer(m, GM_FORMAT_GE_OM, &out, &olen, &err), GM_ERR_INPUT);
    assert_null(out);
    assert_non_null(strstr(err.message, "does not write them"));
    gm_model_free(m);
    free(b);
    free(om);
    free(text);
}

/* Truncations anywhere: a clean error (or, cut inside the unread partitions, a model). */
static void test_om_truncated(void **state)
{
    (void)state;
    size_t len, n;
    char *text = data_file("control_flow.txt", &len);
    uint8_t *om;
    om_pack(text, true, true, &om, &n);
    for (size_t cut = 0; cut < n; cut += 1 + cut / 16) {
        gm_model *m = NULL;
        gm_error err;
        gm_error_clear(&err);
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, om, cut);
        gm_status st = gm_model_read_buffer((const char *)copy, cut, GM_FORMAT_GE_OM, "cut.om", &m, &err);
        assert_true(st == GM_ERR_INPUT);
        assert_null(m);
        free(copy);
    }
    free(om);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_residual_stays_out_of_the_graph),
        cmocka_unit_test(test_bad_residual),
        cmocka_unit_test(test_compressed_names_in_text),
        cmocka_unit_test(test_compressed_name_errors),
        cmocka_unit_test(test_om_reads_as_its_dump),
        cmocka_unit_test(test_om_data_files),
        cmocka_unit_test(test_om_header_name),
        cmocka_unit_test(test_om_errors),
        cmocka_unit_test(test_om_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
