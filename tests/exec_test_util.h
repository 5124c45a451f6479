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

/* Continuous groups of every kind: cat's inputs lie end to end with no padding (views of its
 * output), sp's outputs too (views of its input); cc and cc2 want their inputs continuous and
 * overlap head to tail ([p q] and [q t]: one chain p q t), sd's outputs are continuous. The
 * producers are spread over the streams, so members come from different streams. */
#define GM_SHAPE(n) "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[" #n "]}]"
static const char k_groups[] =
    "{\"graphmem\":1,\"name\":\"groups\",\"graphs\":[{\"name\":\"root\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"attrs\":{\"index\":0}," GM_SHAPE(256) "},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," GM_SHAPE(256) "},"
    "{\"name\":\"b\",\"type\":\"Sigmoid\",\"inputs\":[\"x:0\"]," GM_SHAPE(128) "},"
    "{\"name\":\"cat\",\"type\":\"ConcatD\",\"inputs\":[\"a:0\",\"b:0\"],"
    "\"attrs\":{\"_no_padding_continuous_input\":true,\"concat_dim\":0}," GM_SHAPE(384) "},"
    "{\"name\":\"r\",\"type\":\"Relu\",\"inputs\":[\"cat:0\"]," GM_SHAPE(384) "},"
    "{\"name\":\"sp\",\"type\":\"SplitD\",\"inputs\":[\"r:0\"],"
    "\"attrs\":{\"_no_padding_continuous_output\":true,\"split_dim\":0,\"num_split\":2},"
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[192]},{\"dtype\":\"float32\",\"shape\":[192]}]},"
    "{\"name\":\"s0\",\"type\":\"Relu\",\"inputs\":[\"sp:0\"]," GM_SHAPE(192) "},"
    "{\"name\":\"s1\",\"type\":\"Relu\",\"inputs\":[\"sp:1\"]," GM_SHAPE(192) "},"
    "{\"name\":\"p\",\"type\":\"Relu\",\"inputs\":[\"x:0\"]," GM_SHAPE(256) "},"
    "{\"name\":\"q\",\"type\":\"Tanh\",\"inputs\":[\"x:0\"]," GM_SHAPE(100) "},"
    "{\"name\":\"t\",\"type\":\"Exp\",\"inputs\":[\"x:0\"]," GM_SHAPE(256) "},"
    "{\"name\":\"cc\",\"type\":\"ConcatD\",\"inputs\":[\"p:0\",\"q:0\"],"
    "\"attrs\":{\"continuous_input\":true,\"concat_dim\":0}," GM_SHAPE(356) "},"
    "{\"name\":\"cc2\",\"type\":\"ConcatD\",\"inputs\":[\"q:0\",\"t:0\"],"
    "\"attrs\":{\"continuous_input\":true,\"concat_dim\":0}," GM_SHAPE(356) "},"
    "{\"name\":\"sd\",\"type\":\"SplitD\",\"inputs\":[\"cc:0\"],"
    "\"attrs\":{\"continuous_output\":true,\"split_dim\":0,\"num_split\":2},"
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[178]},{\"dtype\":\"float32\",\"shape\":[178]}]},"
    "{\"name\":\"u\",\"type\":\"Add\",\"inputs\":[\"sd:0\",\"sd:1\"]," GM_SHAPE(178) "},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"inputs\":[\"s0:0\",\"s1:0\",\"cc2:0\",\"u:0\"]}]}]}";
/* Members reported by each iteration of k_groups laid out with gaps: every member but the first
 * of cat, sp, cc, cc2 and sd. */
#define GM_GROUPS_GAPPED_MEMBERS 5

#endif
