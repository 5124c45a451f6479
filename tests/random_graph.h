/*
 * random_graph.h — valid random graphs in graphmem JSON, with the features memory planning
 * must get right: several streams tied by control edges, subgraphs (If branches, While cond
 * and body), variables updated in place by Assign, collectives that write their inputs,
 * continuous inputs and outputs, views, atomic outputs, batch labels, tensors of run-time size
 * and in-place abilities. The same seed gives the same text. Header-only (tests include it).
 */
#ifndef GM_RANDOM_GRAPH_H
#define GM_RANDOM_GRAPH_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rg {
    uint64_t state;
    char *buf;
    size_t len, cap;
    int n_tensors;
    char tensors[256][48]; /* "node:out" of float tensors that may be read */
    int size[256];         /* their element counts */
    int nodes, streams;
    bool first_node;
    bool dynamic; /* has tensors of run-time size; then no continuous groups (see rg_graph) */
    char join[2][40]; /* control inputs the next node takes (see rg_stream) */
    char last[40];    /* the node begun last */
} rg;

static uint64_t rg_next(rg *g)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rg_pick(rg *g, int n) { return (int)(rg_next(g) % (uint64_t)n); }

static void rg_put(rg *g, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < g->cap - g->len) {
            g->len += (size_t)k;
            return;
        }
        g->cap = g->cap * 2 + (size_t)(k > 0 ? k : 256) + 1;
        g->buf = realloc(g->buf, g->cap);
        if (!g->buf) abort();
    }
}

static void rg_tensor(rg *g, const char *node, int out, int elems)
{
    if (g->n_tensors == 256) { /* keep the recent half */
        memmove(g->tensors, g->tensors + 128, sizeof g->tensors / 2);
        memmove(g->size, g->size + 128, sizeof g->size / 2);
        g->n_tensors = 128;
    }
    snprintf(g->tensors[g->n_tensors], sizeof g->tensors[0], "%s:%d", node, out);
    g->size[g->n_tensors++] = elems;
}

/* A random readable tensor; elems receives its size. */
static const char *rg_input(rg *g, int *elems)
{
    int i = g->n_tensors - 1 - rg_pick(g, g->n_tensors < 12 ? g->n_tensors : 12); /* mostly recent */
    *elems = g->size[i];
    return g->tensors[i];
}

static void rg_begin_node(rg *g, const char *name, const char *type)
{
    rg_put(g, "%s{\"name\":\"%s\",\"type\":\"%s\"", g->first_node ? "" : ",", name, type);
    g->first_node = false;
    const char *sep = ",\"control_inputs\":[";
    for (int k = 0; k < 2; k++)
        if (g->join[k][0]) {
            rg_put(g, "%s\"%s\"", sep, g->join[k]);
            sep = ",";
            g->join[k][0] = '\0';
        }
    if (*sep == ',' && sep[1] == '\0') rg_put(g, "]");
    snprintf(g->last, sizeof g->last, "%s", name);
}

/* Side streams fork, and half the time join: a node put on a side stream is then a control
 * input of the next node. Without the join a reader on a side stream runs beside later writes
 * of its buffer on stream 0 (in place, collectives, loops): the passes must order or copy them
 * (analysis/readers_before.h). */
static void rg_stream(rg *g)
{
    int s = g->streams > 1 && rg_pick(g, 3) == 0 ? 1 + rg_pick(g, g->streams - 1) : 0;
    if (!s) return;
    rg_put(g, ",\"stream\":%d", s);
    if (rg_pick(g, 2)) snprintf(g->join[0], sizeof g->join[0], "%s", g->last);
}

static void rg_out(rg *g, int elems, bool dynamic)
{
    if (dynamic) rg_put(g, "{\"dtype\":\"float32\",\"shape\":[-1]}");
    else rg_put(g, "{\"dtype\":\"float32\",\"shape\":[%d]}", elems);
}

/* The input of an op that writes it in place (an in-place ability, a collective, a loop): half
 * the time tensor a itself, read by others too — the passes must then copy it or drop the
 * in-place pair, since a reader may follow the write or run beside it on another stream —
 * and half the time a private copy of a (a Relu read by nobody else). */
