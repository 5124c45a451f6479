/*
 * verify_passes.c — graphmem's plan verified against the user's own model (graphmem/plan.h,
 * gm_plan_verify_json_original).
 *
 * A plan is made for the graph after the compiler passes, which insert copies, clean nodes and
 * control edges, while the user holds the model as it was. The plan records the passes that
 * ran and the GE options they read ("passes", "options", plan_write.c). The passes are
 * deterministic, so they run again here on the user's model and must insert what the plan
 * lists ("inserted"); the plan is then verified against the graph they leave.
 *
 * Why run them again rather than apply the plan's list: the list says where each node goes,
 * not what the passes rewire around it (a copy's consumers, a clean node's control edges, the
 * attributes in-place reuse sets), and a second description of those edits would have to be
 * kept in step with the passes. The verifier proper (verify.c) is unchanged and independent of
 * the planner: it checks a plan against a graph; the passes are the compiler's, not the
 * planner's.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphmem/io.h"
#include "graphmem/passes.h"
#include "graphmem/plan.h"
#include "io/json_split.h"
#include "util/alloc.h"

/* The plan's small top-level fields as one cJSON tree: its big arrays (symbols, order) left
 * out unparsed when the split can be trusted. NULL when the text is not JSON (the verifier
 * then says why). */
static cJSON *parse_head(const char *text, size_t len, bool *nomem)
{
    static const char *const paths[] = {"symbols", "order"};
    gm_json_split split = {0};
    cJSON *root = NULL;
    *nomem = false;
    gm_json_split_result r = gm_json_split_scan_paths(text, len, paths, 2, &split);
    if (r == GM_JSON_SPLIT_OK) {
        size_t slen;
        char *sk = gm_json_split_skeleton(text, len, &split, &slen);
        if (!sk) *nomem = true;
        else root = cJSON_ParseWithLength(sk, slen);
        gm_free(sk);
    } else if (r == GM_JSON_SPLIT_NOMEM) {
        *nomem = true;
    } else {
        root = cJSON_ParseWithLength(text, len);
    }
    gm_json_split_free(&split);
    return root;
}

gm_status gm_plan_json_dims(const char *text, size_t len, const char *source, char ***dims, gm_error *err)
{
    *dims = NULL;
    bool nomem;
    cJSON *root = parse_head(text, len, &nomem);
    if (nomem) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "dims"), *x;
    size_t n = 0;
    gm_status st = GM_OK;
    if (d && !cJSON_IsArray(d)) {
        st = gm_error_set(err, GM_ERR_INPUT, "%s: \"dims\" must be a list of strings", source);
        d = NULL;
    }
    int count = d ? cJSON_GetArraySize(d) : 0;
    const char **v = count ? gm_malloc((size_t)count * sizeof *v) : NULL;
    if (count && !v) {
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
        d = NULL;
    }
    cJSON_ArrayForEach(x, d)
    {
        if (!cJSON_IsString(x)) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s: \"dims\" entry %zu must be a string (NAME=VALUE)", source, n);
            break;
        }
        v[n++] = x->valuestring;
    }
    if (st == GM_OK && n && !(*dims = gm_strv_dup(v, n))) st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    gm_free(v);
    cJSON_Delete(root);
    return st;
}

static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : "";
}

/* The plan's "passes" as a pass set; false when a name is not a pass of this version (the
 * plan is then verified as it is, and the name reported). */
static bool pass_set(const cJSON *passes, gm_pass_set *set, size_t *n, const char **bad)
{
    *set = 0;
    *n = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, passes)
    {
        gm_pass_id id;
        if (!cJSON_IsString(x) || !gm_pass_from_name(x->valuestring, &id)) {
            *bad = cJSON_IsString(x) ? x->valuestring : "(not a name)";
            return false;
        }
        *set |= (gm_pass_set)1u << id;
        (*n)++;
    }
    return true;
}

/* Whether m already holds what the passes would insert: the graph after the passes, which
 * --dump-graph wrote, where running them again would insert a second time. The first entry
 * tells: an inserted node that is there, or an ordering edge already drawn. */
static bool already_passed(const gm_model *m, const cJSON *inserted)
{
    const cJSON *x = cJSON_IsArray(inserted) ? inserted->child : NULL;
    if (!x) return false;
    const cJSON *edge = cJSON_GetObjectItemCaseSensitive(x, "edge");
    if (!cJSON_IsObject(edge)) return gm_model_find_node(m, str_at(x, "node")) != NULL;
    const gm_node *from = gm_model_find_node(m, str_at(edge, "from")), *to = gm_model_find_node(m, str_at(edge, "to"));
    for (size_t i = 0; from && to && i < gm_node_control_input_count(to); i++)
        if (gm_node_control_input(to, i) == from) return true;
    return false;
}

typedef struct mismatch {
    gm_plan_problem *v;
    size_t n, cap;
} mismatch;

