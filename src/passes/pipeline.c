/*
 * pipeline.c — the pass registry and GE's pass order. Each pass is one file in src/passes or
 * src/conflict named after GE's pass; this table is the only place that lists them.
 */
#include <string.h>

#include "analysis/symbols.h"
#include "conflict/access_order.h"
#include "conflict/inplace.h"
#include "conflict/layout_conflict.h"
#include "conflict/lint.h"
#include "conflict/rw_conflict.h"
#include "graphmem/passes.h"
#include "passes/dedicated.h"
#include "passes/pass_util.h"
#include "util/clock.h"

typedef gm_status (*gm_pass_fn)(gm_pass_ctx *c);

static const struct {
    gm_pass_id id;
    const char *name;
    gm_pass_fn run;      /* NULL: not part of this version yet */
    bool keeps_symbols;  /* writes no attribute the symbol table reads, or leaves a table built
                            after its writes: a current table stays current past it */
} k_passes[GM_PASS_COUNT] = {
    {GM_PASS_LINT, "lint", gm_pass_lint, true},
    {GM_PASS_HCCL_MEMCPY, "hccl_memcpy", gm_pass_hccl_memcpy, false},
    {GM_PASS_SUBGRAPH, "subgraph", gm_pass_subgraph, false},
    {GM_PASS_INPLACE_SUPPORT_CHECK, "inplace_support_check", gm_pass_inplace_support_check, false},
    {GM_PASS_ATOMIC_ADDR_CLEAN, "atomic_addr_clean", gm_pass_atomic_addr_clean, false},
    {GM_PASS_HCCL_CONTINUOUS_MEMCPY, "hccl_continuous_memcpy", gm_pass_hccl_continuous_memcpy, false},
    {GM_PASS_MEMCPY_ADDR_ASYNC, "memcpy_addr_async", gm_pass_memcpy_addr_async, false},
    {GM_PASS_MARK_SAME_ADDR, "mark_same_addr", gm_pass_mark_same_addr, false},
    {GM_PASS_RW_CONFLICT, "rw_conflict", gm_pass_rw_conflict, false},
    {GM_PASS_LAYOUT_CONFLICT, "layout_conflict", gm_pass_layout_conflict, true},
    {GM_PASS_INPLACE, "inplace", gm_pass_inplace, true},
    /* zero-copy offsets only */
    {GM_PASS_SET_IO_OFFSET, "set_io_offset", gm_pass_set_io_offset, true},
    /* graphmem's own: it adds control edges only, which the table does not read */
    {GM_PASS_ACCESS_ORDER, "access_order", gm_pass_access_order, true},
};

/* GE's order (reference §0): GraphLint on the user graph; GraphPrepare runs HcclMemcpy,
 * Subgraph, InplaceSupportCheck, AtomicAddrClean; the optimize stage runs HcclMemcpy a second
 * time (after the prepare passes changed the graph), HcclContinuousMemcpy, MemcpyAddrAsync,
 * MarkSameAddr; then the read/write and layout conflict passes, in-place reuse, and the
 * offsets. A pass named in the set runs at each of its steps. graphmem's access-order pass
 * runs once every buffer is final (after in-place reuse, the last pass that shares one) and
 * before planning; without it the program order stays implicit, as in GE (W18888 only). */
static const gm_pass_id k_steps[] = {
    GM_PASS_LINT,           GM_PASS_HCCL_MEMCPY,    GM_PASS_SUBGRAPH,
    GM_PASS_INPLACE_SUPPORT_CHECK, GM_PASS_ATOMIC_ADDR_CLEAN, GM_PASS_HCCL_MEMCPY,
    GM_PASS_HCCL_CONTINUOUS_MEMCPY, GM_PASS_MEMCPY_ADDR_ASYNC, GM_PASS_MARK_SAME_ADDR,
    GM_PASS_RW_CONFLICT,    GM_PASS_LAYOUT_CONFLICT, GM_PASS_INPLACE,
    GM_PASS_ACCESS_ORDER,   GM_PASS_SET_IO_OFFSET,
};

