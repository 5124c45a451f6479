/*
 * gen_graph.c — writes a large, realistic graphmem JSON model (docs/graph-format.md) for the
 * load benchmark: one training step of a transformer-like network.
 *
 *   gen_graph --nodes N [--shape bench|sched] [--streams S] [--seed K] [--atomic-every B]
 *             [--while-one-in K] [--allreduce-every B] [--order-edges PCT] [--updates-side] [-o FILE]
 *
 * Shape of the model (every choice mirrors something GE sees in real training graphs, so the
 * reader and the passes meet the same mix of features they will meet in practice):
 *  - head: token ids / labels / a bool flag as root Data, an embedding Variable cast to float16
 *    and gathered, plus a positional embedding;
 *  - a chain of blocks: LayerNorm (three outputs: y, mean, rstd), Q/K/V MatMuls on float16
 *    casts of float32 master weights, a continuous-input ConcatD of Q/K/V feeding a
 *    Reshape/Transpose view chain (outputs with reuse_input) and a SplitD, attention
 *    (BatchMatMul, Muls, Softmax, BatchMatMul), output projection, residual Add, second
 *    LayerNorm, MLP with Gelu;
 *  - every IF_EVERY-th block ends in an If (then/else subgraphs, Data with _parent_node_index,
 *    NetOutput mapping back to the If's output); some blocks (chosen by the seed, one in
 *    --while-one-in) add a While with cond/body subgraphs carrying the activation and an int32
 *    counter;
 *  - side work (weight casts, K/V projections, weight-gradient MatMuls, collectives) runs on
 *    streams 1..S-1, with control edges tying it to stream 0 as a stream scheduler would;
 *  - backward: per block the activation gradients and the weight gradients; per group of
 *    --allreduce-every blocks one fused HcomAllReduce with _input_mutable over the group's
 *    gradients, and the optimizer step as ref updates on the Variables (AssignAdd, or Sub then
 *    Assign), collected per block by a NoOp;
 *  - NetOutput takes the loss and, through control edges, every block's NoOp.
 *
 * Two shapes (issue 28):
 *  - bench (the default): the benchmark's graph of the earlier scale tables, unchanged byte for
 *    byte: one all-reduce per block, a While in about one block in 12, updates on stream 0.
 *  - sched: the graph as a stream scheduler leaves it. A While in one block in 72 (~180 at a
 *    million nodes), one all-reduce over every 50 blocks (the gradients of 50 blocks live until
 *    it runs), atomic weight gradients in every 71st block (~1,800 atomic outputs), a control
 *    edge from the op before on the same stream on 40% of the root's ops (~535,000 control
 *    edges in all), and the optimizer's updates on the side stream, so the Variables the forward
 *    reads on stream 0 are written on stream 1.
 * Options after --shape change one of its choices.
 *
 * The total node count over all graphs is exactly N: the blocks are planned up front and a short
 * tail of scalar metric ops makes up the rest. Output is deterministic for a given seed (the
 * per-block choices come from a hash of seed and block index, so the subgraphs written after
 * the root graph see the same choices as the root). Only libc is used, and the text is
 * streamed, so 200k nodes take a fraction of a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Model dimensions: a ~GPT-2-medium-sized layer, so tensor sizes (and the planner's numbers)
 * look like a real model's. */
enum {
    BATCH = 8,
    SEQ = 1024,
    HIDDEN = 1024,
    HEADS = 16,
    HEAD_DIM = HIDDEN / HEADS,
    FFN = 4 * HIDDEN,
    VOCAB = 32000,
    IF_EVERY = 8,     /* every 8th block ends in an If */
    WHILE_ONE_IN = 12 /* default: about one block in 12 (seeded) gets a While */
};

/* Node counts of the pieces; main() checks the total against what was written. */
enum {
    HEAD_NODES = 9,
    BLOCK_FWD_NODES = 37, /* 10 Variables + 27 ops */
    BLOCK_BWD_NODES = 41, /* 6 dgrad + 8 wgrad + AllReduce + 25 update + NoOp */
    IF_NODES = 1 + 4 + 4, /* If + then (4) + else (4) */
    WHILE_NODES = 2 + 5 + 7, /* counter Const + While + cond (5) + body (7) */
    TAIL_NODES = 24, /* 8 forward/loss + 16 backward, updates and NetOutput */
};

/* ---- small string builder ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void die_nomem(void)
{
    fprintf(stderr, "gen_graph: out of memory\n");
    exit(2);
}

static void sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
    for (;;) {
        va_list cp;
        va_copy(cp, ap);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, cp);
        va_end(cp);
        if (n < 0)
            die_nomem();
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            die_nomem();
        b->p = p;
        b->cap = cap;
    }
}

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

/* ---- seeded per-block choices ------------------------------------------------------------------
 * A pure function of (seed, block, salt): the second pass that writes the subgraphs must agree
 * with the first, and no state has to be carried between them. */

static uint64_t mix(uint64_t seed, uint64_t block, uint64_t salt)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + block * 0xBF58476D1CE4E5B9ull + salt * 0x94D049BB133111EBull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- node writer ------------------------------------------------------------------------------
 * A node is collected field by field into reusable buffers and written in one go by node_end, so
 * the emitting code reads like the graph it describes and the JSON lists stay well formed. */

typedef struct shape {
    int nd;
    int64_t d[6];
} shape;

#define SHP(...) ((shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})
#define SCALAR ((shape){0, {0}})

/* The choices a --shape makes (see the head of this file); options after it change one. */
typedef struct knobs {
    long while_one_in; /* about one block in K (seeded) gets a While */
    long ar_every;     /* one HcomAllReduce over every B blocks' gradients */
    long atomic_every; /* every B-th block's weight gradients accumulate atomically; 0: none */
    long order_pct;    /* percent of root ops given a stream-order control edge */
    bool updates_side; /* optimizer updates (Assign/AssignAdd) on a side stream */
} knobs;

typedef struct gen {
    FILE *f;
    int streams;
    uint64_t seed;
    knobs k;           /* the shape's choices (--shape and the options after it) */
    bool atomic_next;  /* the next MatMuls written are atomic */
    bool in_root;      /* writing the root graph: stream-order edges apply */
    char last_on[64][64]; /* per stream: the last root op written, for stream-order edges */
    long written;     /* nodes written so far, all graphs */
    long nblocks;
    bool first_node;  /* of the current graph: no separator before it */
    bool first_graph;
    /* the node being built */
    sbuf name, type, in, ctrl, attrs, outs, subs, extra;
    int n_in, n_ctrl, n_attrs, n_outs, n_subs;
    int64_t stream;
} gen;

