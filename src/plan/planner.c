/*
 * planner.c — memory planner v0: GE's symbol table -> regions -> DSA offsets, then a
 * self-check with the independent verifier that repairs cross-stream sharing.
 *
 * Lifetimes are intervals on the model order (gm_model_node_at), which is one sequential
 * schedule. Two streams running side by side break "disjoint on that order means ordered", so
 * after packing, the plan is written and verified in-process; every pair of symbols the
 * verifier finds overlapping in address while unordered gets the union of both lifetimes (so
 * the packer can no longer share them) and its region is re-packed. After repair_rounds rounds
 * a region that is still wrong gets no reuse at all (every symbol at its own address), which
 * is safe whatever the streams do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/happens_before.h"
#include "analysis/symbols.h"
#include "graphmem/dsa.h"
#include "graphmem/plan.h"
#include "ops/op_table.h"
#include "plan/planner_internal.h"
#include "util/alloc.h"
#include "util/parallel.h"
#include "util/strmap.h"
#include "util/clock.h"

void gm_plan_options_init(gm_plan_options *o)
{
    memset(o, 0, sizeof *o); /* every field a caller does not know of yet: off */
    o->align = 512;
    /* No wall-clock budget by default: the node limit alone bounds the search, so the same
     * model gives the same plan on any machine, under any load (DESIGN: determinism). */
    o->search_budget_s = 0;
    o->search_node_limit = 200000;
    o->repair_rounds = 32;
    o->report = NULL;
    o->reproducible = false;
    o->threads = 0;
    o->strategy = NULL;
    o->no_reuse_ops = NULL;
    o->ge_padded_sizes = false;
}

int64_t gm_plan_region_align(const gm_plan *p, gm_plan_region_kind r)
{
    return r == GM_PLAN_R_ZERO_COPY ? GM_PLAN_ZERO_COPY_ALIGN : p->align;
}

void gm_plan_free(gm_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_symbols; i++) {
        gm_free(p->symbols[i].id);
        gm_free(p->symbols[i].anchors);
        gm_free(p->symbols[i].streams);
        gm_free(p->symbols[i].batch_label);
    }
    gm_free(p->symbols);
    gm_free(p->witness);
    free(p->text);
    gm_free(p);
}

static void tell_stage(const gm_plan_options *o, const char *stage)
{
    if (o->on_stage) o->on_stage(stage, o->stage_ctx);
}

/* Larger tensors (or regions) than this are refused, so that no offset + size can wrap. */
#define GM_PLAN_MAX_BYTES ((int64_t)1 << 62)

static int64_t align_up(int64_t v, int64_t a) { return v > GM_PLAN_MAX_BYTES ? v : (v + a - 1) / a * a; }

/* Every tensor and every region's sum of sizes within GM_PLAN_MAX_BYTES: bad input otherwise. */
static gm_status check_sizes(const gm_model *m, const gm_plan *p, gm_error *err)
{
    int64_t sum[GM_PLAN_R_COUNT][GM_MEM_COUNT] = {{0}};
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        if (y->region == GM_PLAN_R_DYNAMIC) continue;
        if (y->size > GM_PLAN_MAX_BYTES || (sum[y->region][y->mem_type] += y->size) > GM_PLAN_MAX_BYTES)
            return gm_error_set(err, GM_ERR_INPUT,
                                "%s: tensor '%s' (%lld bytes) takes its region past 2^62 bytes: too large to plan",
                                *gm_model_source(m) ? gm_model_source(m) : gm_model_name(m), y->id,
                                (long long)y->size);
    }
    return GM_OK;
}

/* Bytes an anchor addresses: an output its desc, an input its producer's output (the tensor
 * it reads), an unconnected input its own desc — the same rule the verifier sizes by. */
