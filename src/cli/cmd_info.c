/* cmd_info.c — `graphmem info MODEL`: what a model holds, per graph, with byte totals; as text
 * or, with --json, the same figures as one JSON object. */
#include <cjson/cJSON.h>
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

/* The op types by count, most common first (a linear scan over distinct types: models have
 * few); *n of them, free the array. NULL when out of memory. */
static type_count *count_op_types(const gm_model *m, size_t *count)
{
    size_t cap = 64, n = 0;
    type_count *tc = malloc(cap * sizeof *tc);
    if (!tc) return NULL;
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
    *count = n;
    return tc;
}

static void print_op_types(const gm_model *m)
{
    size_t n = 0;
    type_count *tc = count_op_types(m, &n);
    if (!tc) return;
    printf("op types          %zu:", n);
    for (size_t j = 0; j < n && j < 12; j++) printf("%s %s %zu", j ? "," : "", tc[j].type, tc[j].n);
    printf("%s\n", n > 12 ? ", ..." : "");
    free(tc);
}

static int print_json(const gm_model *m, const gm_model_stats *st)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", gm_model_name(m));
    cJSON_AddStringToObject(j, "source", gm_model_source(m));
    cJSON *graphs = cJSON_AddArrayToObject(j, "graphs");
    for (size_t i = 0; i < gm_model_graph_count(m); i++) {
        gm_graph *g = gm_model_graph(m, i);
        gm_node *p = gm_graph_parent(g);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", gm_graph_name(g));
        cJSON_AddNumberToObject(e, "nodes", (double)gm_graph_node_count(g));
        if (p) cJSON_AddStringToObject(e, "parent", gm_node_name(p));
        cJSON_AddItemToArray(graphs, e);
    }
    cJSON_AddNumberToObject(j, "nodes", (double)st->nodes);
    cJSON_AddNumberToObject(j, "data_edges", (double)st->data_edges);
    cJSON_AddNumberToObject(j, "control_edges", (double)st->control_edges);
    cJSON_AddNumberToObject(j, "streams", (double)st->streams);
    gm_cli_json_tensors(j, st, NULL);
    cJSON_AddNumberToObject(j, "tensor_bytes", (double)st->tensor_bytes);
    cJSON_AddNumberToObject(j, "fixed_bytes", (double)st->fixed_bytes);
    cJSON_AddNumberToObject(j, "user_input_bytes", (double)st->user_input_bytes);
    cJSON *by = cJSON_AddObjectToObject(j, "bytes_by_memory_type");
    for (int t = 0; t < GM_MEM_COUNT; t++)
        cJSON_AddNumberToObject(by, gm_mem_type_name((gm_mem_type)t), (double)st->bytes_by_mem_type[t]);
    size_t n = 0;
    type_count *tc = count_op_types(m, &n);
    cJSON *types = cJSON_AddObjectToObject(j, "op_types");
    for (size_t k = 0; tc && k < n; k++) cJSON_AddNumberToObject(types, tc[k].type, (double)tc[k].n);
    free(tc);
    /* The model's outputs as graphmem sizes them (what shape inference derived): a tool can hold
     * them against a run's real output tensors. A dim of -1 is unknown until run time; a
     * shape of null, an unknown rank. */
    cJSON *outs = cJSON_AddArrayToObject(j, "outputs");
    gm_graph *root = gm_model_graph_count(m) ? gm_model_graph(m, 0) : NULL;
    for (size_t i = 0; root && i < gm_graph_node_count(root); i++) {
        const gm_node *no = gm_graph_node(root, i);
        if (strcmp(gm_node_type(no), "NetOutput") != 0) continue;
        for (size_t k = 0; k < gm_node_input_count(no); k++) {
            int32_t idx = -1;
            const gm_node *src = gm_node_input(no, k, &idx);
            const gm_tensor_desc *d = src && idx >= 0 ? gm_node_output_desc(src, (size_t)idx) : NULL;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "index", (double)k);
            if (src) cJSON_AddStringToObject(e, "node", gm_node_name(src));
            if (d) {
                cJSON_AddStringToObject(e, "dtype", gm_dtype_name(gm_desc_dtype(d)));
                int32_t nd = gm_desc_ndims(d);
                const int64_t *dims = gm_desc_dims(d);
                bool unknown_rank = nd < 0 || (nd == 1 && dims[0] == -2);
                if (unknown_rank) {
                    cJSON_AddNullToObject(e, "shape");
                } else {
                    cJSON *sh = cJSON_AddArrayToObject(e, "shape");
                    for (int32_t q = 0; q < nd; q++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)dims[q]));
                }
            }
            cJSON_AddItemToArray(outs, e);
        }
        break; /* the first NetOutput is the model's outputs */
    }
    cJSON *opts = cJSON_AddObjectToObject(j, "options");
    for (size_t i = 0; i < gm_model_option_count(m); i++) {
        const char *k, *v;
        gm_model_option_at(m, i, &k, &v);
        cJSON_AddStringToObject(opts, k, v);
    }
    return gm_cli_print_json(j);
}

int gm_cmd_info(const gm_cli_opts *o)
{
    gm_error err;
    gm_model *m = NULL;
    gm_error_clear(&err);
    gm_cli_progress_start(o, "reading the model");
    if (gm_cli_load(o, false, &m, &err) != GM_OK) return gm_cli_fail(&err);
    gm_model_stats st;
    gm_model_get_stats(m, &st);
    gm_cli_progress_stop();
    if (o->json) {
        int rc = print_json(m, &st);
        gm_model_free(m);
        return rc;
    }
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
    gm_cli_print_tensors(0, 18, "tensors", &st, NULL);
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
