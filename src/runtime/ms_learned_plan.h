/*
 * ms_learned_plan.h — not GE's: the multi-stream group learns one iteration and replays a packed
 * plan of it (gm_ms_config.learn_plan).
 *
 * A graph runs the same iteration again and again. The group records one iteration, whole, as
 * the dynamic allocator serves it: each stream's sequence of mallocs (by size), cross-stream
 * accesses, frees, event sends and waits. At its LastWaitEvents it packs every block of that
 * iteration at an offset of one region (ms_plan_pack.c) so that two blocks share bytes only
 * where the device would order the first one's last use before the second one's first:
 *
 *   - through the events of the iteration itself: every release of the first is known to the
 *     second's stream (a vector clock over each stream's sequence) by the second's malloc; or
 *   - failing that, through an internal dependency (gm_ms_config.order, as ms_internal_deps.c)
 *     that the second's malloc adds from each stream whose release it has not heard of, where
 *     every release came before that malloc on the host (checked at run time).
 *
 * The pools give their idle memory back, L1 trims, and the region is taken from L1 in one
 * piece. From the next iteration on, each call is checked against the recorded sequence of its
 * stream and answered from the plan: a malloc returns the block's fixed place, a free or an
 * event only moves the stream's cursor. While every stream keeps to its sequence and every wait
 * is on the very send it was on when recorded, the order between streams is the recorded one, so
 * the packing stays safe. A block placed by the second rule whose guard fails (the host
 * interleaved the streams otherwise) is served by the dynamic allocator instead, as the slot's
 * stand-in, and the iteration stays on the plan. The first call that departs (another size,
 * another order of calls, a wait that stands for another send) ends the plan for the rest of the
 * iteration: the dynamic allocator serves from there on, in its own memory, while the planned
 * blocks already out keep their places until freed. At the next LastWaitEvents with no planned
 * block out, the region goes back to L1 and the group learns again; after GM_MS_PLAN_RELEARNS
 * departures in a row it stops trying (and a recording that cannot be planned — nothing malloc'ed,
 * a block living across iterations — stops it at once).
 *
 * Iterations of other shapes (a dynamic batch: the same calls, other sizes) are learned too, up to
 * GM_MS_PLAN_SHAPES of them, all packed into one region (ms_plan_shapes.c): a call the current
 * shape does not expect, made before the iteration had a block from the plan, hands the iteration
 * to the shape that expects it, or, if none does, makes the iteration the recording of a new one.
 *
 * Everything here runs under the group's single-threaded contract.
 */
#ifndef GM_MS_LEARNED_PLAN_H
#define GM_MS_LEARNED_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/mem_source.h"
#include "runtime/mif.h"
#include "runtime/ms_mem_block.h"

#define GM_MS_PLAN_RELEARNS 3
#define GM_MS_PLAN_SHAPES 4  /* iterations of different shapes kept (dynamic batch), one region for all */
#define GM_MS_PLAN_ALIGN 512 /* bytes: every planned block starts on a multiple (GE's alignment) */

typedef enum gm_ms_plan_mode {
    GM_MS_PLAN_NONE = 0, /* not asked for, or given up: the dynamic allocator alone */
    GM_MS_PLAN_RECORD,   /* this iteration is being recorded */
    GM_MS_PLAN_ON,       /* this iteration keeps to the plan so far */
    GM_MS_PLAN_OFF,      /* this iteration departed from it (or is waiting to record) */
} gm_ms_plan_mode;

/* One recorded call, in the order the host made it. */
typedef enum gm_ms_plan_op { GM_PLAN_ALLOC = 1, GM_PLAN_ACCESS, GM_PLAN_FREE, GM_PLAN_SEND, GM_PLAN_WAIT, GM_PLAN_END } gm_ms_plan_op;

typedef struct gm_ms_plan_rec {
    uint8_t op;      /* gm_ms_plan_op */
    uint8_t pad[3];
    uint32_t stream; /* the stream whose sequence it is in */
    uint64_t arg;    /* alloc, access, free: the block's slot; send: its destination stream; wait:
                        src << 32 | the send's place in src's sequence, or GM_PLAN_NOTHING */
} gm_ms_plan_rec;

/* One expected call of a stream's sequence: its word, op | arg << 3 (arg as in gm_ms_plan_rec),
 * and what answering it needs at hand, so that a call on the plan is a compare and a cursor move
 * (ms_fast_path.h):
 *   - alloc: the slot's wrapper, or 0 where the malloc has guards to check (the slow path's);
 *   - send: the word of the wait that will stand for it (GM_PLAN_WAIT and its place). */