static gm_status add_mismatch(mismatch *mm, const char *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gm_status add_mismatch(mismatch *mm, const char *node, const char *fmt, ...)
{
    if (gm_grow((void **)&mm->v, sizeof *mm->v, mm->n + 1, &mm->cap)) return GM_ERR_NOMEM;
    gm_plan_problem *p = &mm->v[mm->n++];
    memset(p, 0, sizeof *p);
    p->kind = GM_PLAN_P_PASSES;
    p->index = -1;
    snprintf(p->node, sizeof p->node, "%s", node);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
    return GM_OK;
}

/* What the passes inserted on m against what the plan lists, entry by entry in order: nodes
 * (name, type, graph), then control edges (from, to). The first difference of each kind is
 * enough to say that this is not the graph the plan was made for. */
static gm_status compare(const gm_pass_report *r, const cJSON *inserted, mismatch *mm)
{
    size_t ni = 0, ei = 0;
    bool node_off = false, edge_off = false;
    gm_status st = GM_OK;
    const cJSON *x;
    cJSON_ArrayForEach(x, inserted)
    {
        const cJSON *edge = cJSON_GetObjectItemCaseSensitive(x, "edge");
        if (cJSON_IsObject(edge)) {
            const char *from = str_at(edge, "from"), *to = str_at(edge, "to");
            const gm_inserted_edge *e = ei < r->n_edges ? &r->edges[ei] : NULL;
            if (!edge_off && (!e || strcmp(e->from, from) || strcmp(e->to, to))) {
                edge_off = true;
                st = e ? add_mismatch(mm, to, "the plan lists control edge %s -> %s where the passes, run again on the "
                                              "model, order %s -> %s",
                                      from, to, e->from, e->to)
                       : add_mismatch(mm, to, "the plan lists control edge %s -> %s, which the passes, run again on "
                                              "the model, do not add",
                                      from, to);
            }
            ei++;
        } else {
            const char *name = str_at(x, "node"), *type = str_at(x, "type"), *graph = str_at(x, "graph");
            const gm_inserted_node *n = ni < r->n_nodes ? &r->nodes[ni] : NULL;
            if (!node_off && (!n || strcmp(n->node, name) || strcmp(n->type, type) || strcmp(n->graph, graph))) {
                node_off = true;
                st = n ? add_mismatch(mm, name, "the plan lists inserted node '%s' (%s, graph %s) where the passes, "
                                                "run again on the model, insert '%s' (%s, graph %s)",
                                      name, type, graph, n->node, n->type, n->graph)
                       : add_mismatch(mm, name, "the plan lists inserted node '%s' (%s, graph %s), which the passes, "
                                                "run again on the model, do not insert",
                                      name, type, graph);
            }
            ni++;
        }
        if (st != GM_OK) return st;
    }
    if (!node_off && ni < r->n_nodes)
        st = add_mismatch(mm, r->nodes[ni].node, "the passes, run again on the model, also insert '%s' (%s, graph %s), "
                                                 "which the plan does not list",
                          r->nodes[ni].node, r->nodes[ni].type, r->nodes[ni].graph);
    if (st == GM_OK && !edge_off && ei < r->n_edges)
        st = add_mismatch(mm, r->edges[ei].to, "the passes, run again on the model, also order %s -> %s, which the plan "
                                               "does not list",
                          r->edges[ei].from, r->edges[ei].to);
    return st;
}

/* The mismatches first in the verdict: they say why the rest follows. */
static gm_status prepend(gm_plan_verdict *v, const mismatch *mm)
{
    if (!mm->n) return GM_OK;
    if (gm_grow((void **)&v->problems, sizeof *v->problems, v->n_problems + mm->n, &v->cap_problems))
        return GM_ERR_NOMEM;
    memmove(v->problems + mm->n, v->problems, v->n_problems * sizeof *v->problems);
    memcpy(v->problems, mm->v, mm->n * sizeof *mm->v);
    v->n_problems += mm->n;
    v->by_kind[GM_PLAN_P_PASSES] += mm->n;
    return GM_OK;
}

gm_status gm_plan_verify_json_original(gm_model *m, const char *text, size_t len, const char *source,
                                       gm_plan_verdict *v, gm_plan_rerun *rerun, gm_error *err)
{
    gm_plan_rerun none = {0};
    if (!rerun) rerun = &none;
    memset(rerun, 0, sizeof *rerun);
    bool nomem;
    cJSON *root = parse_head(text, len, &nomem);
    if (nomem) return gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    const cJSON *passes = cJSON_GetObjectItemCaseSensitive(root, "passes");
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(root, "options");
    const cJSON *inserted = cJSON_GetObjectItemCaseSensitive(root, "inserted");
    gm_pass_set set;
    const char *bad = NULL;
    gm_status st = GM_OK;
    mismatch mm = {0};
    if (cJSON_IsArray(passes) && !already_passed(m, inserted)) {
        if (!pass_set(passes, &set, &rerun->passes, &bad)) {
            st = gm_error_set(err, GM_ERR_INPUT, "%s: \"passes\" names '%s', which is not a pass of this graphmem",
                              source ? source : "<plan>", bad);
        } else {
            const cJSON *o;
            cJSON_ArrayForEach(o, options)
            {
                if (cJSON_IsString(o) && gm_model_set_option(m, o->string, o->valuestring) != GM_OK)
                    st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
            }
            gm_pass_report report;
            memset(&report, 0, sizeof report);
            if (st == GM_OK) st = gm_passes_run(m, set, &report, NULL, err);
            if (st == GM_OK) {
                rerun->ran = true;
                rerun->nodes = report.n_nodes;
                rerun->edges = report.n_edges;
                if (compare(&report, inserted, &mm) != GM_OK) st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
            }
            gm_pass_report_free(&report);
        }
    }
    cJSON_Delete(root);
    if (st == GM_OK) st = gm_plan_verify_json(m, text, len, source, v, err);
    if (st == GM_OK && prepend(v, &mm) != GM_OK) {
        gm_plan_verdict_free(v);
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory");
    }
    gm_free(mm.v);
    return st;
}

gm_status gm_plan_verify_file_original(gm_model *m, const char *plan_path, gm_plan_verdict *v, gm_plan_rerun *rerun,
                                       gm_error *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(v, 0, sizeof *v);
    gm_status st = gm_read_file(plan_path, &text, &len, err);
    if (st != GM_OK) return st;
    st = gm_plan_verify_json_original(m, text, len, plan_path, v, rerun, err);
    free(text);
    return st;
}