static void node_begin(gen *g, const char *type, const char *name_fmt, ...)
{
    g->name.len = g->type.len = g->in.len = g->ctrl.len = g->attrs.len = 0;
    g->outs.len = g->subs.len = g->extra.len = 0;
    g->n_in = g->n_ctrl = g->n_attrs = g->n_outs = g->n_subs = 0;
    g->stream = 0;
    va_list ap;
    va_start(ap, name_fmt);
    sb_vprintf(&g->name, name_fmt, ap);
    va_end(ap);
    sb_printf(&g->type, "%s", type);
}

/* A data input "producer:index" (the caller formats it). */
static void node_in(gen *g, const char *fmt, ...)
{
    sb_printf(&g->in, g->n_in++ ? ",\"" : "\"");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&g->in, fmt, ap);
    va_end(ap);
    sb_printf(&g->in, "\"");
}

static void node_ctrl(gen *g, const char *fmt, ...)
{
    sb_printf(&g->ctrl, g->n_ctrl++ ? ",\"" : "\"");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&g->ctrl, fmt, ap);
    va_end(ap);
    sb_printf(&g->ctrl, "\"");
}

/* An attribute whose value is given as JSON text. */
static void node_attr(gen *g, const char *key, const char *value_fmt, ...)
{
    sb_printf(&g->attrs, "%s\"%s\":", g->n_attrs++ ? "," : "", key);
    va_list ap;
    va_start(ap, value_fmt);
    sb_vprintf(&g->attrs, value_fmt, ap);
    va_end(ap);
}

static void node_sub(gen *g, const char *fmt, ...)
{
    sb_printf(&g->subs, g->n_subs++ ? ",\"" : "\"");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&g->subs, fmt, ap);
    va_end(ap);
    sb_printf(&g->subs, "\"");
}

/* Extra top-level fields as JSON text, e.g. "input_names":[...] (caller adds the leading ","). */
static void node_extra(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&g->extra, fmt, ap);
    va_end(ap);
}

static void node_stream(gen *g, int64_t s) { g->stream = s; }

/* An output desc. reuse >= 0 marks a view of input `reuse`; desc_attrs is JSON object text or
 * NULL. */
static void node_out_full(gen *g, const char *dtype, shape s, int reuse, const char *desc_attrs)
{
    sbuf *b = &g->outs;
    sb_printf(b, "%s{\"dtype\":\"%s\",\"shape\":[", g->n_outs++ ? "," : "", dtype);
    for (int i = 0; i < s.nd; i++)
        sb_printf(b, i ? ",%" PRId64 : "%" PRId64, s.d[i]);
    sb_printf(b, "]");
    if (reuse >= 0)
        sb_printf(b, ",\"reuse_input\":true,\"reuse_input_index\":%d", reuse);
    if (desc_attrs)
        sb_printf(b, ",\"attrs\":%s", desc_attrs);
    sb_printf(b, "}");
}

static void node_out(gen *g, const char *dtype, shape s) { node_out_full(g, dtype, s, -1, NULL); }

static bool is_source_type(const char *t)
{
    return !strcmp(t, "Variable") || !strcmp(t, "Const") || !strcmp(t, "Data");
}

static void node_end(gen *g)
{
    FILE *f = g->f;
    /* Stream-order edges: a stream scheduler that serializes a stream's ops writes a control
     * edge from the op before on the same stream. Emission order in the root graph is a
     * topological order, so these never close a cycle; many repeat a data edge, as GE's do. */
    const bool op = g->in_root && !is_source_type(g->type.p);
    if (op && g->k.order_pct > 0 && g->last_on[g->stream][0] &&
        mix(g->seed, (uint64_t)g->written, 7) % 100 < (uint64_t)g->k.order_pct)
        node_ctrl(g, "%s", g->last_on[g->stream]);
    fprintf(f, "%s{\"name\":\"%s\",\"type\":\"%s\"", g->first_node ? "\n" : ",\n", g->name.p,
            g->type.p);
    g->first_node = false;
    if (g->n_in)
        fprintf(f, ",\"inputs\":[%s]", g->in.p);
    if (g->n_ctrl)
        fprintf(f, ",\"control_inputs\":[%s]", g->ctrl.p);
    if (g->stream)
        fprintf(f, ",\"stream\":%" PRId64, g->stream);
    if (g->n_subs)
        fprintf(f, ",\"subgraphs\":[%s]", g->subs.p);
    if (g->extra.len)
        fputs(g->extra.p, f);
    if (g->n_attrs)
        fprintf(f, ",\"attrs\":{%s}", g->attrs.p);
    if (g->n_outs)
        fprintf(f, ",\"outputs\":[%s]", g->outs.p);
    fputc('}', f);
    g->written++;
    if (op)
        snprintf(g->last_on[g->stream], sizeof g->last_on[0], "%s", g->name.p);
}

static void graph_begin(gen *g, const char *name, const char *parent, const char *attrs_json)
{
    fprintf(g->f, "%s{\"name\":\"%s\"", g->first_graph ? "\n" : ",\n", name);
    g->first_graph = false;
    if (parent)
        fprintf(g->f, ",\"parent\":\"%s\"", parent);
    if (attrs_json)
        fprintf(g->f, ",\"attrs\":%s", attrs_json);
    fputs(",\"nodes\":[", g->f);
    g->first_node = true;
}

static void graph_end(gen *g) { fputs("\n]}", g->f); }

static bool block_has_if(long b) { return b % IF_EVERY == IF_EVERY - 1; }
static bool block_has_while(const gen *g, long b)
{
    return b > 0 && mix(g->seed, (uint64_t)b, 1) % (uint64_t)g->k.while_one_in == 0;
}

/* Backward runs from the last block down, so a group of ar_every blocks [b, b + ar_every) is
 * closed by its lowest block, which writes the group's all-reduce and updates. */
static bool block_has_allreduce(const gen *g, long b) { return b % g->k.ar_every == 0; }

static long block_nodes(const gen *g, long b)
{
    return BLOCK_FWD_NODES + BLOCK_BWD_NODES - (block_has_allreduce(g, b) ? 0 : 1) +
           (block_has_if(b) ? IF_NODES : 0) + (block_has_while(g, b) ? WHILE_NODES : 0);
}

/* The side stream for a block's k-th piece of side work: spread over 1..S-1, and varied by
 * the seed so that neighbouring blocks do not all look alike. Stream 0 when S == 1. */
static int64_t side_stream(const gen *g, long b, int k)
{
    if (g->streams <= 1)
        return 0;
    return 1 + (int64_t)((mix(g->seed, (uint64_t)b, 2) + (uint64_t)k) % (uint64_t)(g->streams - 1));
}

