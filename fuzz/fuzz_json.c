/*
 * fuzz_json.c — the graphmem JSON model reader (gm_model_read_json), then the JSON writer on
 * whatever it accepts: a model the reader lets through must be one the writer can print.
 * The input is passed without a NUL after it, so a reader that reads past `len` is caught.
 */
#include "fuzz_common.h"
#include "graphmem/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    if (gm_model_read_json((const char *)data, size, "fuzz.json", &m, &err) == GM_OK) {
        char *text = NULL;
        size_t len = 0;
        if (gm_model_write_json(m, &text, &len, &err) == GM_OK) free(text);
        gm_model_free(m);
    }
    return 0;
}