typedef struct gm_ms_plan_call {
    uint64_t word;
    uint64_t aux;
} gm_ms_plan_call;

/* A planned block: where it goes and what its malloc must check. */
typedef struct gm_ms_plan_slot {
    size_t req;          /* the size asked for when recorded: a malloc must ask the same */
    size_t bytes;        /* req rounded up to GM_MS_PLAN_ALIGN */
    size_t offset;       /* in the region */
    uint32_t stream;     /* the stream that mallocs it */
    uint32_t refs;       /* references out: counted while recording and once the iteration left
                            its plan (on it, the cursors say) */
    uint64_t order_mask; /* streams its malloc orders itself after (internal dependencies) */
    uint32_t guard0, nguards; /* slots that must be wholly freed first (in plan->guards) */
    uint32_t free0, nfrees; /* its frees' places (in the shape's frees): the guards' test */
    uint32_t stood_in;   /* the iteration in which the dynamic allocator served its malloc */
    gm_ms_block *block;  /* its wrapper, reused every iteration */
    gm_span span;        /* its address, for gm_ms_block_addr */
} gm_ms_plan_slot;

/* One learned iteration: its blocks and every stream's expected calls. */
typedef struct gm_ms_plan_shape {
    gm_ms_plan_slot *slots;  /* its blocks; its sequences name them by index */
    size_t nslots;
    gm_ms_plan_call *calls;  /* every stream's sequence, one after another, each ended by GM_PLAN_END */
    const gm_ms_plan_call *seq[GM_MAX_STREAMS]; /* per stream: its sequence's start in calls */
    uint32_t *guards;        /* the slots' guards (gm_ms_plan_slot.guard0, nguards) */
    uint64_t *frees;         /* the slots' frees, stream << 32 | place (gm_ms_plan_slot.free0, nfrees) */
    size_t sends, waits, mallocs; /* its calls of each kind: an iteration that kept to it made these */
    size_t height;           /* bytes of the region it packs into */
    size_t dependent_blocks; /* blocks whose mallocs add internal dependencies */
    uint32_t used;           /* the iteration it last served (the least recently used goes first) */
} gm_ms_plan_shape;

typedef struct gm_ms_plan_stats {
    size_t learned;          /* plans built */
    size_t shapes;           /* plans held now (iterations of different shapes) */
    size_t switches;         /* iterations that began on another plan than the one before */
    size_t iterations_on;    /* iterations that kept to their plan to the end */
    size_t departures;       /* iterations that left it */
    size_t planned_mallocs;  /* mallocs answered from a plan */
    size_t stand_ins;        /* mallocs of a plan's slot served dynamically (a guard did not hold) */
    size_t orders;           /* internal dependencies the planned mallocs added */
    size_t region_bytes;     /* the plans' region (0: none) */
    size_t blocks;           /* blocks in the current plan */
    size_t dependent_blocks; /* of which mallocs add internal dependencies */
    bool gave_up;
} gm_ms_plan_stats;

/* Every stream's cursor into the current shape's sequences, and the iteration stamp: the group's
 * (gm_ms_group.cursors), so that a call reaches its cursor in one load from the group, from its
 * stream's allocator or from a planned block (ms_fast_path.h). While no plan answers, every cursor
 * points at gm_ms_no_call, which matches no call: a hit needs no test of the mode first. */
typedef struct gm_ms_cursors {
    const gm_ms_plan_call *at[GM_MAX_STREAMS]; /* per stream: the next expected call */
    uint32_t iter; /* the plan's iteration stamp (never 0 while a plan or a recording runs) */
} gm_ms_cursors;

extern const gm_ms_plan_call gm_ms_no_call;
/* Every cursor at gm_ms_no_call. */
void gm_ms_cursors_init(gm_ms_cursors *c);