static const gm_tensor_desc *anchor_desc(const gm_node *n, bool out, uint32_t i)
{
    if (out) return gm_node_output_desc(n, i);
    int32_t src_index = 0;
    const gm_node *src = gm_node_input(n, i, &src_index);
    if (src) return gm_node_output_desc(src, (size_t)src_index);
    return gm_node_input_desc(n, i);
}

/* GE's usual tensor size when op compile gives none (reference §5.1): 32-byte granules plus
 * 32 bytes of padding. */
static int64_t ge_padded(int64_t bytes) { return bytes <= 0 ? bytes : (bytes + 31) / 32 * 32 + 32; }

static int64_t anchor_bytes(const gm_node *n, bool out, uint32_t i, bool padded)
{
    const gm_tensor_desc *d = anchor_desc(n, out, i);
    if (!d) return 0;
    int64_t b = gm_desc_size(d);
    return padded && !gm_desc_size_given(d) ? ge_padded(b) : b;
}

/* GE's fixed-address outputs (MarkSameAddrPass): read by an op that cannot refresh addresses. */
static bool fixed_address(const gm_node *n, uint32_t k)
{
    const gm_attr *list = gm_node_attr_list(n);
    return gm_attrs_get_string(list, "_alloc_fixed_addr") && gm_attrs_get_int(list, "_alloc_fixed_addr_index", -1) == k;
}

/* Is `name` an entry of the comma list `list`? */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = list; at && *at;) {
        const char *end = strchr(at, ',');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        if (len == n && !strncmp(at, name, n)) return true;
        at = end ? end + 1 : NULL;
    }
    return false;
}

/* A producer whose outputs are never reused: its no_reuse_mem_flag, or its name or type in
 * OP_NO_REUSE_MEM's list (reference §5.1). */
static bool never_reused(const gm_node *n, const char *no_reuse_ops)
{
    if (gm_attrs_get_bool(gm_node_attr_list(n), "no_reuse_mem_flag", false)) return true;
    return no_reuse_ops && (in_list(no_reuse_ops, gm_node_name(n)) || in_list(no_reuse_ops, gm_node_type(n)));
}

/* Builds one planned symbol from symbol table entry `sym`: anchors, size, region, memory
 * type, lifetime and streams. */