/* Name of block b's output tensor ("producer:index"); block -1 is the embedding sum. */
static void block_output(const gen *g, long b, char *buf, size_t cap)
{
    if (b < 0)
        snprintf(buf, cap, "x0:0");
    else if (block_has_while(g, b))
        snprintf(buf, cap, "b%ld/loop:0", b);
    else if (block_has_if(b))
        snprintf(buf, cap, "b%ld/if:0", b);
    else
        snprintf(buf, cap, "b%ld/out:0", b);
}

/* ---- the pieces -------------------------------------------------------------------------------- */

static void emit_head(gen *g)
{
    node_begin(g, "Data", "input_ids");
    node_attr(g, "index", "0");
    node_out(g, "int32", SHP(BATCH, SEQ));
    node_end(g);
    node_begin(g, "Data", "labels");
    node_attr(g, "index", "1");
    node_out(g, "int32", SHP(BATCH, SEQ));
    node_end(g);
    /* The If predicate: a host-fed scalar, as a data-dependent branch would get. */
    node_begin(g, "Data", "step_flag");
    node_attr(g, "index", "2");
    node_out(g, "bool", SCALAR);
    node_end(g);

    node_begin(g, "Variable", "embed_w");
    node_out(g, "float32", SHP(VOCAB, HIDDEN));
    node_end(g);
    node_begin(g, "Cast", "embed_c");
    node_in(g, "embed_w:0");
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, -1, 0));
    node_out(g, "float16", SHP(VOCAB, HIDDEN));
    node_end(g);
    node_begin(g, "GatherV2", "embed");
    node_in(g, "embed_c:0");
    node_in(g, "input_ids:0");
    node_out(g, "float16", SHP(BATCH, SEQ, HIDDEN));
    node_end(g);
    node_begin(g, "Variable", "pos_w");
    node_out(g, "float32", SHP(SEQ, HIDDEN));
    node_end(g);
    node_begin(g, "Cast", "pos_c");
    node_in(g, "pos_w:0");
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, -1, 1));
    node_out(g, "float16", SHP(SEQ, HIDDEN));
    node_end(g);
    node_begin(g, "Add", "x0");
    node_in(g, "embed:0");
    node_in(g, "pos_c:0");
    node_out(g, "float16", SHP(BATCH, SEQ, HIDDEN));
    node_end(g);
}

/* The ten Variables of a block, in the order their gradients go into the block's AllReduce. */
static const char *const block_vars[10] = {"wq", "wk", "wv", "wo", "w1", "w2",
                                           "ln1_g", "ln1_b", "ln2_g", "ln2_b"};

static shape var_shape(int v)
{
    switch (v) {
    case 4: return SHP(HIDDEN, FFN);
    case 5: return SHP(FFN, HIDDEN);
    case 0: case 1: case 2: case 3: return SHP(HIDDEN, HIDDEN);
    default: return SHP(HIDDEN);
    }
}

static void emit_layernorm(gen *g, long b, const char *name, const char *x, const char *gamma,
                           const char *beta)
{
    node_begin(g, "LayerNorm", "b%ld/%s", b, name);
    node_in(g, "%s", x);
    node_in(g, "b%ld/%s:0", b, gamma);
    node_in(g, "b%ld/%s:0", b, beta);
    node_attr(g, "begin_norm_axis", "2");
    node_attr(g, "begin_params_axis", "-1");
    node_attr(g, "epsilon", "1e-05");
    node_out(g, "float16", SHP(BATCH, SEQ, HIDDEN)); /* y */
    node_out(g, "float32", SHP(BATCH, SEQ, 1));      /* mean, kept for backward */
    node_out(g, "float32", SHP(BATCH, SEQ, 1));      /* rstd */
    node_end(g);
}

static void emit_cast_weight(gen *g, long b, const char *w, shape s, int k)
{
    node_begin(g, "Cast", "b%ld/%s_c", b, w);
    node_in(g, "b%ld/%s:0", b, w);
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, b, k));
    node_out(g, "float16", s);
    node_end(g);
}

static void emit_matmul(gen *g, const char *type, const char *name, const char *a, const char *bb,
                        bool tx1, bool tx2, const char *dtype, shape s, int64_t stream)
{
    node_begin(g, type, "%s", name);
    node_in(g, "%s", a);
    node_in(g, "%s", bb);
    node_attr(g, "transpose_x1", tx1 ? "true" : "false");
    node_attr(g, "transpose_x2", tx2 ? "true" : "false");
    if (g->atomic_next) node_attr(g, "atomic_output_index", "[0]");
    node_stream(g, stream);
    node_out(g, dtype, s);
    node_end(g);
}