typedef struct gm_ms_plan {
    gm_ms_plan_mode mode;
    struct gm_ms_group *g;
    uint32_t n;          /* streams */
    gm_ms_cursors *c;    /* the group's: each stream's cursor (replay) and the iteration stamp */
    uint32_t relearns;   /* departures since the last iteration that kept to its plan */
    gm_mem_source l1;    /* where the region comes from */
    size_t page;         /* L1's page: the region takes whole ones */
    int (*order)(void *ctx, uint32_t from, uint32_t to);
    void *order_ctx;
    /* the recording */
    gm_ms_plan_rec *log;
    size_t nlog, caplog;
    gm_ms_plan_slot *slots; /* the recording's blocks (capslots > 0: its own array), or the current
                               shape's */
    size_t nslots, capslots;
    bool spoiled;        /* the recording saw something a plan cannot keep */
    /* the plans, and the current one's slots, sequences and guards (copied here: one load less) */
    gm_ms_plan_shape shape[GM_MS_PLAN_SHAPES];
    uint32_t nshapes, cur_shape;
    const gm_ms_plan_call *seq[GM_MAX_STREAMS]; /* per stream: the current shape's sequence */
    uint32_t cur[GM_MAX_STREAMS];        /* per stream: the calls recorded so far (recording) */
    uint32_t *guards;    /* the current shape's guards */
    const uint64_t *frees; /* the current shape's frees */
    void *region;
    size_t region_bytes;
    size_t out;          /* planned blocks with references, counted once the iteration left its plan
                            (on it, nothing is counted call by call: gm_ms_plan_depart counts what
                            the cursors passed) */
    uint32_t stand_in;   /* slot + 1 of the malloc the dynamic allocator is to serve now (0: none) */
    size_t stand_ins_now; /* stand-ins this iteration (0: the dynamic allocator had nothing to do) */
    gm_ms_plan_stats st;
} gm_ms_plan;

/* A plan of group g's calls (its streams, its internal dependencies) that will record the first
 * iteration. */
struct gm_ms_group;
void gm_ms_plan_init(gm_ms_plan *p, struct gm_ms_group *g, const gm_mem_source *l1, size_t page);
/* Gives the region back (after a synchronize of every stream by the caller: planned blocks still
 * out are forgotten) and frees everything. */
void gm_ms_plan_fini(gm_ms_plan *p);

/* Recording: the dynamic allocator's answers, call by call. */
void gm_ms_plan_record_malloc(gm_ms_plan *p, uint32_t stream, gm_ms_block *b, size_t size);
/* op: GM_PLAN_ACCESS (stream takes a reference) or GM_PLAN_FREE (stream drops one) */
void gm_ms_plan_record_ref(gm_ms_plan *p, gm_ms_block *b, uint32_t stream, gm_ms_plan_op op);
/* An event's send (src -> dst) and its wait (on dst): *wait and *send_iter are the payload's
 * plan_wait and plan_iter (gm_ms_event_payload). */
void gm_ms_plan_record_send(gm_ms_plan *p, uint32_t src, uint32_t dst, uint64_t *wait, uint32_t *send_iter);
void gm_ms_plan_record_wait(gm_ms_plan *p, uint32_t dst, uint64_t wait, uint32_t *send_iter);

/* A call the plan has no answer for (on a block from before it): the plan ends for this iteration,
 * and what it answered so far is counted (the calls, the planned blocks' references). */
void gm_ms_plan_depart(gm_ms_plan *p);
/* A call on stream that the current shape does not expect (want: its word; a malloc's: GM_PLAN_ALLOC
 * and its size). Before the iteration had a block from the plan, another shape that expects it
 * (and the calls made so far) takes over: true, call again. Else false: the iteration departs,
 * or, if no shape knew it from its start (a new shape), becomes the recording of a new one
 * (ms_plan_shapes.c). */
bool gm_ms_plan_miss(gm_ms_plan *p, uint32_t stream, uint64_t want, size_t size);
/* A malloc whose slot adds dependencies or has guards, or that departs. */
gm_ms_block *gm_ms_plan_malloc_slow(gm_ms_plan *p, uint32_t stream, size_t size);
/* After a planned malloc returned NULL on the plan: b (NULL: the dynamic allocator failed) stands
 * in for the slot whose guard did not hold, or b is plain dynamic memory. */
void gm_ms_plan_dynamic_block(gm_ms_plan *p, gm_ms_block *b);
/* The group goes, the iteration where it is: it is counted as at a departure, and the planned
 * blocks still out are returned. */
size_t gm_ms_plan_stop(gm_ms_plan *p);
/* What the plan answered this iteration and has not counted yet (on the plan, the calls are
 * counted at its end): added to *sent, *waited and *mallocs. */
void gm_ms_plan_uncounted(const gm_ms_plan *p, size_t *sent, size_t *waited, size_t *mallocs);