static gm_status describe_symbol(const gm_model *m, const gm_symbols *s, int32_t sym, gm_hb_life *life,
                                 const gm_plan_options *o, gm_plan_symbol *y)
{
    char name[512];
    y->id = gm_strdup(gm_symbol_name(s, sym, name, sizeof name));
    if (!y->id) return GM_ERR_NOMEM;
    size_t na = 0;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) na++;
    y->anchors = gm_malloc((na ? na : 1) * sizeof *y->anchors);
    y->streams = gm_malloc((na ? na : 1) * sizeof *y->streams);
    if (!y->anchors || !y->streams) return GM_ERR_NOMEM;
    const int64_t last_pos = (int64_t)gm_model_node_count(m) - 1;
    int64_t size = 0;
    gm_hb_life_reset(life);
    bool dynamic = false, fixed = false, zero_copy = false, mt_set = false, no_reuse = false, grouped = false;
    gm_mem_type mt = GM_MEM_HBM;
    for (int32_t a = gm_symbol_first(s, sym); a >= 0; a = gm_symbols_next(s, a)) {
        gm_anchor x = gm_symbols_anchor(s, a);
        y->anchors[y->n_anchors++] = (gm_plan_anchor){x.node, x.index, x.out, -1};
        y->streams[y->n_streams++] = gm_node_stream(x.node);
        /* what the packer's groups look for, noted while the node is at hand */
        const gm_node *clean = gm_anchor_clean_node(x.node, x.out, x.index);
        y->atomic_clean |= clean != NULL;
        y->continuous |= gm_plan_continuous_node(x.node, x.out);
        int64_t b = anchor_bytes(x.node, x.out, x.index, o->ge_padded_sizes);
        if (b < 0) dynamic = true;
        else if (b > size) size = b;
        bool root = gm_graph_is_root(gm_node_graph(x.node));
        if (x.out) {
            if (!mt_set) y->stream = gm_node_stream(x.node);
            /* the producer's desc says where the tensor lives; the first output found decides */
            if (!mt_set) mt = gm_desc_mem_type(gm_node_output_desc(x.node, x.index)), mt_set = true;
            no_reuse = no_reuse || never_reused(x.node, o->no_reuse_ops);
            /* a multi-batch branch's tensors carry its label (DynamicBatchMemAssigner) */
            const char *label = gm_attrs_get_string(gm_node_attr_list(x.node), "_batch_label");
            if (label && *label && !y->batch_label && !(y->batch_label = gm_strdup(label))) return GM_ERR_NOMEM;
            if (gm_node_is(x.node, GM_OP_CONST) || gm_node_is(x.node, GM_OP_VARIABLE)) fixed = true;
            if (fixed_address(x.node, x.index)) fixed = true;
            /* root RefData is a user-bound variable: it lives the whole run, never reused */
            if (root && gm_node_is(x.node, GM_OP_DATA) && gm_node_is(x.node, GM_OP_VAR_LIKE)) fixed = true;
            if (root && gm_node_is(x.node, GM_OP_DATA) && !gm_node_is(x.node, GM_OP_VAR_LIKE)) {
                zero_copy = true;
                gm_hb_life_at_start(life); /* written before the first node */
                continue;
            }
        } else if (root && gm_node_is(x.node, GM_OP_NETOUTPUT)) {
            zero_copy = true;
            gm_hb_life_at_end(life); /* read after the last node */
            continue;
        }
        if (gm_attrs_get_bool(gm_node_attr_list(x.node), x.out ? "continuous_output" : "continuous_input", false))
            grouped = true;
        if (gm_hb_life_add(life, x.node) != GM_OK) return GM_ERR_NOMEM;
        /* a body output its loop stacks is read by the loop once the body has run: in use
         * until the loop's exit (and, read outside the body, through every iteration) */
        if (!x.out && gm_body_output_is_stacked(x.node, x.index) &&
            gm_hb_life_add(life, gm_graph_parent(gm_node_graph(x.node))) != GM_OK)
            return GM_ERR_NOMEM;
        /* memory an atomic op accumulates into is zeroed earlier by its clean node: from then
         * on it is in use */
        if (clean && gm_hb_life_add(life, clean) != GM_OK) return GM_ERR_NOMEM;
    }
    /* a few streams a symbol (its anchors' nodes): insertion sort, where qsort's call per
     * symbol cost 0.17 s at a million */
    for (size_t i = 1; i < y->n_streams; i++) {
        int64_t v = y->streams[i];
        size_t j = i;
        for (; j > 0 && y->streams[j - 1] > v; j--) y->streams[j] = y->streams[j - 1];
        y->streams[j] = v;
    }
    size_t k = 0;
    for (size_t i = 0; i < y->n_streams; i++)
        if (k == 0 || y->streams[k - 1] != y->streams[i]) y->streams[k++] = y->streams[i];
    y->n_streams = k;
    /* packed on [first, release]: safe whatever the streams (happens_before.h); the bound is
     * taken on [first, last], the accesses themselves */
    gm_hb_span sp = gm_hb_life_span(life);
    y->first = sp.first, y->last = sp.release, y->last_use = sp.last, y->mem_type = mt;
    y->real_size = size, y->no_reuse = no_reuse;
    /* GE's IsZeroCopyBlock: never a member of a continuous group, which lies in one feature-map
     * block with its other members (the runtime copies it to or from the user's buffer) */
    if (grouped) zero_copy = false;
    if (fixed) {
        /* lives the whole run */
        y->region = GM_PLAN_R_FIXED, y->first = 0, y->last = y->last_use = last_pos;
    } else if (dynamic) {
        y->region = GM_PLAN_R_DYNAMIC;
    } else {
        y->region = zero_copy ? GM_PLAN_R_ZERO_COPY : GM_PLAN_R_FEATURE_MAP;
    }
    if (y->region == GM_PLAN_R_DYNAMIC) y->offset = -1, y->size = -1;
    else y->offset = 0, y->size = align_up(size, y->region == GM_PLAN_R_ZERO_COPY ? GM_PLAN_ZERO_COPY_ALIGN : o->align);
    return GM_OK;
}

