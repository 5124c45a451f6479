/*
 * fuzz_dsa_csv.c — MiniMalloc's CSV reader (gm_dsa_parse_csv). On success the cheap, total
 * consumers of the buffers run too (LOAD, the checker on the CSV's own offsets), since they are
 * what first reads the values the parser let through; the packers are left to fuzz_pipeline
 * and the tests, as their running time is not bounded by the input's length alone.
 */
#include "fuzz_common.h"
#include "graphmem/dsa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_dsa_buffer *b = NULL;
    size_t n = 0;
    gm_error err;
    gm_error_clear(&err);
    if (gm_dsa_parse_csv((const char *)data, size, "fuzz.csv", &b, &n, &err) == GM_OK) {
        char why[256];
        (void)gm_dsa_lower_bound(b, n);
        (void)gm_dsa_check(b, n, -1, why, sizeof why);
        gm_dsa_free(b);
    }
    return 0;
}
