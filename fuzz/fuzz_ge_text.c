/*
 * fuzz_ge_text.c — the GE text-dump reader (gm_model_read_ge_text: protobuf text format, then
 * ge.proto.ModelDef to graphmem's IR), then the GE text writer on whatever it accepts. No NUL
 * after the input, so reading past `len` is caught.
 */
#include "fuzz_common.h"
#include "graphmem/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_model_read_ge_text((const char *)data, size, "fuzz.txt", &m, &err) == GM_OK) {
        char *text = NULL;
        size_t len = 0;
        if (gm_model_write_ge_text(m, &text, &len, &err) == GM_OK) free(text);
        gm_model_free(m);
    }
    return 0;
}