/* The symbols described side by side, in chunks each part takes as it finishes one, with the
 * part's own lifetime builder: a symbol reads the model, the table and the happens-before, and
 * writes only itself, so the plan is the same on any number of threads. A failure is the lowest
 * failing symbol's, whichever part met it. */
enum { DESCRIBE_CHUNK = 4096 };

typedef struct describe_job {
    const gm_model *m;
    const gm_symbols *s;
    const gm_plan_options *o;
    gm_plan *p;
    gm_hb_life *life[GM_PARALLEL_MAX];
    gm_status st[GM_PARALLEL_MAX];
    size_t failed_at[GM_PARALLEL_MAX]; /* the part's lowest failing symbol */
} describe_job;

static void describe_range(void *ctx, unsigned part, size_t b, size_t e)
{
    describe_job *j = ctx;
    for (size_t i = b; i < e; i++) {
        gm_symbols_prefetch(j->s, i);
        gm_status st = describe_symbol(j->m, j->s, gm_symbols_at(j->s, i), j->life[part], j->o, &j->p->symbols[i]);
        if (st != GM_OK) {
            if (j->st[part] == GM_OK || i < j->failed_at[part]) j->st[part] = st, j->failed_at[part] = i;
            return; /* the rest of this chunk is not needed: a lower failure wins, or this one */
        }
    }
}

static gm_status describe_all(const gm_model *m, const gm_symbols *s, const gm_hb *hb, const gm_plan_options *o,
                              gm_plan *p)
{
    describe_job j = {.m = m, .s = s, .o = o, .p = p};
    unsigned parts = gm_parallel_parts(o->threads, p->n_symbols / DESCRIBE_CHUNK);
    gm_status st = GM_OK;
    for (unsigned t = 0; t < parts && st == GM_OK; t++) st = gm_hb_life_new(hb, &j.life[t]);
    if (st == GM_OK) gm_parallel_chunks(parts, p->n_symbols, DESCRIBE_CHUNK, describe_range, &j);
    size_t first = SIZE_MAX;
    for (unsigned t = 0; t < parts; t++) {
        if (j.st[t] != GM_OK && j.failed_at[t] < first) first = j.failed_at[t], st = j.st[t];
        gm_hb_life_free(j.life[t]);
    }
    return st;
}

/* Extents and the summary numbers from the offsets as they stand. */
static void summarize(gm_plan *p)
{
    memset(p->region_bytes, 0, sizeof p->region_bytes);
    memset(p->region_used, 0, sizeof p->region_used);
    memset(p->by_memory_type, 0, sizeof p->by_memory_type);
    p->feature_map_bytes = p->no_reuse_bytes = p->zero_copy_bytes = p->fixed_bytes = 0;
    p->dynamic_symbols = 0;
    for (size_t i = 0; i < p->n_symbols; i++) {
        const gm_plan_symbol *y = &p->symbols[i];
        p->region_used[y->region][y->mem_type] = true;
        if (y->region == GM_PLAN_R_DYNAMIC) {
            p->dynamic_symbols++;
            continue;
        }
        int64_t e = y->offset + y->size;
        if (e > p->region_bytes[y->region][y->mem_type]) p->region_bytes[y->region][y->mem_type] = e;
        if (y->region == GM_PLAN_R_FEATURE_MAP) p->no_reuse_bytes += y->size;
    }
    for (int mt = 0; mt < GM_MEM_COUNT; mt++) {
        p->by_memory_type[mt] = p->region_bytes[GM_PLAN_R_FEATURE_MAP][mt];
        p->feature_map_bytes += p->region_bytes[GM_PLAN_R_FEATURE_MAP][mt];
        p->zero_copy_bytes += p->region_bytes[GM_PLAN_R_ZERO_COPY][mt];
        p->fixed_bytes += p->region_bytes[GM_PLAN_R_FIXED][mt];
    }
}

