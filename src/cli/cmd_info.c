/* cmd_info.c — `graphmem info MODEL`: what a model holds, per graph, with byte totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graphmem/io.h"

typedef struct type_count {
    const char *type;
    size_t n;
} type_count;

static int by_count_then_name(const void *a, const void *b)
{
    const type_count *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->type, y->type);
}

/* The most common op types (a linear scan over distinct types: models have few). */
static void print_op_types(const gm_model *m)
{
    size_t cap = 64, n = 0;
    type_count *tc = malloc(cap * sizeof *tc);
    if (!tc) return;
    for (size_t i = 0; i < gm_model_node_count(m); i++) {
        const char *t = gm_node_type(gm_model_node_at(m, i));
        size_t j = 0;
        while (j < n && strcmp(tc[j].type, t) != 0) j++;
        if (j == n) {
            if (n == cap) {
                type_count *g = realloc(tc, 2 * cap * sizeof *tc);
                if (!g) break;
                tc = g;
                cap *= 2;
            }
            tc[n++] = (type_count){t, 0};
        }
        tc[j].n++;
    }
    qsort(tc, n, sizeof *tc, by_count_then_name);
    printf("op types          %zu:", n);
    for (size_t j = 0; j < n && j < 12; j++) printf("%s %s %zu", j ? "," : "", tc[j].type, tc[j].n);
    printf("%s\n", n > 12 ? ", ..." : "");
    free(tc);
}

int gm_cmd_info(const gm_cli_opts *o)
{
    gm_error err;
    gm_model *m = NULL;
    gm_error_clear(&err);
    if (gm_cli_load(o, false, &m, &err) != GM_OK) return gm_cli_fail(&err);
    gm_model_stats st;
    gm_model_get_stats(m, &st);
    printf("model             %s (%s)\n", gm_model_name(m), gm_model_source(m));
    printf("graphs            %zu\n", st.graphs);
    for (size_t i = 0; i < gm_model_graph_count(m); i++) {
        gm_graph *g = gm_model_graph(m, i);
        gm_node *p = gm_graph_parent(g);
        printf("  %-20s %6zu nodes%s%s\n", gm_graph_name(g), gm_graph_node_count(g), p ? "  parent " : "  (root)",
               p ? gm_node_name(p) : "");
    }
    printf("nodes             %zu\n", st.nodes);
    printf("edges             %zu data, %zu control\n", st.data_edges, st.control_edges);
    printf("streams           %zu (highest id %lld)\n", st.streams, (long long)st.max_stream);
    printf("tensors           %zu (%zu of run-time size)\n", st.tensors, st.dynamic_tensors);
    printf("tensor bytes      %lld (each output on its own, before reuse)\n", (long long)st.tensor_bytes);
    printf("fixed bytes       %lld (constants and variables)\n", (long long)st.fixed_bytes);
    printf("user input bytes  %lld (root Data outputs)\n", (long long)st.user_input_bytes);
    printf("by memory type   ");
    for (int t = 0; t < GM_MEM_COUNT; t++) {
        printf(" %s %lld%s", gm_mem_type_name((gm_mem_type)t), (long long)st.bytes_by_mem_type[t],
               t + 1 < GM_MEM_COUNT ? "," : "\n");
    }
    print_op_types(m);
    if (gm_model_option_count(m)) {
        printf("options          ");
        for (size_t i = 0; i < gm_model_option_count(m); i++) {
            const char *k, *v;
            gm_model_option_at(m, i, &k, &v);
            printf(" %s=%s", k, v);
        }
        printf("\n");
    }
    gm_model_free(m);
    return 0;
}