static const char *rg_private(rg *g, int i, const char *a, int e, char *out, size_t cap)
{
    if (rg_pick(g, 2)) return a;
    char name[40];
    snprintf(name, sizeof name, "n%d_own", i);
    rg_begin_node(g, name, "Relu");
    rg_put(g, ",\"inputs\":[\"%s\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]}", a, e);
    snprintf(out, cap, "%s:0", name);
    return out;
}

/* One body-less node of a random kind; names are n<i>. */
static void rg_node(rg *g, int i)
{
    char name[32], own[48];
    snprintf(name, sizeof name, "n%d", i);
    int e1, e2;
    const char *a = rg_input(g, &e1);
    int kind = rg_pick(g, 12);
    if (kind <= 3) { /* elementwise, sometimes in place, atomic or batch-labelled */
        static const char *const un[] = {"Relu", "Sigmoid", "Tanh", "Exp"};
        const char *type = un[rg_pick(g, 4)];
        int flavour = rg_pick(g, 8);
        if (flavour == 0) a = rg_private(g, i, a, e1, own, sizeof own);
        /* a make_fx in-place op (a ref pair: input and output named self) on a itself, which
         * others read before or after it, on any stream: only the list orders them, until the
         * access-order pass adds the edge */
        if (flavour == 3) type = "aten.hardtanh_.default";
        rg_begin_node(g, name, type);
        rg_put(g, ",\"inputs\":[\"%s\"]", a);
        if (flavour == 0) rg_put(g, ",\"attrs\":{\"_output_inplace_ability\":[[0,0]]}");
        if (flavour == 3)
            rg_put(g, ",\"input_names\":[\"self\"],\"output_names\":[\"self\"],\"attrs\":{\"reference\":true}");
        if (flavour == 1) rg_put(g, ",\"attrs\":{\"atomic_output_index\":[0]}");
        if (flavour == 2) rg_put(g, ",\"attrs\":{\"_batch_label\":\"batch_%d\"}", rg_pick(g, 2));
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1, false);
        rg_put(g, "]}");
        /* a batch branch's tensor stays in its branch: read by nobody outside (a continuous
         * group mixing batch labels would be a graph no runtime runs) */
        if (flavour != 2) rg_tensor(g, name, 0, e1);
    } else if (kind <= 5) { /* binary on two tensors of one size */
        const char *b = rg_input(g, &e2);
        if (e2 != e1) b = a;
        rg_begin_node(g, name, kind == 4 ? "Add" : "Mul");
        rg_put(g, ",\"inputs\":[\"%s\",\"%s\"]", a, b);
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1, false);
        rg_put(g, "]}");
        rg_tensor(g, name, 0, e1);
    } else if (kind == 6) { /* continuous inputs */
        /* any two tensors: one buffer twice (through a view too), or buffers of other groups,
         * whose demands together can close a cycle no layout satisfies (split A [a0 a1], split
         * B [b0 b1], concats [a1 b0] and [b1 a0]); the layout pass then copies a member
         * (conflict/layout_groups.c) */
        const char *b = rg_input(g, &e2);
        bool block = !g->dynamic;
        rg_begin_node(g, name, "ConcatD");
        rg_put(g, ",\"inputs\":[\"%s\",\"%s\"],\"attrs\":{\"continuous_input\":%s,\"concat_dim\":0}", a, b,
               block ? "true" : "false");
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1 + e2, false);
        rg_put(g, "]}");
        rg_tensor(g, name, 0, e1 + e2);
    } else if (kind == 7) { /* continuous outputs */
        rg_begin_node(g, name, "SplitD");
        rg_put(g, ",\"inputs\":[\"%s\"],\"attrs\":{\"continuous_output\":%s,\"split_dim\":0,\"num_split\":2}", a,
               g->dynamic ? "false" : "true");
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, (e1 + 1) / 2, false);
        rg_put(g, ",");
        rg_out(g, (e1 + 1) / 2, false);
        rg_put(g, "]}");
        rg_tensor(g, name, 0, (e1 + 1) / 2);
        rg_tensor(g, name, 1, (e1 + 1) / 2);
    } else if (kind == 8) { /* a view */
        rg_begin_node(g, name, "Reshape");
        rg_put(g, ",\"inputs\":[\"%s\"]", a);
        rg_stream(g);
        rg_put(g, ",\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d],\"reuse_input\":true,\"reuse_input_index\":0}]}",
               e1);
        rg_tensor(g, name, 0, e1);
    } else if (kind == 9) { /* a collective that writes its input */
        a = rg_private(g, i, a, e1, own, sizeof own);
        rg_begin_node(g, name, "HcomAllReduce");
        rg_put(g, ",\"inputs\":[\"%s\"],\"attrs\":{\"_input_mutable\":true,\"reduction\":\"sum\"}", a);
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1, false);
        rg_put(g, "]}");
        rg_tensor(g, name, 0, e1);
    } else if (kind == 10 && g->dynamic) { /* a tensor of run-time size, read once */
        rg_begin_node(g, name, "Unique");
        rg_put(g, ",\"inputs\":[\"%s\"]", a);
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1, true);
        rg_put(g, "]}");
        char name2[40];
        snprintf(name2, sizeof name2, "n%d_size", i);
        rg_begin_node(g, name2, "ReduceSumD");
        rg_put(g, ",\"inputs\":[\"%s:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]}", name, e1);
        rg_tensor(g, name2, 0, e1);
    } else { /* a control edge from the previous node: cross-stream order */
        if (kind == 10) rg_pick(g, 2); /* keep the stream of choices the same shape */
        if (i > 0 && strcmp(g->join[0], g->last)) snprintf(g->join[1], sizeof g->join[1], "%s", g->last);
        rg_begin_node(g, name, "Relu");
        rg_put(g, ",\"inputs\":[\"%s\"]", a);
        rg_stream(g);
        rg_put(g, ",\"outputs\":[");
        rg_out(g, e1, false);
        rg_put(g, "]}");
        rg_tensor(g, name, 0, e1);
    }
}