/* ---- self-check and repair ----------------------------------------------------------------- */

/* The text is about to be released: whoever was shown it stops reading it first. */
static void withdraw_text(const gm_plan_options *o, gm_plan *p)
{
    if (p && p->text && o->on_text) o->on_text(NULL, 0, o->text_ctx);
}

/* Writes and verifies the plan; *v is filled on GM_OK. The text is kept in p->text: the last
 * round's is exactly what the plan says, proven (or not: v says) by the verifier. */
static gm_status self_check(const gm_model *m, gm_plan *p, const gm_plan_options *o, gm_plan_verdict *v,
                            gm_error *err)
{
    summarize(p);
    withdraw_text(o, p);
    free(p->text);
    p->text = NULL;
    return gm_plan_write_verify(m, p, o, v, err);
}

/* Merges the lifetimes of every overlapping pair in v; marks their regions dirty. Returns the
 * number of pairs merged. */
static gm_status index_ids(const gm_plan *p, gm_strmap *by_id)
{
    if (gm_strmap_reserve(by_id, p->n_symbols)) return GM_ERR_NOMEM;
    for (size_t i = 0; i < p->n_symbols; i++)
        if (gm_strmap_put(by_id, p->symbols[i].id, &p->symbols[i])) return GM_ERR_NOMEM;
    return GM_OK;
}

static size_t merge_overlaps(gm_plan *p, const gm_strmap *by_id, const gm_plan_verdict *v,
                             bool dirty[GM_PLAN_R_COUNT][GM_MEM_COUNT])
{
    size_t merged = 0;
    for (size_t i = 0; i < v->n_problems; i++) {
        const gm_plan_problem *q = &v->problems[i];
        if (q->kind != GM_PLAN_P_OVERLAP) continue;
        gm_plan_symbol *a = gm_strmap_get(by_id, q->sym_a), *b = gm_strmap_get(by_id, q->sym_b);
        if (!a || !b) continue;
        /* the union: neither can start before the other is done, so the packer keeps them apart */
        int64_t f = a->first < b->first ? a->first : b->first;
        int64_t l = a->last > b->last ? a->last : b->last;
        a->first = b->first = f;
        a->last = b->last = l;
        dirty[a->region][a->mem_type] = true;
        dirty[b->region][b->mem_type] = true;
        merged++;
    }
    return merged;
}

static gm_status unknown_strategy(const char *name, gm_error *err)
{
    char list[512];
    gm_plan_strategy_names(list, sizeof list);
    return gm_error_set(err, GM_ERR_USAGE, "unknown strategy '%s' (%s)", name, list);
}

/* Runs every strategy on the items as they stand and applies the winner's offsets. The first
 * run's figures are the ones reported: repairs re-pack with lengthened lifetimes. */
