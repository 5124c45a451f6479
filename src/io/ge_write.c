/*
 * ge_write.c — the GE text-dump writer: the IR as a ge.proto.ModelDef (reference §8), printed
 * by pbtext in GE's text format, so that ge_read.c (and GE's loader) read it back. Attributes
 * and descs are built by ge_build.c.
 *
 * The inverse of ge_read.c's mapping: the root graph first, then the subgraphs in the model's
 * order; each graph's ops in its (topological) node order; `input` holds "src:i" per data
 * input ("" when unconnected) and then "src:-1" per control input; every input gets an
 * input_desc and every output an output_desc (dtype, shape, layout, attrs, has_out_attr when
 * the desc has attrs, size — the explicit one, else the derived one when it is known and not
 * 0, since GE's dumps carry sizes —, reuse_input / reuse_input_index, real_dim_cnt, and the
 * output's explicit IR name as the desc name); explicit input names go to input_name; the
 * reserved list-of-int node attributes _gm_input_offsets / _gm_output_offsets /
 * _gm_workspace_offsets / _gm_workspace_bytes go back to input_i / output_i / workspace /
 * workspace_bytes; a desc's memory type, when given, is the desc attribute "_gm_memory_type";
 * options are model attrs with string values; id is the node's topological id.
 *
 * A model read from GE's files carries residuals (ge_rest.c): each op, desc, graph and the model
 * then takes from its residual what the file said instead of the made-up fields above (the
 * original id, has_out_attr, real_dim_cnt, the size left out or -1, the input_name list and
 * the descs of optional inputs left out while the op has the inputs it was read with), and its
 * kept attributes. So GE -> graphmem -> GE gives the same ModelDef back (tests/test_ge_om.c),
 * the order of attributes aside, and a pass's changes to the graph still print.
 *
 * What a trip through the format changes for a model from JSON or ONNX (tests/test_ge_text.c,
 * normalize(), checks it): float attributes become 32-bit floats (AttrDef.f is a float; beyond
 * float's range, infinities), a derived size that is known and not 0 becomes explicit, an
 * explicit size of 0 reads back as none (proto3 cannot tell 0 from unset); options whose keys do
 * not start with "ge." are not read back as options, an empty layout string reads back as no
 * layout, the reserved offset attributes move to the end of the node's attributes (and vanish
 * when empty), and a desc attribute named "_gm_memory_type" is the memory type, not an
 * attribute.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "graphmem/io.h"
#include "io/ge_internal.h"
#include "io/pbtext.h"
#include "ir/ir.h"
#include "util/alloc.h"

typedef gm_ge_arena gw;
typedef GeModelDef ModelDef;
typedef GeGraphDef GraphDef;
typedef GeOpDef OpDef;
typedef GeAttrDef AttrDef;

/* The extra input_desc entries a residual can place: as many as it has positions for. */
static size_t rest_positions(const OpDef *rest) { return rest->n_gm_input_desc_at; }

static void *anew(gw *w, const ProtobufCMessageDescriptor *d) { return gm_ge_new(w, d); }
static void *aarray(gw *w, size_t n, size_t elem) { return gm_ge_array(w, n, elem); }

static char *aprintf(gw *w, const char *name, const char *suffix)
{
    size_t n = strlen(name) + strlen(suffix) + 1;
    char *s = gm_ge_alloc(w, n);
    if (s) snprintf(s, n, "%s%s", name, suffix);
    return s;
}

/* The IR's strings are borrowed: the printer reads them and nothing frees them. */
static char *borrow(const char *s) { return (char *)(s ? s : ""); }

/* ---- ops --------------------------------------------------------------------------------- */

/* The node attributes that are OpDef fields in GE's format. */
static const char *const k_offset_attrs[] = {"_gm_input_offsets", "_gm_output_offsets", "_gm_workspace_offsets",
                                             "_gm_workspace_bytes"};

static bool is_offset_attr(const gm_attr *a)
{
    if (a->kind != GM_ATTR_LIST_INT) return false;
    for (size_t i = 0; i < sizeof k_offset_attrs / sizeof *k_offset_attrs; i++) {
        if (strcmp(a->name, k_offset_attrs[i]) == 0) return true;
    }
    return false;
}

static bool keep_node_attr(const gm_attr *a) { return !is_offset_attr(a); }

static void offsets(const gm_node *n, size_t which, int64_t **v, size_t *count)
{
    const gm_attr *a = gm_attr_find(n->attrs, k_offset_attrs[which]);
    if (a && is_offset_attr(a) && a->u.li.v) {
        *v = a->u.li.v;
        *count = a->u.li.n;
    }
}

