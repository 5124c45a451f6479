/*
 * fuzz_common.h — what every target shares. The library's log would print a line per inserted
 * node or rejected input, which slows libFuzzer down and buries its own output, so it goes to
 * /dev/null (still formatted: the formatting code is fuzzed too).
 */
#ifndef GM_FUZZ_COMMON_H
#define GM_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "graphmem/log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FILE *null = fopen("/dev/null", "w");
    if (null) gm_log_set_stream(null); /* kept open for the whole run: the log holds it */
    gm_log_set_level(GM_LOG_DEBUG);
    return 0;
}

#endif