/* Replay, inline (the answer is a few loads and a compare; these run for every call of every
 * iteration). The *_hit functions answer a call that keeps to the current shape and change nothing
 * otherwise; the others also take what a miss decides (gm_ms_plan_miss): false, the caller serves
 * the call dynamically (and records it, if the iteration became a recording). On the plan no call
 * counts anything: the cursors say what was done (gm_ms_plan_depart, gm_ms_plan_uncounted). */
/* The call keeps to stream's sequence: the cursor moves on. */
static inline bool gm_ms_plan_hit(gm_ms_cursors *c, uint32_t stream, uint64_t want)
{
    const gm_ms_plan_call *at = c->at[stream];
    if (__builtin_expect(at->word != want, 0)) return false;
    c->at[stream] = at + 1;
    return true;
}

static inline bool gm_ms_plan_expect(gm_ms_plan *p, uint32_t stream, uint64_t want)
{
    return gm_ms_plan_hit(p->c, stream, want) || (gm_ms_plan_miss(p, stream, want, 0) && gm_ms_plan_hit(p->c, stream, want));
}

/* The plain planned malloc (the recorded size, no guards) at a stream's cursor: its block, or
 * NULL (the caller's gm_ms_plan_malloc_slow decides). */
static inline gm_ms_block *gm_ms_plan_malloc_hit(const gm_ms_plan_call **cursor, size_t size)
{
    const gm_ms_plan_call *at = *cursor;
    gm_ms_block *b = (gm_ms_block *)(uintptr_t)at->aux;
    if ((at->word & 7) != GM_PLAN_ALLOC || !b || b->plan_req != size) return NULL;
    *cursor = at + 1;
    return b;
}

static inline gm_ms_block *gm_ms_plan_malloc(gm_ms_plan *p, uint32_t stream, size_t size)
{
    gm_ms_block *b = gm_ms_plan_malloc_hit(&p->c->at[stream], size);
    return b ? b : gm_ms_plan_malloc_slow(p, stream, size);
}

/* A planned block's references, off the plan: taken (GM_PLAN_ACCESS) or dropped (GM_PLAN_FREE). */
static inline void gm_ms_plan_count_ref(gm_ms_plan *p, uint32_t slot, gm_ms_plan_op op)
{
    gm_ms_plan_slot *s = &p->slots[slot];
    if (op == GM_PLAN_ACCESS) s->refs++;
    else if (s->refs && --s->refs == 0) p->out--;
}

/* The word of a wait, from its payload's plan_wait and plan_iter: the send it stands for (its
 * place in src's sequence), or nothing. As the event epochs do (ms_events.c), a payload stands for
 * its first send since its last wait: the device wait may be on that record, which orders only
 * what src did before it. The wait consumes it (*send_iter = 0); a payload sent in an earlier
 * iteration brings nothing. */
#define GM_PLAN_NOTHING (UINT64_MAX >> 3)
#define GM_PLAN_WAIT_NOTHING (GM_PLAN_WAIT | GM_PLAN_NOTHING << 3)
static inline uint64_t gm_ms_plan_wait_want(const gm_ms_cursors *c, uint64_t wait, uint32_t send_iter)
{
    return send_iter == c->iter ? wait : GM_PLAN_WAIT_NOTHING;
}

static inline uint64_t gm_ms_plan_wait_word(uint32_t src, uint32_t at)
{
    return GM_PLAN_WAIT | ((uint64_t)src << 32 | at) << 3;
}

/* A send's payload learns what its wait will be (unless sent already since its last wait). */
static inline void gm_ms_plan_mark_send(const gm_ms_cursors *c, uint64_t word, uint64_t *wait, uint32_t *send_iter)
{
    if (*send_iter == c->iter) return;
    *wait = word;
    *send_iter = c->iter;
}

static inline uint64_t gm_ms_plan_send_word(uint32_t dst) { return GM_PLAN_SEND | (uint64_t)dst << 3; }

static inline bool gm_ms_plan_send_hit(gm_ms_cursors *c, uint32_t src, uint32_t dst, uint64_t *wait, uint32_t *send_iter)
{
    const gm_ms_plan_call *at = c->at[src];
    if (at->word != gm_ms_plan_send_word(dst)) return false;
    c->at[src] = at + 1;
    gm_ms_plan_mark_send(c, at->aux, wait, send_iter);
    return true;
}