static void build_inputs(gw *w, OpDef *op, const gm_node *n)
{
    size_t cnt = n->n_in + n->ctrl_in.n + n->n_ctrl_in_names;
    char **in = aarray(w, cnt, sizeof *in);
    if (cnt && !in) return;
    size_t k = 0;
    char idx[24];
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gm_in_slot *s = &n->in[i];
        /* Resolved edges name their producer; an unfinalized model still has the name. */
        const char *src = s->src ? s->src->name : s->src_name;
        snprintf(idx, sizeof idx, ":%" PRId32, s->src_index);
        if (!(in[k++] = src ? aprintf(w, src, idx) : borrow(""))) return;
    }
    for (uint32_t i = 0; i < n->ctrl_in.n; i++) {
        if (!(in[k++] = aprintf(w, n->ctrl_in.v[i]->name, ":-1"))) return;
    }
    for (uint32_t i = 0; i < n->n_ctrl_in_names; i++) {
        if (!(in[k++] = aprintf(w, n->ctrl_in_names[i], ":-1"))) return;
    }
    op->input = in;
    op->n_input = k;
}

/* The input descs: one per input; while the op has the inputs it was read with, as many as the
 * file had (blank ones beyond it left out, as GE may write fewer descs than inputs), with the
 * residual's descs of no input back at their positions. */
static void build_input_descs(gw *w, OpDef *op, const gm_node *n, const OpDef *rest)
{
    bool as_read = rest && rest->gm_inputs == (int64_t)n->n_in;
    size_t extra = as_read ? rest->n_input_desc : 0;
    if (as_read && extra > rest_positions(rest)) extra = rest_positions(rest);
    size_t total = n->n_in + extra;
    if (as_read && (size_t)rest->gm_input_descs < total) {
        size_t need = rest->gm_input_descs > (int64_t)extra ? (size_t)rest->gm_input_descs - extra : 0;
        size_t last = need; /* inputs [0, last) get a desc */
        for (size_t i = need; i < n->n_in; i++)
            if (!gm_desc_is_blank(&n->in_desc[i])) last = i + 1;
        total = last + extra;
    }
    if (total && !(op->input_desc = aarray(w, total, sizeof *op->input_desc))) return;
    size_t e = 0;
    uint32_t i = 0;
    for (size_t k = 0; k < total; k++) {
        if (e < extra && (rest->gm_input_desc_at[e] <= (int64_t)k || i == n->n_in)) {
            op->input_desc[k] = rest->input_desc[e++];
        } else if (!(op->input_desc[k] = gm_ge_build_desc(w, &n->in_desc[i++], NULL))) {
            return;
        }
        op->n_input_desc = k + 1;
    }
}

static void build_descs(gw *w, OpDef *op, const gm_node *n, const OpDef *rest)
{
    build_input_descs(w, op, n, rest);
    if (n->n_out && !(op->output_desc = aarray(w, n->n_out, sizeof *op->output_desc))) return;
    for (uint32_t k = 0; k < n->n_out; k++) {
        if (!(op->output_desc[k] = gm_ge_build_desc(w, &n->out[k].desc, n->out[k].name))) return;
        op->n_output_desc = k + 1;
    }
    /* input_name as the file had it while the op has its inputs; else only when some input
     * has an explicit name ("" keeps a slot's default). */
    if (rest && rest->gm_inputs == (int64_t)n->n_in) {
        op->input_name = rest->input_name;
        op->n_input_name = rest->n_input_name;
        return;
    }
    bool named = false;
    for (uint32_t i = 0; i < n->n_in; i++) named |= n->in_name[i] != NULL;
    if (!named || !(op->input_name = aarray(w, n->n_in, sizeof *op->input_name))) return;
    for (uint32_t i = 0; i < n->n_in; i++) op->input_name[i] = borrow(n->in_name[i]);
    op->n_input_name = n->n_in;
}

