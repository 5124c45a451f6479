/*
 * onnx_read_infer.c — runs shape inference over the graphs the ONNX reader built, in node
 * order, through control flow:
 *  - If: each branch is inferred with the values it captures; an output is what both branches
 *    agree on (gm_onnx_info_join).
 *  - Loop / Scan: loop-carried values may change from one iteration to the next, so the body
 *    is inferred to a fixpoint: start from the initial values, join with what the body gives
 *    back, repeat until nothing changes (dims that differ become unknown, after a few rounds
 *    everything does). Scan outputs get the iteration count as a new dim (unknown for Loop).
 *    Scan before opset 9 has sequence_lens first and a batch axis on every input and output.
 * What a file declares (value_info) is merged into every result.
 */
#include <string.h>

#include "io/onnx_internal.h"
#include "util/alloc.h"

/* Rounds before loop-carried dims, then ranks, are given up on. */
#define ROUNDS_DIMS 3
#define ROUNDS_MAX 6

static const gm_onnx_info *tensor_info(const gm_onnx_rgraph *rg, int32_t idx)
{
    return idx >= 0 ? &rg->facts[idx].info : NULL;
}

/* The info a body Data with parent input p receives. */
typedef const gm_onnx_info *(*provider)(void *ctx, int32_t p, gm_onnx_info *scratch);

static void set_body_inputs(gm_onnx_rgraph *body, provider get, void *ctx)
{
    for (size_t i = 0; i < body->nt; i++) {
        gm_onnx_facts *f = &body->facts[i];
        if (body->t[i].parent_index < 0) continue;
        gm_onnx_info scratch;
        const gm_onnx_info *src = get(ctx, body->t[i].parent_index, &scratch);
        if (src) f->info = *src;
        else gm_onnx_info_unknown(&f->info);
        gm_onnx_info_merge_decl(&f->info, &f->decl);
    }
}

/* Output j of a body (its NetOutput input j), or NULL. */
static const gm_onnx_info *body_output(const gm_onnx_rgraph *body, size_t j)
{
    return j < body->n_outputs ? tensor_info(body, body->outputs[j]) : NULL;
}

typedef struct flow {
    const gm_onnx_rgraph *rg;
    const gm_onnx_rnode *rn;
    gm_onnx_info *state; /* loop-carried values */
    int32_t n_state;
    int32_t first_state; /* parent input index of state 0 (body input 0 of a Scan) */
    int32_t n_scan;      /* Scan: scan inputs after the states */
} flow;

/* The parent's input p as it is. */
static const gm_onnx_info *node_input(const flow *f, int32_t p)
{
    return p >= 0 && (uint32_t)p < f->rn->n_in ? tensor_info(f->rg, f->rn->in[p]) : NULL;
}

static const gm_onnx_info *plain_provider(void *ctx, int32_t p, gm_onnx_info *scratch)
{
    (void)scratch;
    return node_input(ctx, p);
}

static const gm_onnx_info *loop_provider(void *ctx, int32_t p, gm_onnx_info *s)
{
    flow *f = ctx;
    if (p == 0 || p == 1) { /* iteration number, condition: scalars */
        gm_onnx_info_unknown(s);
        s->dtype = p == 0 ? GM_DT_INT64 : GM_DT_BOOL;
        s->rank = 0;
        return s;
    }
    if (p >= f->first_state && p < f->first_state + f->n_state) return &f->state[p - f->first_state];
    return node_input(f, p);
}

/* x without its dim `ax` (negative: from the end); the dtype alone when x has no such dim. */
static void drop_axis(const gm_onnx_info *x, int64_t ax, gm_onnx_info *s)
{
    gm_onnx_info_unknown(s);
    if (!x) return;
    s->dtype = x->dtype;
    if (x->rank < 1) return;
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax >= x->rank) return;
    s->rank = x->rank - 1;
    for (int32_t i = 0, j = 0; i < x->rank; i++) {
        if (i != ax) s->dims[j++] = x->dims[i];
    }
}

/* Scan before opset 9: every input and output has a batch axis 0 that the body does not see,
 * and the scan inputs' sequence axis is 1. */
static bool scan8(const flow *f) { return f->rn->cf == GM_ONNX_CF_SCAN8; }

static const gm_onnx_info *scan_provider(void *ctx, int32_t p, gm_onnx_info *s)
{
    flow *f = ctx;
    int32_t q = p - f->first_state; /* body input q */
    if (q >= 0 && q < f->n_state) return &f->state[q];
    if (q >= f->n_state && q < f->n_state + f->n_scan) { /* one slice of a scan input: its scan axis removed */
        const gm_onnx_info *x = node_input(f, p);
        if (scan8(f)) {
            gm_onnx_info batch;
            drop_axis(x, 0, &batch);
            drop_axis(&batch, 0, s);
            return s;
        }
        size_t na;
        const int64_t *axes = gm_onnx_attr_ints(f->rn->np, "scan_input_axes", &na);
        drop_axis(x, axes && (size_t)(q - f->n_state) < na ? axes[q - f->n_state] : 0, s);
        return s;
    }
    return node_input(f, p);
}

