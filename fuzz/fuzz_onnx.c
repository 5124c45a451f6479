/*
 * fuzz_onnx.c — the ONNX reader (gm_model_read_onnx: protobuf-c decoding, then graphmem's
 * translation and shape inference), then the ONNX writer on whatever it accepts. The first
 * byte, when it is odd, fixes the common symbolic dims so inference also runs on concrete
 * shapes (ONNX bytes are protobuf, so no valid model loses anything by it: byte 0 is a tag).
 */
#include "fuzz_common.h"
#include "graphmem/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const dims[] = {"batch=2", "N=2", "seq=3", "sequence=3", "batch_size=2", NULL};
    gm_model *m = NULL;
    gm_error err;
    gm_error_clear(&err);
    const char *const *d = size > 0 && (data[0] & 1) ? dims : NULL;
    if (gm_model_read_onnx(data, size, "fuzz.onnx", d, &m, &err) == GM_OK) {
        void *bytes = NULL;
        size_t len = 0;
        if (gm_model_write_onnx(m, &bytes, &len, &err) == GM_OK) free(bytes);
        gm_model_free(m);
    }
    return 0;
}