static gm_status pack(const gm_model *m, gm_plan *p, gm_plan_items *it, const gm_plan_options *o, bool first,
                      double deadline_ms, gm_error *err)
{
    gm_plan_items_build(it, p);
    const char *policy = gm_model_option(m, "ge.exec.memoryOptimizationPolicy");
    gm_pack_job job = {.items = it->items,
                       .meta = it->meta,
                       .n_items = it->n_items,
                       .units = it->units,
                       .n_units = it->n_units,
                       .search_budget_s = o->search_budget_s,
                       .deadline_ms = deadline_ms,
                       .search_node_limit = o->search_node_limit,
                       .only = -1,
                       .lower_bound = p->lower_bound_bytes,
                       .compare_all = o->strategy && !strcmp(o->strategy, "all"),
                       .compare_items = GM_PACK_COMPARE_ITEMS,
                       .memory_priority = policy && !strcmp(policy, "MemoryPriority")};
    gm_pack_strategy only;
    if (o->strategy && strcmp(o->strategy, "auto") && strcmp(o->strategy, "all")) {
        if (!gm_pack_strategy_from_name(o->strategy, &only)) return unknown_strategy(o->strategy, err);
        job.only = (int)only;
    }
    gm_pack_result res[GM_PACK_COUNT];
    memset(res, 0, sizeof res);
    gm_status st = gm_pack_results_alloc(&job, res);
    if (st != GM_OK) {
        gm_pack_results_free(res);
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory packing");
    }
    int best = gm_pack_run(&job, o->threads, res, err);
    if (best < 0) {
        gm_pack_results_free(res);
        return err->code ? err->code : GM_ERR_INTERNAL;
    }
    gm_plan_items_apply(it, p, &res[best]);
    if (first) {
        p->n_strategies = 0;
        p->n_strategies_skipped = p->n_strategies_out_of_budget = 0;
        for (int s = 0; s < GM_PACK_COUNT; s++) {
            if (res[s].out_of_budget) {
                p->n_strategies_out_of_budget++;
                continue;
            }
            if (res[s].skipped) {
                p->n_strategies_skipped += job.only < 0;
                continue;
            }
            gm_plan_strategy *e = &p->strategies[p->n_strategies++];
            snprintf(e->name, sizeof e->name, "%s", gm_pack_strategy_name((gm_pack_strategy)s));
            e->bytes = res[s].feature_map_bytes;
            e->ms = res[s].ms;
            if (s == best) p->strategy = e->name;
        }
    }
    gm_pack_results_free(res);
    return GM_OK;
}

/* The independent verifier on the plan as written; stream overlaps it still finds (none are
 * expected: lifetimes end at their release) get their lifetimes merged and the plan re-packed,
 * and a region still overlapping after repair_rounds loses reuse. */
static gm_status verify_and_repair(const gm_model *m, gm_plan *p, gm_plan_items *it, const gm_plan_options *o,
                                   double deadline_ms, gm_error *err)
{
    gm_status st;
    bool dirty[GM_PLAN_R_COUNT][GM_MEM_COUNT];
    gm_strmap by_id = {0}; /* symbols by id, made when a repair first needs it */
    for (uint32_t round = 0;; round++) {
        gm_plan_verdict v;
        double t_check = gm_clock_ms();
        st = self_check(m, p, o, &v, err);
        p->stage_ms[GM_PLAN_STAGE_VERIFY] += gm_clock_ms() - t_check;
        if (st != GM_OK) break;
        p->repair_rounds++;
        size_t overlaps = v.by_kind[GM_PLAN_P_OVERLAP];
        p->unresolved = v.n_problems + v.dropped;
        memset(dirty, 0, sizeof dirty);
        if (overlaps && by_id.count == 0 && index_ids(p, &by_id) != GM_OK) {
            gm_plan_verdict_free(&v);
            st = gm_error_set(err, GM_ERR_NOMEM, "out of memory planning '%s'", gm_model_name(m));
            break;
        }
        size_t merged = overlaps ? merge_overlaps(p, &by_id, &v, dirty) : 0;
        gm_plan_verdict_free(&v);
        if (overlaps == 0) break;
        if (merged == 0 || round >= o->repair_rounds) {
            /* out of rounds (or nothing we can merge): every region still overlapping loses reuse,
             * which no stream order can break */
            bool any = false;
            for (int r = 0; r < GM_PLAN_R_DYNAMIC; r++)
                for (int mt = 0; mt < GM_MEM_COUNT; mt++)
                    if ((merged ? dirty[r][mt] : r != GM_PLAN_R_FIXED) && !p->fallback[mt][r])
                        p->fallback[mt][r] = true, any = true;
            if (!any) break; /* already at no reuse: what is left is not an overlap we made */
        } else {
            p->repaired_pairs += merged;
        }
        double t_repack = gm_clock_ms();
        st = pack(m, p, it, o, false, deadline_ms, err);
        p->stage_ms[GM_PLAN_STAGE_PACK] += gm_clock_ms() - t_repack;
        if (st != GM_OK) break;
    }
    gm_strmap_free(&by_id);
    return st;
}