/* Infers body with f's provider until the loop-carried values are stable; the body's own
 * outputs for state k are body_output(first_out + k). */
static bool fixpoint(flow *f, gm_onnx_rgraph *body, provider get, size_t first_out)
{
    for (int round = 0; round < ROUNDS_MAX; round++) {
        set_body_inputs(body, get, f);
        if (!gm_onnx_infer_graph(body)) return false;
        bool changed = false;
        for (int32_t k = 0; k < f->n_state; k++) {
            gm_onnx_info j = f->state[k], unknown;
            const gm_onnx_info *r = body_output(body, first_out + (size_t)k);
            if (!r) {
                gm_onnx_info_unknown(&unknown);
                r = &unknown;
            }
            gm_onnx_info_join(&j, r);
            if (!gm_onnx_info_same(&j, &f->state[k])) changed = true;
            f->state[k] = j;
        }
        if (!changed) return true;
        for (int32_t k = 0; k < f->n_state && round + 1 >= ROUNDS_DIMS; k++) {
            gm_onnx_info *s = &f->state[k];
            s->vkind = GM_ONNX_VAL_NONE;
            for (int32_t i = 0; i < s->rank; i++) s->dims[i] = -1;
            if (round + 2 >= ROUNDS_MAX) s->rank = -1;
        }
    }
    return true;
}

/* A scan output: the per-iteration value with the iteration dim inserted at `axis`. */
static void stack_output(const gm_onnx_info *per_iter, int64_t axis, int64_t count, gm_onnx_info *out)
{
    gm_onnx_info_unknown(out);
    if (!per_iter) return;
    out->dtype = per_iter->dtype;
    if (per_iter->rank < 0 || per_iter->rank + 1 > GM_ONNX_MAX_RANK) return;
    int32_t r = per_iter->rank + 1;
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return;
    for (int32_t i = 0, j = 0; i < r; i++) out->dims[i] = i == axis ? count : per_iter->dims[j++];
    out->rank = r;
}

static bool infer_loop(gm_onnx_rgraph *rg, gm_onnx_rnode *rn, gm_onnx_info *outs)
{
    gm_onnx_rgraph *body = rn->n_sub ? rn->sub[0] : NULL;
    if (!body) return true;
    int32_t n_state = rn->n_onnx_in > 2 ? (int32_t)rn->n_onnx_in - 2 : 0;
    flow f = {rg, rn, gm_malloc((size_t)(n_state ? n_state : 1) * sizeof *f.state), n_state, 2, 0};
    if (!f.state) return false;
    for (int32_t k = 0; k < n_state; k++) {
        const gm_onnx_info *x = node_input(&f, 2 + k);
        if (x) f.state[k] = *x;
        else gm_onnx_info_unknown(&f.state[k]);
    }
    bool ok = fixpoint(&f, body, loop_provider, 1);
    for (uint32_t k = 0; k < rn->n_out; k++) {
        if ((int32_t)k < n_state) outs[k] = f.state[k];
        else stack_output(body_output(body, 1 + k), 0, -1, &outs[k]); /* iterations: unknown */
    }
    gm_free(f.state);
    return ok;
}

/* Scan: inputs (states..., scan inputs..., captured...); before opset 9 (sequence_lens,
 * states..., scan inputs...), each with a batch axis 0: body input q is parent input q + 1,
 * without the batch axis (and a scan input without its sequence axis 1 too), and every output
 * gets the batch axis back. */