/* Writes one graph: JSON text (malloc'd, NUL-terminated) for seed. `nodes` body-less nodes in
 * the root graph, plus an If and a While with small bodies now and then. */
static char *rg_graph(uint64_t seed, int nodes, int streams)
{
    rg g;
    memset(&g, 0, sizeof g);
    g.state = seed;
    g.streams = streams;
    g.cap = 4096;
    g.buf = malloc(g.cap);
    if (!g.buf) abort();
    g.buf[0] = '\0';
    int with_if = rg_pick(&g, 2), with_while = rg_pick(&g, 2); /* then: the bodies' tensor size */
    /* A graph with tensors of run-time size is not a static graph to GE, whose layout pass then
     * leaves continuous groups to the dynamic runtime (reference §2.1); graphmem does the same,
     * so such a graph has no static plan if it also asks for continuous memory. One graph in
     * four has run-time sizes, and no continuous groups. */
    g.dynamic = rg_pick(&g, 4) == 0;
    rg_put(&g, "{\"graphmem\":1,\"name\":\"random_%llu\",\"graphs\":[{\"name\":\"root\",\"nodes\":[",
           (unsigned long long)seed);
    g.first_node = true;
    static const int sizes[] = {64, 256, 1024, 4096};
    for (int d = 0; d < 2; d++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", d);
        int e = sizes[rg_pick(&g, 4)];
        rg_begin_node(&g, name, "Data");
        rg_put(&g, ",\"attrs\":{\"index\":%d},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]}", d, e);
        rg_tensor(&g, name, 0, e);
    }
    int ev = sizes[rg_pick(&g, 4)];
    rg_begin_node(&g, "var", "Variable");
    rg_put(&g, ",\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]}", ev);
    rg_begin_node(&g, "flag", "Data");
    rg_put(&g, ",\"attrs\":{\"index\":2},\"outputs\":[{\"dtype\":\"bool\",\"shape\":[]}]}");
    for (int i = 0; i < nodes; i++) {
        rg_node(&g, i);
        if (with_if && i == nodes / 3) {
            int e;
            const char *a = rg_input(&g, &e);
            rg_begin_node(&g, "cond", "If");
            rg_put(&g, ",\"inputs\":[\"flag:0\",\"%s\"],\"subgraphs\":[\"then_g\",\"else_g\"],\"outputs\":[{\"dtype\":"
                       "\"float32\",\"shape\":[%d]}]}", a, e);
            rg_tensor(&g, "cond", 0, e);
            with_if = e; /* remember the size for the bodies */
        }
        if (with_while && i == 2 * nodes / 3) {
            int e;
            char own[48];
            /* a While writes its loop variable in place: shared or its own copy (rg_private) */
            const char *src = rg_input(&g, &e);
            const char *a = rg_private(&g, 1000 + i, src, e, own, sizeof own);
            rg_begin_node(&g, "loop", "While");
            rg_put(&g, ",\"inputs\":[\"%s\"],\"subgraphs\":[\"loop_cond\",\"loop_body\"],\"outputs\":[{\"dtype\":"
                       "\"float32\",\"shape\":[%d]}]}", a, e);
            rg_tensor(&g, "loop", 0, e);
            with_while = e;
        }
    }
    int e, e2;
    const char *v = rg_input(&g, &e);
    rg_begin_node(&g, "upd", "Assign");
    /* the update reads a tensor of the variable's size: a fresh Relu of an input keeps sizes apart */
    rg_put(&g, ",\"inputs\":[\"var:0\",\"in0:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]}", ev);
    (void)v;
    const char *o1 = rg_input(&g, &e2);
    rg_begin_node(&g, "out", "NetOutput");
    rg_put(&g, ",\"inputs\":[\"%s\"],\"control_inputs\":[\"upd\"]}]}", o1);
    if (with_if) {
        int es = with_if;
        rg_put(&g, ",{\"name\":\"then_g\",\"parent\":\"cond\",\"nodes\":[{\"name\":\"t_in\",\"type\":\"Data\",\"attrs\":"
                   "{\"_parent_node_index\":1},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},{\"name\":\"t_op\","
                   "\"type\":\"Sigmoid\",\"inputs\":[\"t_in:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},"
                   "{\"name\":\"t_out\",\"type\":\"NetOutput\",\"inputs\":[\"t_op:0\"],\"input_descs\":[{\"attrs\":"
                   "{\"_parent_node_index\":0}}]}]}", es, es);
        rg_put(&g, ",{\"name\":\"else_g\",\"parent\":\"cond\",\"nodes\":[{\"name\":\"e_in\",\"type\":\"Data\",\"attrs\":"
                   "{\"_parent_node_index\":1},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},{\"name\":\"e_out\","
                   "\"type\":\"NetOutput\",\"inputs\":[\"e_in:0\"],\"input_descs\":[{\"attrs\":{\"_parent_node_index\":0}}]}]}",
               es);
    }
    if (with_while) {
        int es = with_while;
        rg_put(&g, ",{\"name\":\"loop_cond\",\"parent\":\"loop\",\"nodes\":[{\"name\":\"c_in\",\"type\":\"Data\",\"attrs\":"
                   "{\"_parent_node_index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},{\"name\":\"c_op\","
                   "\"type\":\"ReduceAny\",\"inputs\":[\"c_in:0\"],\"outputs\":[{\"dtype\":\"bool\",\"shape\":[]}]},"
                   "{\"name\":\"c_out\",\"type\":\"NetOutput\",\"inputs\":[\"c_op:0\"]}]}", es);
        rg_put(&g, ",{\"name\":\"loop_body\",\"parent\":\"loop\",\"nodes\":[{\"name\":\"b_in\",\"type\":\"Data\",\"attrs\":"
                   "{\"_parent_node_index\":0},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},{\"name\":\"b_op\","
                   "\"type\":\"Tanh\",\"inputs\":[\"b_in:0\"],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[%d]}]},"
                   "{\"name\":\"b_out\",\"type\":\"NetOutput\",\"inputs\":[\"b_op:0\"],\"input_descs\":[{\"attrs\":"
                   "{\"_parent_node_index\":0}}]}]}", es, es);
    }
    rg_put(&g, "]}");
    return g.buf;
}

#endif
