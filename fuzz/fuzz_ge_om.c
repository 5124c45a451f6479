/*
 * fuzz_ge_om.c — the GE offline-model reader (gm_model_read_ge_om: the container's header and
 * partition table, the binary ge.proto.ModelDef, compressed attribute names), then the GE text
 * writer on whatever it accepts, residuals included.
 */
#include "fuzz_common.h"
#include "graphmem/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_model_read_ge_om(data, size, "fuzz.om", &m, &err) == GM_OK) {
        char *text = NULL;
        size_t len = 0;
        if (gm_model_write_ge_text(m, &text, &len, &err) == GM_OK) free(text);
        gm_model_free(m);
    }
    return 0;
}