static bool infer_scan(gm_onnx_rgraph *rg, gm_onnx_rnode *rn, gm_onnx_info *outs)
{
    gm_onnx_rgraph *body = rn->n_sub ? rn->sub[0] : NULL;
    if (!body) return true;
    const bool v8 = rn->cf == GM_ONNX_CF_SCAN8;
    const int32_t first = v8 && rn->n_onnx_in > 0 ? 1 : 0;
    const int32_t n_in = (int32_t)rn->n_onnx_in - first;
    int64_t m = gm_onnx_attr_int(rn->np, "num_scan_inputs", 0);
    if (m < 0 || m > (int64_t)n_in) m = 0;
    int32_t n_state = n_in - (int32_t)m;
    flow f = {rg, rn, gm_malloc((size_t)(n_state ? n_state : 1) * sizeof *f.state), n_state, first, (int32_t)m};
    if (!f.state) return false;
    for (int32_t k = 0; k < n_state; k++) {
        const gm_onnx_info *x = node_input(&f, first + k);
        if (v8) drop_axis(x, 0, &f.state[k]);
        else if (x) f.state[k] = *x;
        else gm_onnx_info_unknown(&f.state[k]);
    }
    /* The iteration count: scan input 0 along its scan axis; before opset 9, the batch too. */
    int64_t count = -1, batch = -1;
    const gm_onnx_info *x0 = m > 0 ? node_input(&f, first + n_state) : NULL;
    if (x0 && x0->rank > 0) {
        size_t na;
        const int64_t *axes = v8 ? NULL : gm_onnx_attr_ints(rn->np, "scan_input_axes", &na);
        int64_t ax = v8 ? 1 : axes && na ? axes[0] : 0;
        if (ax < 0) ax += x0->rank;
        if (ax >= 0 && ax < x0->rank) count = x0->dims[ax];
        if (v8) batch = x0->dims[0];
    }
    const gm_onnx_info *s0 = v8 && batch < 0 && n_state > 0 ? node_input(&f, first) : NULL;
    if (s0 && s0->rank > 0) batch = s0->dims[0]; /* no scan input to tell: the first state's */
    bool ok = fixpoint(&f, body, scan_provider, 0);
    size_t na = 0;
    const int64_t *oaxes = v8 ? NULL : gm_onnx_attr_ints(rn->np, "scan_output_axes", &na);
    for (uint32_t k = 0; k < rn->n_out; k++) {
        gm_onnx_info per_batch;
        if ((int32_t)k < n_state) {
            per_batch = f.state[k];
        } else {
            size_t j = k - (uint32_t)n_state;
            stack_output(body_output(body, k), oaxes && j < na ? oaxes[j] : 0, count, &per_batch);
        }
        if (v8) stack_output(&per_batch, 0, batch, &outs[k]);
        else outs[k] = per_batch;
    }
    gm_free(f.state);
    return ok;
}

static bool infer_bodies(gm_onnx_rgraph *rg, gm_onnx_rnode *rn)
{
    flow f = {rg, rn, NULL, 0, 0, 0};
    for (uint32_t i = 0; i < rn->n_sub; i++) {
        set_body_inputs(rn->sub[i], plain_provider, &f);
        if (!gm_onnx_infer_graph(rn->sub[i])) return false;
    }
    return true;
}

static bool infer_node(gm_onnx_rgraph *rg, gm_onnx_rnode *rn, const gm_onnx_info **in, gm_onnx_info *outs)
{
    bool ok = true;
    for (uint32_t k = 0; k < rn->n_out; k++) gm_onnx_info_unknown(&outs[k]);
    switch (rn->cf) {
    case GM_ONNX_CF_NONE:
        for (uint32_t i = 0; i < rn->n_onnx_in; i++) in[i] = tensor_info(rg, rn->in[i]);
        gm_onnx_infer(rn->np, in, rn->n_onnx_in, outs, rn->n_out);
        break;
    case GM_ONNX_CF_IF:
        ok = infer_bodies(rg, rn);
        for (uint32_t k = 0; k < rn->n_out && rn->n_sub == 2; k++) {
            const gm_onnx_info *a = body_output(rn->sub[0], k), *b = body_output(rn->sub[1], k);
            if (!a || !b) continue;
            outs[k] = *a;
            gm_onnx_info_join(&outs[k], b);
        }
        break;
    case GM_ONNX_CF_LOOP: ok = infer_loop(rg, rn, outs); break;
    case GM_ONNX_CF_SCAN:
    case GM_ONNX_CF_SCAN8: ok = infer_scan(rg, rn, outs); break;
    case GM_ONNX_CF_OTHER: ok = infer_bodies(rg, rn); break;
    }
    for (uint32_t k = 0; k < rn->n_out; k++) {
        gm_onnx_facts *f = &rg->facts[rn->out[k]];
        f->info = outs[k];
        gm_onnx_info_merge_decl(&f->info, &f->decl);
    }
    return ok;
}

bool gm_onnx_infer_graph(gm_onnx_rgraph *rg)
{
    /* Graph inputs and initializers: what the file says. Body inputs were set by the caller. */
    for (size_t i = 0; i < rg->nt; i++) {
        if (rg->t[i].parent_index < 0) rg->facts[i].info = rg->facts[i].decl;
    }
    uint32_t max_in = 1, max_out = 1;
    for (size_t j = 0; j < rg->nn; j++) {
        if (rg->nodes[j].n_onnx_in > max_in) max_in = rg->nodes[j].n_onnx_in;
        if (rg->nodes[j].n_out > max_out) max_out = rg->nodes[j].n_out;
    }
    const gm_onnx_info **in = gm_malloc(max_in * sizeof *in);
    gm_onnx_info *outs = gm_malloc(max_out * sizeof *outs);
    bool ok = in && outs;
    for (size_t j = 0; ok && j < rg->nn; j++) ok = infer_node(rg, &rg->nodes[j], in, outs);
    gm_free(in);
    gm_free(outs);
    return ok;
}