static OpDef *build_op(gw *w, const gm_node *n)
{
    OpDef *op = anew(w, &ge__proto__op_def__descriptor);
    if (!op) return NULL;
    op->name = borrow(n->name);
    op->type = borrow(n->type);
    build_inputs(w, op, n);
    op->attr = gm_ge_build_attr_map(w, n->attrs, keep_node_attr, NULL, NULL, &op->n_attr);
    op->has_out_attr = true; /* GE's dumps set it on every op */
    op->id = n->topo_id >= 0 ? n->topo_id : 0;
    op->stream_id = n->stream;
    offsets(n, 0, &op->input_i, &op->n_input_i);
    offsets(n, 1, &op->output_i, &op->n_output_i);
    offsets(n, 2, &op->workspace, &op->n_workspace);
    offsets(n, 3, &op->workspace_bytes, &op->n_workspace_bytes);
    const OpDef *rest =
        (const OpDef *)gm_ge_rest_find(w, n->attrs, GM_ATTR_GE_REST, &ge__proto__op_def__descriptor, "an op");
    build_descs(w, op, n, rest);
    if (rest) gm_ge_rest_merge(w, &op->base, &rest->base);
    if (n->n_sub && (op->subgraph_name = aarray(w, n->n_sub, sizeof *op->subgraph_name))) {
        for (uint32_t i = 0; i < n->n_sub; i++) {
            const char *s = n->sub && n->sub[i] ? n->sub[i]->name : n->sub_names ? n->sub_names[i] : NULL;
            op->subgraph_name[i] = borrow(s);
        }
        op->n_subgraph_name = n->n_sub;
    }
    return op;
}

/* ---- graphs and the model ---------------------------------------------------------------- */

static GraphDef *build_graph(gw *w, const gm_graph *g)
{
    GraphDef *gd = anew(w, &ge__proto__graph_def__descriptor);
    if (!gd) return NULL;
    gd->name = borrow(g->name);
    gd->attr = gm_ge_build_attr_map(w, g->attrs, NULL, NULL, NULL, &gd->n_attr);
    const GraphDef *rest =
        (const GraphDef *)gm_ge_rest_find(w, g->attrs, GM_ATTR_GE_REST, &ge__proto__graph_def__descriptor, "a graph");
    if (rest) gm_ge_rest_merge(w, &gd->base, &rest->base);
    if (g->nodes.n && !(gd->op = aarray(w, g->nodes.n, sizeof *gd->op))) return gd;
    for (uint32_t i = 0; i < g->nodes.n; i++) {
        const gm_node *n = g->nodes.v[i];
        if (n->dead) continue;
        if (!(gd->op[gd->n_op] = build_op(w, n))) return gd;
        gd->n_op++;
    }
    return gd;
}

static ModelDef *build_model(gw *w, const gm_model *m)
{
    ModelDef *md = anew(w, &ge__proto__model_def__descriptor);
    if (!md) return NULL;
    md->name = borrow(m->name);
    if (m->n_graphs && !(md->graph = aarray(w, m->n_graphs, sizeof *md->graph))) return md;
    for (size_t i = 0; i < m->n_graphs; i++) {
        if (!(md->graph[i] = build_graph(w, m->graphs[i]))) return md;
        md->n_graph = i + 1;
    }
    /* Options are model attributes with string values (GE keeps its ge.* options there). */
    if (m->n_options && !(md->attr = aarray(w, m->n_options, sizeof *md->attr))) return md;
    for (size_t i = 0; i < m->n_options; i++) {
        AttrDef *v = anew(w, &ge__proto__attr_def__descriptor);
        if (!v) return md;
        v->value_case = GE__PROTO__ATTR_DEF__VALUE_S;
        v->s = (ProtobufCBinaryData){strlen(m->options[i].value), (uint8_t *)m->options[i].value};
        if (!(md->attr[i] = gm_ge_entry(w, m->options[i].key, v))) return md;
        md->n_attr = i + 1;
    }
    const ModelDef *rest = m->n_graphs ? (const ModelDef *)gm_ge_rest_find(w, m->graphs[0]->attrs, GM_ATTR_GE_MODEL_REST,
                                                                           &ge__proto__model_def__descriptor, "the model")
                                       : NULL;
    if (rest) gm_ge_rest_merge(w, &md->base, &rest->base);
    return md;
}

gm_status gm_model_write_ge_text(const gm_model *m, char **text, size_t *len, gm_error *err)
{
    *text = NULL;
    if (len) *len = 0;
    gw w = {0};
    ModelDef *md = build_model(&w, m);
    gm_status st = GM_OK;
    const char *src = *m->source ? m->source : m->name;
    if (w.oom || !md) st = gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", src);
    else if (w.bad) st = gm_error_set(err, GM_ERR_INPUT, "%s: %s", src, w.bad_what);
    else st = gm_pbtext_print(&md->base, text, len, err);
    gm_ge_arena_free(&w);
    return st;
}