const char *gm_pass_name(gm_pass_id id)
{
    return (unsigned)id < GM_PASS_COUNT ? k_passes[id].name : "?";
}

bool gm_pass_from_name(const char *name, gm_pass_id *out)
{
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (strcmp(k_passes[i].name, name) == 0) {
            *out = k_passes[i].id;
            return true;
        }
    }
    return false;
}

gm_status gm_pass_set_parse(const char *list, gm_pass_set *out, gm_error *err)
{
    /* Left to right: "all" and "none" set the whole set, a name adds its pass, "-name" takes
     * it out ("all,-access_order" is GE's behaviour: the races warned about, not removed). */
    gm_pass_set set = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        bool minus = len > 0 && *p == '-';
        char name[64];
        gm_pass_id id;
        if (minus) p++, len--;
        if (len == 0 || len >= sizeof name) {
            return gm_error_set(err, GM_ERR_USAGE, "--passes '%s': empty or overlong pass name", list);
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (!minus && strcmp(name, "all") == 0) {
            set = GM_PASS_SET_ALL;
        } else if (!minus && strcmp(name, "none") == 0) {
            set = GM_PASS_SET_NONE;
        } else if (!gm_pass_from_name(name, &id)) {
            return gm_error_set(err, GM_ERR_USAGE,
                                "--passes: unknown pass '%s' (known: all, none, hccl_memcpy, "
                                "hccl_continuous_memcpy, subgraph, inplace_support_check, "
                                "atomic_addr_clean, memcpy_addr_async, mark_same_addr, rw_conflict, "
                                "layout_conflict, inplace, access_order, set_io_offset, lint; "
                                "-NAME leaves one out)",
                                name);
        } else if (minus) {
            set &= ~(1u << id);
        } else {
            set |= 1u << id;
        }
        if (!comma) break;
        p = comma + 1;
    }
    *out = set;
    return GM_OK;
}

gm_status gm_passes_run(gm_model *m, gm_pass_set set, gm_pass_report *report,
                        gm_pass_set *available, gm_error *err)
{
    return gm_passes_run_symbols(m, set, report, available, NULL, err);
}

gm_status gm_passes_run_symbols(gm_model *m, gm_pass_set set, gm_pass_report *report,
                                gm_pass_set *available, gm_symbols **symbols, gm_error *err)
{
    if (symbols) *symbols = NULL;
    gm_pass_set avail = 0;
    memset(report, 0, sizeof *report);
    for (int i = 0; i < GM_PASS_COUNT; i++) {
        if (k_passes[i].run) avail |= 1u << i;
    }
    gm_symbols *handoff = NULL;
    for (size_t s = 0; s < sizeof k_steps / sizeof k_steps[0]; s++) {
        gm_pass_id id = k_steps[s];
        if (!(set & (1u << id)) || !k_passes[id].run) continue;
        gm_pass_ctx c = {m, report, id, err, &handoff};
        double t0 = gm_clock_ms();
        gm_status st = k_passes[id].run(&c);
        double t1 = gm_clock_ms();
        if (st == GM_OK) st = gm_model_toposort(m, err); /* each pass sees a sorted model */
        double t2 = gm_clock_ms();
        report->ms[id] += t2 - t0;
        report->sort_ms += t2 - t1;
        if (handoff && !(k_passes[id].keeps_symbols && gm_symbols_current(handoff, m))) {
            gm_symbols_free(handoff);
            handoff = NULL;
        }
        if (st != GM_OK) {
            gm_symbols_free(handoff);
            return st;
        }
        report->ran[id] = 1;
    }
    if (available) *available = avail;
    double t0 = gm_clock_ms();
    gm_status st = gm_model_toposort(m, err);
    report->sort_ms += gm_clock_ms() - t0;
    if (st == GM_OK && symbols && gm_symbols_current(handoff, m)) {
        *symbols = handoff;
        handoff = NULL;
    }
    gm_symbols_free(handoff);
    return st;
}