/* The symbol table and the happens-before, side by side on a big model: both only read it. */
typedef struct tables_job {
    const gm_model *m;
    gm_symbols *s;
    gm_hb *hb;
    gm_status st[2];
    gm_error err[2];
} tables_job;

static void build_table(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    tables_job *j = ctx;
    gm_error_clear(&j->err[part]);
    j->st[part] = part == 0 ? gm_symbols_build(j->m, &j->s, &j->err[part]) : gm_hb_build(j->m, &j->hb, &j->err[part]);
}

/* given: a current table from the passes (gm_passes_run_symbols), taken; only the
 * happens-before is left to build then. */
static gm_status build_tables(const gm_model *m, const gm_plan_options *o, gm_symbols *given, gm_symbols **s,
                              gm_hb **hb, gm_error *err)
{
    tables_job j = {.m = m};
    if (!gm_symbols_current(given, m)) { /* built again below: let the stale one go first */
        gm_symbols_free(given);
        given = NULL;
    }
    if (given) {
        gm_error_clear(&j.err[1]);
        j.s = given;
        j.st[1] = gm_hb_build(m, &j.hb, &j.err[1]);
    } else if (gm_model_node_count(m) >= 65536 && gm_parallel_parts(o->threads, 2) == 2) {
        gm_parallel_run(2, build_table, &j);
    } else {
        build_table(&j, 0, 1);
        if (j.st[0] == GM_OK) build_table(&j, 1, 1);
    }
    for (int k = 0; k < 2; k++)
        if (j.st[k] != GM_OK) {
            if (err) *err = j.err[k];
            gm_symbols_free(j.s);
            gm_hb_free(j.hb);
            return j.st[k];
        }
    *s = j.s;
    *hb = j.hb;
    return GM_OK;
}

/* The lower bound and the packer's items. The bound is taken before no-padding members join
 * their whole; where nothing joins (most models) the merge leaves the symbols as they are, and a
 * big plan's bound is taken on the second core beside the items: both only read the symbols. */
enum { BOUND_APART = 65536 }; /* symbols from which the bound goes to the second core */

typedef struct bound_job {
    const gm_model *m;
    gm_plan *p;
    gm_plan_items *it;
    gm_status st[2];
} bound_job;

static void bound_part(void *ctx, unsigned part, unsigned parts)
{
    (void)parts;
    bound_job *j = ctx;
    j->st[part] = part == 0 ? gm_plan_items_init(j->it, j->m, j->p) : gm_plan_compute_bound(j->p);
}

static gm_status bound_and_items(const gm_model *m, gm_plan *p, gm_plan_items *it, int32_t **remap,
                                 const gm_plan_options *o)
{
    if (p->n_symbols < BOUND_APART || gm_parallel_parts(o->threads, 2) < 2 || gm_plan_nopad_any(m)) {
        if (gm_plan_compute_bound(p) != GM_OK || gm_plan_merge_nopad(m, p, remap) != GM_OK) return GM_ERR_NOMEM;
        if (gm_plan_remap_witness(p, *remap) != GM_OK) return GM_ERR_NOMEM;
        return gm_plan_items_init(it, m, p);
    }
    if (gm_plan_identity_remap(p, remap) != GM_OK) return GM_ERR_NOMEM;
    bound_job j = {.m = m, .p = p, .it = it};
    gm_parallel_run(2, bound_part, &j);
    if (j.st[0] != GM_OK || j.st[1] != GM_OK) return GM_ERR_NOMEM;
    return gm_plan_remap_witness(p, *remap);
}