static void emit_block_forward(gen *g, long b)
{
    char x[64], nm[64], a[64], c[64];
    block_output(g, b - 1, x, sizeof x);
    const shape act = SHP(BATCH, SEQ, HIDDEN);

    for (int v = 0; v < 10; v++) {
        node_begin(g, "Variable", "b%ld/%s", b, block_vars[v]);
        node_out(g, "float32", var_shape(v));
        node_end(g);
    }
    emit_layernorm(g, b, "ln1", x, "ln1_g", "ln1_b");
    emit_cast_weight(g, b, "wq", var_shape(0), 0);
    emit_cast_weight(g, b, "wk", var_shape(1), 1);
    emit_cast_weight(g, b, "wv", var_shape(2), 0);

    /* Q on the main stream, K and V on a side stream; K waits for Q so the two streams
     * share the device evenly — the kind of control edge a stream assigner adds. */
    snprintf(a, sizeof a, "b%ld/ln1:0", b);
    snprintf(nm, sizeof nm, "b%ld/q", b);
    snprintf(c, sizeof c, "b%ld/wq_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, false, "float16", act, 0);
    node_begin(g, "MatMulV2", "b%ld/k", b);
    node_in(g, "%s", a);
    node_in(g, "b%ld/wk_c:0", b);
    node_ctrl(g, "b%ld/q", b);
    node_stream(g, side_stream(g, b, 1));
    node_out(g, "float16", act);
    node_end(g);
    snprintf(nm, sizeof nm, "b%ld/v", b);
    snprintf(c, sizeof c, "b%ld/wv_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, false, "float16", act, side_stream(g, b, 1));

    /* QKV packed by a continuous-input concat: the three producers must land back to back. */
    node_begin(g, "ConcatD", "b%ld/qkv", b);
    node_in(g, "b%ld/q:0", b);
    node_in(g, "b%ld/k:0", b);
    node_in(g, "b%ld/v:0", b);
    node_attr(g, "concat_dim", "2");
    node_attr(g, "N", "3");
    node_attr(g, "continuous_input", "true");
    node_out(g, "float16", SHP(BATCH, SEQ, 3 * HIDDEN));
    node_end(g);
    node_begin(g, "Reshape", "b%ld/qkv_r", b);
    node_in(g, "b%ld/qkv:0", b);
    node_out_full(g, "float16", SHP(BATCH, SEQ, 3, HEADS, HEAD_DIM), 0, NULL);
    node_end(g);
    node_begin(g, "Transpose", "b%ld/qkv_t", b);
    node_in(g, "b%ld/qkv_r:0", b);
    node_attr(g, "perm", "[2,0,3,1,4]");
    node_out_full(g, "float16", SHP(3, BATCH, HEADS, SEQ, HEAD_DIM), 0, NULL);
    node_end(g);
    node_begin(g, "SplitD", "b%ld/qkv_s", b);
    node_in(g, "b%ld/qkv_t:0", b);
    node_attr(g, "split_dim", "0");
    node_attr(g, "num_split", "3");
    for (int i = 0; i < 3; i++)
        node_out(g, "float16", SHP(1, BATCH, HEADS, SEQ, HEAD_DIM));
    node_end(g);

    const shape scores = SHP(BATCH, HEADS, SEQ, SEQ);
    snprintf(nm, sizeof nm, "b%ld/scores", b);
    snprintf(a, sizeof a, "b%ld/qkv_s:0", b);
    snprintf(c, sizeof c, "b%ld/qkv_s:1", b);
    emit_matmul(g, "BatchMatMul", nm, a, c, false, true, "float16", scores, 0);
    node_begin(g, "Muls", "b%ld/scale", b);
    node_in(g, "b%ld/scores:0", b);
    node_attr(g, "value", "0.125");
    node_out(g, "float16", scores);
    node_end(g);
    node_begin(g, "SoftmaxV2", "b%ld/probs", b);
    node_in(g, "b%ld/scale:0", b);
    node_attr(g, "axes", "[-1]");
    node_out(g, "float16", scores);
    node_end(g);
    snprintf(nm, sizeof nm, "b%ld/ctx", b);
    snprintf(a, sizeof a, "b%ld/probs:0", b);
    snprintf(c, sizeof c, "b%ld/qkv_s:2", b);
    emit_matmul(g, "BatchMatMul", nm, a, c, false, false, "float16", SHP(BATCH, HEADS, SEQ, HEAD_DIM), 0);
    node_begin(g, "Transpose", "b%ld/ctx_t", b);
    node_in(g, "b%ld/ctx:0", b);
    node_attr(g, "perm", "[0,2,1,3]");
    node_out_full(g, "float16", SHP(BATCH, SEQ, HEADS, HEAD_DIM), 0, NULL);
    node_end(g);
    node_begin(g, "Reshape", "b%ld/ctx_r", b);
    node_in(g, "b%ld/ctx_t:0", b);
    node_out_full(g, "float16", act, 0, NULL);
    node_end(g);

    /* Later weight casts are held back until the attention is under way (prefetch window),
     * which bounds how many float16 weight copies are live at once. */
    node_begin(g, "Cast", "b%ld/wo_c", b);
    node_in(g, "b%ld/wo:0", b);
    node_ctrl(g, "b%ld/qkv", b);
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, b, 2));
    node_out(g, "float16", var_shape(3));
    node_end(g);
    snprintf(nm, sizeof nm, "b%ld/attn", b);
    snprintf(a, sizeof a, "b%ld/ctx_r:0", b);
    snprintf(c, sizeof c, "b%ld/wo_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, false, "float16", act, 0);
    node_begin(g, "Add", "b%ld/res1", b);
    node_in(g, "%s", x);
    node_in(g, "b%ld/attn:0", b);
    node_out(g, "float16", act);
    node_end(g);
    snprintf(a, sizeof a, "b%ld/res1:0", b);
    emit_layernorm(g, b, "ln2", a, "ln2_g", "ln2_b");

    node_begin(g, "Cast", "b%ld/w1_c", b);
    node_in(g, "b%ld/w1:0", b);
    node_ctrl(g, "b%ld/attn", b);
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, b, 3));
    node_out(g, "float16", var_shape(4));
    node_end(g);
    snprintf(nm, sizeof nm, "b%ld/h1", b);
    snprintf(a, sizeof a, "b%ld/ln2:0", b);
    snprintf(c, sizeof c, "b%ld/w1_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, false, "float16", SHP(BATCH, SEQ, FFN), 0);
    node_begin(g, "Gelu", "b%ld/gelu", b);
    node_in(g, "b%ld/h1:0", b);
    node_out(g, "float16", SHP(BATCH, SEQ, FFN));
    node_end(g);
    node_begin(g, "Cast", "b%ld/w2_c", b);
    node_in(g, "b%ld/w2:0", b);
    node_ctrl(g, "b%ld/h1", b);
    node_attr(g, "dst_type", "1");
    node_stream(g, side_stream(g, b, 4));
    node_out(g, "float16", var_shape(5));
    node_end(g);
    snprintf(nm, sizeof nm, "b%ld/h2", b);
    snprintf(a, sizeof a, "b%ld/gelu:0", b);
    snprintf(c, sizeof c, "b%ld/w2_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, false, "float16", act, 0);
    node_begin(g, "Add", "b%ld/out", b);
    node_in(g, "b%ld/res1:0", b);
    node_in(g, "b%ld/h2:0", b);
    node_out(g, "float16", act);
    node_end(g);

    /* Control flow: the If picks between two ways of post-processing the block output; the
     * While (when present) iterates on whatever came before it. Both keep the activation shape,
     * so the next block does not care which one ran. */
    if (block_has_if(b)) {
        node_begin(g, "If", "b%ld/if", b);
        node_in(g, "step_flag:0");
        node_in(g, "b%ld/out:0", b);
        node_sub(g, "b%ld/then", b);
        node_sub(g, "b%ld/else", b);
        node_out(g, "float16", act);
        node_end(g);
    }
    if (block_has_while(g, b)) {
        node_begin(g, "Const", "b%ld/loop_i0", b);
        node_attr(g, "value", "0");
        node_out(g, "int32", SCALAR);
        node_end(g);
        node_begin(g, "While", "b%ld/loop", b);
        node_in(g, block_has_if(b) ? "b%ld/if:0" : "b%ld/out:0", b);
        node_in(g, "b%ld/loop_i0:0", b);
        node_sub(g, "b%ld/cond", b);
        node_sub(g, "b%ld/body", b);
        node_out(g, "float16", act);
        node_out(g, "int32", SCALAR);
        node_end(g);
    }
}

/* Backward of block b: gin is the gradient flowing in (of the block output), and the gradient
 * of the block input comes out as g/b/dx:0. */
static void emit_group_update(gen *g, long b0, long b1);

static void emit_block_backward(gen *g, long b, const char *gin)
{
    char x[64], nm[64], a[64], c[64];
    block_output(g, b - 1, x, sizeof x);
    const shape act = SHP(BATCH, SEQ, HIDDEN);
    const shape ffn = SHP(BATCH, SEQ, FFN);
    const int64_t side = side_stream(g, b, 5);

    /* activation gradients, main stream */
    snprintf(nm, sizeof nm, "g/b%ld/dh", b);
    snprintf(c, sizeof c, "b%ld/w2_c:0", b);
    emit_matmul(g, "MatMulV2", nm, gin, c, false, true, "float16", ffn, 0);
    node_begin(g, "GeluGrad", "g/b%ld/dgelu", b);
    node_in(g, "g/b%ld/dh:0", b);
    node_in(g, "b%ld/h1:0", b);
    node_in(g, "b%ld/gelu:0", b);
    node_out(g, "float16", ffn);
    node_end(g);
    snprintf(nm, sizeof nm, "g/b%ld/dln2", b);
    snprintf(a, sizeof a, "g/b%ld/dgelu:0", b);
    snprintf(c, sizeof c, "b%ld/w1_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, true, "float16", act, 0);
    node_begin(g, "Add", "g/b%ld/dres", b);
    node_in(g, "%s", gin);
    node_in(g, "g/b%ld/dln2:0", b);
    node_out(g, "float16", act);
    node_end(g);
    snprintf(nm, sizeof nm, "g/b%ld/dctx", b);
    snprintf(a, sizeof a, "g/b%ld/dres:0", b);
    snprintf(c, sizeof c, "b%ld/wo_c:0", b);
    emit_matmul(g, "MatMulV2", nm, a, c, false, true, "float16", act, 0);
    node_begin(g, "Add", "g/b%ld/dx", b);
    node_in(g, "g/b%ld/dres:0", b);
    node_in(g, "g/b%ld/dctx:0", b);
    node_out(g, "float16", act);
    node_end(g);

    /* weight gradients (float32, the master weights' type), side stream; the order matches
     * block_vars so AllReduce output k is the gradient of block_vars[k] */
    static const char *const wg_in[6][2] = {
        {"ln1:0", "dctx:0"}, {"ln1:0", "dctx:0"}, {"ln1:0", "dctx:0"},
        {"ctx_r:0", "dres:0"}, {"ln2:0", "dgelu:0"}, {"gelu:0", ""},
    };
    /* Atomic accumulation, as GE's fused gradient kernels do: the AtomicAddrClean pass zeroes
     * these outputs at the graph's head, so they live from there to their reader, long-lived
     * buffers among the activations (the shape where a first packing misses the bound). */
    bool atomic = g->k.atomic_every > 0 && b % g->k.atomic_every == 0;
    g->atomic_next = atomic;
    for (int v = 0; v < 6; v++) {
        snprintf(nm, sizeof nm, "g/b%ld/d_%s", b, block_vars[v]);
        snprintf(a, sizeof a, "b%ld/%s", b, wg_in[v][0]);
        if (v == 5)
            snprintf(c, sizeof c, "%s", gin);
        else
            snprintf(c, sizeof c, "g/b%ld/%s", b, wg_in[v][1]);
        emit_matmul(g, "MatMulV2", nm, a, c, true, false, "float32", var_shape(v), side);
    }
    g->atomic_next = false;
    for (int ln = 1; ln <= 2; ln++) {
        node_begin(g, "LayerNormBetaGammaBackprop", "g/b%ld/d_ln%d", b, ln);
        node_in(g, ln == 1 ? "g/b%ld/dx:0" : "g/b%ld/dres:0", b);
        if (ln == 1)
            node_in(g, "%s", x);
        else
            node_in(g, "b%ld/res1:0", b);
        node_in(g, "b%ld/ln%d:1", b, ln);
        node_in(g, "b%ld/ln%d:2", b, ln);
        node_stream(g, side);
        if (atomic) node_attr(g, "atomic_output_index", "[0,1]");
        node_out(g, "float32", SHP(HIDDEN)); /* d gamma */
        node_out(g, "float32", SHP(HIDDEN)); /* d beta */
        node_end(g);
    }

    if (block_has_allreduce(g, b))
        emit_group_update(g, b, b + g->k.ar_every < g->nblocks ? b + g->k.ar_every : g->nblocks);
}

/* The all-reduce and optimizer step of blocks [b0, b1), written when backward reaches b0.
 *
 * One fused all-reduce over the group's gradients (ten per block): HCCL writes its inputs
 * (_input_mutable), which is exactly what the RW-conflict pass has to see. It waits for b0's
 * activation gradient so the collective does not delay the critical path. Fused over many
 * blocks (--allreduce-every), the gradients of the whole group stay live until it runs. */
static void emit_group_update(gen *g, long b0, long b1)
{
    const int64_t side = side_stream(g, b0, 5);
    node_begin(g, "HcomAllReduce", "g/b%ld/ar", b0);
    for (long b = b0; b < b1; b++) {
        for (int v = 0; v < 6; v++)
            node_in(g, "g/b%ld/d_%s:0", b, block_vars[v]);
        node_in(g, "g/b%ld/d_ln1:0", b);
        node_in(g, "g/b%ld/d_ln1:1", b);
        node_in(g, "g/b%ld/d_ln2:0", b);
        node_in(g, "g/b%ld/d_ln2:1", b);
    }
    node_ctrl(g, "g/b%ld/dx", b0);
    node_attr(g, "_input_mutable", "true");
    node_attr(g, "reduction", "\"sum\"");
    node_attr(g, "group", "\"hccl_world_group\"");
    node_attr(g, "fusion", "1");
    node_stream(g, side);
    for (long b = b0; b < b1; b++)
        for (int v = 0; v < 10; v++)
            node_out(g, "float32", var_shape(v));
    node_end(g);

    /* The optimizer step as ref updates on the Variables: even ones by AssignAdd of the scaled
     * gradient, odd ones by Sub then Assign (a read of the variable next to its write). With
     * --updates-side they run on the side stream, while the forward reads the Variables on
     * stream 0: a Variable written on one stream and read on another. */
    const int64_t upd_stream = g->k.updates_side ? side : 0;
    char vattr[96];
    for (long b = b0; b < b1; b++) {
        for (int v = 0; v < 10; v++) {
            const char *var = block_vars[v];
            node_begin(g, "Muls", "g/b%ld/step_%s", b, var);
            node_in(g, "g/b%ld/ar:%ld", b0, (b - b0) * 10 + v);
            node_attr(g, "value", (v & 1) ? "0.0001" : "-0.0001");
            node_stream(g, upd_stream);
            node_out(g, "float32", var_shape(v));
            node_end(g);
            snprintf(vattr, sizeof vattr, "{\"ref_var_src_var_name\":\"b%ld/%s\"}", b, var);
            if ((v & 1) == 0) {
                node_begin(g, "AssignAdd", "g/b%ld/upd_%s", b, var);
                node_in(g, "b%ld/%s:0", b, var);
                node_in(g, "g/b%ld/step_%s:0", b, var);
            } else {
                node_begin(g, "Sub", "g/b%ld/new_%s", b, var);
                node_in(g, "b%ld/%s:0", b, var);
                node_in(g, "g/b%ld/step_%s:0", b, var);
                node_stream(g, upd_stream);
                node_out(g, "float32", var_shape(v));
                node_end(g);
                node_begin(g, "Assign", "g/b%ld/upd_%s", b, var);
                node_in(g, "b%ld/%s:0", b, var);
                node_in(g, "g/b%ld/new_%s:0", b, var);
            }
            node_stream(g, upd_stream);
            node_extra(g, ",\"input_names\":[\"ref\",\"value\"],\"output_names\":[\"ref\"]");
            node_out_full(g, "float32", var_shape(v), -1, vattr);
            node_end(g);
        }
        node_begin(g, "NoOp", "g/b%ld/done", b);
        for (int v = 0; v < 10; v++)
            node_ctrl(g, "g/b%ld/upd_%s", b, block_vars[v]);
        node_end(g);
    }
}

/* Root-graph tail: final LayerNorm, tied-embedding logits, loss, its gradient into the last
 * block, then (after the blocks' backward, see main) the head's updates and NetOutput. */
static void emit_tail_forward(gen *g, long nblocks)
{
    char x[64];
    block_output(g, nblocks - 1, x, sizeof x);
    node_begin(g, "Variable", "lnf_g");
    node_out(g, "float32", SHP(HIDDEN));
    node_end(g);
    node_begin(g, "Variable", "lnf_b");
    node_out(g, "float32", SHP(HIDDEN));
    node_end(g);
    node_begin(g, "LayerNorm", "final_ln");
    node_in(g, "%s", x);
    node_in(g, "lnf_g:0");
    node_in(g, "lnf_b:0");
    node_attr(g, "begin_norm_axis", "2");
    node_attr(g, "begin_params_axis", "-1");
    node_attr(g, "epsilon", "1e-05");
    node_out(g, "float16", SHP(BATCH, SEQ, HIDDEN));
    node_out(g, "float32", SHP(BATCH, SEQ, 1));
    node_out(g, "float32", SHP(BATCH, SEQ, 1));
    node_end(g);
    emit_matmul(g, "BatchMatMulV2", "logits", "final_ln:0", "embed_c:0", false, true, "float16",
                SHP(BATCH, SEQ, VOCAB), 0);
    node_begin(g, "SparseSoftmaxCrossEntropyWithLogits", "loss");
    node_in(g, "logits:0");
    node_in(g, "labels:0");
    node_out(g, "float32", SHP(BATCH, SEQ));        /* loss */
    node_out(g, "float16", SHP(BATCH, SEQ, VOCAB)); /* backprop */
    node_end(g);
    node_begin(g, "ReduceMeanD", "loss_mean");
    node_in(g, "loss:0");
    node_attr(g, "axes", "[0,1]");
    node_attr(g, "keep_dims", "false");
    node_out(g, "float32", SCALAR);
    node_end(g);
    emit_matmul(g, "BatchMatMulV2", "g/logits_dx", "loss:1", "embed_c:0", false, false, "float16",
                SHP(BATCH, SEQ, HIDDEN), 0);
    node_begin(g, "LayerNormXBackprop", "g/lnf_dx");
    node_in(g, "g/logits_dx:0");
    node_in(g, "%s", x);
    node_in(g, "final_ln:1");
    node_in(g, "final_ln:2");
    node_in(g, "lnf_g:0");
    node_out(g, "float16", SHP(BATCH, SEQ, HIDDEN));
    node_end(g);
}
/* 8 nodes above; emit_tail_backward writes the other 16 (plus the padding). */

static void emit_update(gen *g, const char *var, const char *grad, shape s, int64_t stream)
{
    char vattr[96];
    node_begin(g, "Muls", "g/step_%s", var);
    node_in(g, "%s", grad);
    node_attr(g, "value", "-0.0001");
    node_stream(g, stream);
    node_out(g, "float32", s);
    node_end(g);
    snprintf(vattr, sizeof vattr, "{\"ref_var_src_var_name\":\"%s\"}", var);
    node_begin(g, "AssignAdd", "g/upd_%s", var);
    node_in(g, "%s:0", var);
    node_in(g, "g/step_%s:0", var);
    node_stream(g, stream);
    node_extra(g, ",\"input_names\":[\"ref\",\"value\"],\"output_names\":[\"ref\"]");
    node_out_full(g, "float32", s, -1, vattr);
    node_end(g);
}

static void emit_tail_backward(gen *g, long nblocks, const char *gin, long pad)
{
    char x[64];
    block_output(g, nblocks - 1, x, sizeof x);
    const int64_t side = side_stream(g, -1, 2);
    node_begin(g, "LayerNormBetaGammaBackprop", "g/d_lnf");
    node_in(g, "g/logits_dx:0");
    node_in(g, "%s", x);
    node_in(g, "final_ln:1");
    node_in(g, "final_ln:2");
    node_stream(g, side);
    node_out(g, "float32", SHP(HIDDEN));
    node_out(g, "float32", SHP(HIDDEN));
    node_end(g);
    emit_matmul(g, "BatchMatMulV2", "g/d_embed_out", "loss:1", "final_ln:0", true, false, "float32",
                SHP(VOCAB, HIDDEN), side);
    node_begin(g, "UnsortedSegmentSum", "g/d_embed_in");
    node_in(g, "%s", gin);
    node_in(g, "input_ids:0");
    node_attr(g, "num_segments", "%d", VOCAB);
    node_stream(g, side);
    node_out(g, "float32", SHP(VOCAB, HIDDEN));
    node_end(g);
    node_begin(g, "Add", "g/d_embed");
    node_in(g, "g/d_embed_out:0");
    node_in(g, "g/d_embed_in:0");
    node_stream(g, side);
    node_out(g, "float32", SHP(VOCAB, HIDDEN));
    node_end(g);
    node_begin(g, "ReduceSumD", "g/d_pos");
    node_in(g, "%s", gin);
    node_attr(g, "axes", "[0]");
    node_attr(g, "keep_dims", "false");
    node_stream(g, side);
    node_out(g, "float32", SHP(SEQ, HIDDEN));
    node_end(g);
    node_begin(g, "HcomAllReduce", "g/ar");
    node_in(g, "g/d_embed:0");
    node_in(g, "g/d_pos:0");
    node_in(g, "g/d_lnf:0");
    node_in(g, "g/d_lnf:1");
    node_attr(g, "_input_mutable", "true");
    node_attr(g, "reduction", "\"sum\"");
    node_attr(g, "group", "\"hccl_world_group\"");
    node_stream(g, side);
    node_out(g, "float32", SHP(VOCAB, HIDDEN));
    node_out(g, "float32", SHP(SEQ, HIDDEN));
    node_out(g, "float32", SHP(HIDDEN));
    node_out(g, "float32", SHP(HIDDEN));
    node_end(g);
    const int64_t upd = g->k.updates_side ? side : 0;
    emit_update(g, "embed_w", "g/ar:0", SHP(VOCAB, HIDDEN), upd);
    emit_update(g, "pos_w", "g/ar:1", SHP(SEQ, HIDDEN), upd);
    emit_update(g, "lnf_g", "g/ar:2", SHP(HIDDEN), upd);
    emit_update(g, "lnf_b", "g/ar:3", SHP(HIDDEN), upd);
    node_begin(g, "NoOp", "g/done");
    node_ctrl(g, "g/upd_embed_w");
    node_ctrl(g, "g/upd_pos_w");
    node_ctrl(g, "g/upd_lnf_g");
    node_ctrl(g, "g/upd_lnf_b");
    node_end(g);

    /* Padding up to exactly N nodes: scalar metrics on the loss (running mean, scaling), the
     * small bookkeeping ops a training step really carries. */
    static const char *const pad_types[4] = {"Muls", "Adds", "Cast", "Abs"};
    char prev[64] = "loss_mean:0";
    for (long i = 0; i < pad; i++) {
        node_begin(g, pad_types[i % 4], "metric/%ld", i);
        node_in(g, "%s", prev);
        if (i % 4 < 2)
            node_attr(g, "value", "0.5");
        node_out(g, "float32", SCALAR);
        node_end(g);
        snprintf(prev, sizeof prev, "metric/%ld:0", i);
    }

    node_begin(g, "NetOutput", "output");
    node_in(g, "loss_mean:0");
    node_in(g, "%s", prev);
    node_ctrl(g, "g/done");
    for (long b = 0; b < nblocks; b++)
        node_ctrl(g, "g/b%ld/done", b);
    node_end(g);
}

/* ---- subgraphs --------------------------------------------------------------------------------- */

static void emit_if_branches(gen *g, long b)
{
    char gname[64], parent[64];
    const shape act = SHP(BATCH, SEQ, HIDDEN);
    snprintf(parent, sizeof parent, "b%ld/if", b);

    /* then: scale and add back (a gated residual) */
    snprintf(gname, sizeof gname, "b%ld/then", b);
    graph_begin(g, gname, parent, NULL);
    node_begin(g, "Data", "%s/x", gname);
    node_attr(g, "index", "0");
    node_attr(g, "_parent_node_index", "1"); /* If input 0 is the predicate */
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "Muls", "%s/scale", gname);
    node_in(g, "%s/x:0", gname);
    node_attr(g, "value", "0.5");
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "Add", "%s/sum", gname);
    node_in(g, "%s/x:0", gname);
    node_in(g, "%s/scale:0", gname);
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "NetOutput", "%s/out", gname);
    node_in(g, "%s/sum:0", gname);
    node_extra(g, ",\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]");
    node_end(g);
    graph_end(g);

    /* else: a float32 round trip (what a loss-scaling fallback does) */
    snprintf(gname, sizeof gname, "b%ld/else", b);
    graph_begin(g, gname, parent, NULL);
    node_begin(g, "Data", "%s/x", gname);
    node_attr(g, "index", "0");
    node_attr(g, "_parent_node_index", "1");
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "Cast", "%s/up", gname);
    node_in(g, "%s/x:0", gname);
    node_attr(g, "dst_type", "0");
    node_out(g, "float32", act);
    node_end(g);
    node_begin(g, "Cast", "%s/down", gname);
    node_in(g, "%s/up:0", gname);
    node_attr(g, "dst_type", "1");
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "NetOutput", "%s/out", gname);
    node_in(g, "%s/down:0", gname);
    node_extra(g, ",\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]");
    node_end(g);
    graph_end(g);
}