static inline bool gm_ms_plan_wait_hit(gm_ms_cursors *c, uint32_t dst, uint64_t wait, uint32_t *send_iter)
{
    if (!gm_ms_plan_hit(c, dst, gm_ms_plan_wait_want(c, wait, *send_iter))) return false;
    *send_iter = 0; /* the wait consumed it */
    return true;
}

static inline bool gm_ms_plan_send(gm_ms_plan *p, uint32_t src, uint32_t dst, uint64_t *wait, uint32_t *send_iter)
{
    if (!gm_ms_plan_expect(p, src, gm_ms_plan_send_word(dst))) return false;
    gm_ms_plan_mark_send(p->c, p->c->at[src][-1].aux, wait, send_iter);
    return true;
}

static inline bool gm_ms_plan_wait(gm_ms_plan *p, uint32_t dst, uint64_t wait, uint32_t *send_iter)
{
    const bool answered = gm_ms_plan_expect(p, dst, gm_ms_plan_wait_want(p->c, wait, *send_iter));
    if (answered || p->mode != GM_MS_PLAN_RECORD) *send_iter = 0; /* consumed (a recording's wait when logged) */
    return answered;
}

/* Stream takes (op GM_PLAN_ACCESS) or drops (GM_PLAN_FREE) a reference to b: checked against
 * the plan while on, recorded while recording; a call on a block the plan does not name (neither
 * planned nor a stand-in of this iteration) departs. A planned block's references are counted
 * here off the plan, and then the plan has done it all: false. True: the dynamic allocator's turn. */
static inline bool gm_ms_plan_ref(gm_ms_plan *p, gm_ms_block *b, uint32_t stream, gm_ms_plan_op op)
{
    const uint64_t want = op | (uint64_t)b->plan_slot << 3;
    if (b->type == GM_MS_PLANNED) { /* first: every call of an iteration on the plan comes here */
        if (p->mode != GM_MS_PLAN_ON || !gm_ms_plan_expect(p, stream, want)) gm_ms_plan_count_ref(p, b->plan_slot, op);
        return false;
    }
    if (p->mode == GM_MS_PLAN_ON) {
        if (b->plan_iter == p->c->iter) gm_ms_plan_expect(p, stream, want); /* a stand-in */
        else gm_ms_plan_depart(p);
    } else if (p->mode == GM_MS_PLAN_RECORD) {
        gm_ms_plan_record_ref(p, b, stream, op);
    }
    return true;
}

/* The iteration kept to the plan so far without the dynamic allocator (LastWaitEvents then has
 * nothing of its own to settle). */
static inline bool gm_ms_plan_quiet(const gm_ms_plan *p) { return p->mode == GM_MS_PLAN_ON && !p->stand_ins_now; }

/* LastWaitEvents (every stream joined): a whole recording becomes a plan; an iteration that
 * kept to it starts the next; one that departed gives the region back once no planned block is
 * out, and the next iteration is recorded (or, after GM_MS_PLAN_RELEARNS, none ever again). */
void gm_ms_plan_iteration_end(gm_ms_plan *p);

/* Builds a shape from the recording (ms_plan_pack.c): the recorded slots' offsets, order masks
 * and guards; out's sequences, guards and height (out->slots is the caller's to set). GM_ERR_NOMEM
 * leaves nothing in out (the caller drops the recording). */
gm_status gm_ms_plan_pack(gm_ms_plan *p, gm_ms_plan_shape *out, gm_error *err);

/* The shapes (ms_plan_shapes.c). */
/* Makes out's wrappers and adds it, in place of a shape of the same calls or else of the least
 * recently used one if all places are taken: its index, or -1 (out of memory; out freed). */
int gm_ms_plan_add_shape(gm_ms_plan *p, gm_ms_plan_shape *out);
/* Shape j answers from now on: its slots, sequences and guards copied into the plan. */
void gm_ms_plan_use_shape(gm_ms_plan *p, uint32_t j);
/* Before the iteration had a block from the plan: another shape whose sequences begin with the
 * calls made so far and expect this one (the most recently used) takes over, cursors and all. */
bool gm_ms_plan_switch_shape(gm_ms_plan *p, uint32_t stream, uint64_t want, size_t size);
/* Every shape's blocks at their offsets in the region. */
void gm_ms_plan_place_shapes(gm_ms_plan *p);
void gm_ms_plan_drop_shapes(gm_ms_plan *p);

#endif