gm_status gm_plan_build(const gm_model *m, const gm_plan_options *o, gm_plan **out, gm_error *err)
{
    return gm_plan_build_symbols(m, o, NULL, out, err);
}

gm_status gm_plan_build_symbols(const gm_model *m, const gm_plan_options *o, gm_symbols *symbols, gm_plan **out,
                                gm_error *err)
{
    gm_error local;
    if (!err) err = &local;
    gm_error_clear(err);
    *out = NULL;
    gm_plan_options defaults;
    gm_plan_options_init(&defaults);
    if (!o) o = &defaults;
    if (o->align <= 0) {
        gm_symbols_free(symbols);
        return gm_error_set(err, GM_ERR_INPUT, "plan options: align must be positive (got %lld)",
                            (long long)o->align);
    }

    double t_start = gm_clock_ms();
    tell_stage(o, "lifetimes");
    gm_symbols *s = NULL;
    gm_hb *hb = NULL;
    gm_status st = build_tables(m, o, symbols, &s, &hb, err);
    if (st != GM_OK) return st;
    gm_plan *p = gm_calloc(1, sizeof *p);
    size_t ns = gm_symbols_count(s);
    gm_plan_items it;
    memset(&it, 0, sizeof it);
    int32_t *remap = NULL;
    if (!p) goto nomem;
    p->align = o->align;
    /* ge.exec.disableReuseMemory=1: every symbol at its own address, as GE does */
    const char *disable = gm_model_option(m, "ge.exec.disableReuseMemory");
    if (disable && !strcmp(disable, "1"))
        for (int mt = 0; mt < GM_MEM_COUNT; mt++)
            p->fallback[mt][GM_PLAN_R_FEATURE_MAP] = p->fallback[mt][GM_PLAN_R_ZERO_COPY] = true;
    p->report = o->report;
    p->reproducible = o->reproducible;
    p->symbols = gm_calloc(ns ? ns : 1, sizeof *p->symbols);
    if (!p->symbols) goto nomem;
    p->n_symbols = ns; /* zeroed until described: gm_plan_free frees what there is */
    if (describe_all(m, s, hb, o, p) != GM_OK) goto nomem;
    gm_symbols_free(s);
    s = NULL;
    if ((st = check_sizes(m, p, err)) != GM_OK) goto fail;
    gm_hb_free(hb);
    hb = NULL;

    /* the bound is taken on the accesses, before any release, join or repair lengthens a
     * lifetime: it must hold for every valid plan, not just this one */
    if (bound_and_items(m, p, &it, &remap, o) != GM_OK) goto nomem;
    double t_pack = gm_clock_ms();
    p->stage_ms[GM_PLAN_STAGE_LIFETIMES] = t_pack - t_start;
    tell_stage(o, "packing");
    /* one clock budget for the packing, the repairs' re-packing included */
    double deadline_ms = o->search_budget_s > 0 ? t_pack + o->search_budget_s * 1e3 : 0;
    if ((st = pack(m, p, &it, o, true, deadline_ms, err)) != GM_OK) goto fail;
    p->stage_ms[GM_PLAN_STAGE_PACK] = gm_clock_ms() - t_pack;

    tell_stage(o, "verifying");
    if ((st = verify_and_repair(m, p, &it, o, deadline_ms, err)) != GM_OK) goto fail;
    summarize(p);
    gm_plan_items_free(&it);
    gm_free(remap);
    *out = p;
    return GM_OK;

nomem:
    st = gm_error_set(err, GM_ERR_NOMEM, "out of memory planning '%s'", gm_model_name(m));
fail:
    gm_symbols_free(s);
    gm_hb_free(hb);
    gm_plan_items_free(&it);
    gm_free(remap);
    withdraw_text(o, p);
    gm_plan_free(p);
    return st;
}