/* The two loop variables every cond and body graph reads: x (activations) and i (counter). */
static void emit_loop_vars(gen *g, const char *gname, shape act)
{
    for (int i = 0; i < 2; i++) {
        node_begin(g, "Data", "%s/%s", gname, i ? "i" : "x");
        node_attr(g, "index", "%d", i);
        node_attr(g, "_parent_node_index", "%d", i);
        node_out(g, i ? "int32" : "float16", i ? SCALAR : act);
        node_end(g);
    }
}

static void emit_while_graphs(gen *g, long b)
{
    char gname[64], parent[64];
    const shape act = SHP(BATCH, SEQ, HIDDEN);
    snprintf(parent, sizeof parent, "b%ld/loop", b);

    /* cond: i < 3. GE's cond graph sees every loop variable and returns one bool; its output
     * is not one of the While's outputs, so it carries no _parent_node_index. */
    snprintf(gname, sizeof gname, "b%ld/cond", b);
    graph_begin(g, gname, parent, NULL);
    emit_loop_vars(g, gname, act);
    node_begin(g, "Const", "%s/limit", gname);
    node_attr(g, "value", "3");
    node_out(g, "int32", SCALAR);
    node_end(g);
    node_begin(g, "Less", "%s/less", gname);
    node_in(g, "%s/i:0", gname);
    node_in(g, "%s/limit:0", gname);
    node_out(g, "bool", SCALAR);
    node_end(g);
    node_begin(g, "NetOutput", "%s/out", gname);
    node_in(g, "%s/less:0", gname);
    node_end(g);
    graph_end(g);

    /* body: x + tanh(x), i + 1; outputs map back to the loop variables in order */
    snprintf(gname, sizeof gname, "b%ld/body", b);
    graph_begin(g, gname, parent, NULL);
    emit_loop_vars(g, gname, act);
    node_begin(g, "Const", "%s/one", gname);
    node_attr(g, "value", "1");
    node_out(g, "int32", SCALAR);
    node_end(g);
    node_begin(g, "Add", "%s/inc", gname);
    node_in(g, "%s/i:0", gname);
    node_in(g, "%s/one:0", gname);
    node_out(g, "int32", SCALAR);
    node_end(g);
    node_begin(g, "Tanh", "%s/tanh", gname);
    node_in(g, "%s/x:0", gname);
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "Add", "%s/next", gname);
    node_in(g, "%s/x:0", gname);
    node_in(g, "%s/tanh:0", gname);
    node_out(g, "float16", act);
    node_end(g);
    node_begin(g, "NetOutput", "%s/out", gname);
    node_in(g, "%s/next:0", gname);
    node_in(g, "%s/inc:0", gname);
    node_extra(g, ",\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}},"
                  "{\"attrs\":{\"_parent_node_index\":1}}]");
    node_end(g);
    graph_end(g);
}

