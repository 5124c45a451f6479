/*
 * exec_test_util.h — what the executor tests (static plan, dynamic allocator) share: the small
 * graphs they run. Header-only.
 */
#ifndef GM_EXEC_TEST_UTIL_H
#define GM_EXEC_TEST_UTIL_H

#define GM_F256 "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[256]}]"

/* a and b both live until c reads them: they may never share memory. */
static const char k_diamond[] =
    "{\"graphmem\":1,\"name\":\"d\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," GM_F256 "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," GM_F256 "},"
    "{\"name\":\"b\",\"type\":\"Sigmoid\",\"inputs\":[\"x:0\"]," GM_F256 "},"
    "{\"name\":\"c\",\"type\":\"Add\",\"inputs\":[\"a:0\",\"b:0\"]," GM_F256 "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"c:0\"]}]}]}";

#endif