/* ---- driver ------------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gen_graph --nodes N [--shape bench|sched] [--streams S] [--seed K]\n"
            "                 [--atomic-every B] [--while-one-in K] [--allreduce-every B]\n"
            "                 [--order-edges PCT] [--updates-side] [-o FILE]\n"
            "  writes a transformer-like training-step model in graphmem JSON with exactly N\n"
            "  nodes over all graphs (N >= %d); S streams (default 2), seed K (default 1);\n"
            "  --atomic-every B: every B-th block's weight gradients are atomic outputs (0: none)\n"
            "  --while-one-in K: about one block in K gets a While (default 12)\n"
            "  --allreduce-every B: one HcomAllReduce over every B blocks' gradients (default 1)\n"
            "  --order-edges PCT: PCT%% of root ops get a control edge from the op before them on\n"
            "    their stream, as a stream scheduler writes (default 0)\n"
            "  --updates-side: the optimizer's Assign updates run on a side stream\n"
            "  --shape sched: a stream-scheduled graph (issue 28's second shape): --while-one-in 72\n"
            "    --allreduce-every 50 --atomic-every 71 --order-edges 40 --updates-side; options\n"
            "    given after --shape override it. --shape bench (default) is the plain benchmark.\n",
            HEAD_NODES + TAIL_NODES);
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static const knobs k_bench = {WHILE_ONE_IN, 1, 0, 0, false};
static const knobs k_sched = {72, 50, 71, 40, true};

int main(int argc, char **argv)
{
    long nodes = -1, streams = 2, seed = 1;
    knobs k = k_bench;
    const char *out_path = NULL;
    const struct {
        const char *flag;
        long lo, hi, *v;
    } nums[] = {
        {"--nodes", HEAD_NODES + TAIL_NODES, 100000000L, &nodes},
        {"--streams", 1, 64, &streams},
        {"--seed", 0, 2147483647L, &seed},
        {"--atomic-every", 0, 1000000L, &k.atomic_every},
        {"--while-one-in", 1, 1000000L, &k.while_one_in},
        {"--allreduce-every", 1, 1000L, &k.ar_every},
        {"--order-edges", 0, 100L, &k.order_pct},
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        size_t num = 0;
        while (num < sizeof nums / sizeof nums[0] && strcmp(a, nums[num].flag)) num++;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (num < sizeof nums / sizeof nums[0] && has_val) {
            if (!parse_long(argv[++i], nums[num].lo, nums[num].hi, nums[num].v)) {
                fprintf(stderr, "gen_graph: %s wants an integer in %ld..%ld, got '%s'\n", a, nums[num].lo,
                        nums[num].hi, argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--updates-side")) {
            k.updates_side = true;
        } else if (!strcmp(a, "--shape") && has_val) {
            const char *v = argv[++i];
            if (!strcmp(v, "sched")) {
                k = k_sched;
            } else if (!strcmp(v, "bench")) {
                k = k_bench;
            } else {
                fprintf(stderr, "gen_graph: --shape wants bench or sched, got '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "-o") && has_val) {
            out_path = argv[++i];
        } else {
            fprintf(stderr, "gen_graph: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (nodes < 0) {
        usage(stderr);
        return 2;
    }

    gen g = {0};
    g.streams = (int)streams;
    g.seed = (uint64_t)seed;
    g.k = k;
    g.first_graph = true;

    /* Plan: as many whole blocks as fit, the rest is padding. */
    long budget = nodes - HEAD_NODES - TAIL_NODES, nblocks = 0;
    while (block_nodes(&g, nblocks) <= budget)
        budget -= block_nodes(&g, nblocks++);
    long pad = budget;
    g.nblocks = nblocks;

    g.f = out_path ? fopen(out_path, "w") : stdout;
    if (!g.f) {
        fprintf(stderr, "gen_graph: cannot open '%s': %s\n", out_path, strerror(errno));
        return 2;
    }
    /* Large buffer: the output is tens of megabytes written in small pieces. */
    static char iobuf[1 << 20];
    setvbuf(g.f, iobuf, _IOFBF, sizeof iobuf);

    fprintf(g.f, "{\"graphmem\":1,\"name\":\"transformer_train_step_%ld\",\n"
                 "\"options\":{\"ge.featureBaseRefreshable\":\"0\",\"ge.buildGraphMode\":\"online\"},\n"
                 "\"graphs\":[",
            nodes);
    graph_begin(&g, "root", NULL, "{\"_dynamic_shape_partitioned\":false}");
    g.in_root = true;
    emit_head(&g);
    for (long b = 0; b < nblocks; b++)
        emit_block_forward(&g, b);
    emit_tail_forward(&g, nblocks);
    char gin[64] = "g/lnf_dx:0";
    for (long b = nblocks - 1; b >= 0; b--) {
        emit_block_backward(&g, b, gin);
        snprintf(gin, sizeof gin, "g/b%ld/dx:0", b);
    }
    emit_tail_backward(&g, nblocks, gin, pad);
    graph_end(&g);
    g.in_root = false;
    for (long b = 0; b < nblocks; b++) {
        if (block_has_if(b))
            emit_if_branches(&g, b);
        if (block_has_while(&g, b))
            emit_while_graphs(&g, b);
    }
    fputs("\n]}\n", g.f);

    if (g.written != nodes) {
        /* A piece's node count drifted from the constants above: a bug in this file. */
        fprintf(stderr, "gen_graph: internal error: wrote %ld nodes, planned %ld\n", g.written, nodes);
        return 3;
    }
    if (fflush(g.f) || ferror(g.f) || (out_path && fclose(g.f))) {
        fprintf(stderr, "gen_graph: write failed: %s\n", strerror(errno));
        return 2;
    }
    sbuf *bufs[] = {&g.name, &g.type, &g.in, &g.ctrl, &g.attrs, &g.outs, &g.subs, &g.extra};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]->p);
    return 0;
}
