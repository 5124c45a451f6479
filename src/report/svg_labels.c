/*
 * svg_labels.c — the names of the largest tensors (by bytes) written on the picture, so that a
 * screenshot, which has no hover, still says which box is which. A label is a light tag with
 * the name and the size: inside its box when the box has room for enough of the name (two
 * lines, name over size, in a tall box; one in a flat one; upwards in a tall, narrow one), else
 * beside it (right, left or above) where no other box or tag is. A symbol's id ends in what is
 * most particular to it, so a name too long is cut from the left ("…relu/Relu"); the "_out_0"
 * every first output's id ends in is left off. Text is measured with a generous advance per
 * character (C has no font metrics); tests/svg_chromium.sh measures Chromium's text against
 * its tag.
 */
#include <stdlib.h>
#include <string.h>

#include "report/svg_internal.h"
#include "util/alloc.h"

#define CHAR_W 6.2       /* px per character at 10px: Helvetica/Arial average about 5.6 */
#define LINE_H 12.0      /* px per line of 10px text */
#define INSET 2.0        /* tag from the box's edge, inside */
#define GAP 1.5          /* tag from the box's edge, beside it */
#define PAD 2.0          /* text from the tag's edge */
#define MIN_CHARS 10     /* fewer of the name's characters than this: no label inside */
#define BESIDE_CHARS 24  /* of the name beside a box */
#define NAME_MAX 120     /* characters of a name ever shown */
#define CANDIDATES 64    /* the largest symbols tried for a label */
#define SMALLEST 32      /* no label for a symbol this many times smaller than the region's largest */
#define ELLIPSIS "\xe2\x80\xa6"
#define OUT0 "_out_0"

/* Characters (UTF-8 code points) of the first `bytes` bytes of s. */
static size_t utf8_chars(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Where the last k characters of s (of n in all) start. */
static const char *utf8_tail(const char *s, size_t n, size_t k)
{
    for (size_t skip = n - k; skip > 0; skip--) {
        s++;
        while (((unsigned char)*s & 0xC0) == 0x80) s++;
    }
    return s;
}

typedef struct label_fit {
    size_t name_chars;    /* of the name shown (an ellipsis counts one when cut) */
    int lines;            /* 1: "name size" on one line, 2: name over size; 0: no room */
    bool up;              /* written upwards (a tall, narrow box) */
    double along, across; /* the tag, along the text and across its lines */
} label_fit;

/* The tag of a label of `shown` characters of name over a size of s characters. */
static label_fit two_lines(size_t shown, size_t s)
{
    label_fit f = {.name_chars = shown, .lines = 2};
    f.along = (double)(shown > s ? shown : s) * CHAR_W + 2 * PAD;
    f.across = 2 * LINE_H + PAD;
    return f;
}

/* How a label of a name of n characters and a size of s characters fits `along` pixels of text
 * and `across` pixels of lines inside a box; lines 0 when too little of the name would show. */
static label_fit fit_along(size_t n, size_t s, double along, double across)
{
    label_fit f = {0};
    double room = along - 2 * (INSET + PAD);
    size_t chars = room > 0 ? (size_t)(room / CHAR_W) : 0; /* characters that fit a line */
    if (across >= 2 * LINE_H + 2 * INSET + PAD && chars >= s) {
        f = two_lines(n < chars ? n : chars, s);
    } else if (across >= LINE_H + 2 * INSET + PAD && chars >= s + 1) {
        f.lines = 1;
        f.name_chars = n < chars - s - 1 ? n : chars - s - 1;
        f.along = (double)(f.name_chars + 1 + s) * CHAR_W + 2 * PAD;
        f.across = LINE_H + PAD;
    }
    if (f.lines == 0 || f.name_chars < (n < MIN_CHARS ? n : MIN_CHARS)) return (label_fit){0};
    return f;
}

/* Inside a box of w x h pixels: across, or upwards where that shows more of the name. */
static label_fit fit_inside(size_t n, size_t s, double w, double h)
{
    label_fit flat = fit_along(n, s, w, h), up = fit_along(n, s, h, w);
    up.up = true;
    return up.lines && up.name_chars > flat.name_chars ? up : flat;
}

/* The tag inside the box: at its top left across, at its bottom left upwards. */
static tl_box tag_inside(const tl_box *b, const label_fit *f)
{
    if (f->up) return (tl_box){b->x0 + INSET, b->x0 + INSET + f->across, b->y1 - INSET - f->along, b->y1 - INSET};
    return (tl_box){b->x0 + INSET, b->x0 + INSET + f->along, b->y0 + INSET, b->y0 + INSET + f->across};
}

static bool overlaps(const tl_box *a, const tl_box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* A box as drawn: at least a pixel each way (draw_box). */
static tl_box drawn_box(const tl_plan *p, const tl_layout *l, const tl_sym *y)
{
    tl_box b = tl_sym_box(p, l, y);
    if (b.x1 - b.x0 < 1) b.x1 = b.x0 + 1;
    if (b.y1 - b.y0 < 1) b.y0 = b.y1 - 1;
    return b;
}

typedef struct label_ctx {
    const tl_plan *p;
    const tl_layout *l;
    size_t r;
    tl_box frame;
    tl_box *tags;
    size_t placed;
} label_ctx;

/* Is the tag clear of the tags placed so far, and (beside a box) inside the frame and clear
 * of every box? */
static bool clear(const label_ctx *c, const tl_box *tag, bool beside)
{
    for (size_t k = 0; k < c->placed; k++)
        if (overlaps(tag, &c->tags[k])) return false;
    if (!beside) return true;
    if (tag->x0 < c->frame.x0 || tag->x1 > c->frame.x1 || tag->y0 < c->frame.y0 || tag->y1 > c->frame.y1) return false;
    for (size_t i = 0; i < c->p->n_syms; i++) {
        if (c->p->syms[i].region != c->r) continue;
        tl_box b = drawn_box(c->p, c->l, &c->p->syms[i]);
        if (overlaps(tag, &b)) return false;
    }
    return true;
}

/* A place beside box b for a tag of w x h: right of it, left of it, above it; false if none. */
static bool place_beside(const label_ctx *c, const tl_box *b, double w, double h, tl_box *tag)
{
    double top = b->y0 + h <= c->frame.y1 ? b->y0 : c->frame.y1 - h;
    const tl_box tries[] = {
        {b->x1 + GAP, b->x1 + GAP + w, top, top + h},
        {b->x0 - GAP - w, b->x0 - GAP, top, top + h},
        {b->x0, b->x0 + w, b->y0 - GAP - h, b->y0 - GAP},
    };
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++)
        if (clear(c, &tries[i], true)) {
            *tag = tries[i];
            return true;
        }
    return false;
}

/* The name shown: the id without "_out_0", its last `shown` characters (an ellipsis first when
 * cut). */
static void write_name(gm_rtext *t, const char *id, size_t bytes, size_t n, size_t shown)
{
    char buf[4 * NAME_MAX + 8];
    const char *from = shown >= n ? id : utf8_tail(id, n, shown - 1);
    size_t len = (size_t)(id + bytes - from);
    if (len > sizeof buf - 1) len = sizeof buf - 1;
    memcpy(buf, from, len);
    buf[len] = '\0';
    if (shown < n) gm_rt_puts(t, ELLIPSIS);
    gm_rt_xml(t, buf);
}

/* A line's <text>: 10px text has its baseline 8.5 px from the top of its line; upwards, the
 * line's top is to the left and the text starts at the tag's bottom. */
static void open_line(gm_rtext *t, const tl_box *tag, const label_fit *f, int line)
{
    double off = PAD + 8.5 + line * LINE_H;
    if (f->up) {
        double x = tag->x0 + off, y = tag->y1 - PAD;
        gm_rt_printf(t, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\">", x, y, x, y);
    } else {
        gm_rt_printf(t, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\">", tag->x0 + PAD, tag->y0 + off);
    }
}

static void draw_label(gm_rtext *t, const tl_sym *y, size_t bytes, size_t n, const tl_box *tag, const label_fit *f,
                       const char *size, bool beside)
{
    gm_rt_printf(t, "<g class=\"label\"><rect class=\"lbg%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"2\"/>",
                 beside ? " lbo" : "", tag->x0, tag->y0, tag->x1 - tag->x0, tag->y1 - tag->y0);
    open_line(t, tag, f, 0);
    write_name(t, y->id, bytes, n, f->name_chars);
    if (f->lines == 2) {
        gm_rt_puts(t, "</text>");
        open_line(t, tag, f, 1);
    } else {
        gm_rt_puts(t, " ");
    }
    gm_rt_printf(t, "<tspan class=\"lsz\">%s</tspan></text></g>\n", size);
}

/* The label of symbol y, if it has a place; true when drawn. */
static bool label_one(gm_rtext *t, label_ctx *c, const tl_sym *y, const char *size)
{
    size_t bytes = strlen(y->id), s = strlen(size);
    if (bytes > strlen(OUT0) && !strcmp(y->id + bytes - strlen(OUT0), OUT0)) bytes -= strlen(OUT0);
    size_t n = utf8_chars(y->id, bytes), shown = n < NAME_MAX ? n : NAME_MAX;
    tl_box b = drawn_box(c->p, c->l, y), tag;
    label_fit f = fit_inside(shown, s, b.x1 - b.x0, b.y1 - b.y0);
    bool beside = false;
    if (f.lines) {
        tag = tag_inside(&b, &f);
        if (!clear(c, &tag, false)) f.lines = 0;
    }
    if (!f.lines) {
        f = two_lines(shown < BESIDE_CHARS ? shown : BESIDE_CHARS, s);
        beside = place_beside(c, &b, f.along, f.across, &tag);
        if (!beside) return false;
    }
    draw_label(t, y, bytes, n, &tag, &f, size, beside);
    c->tags[c->placed++] = tag;
    return true;
}

size_t tl_draw_labels(gm_rtext *t, const tl_plan *p, const tl_layout *l, size_t r, size_t max)
{
    const tl_region *g = &p->regions[r];
    size_t n = 0;
    size_t *rank = tl_syms_ranked(p, l, r, true, &n);
    label_ctx c = {.p = p, .l = l, .r = r, .frame = {l->left, l->left + l->width, g->y, g->y + g->h},
                   .tags = gm_malloc((max ? max : 1) * sizeof *c.tags)};
    if (!rank || !c.tags) {
        if (n) t->failed = true;
        gm_free(rank);
        gm_free(c.tags);
        return 0;
    }
    gm_rt_puts(t, "<g class=\"labels\">\n");
    for (size_t j = 0; j < n && j < CANDIDATES && c.placed < max; j++) {
        if (p->syms[rank[j]].size < p->syms[rank[0]].size / SMALLEST) break; /* ranked by bytes: the rest are smaller */
        gm_rtext sz = {0};
        gm_rt_bytes(&sz, p->syms[rank[j]].size);
        char *size = gm_rt_take(&sz, NULL);
        if (!size) {
            t->failed = true;
            break;
        }
        label_one(t, &c, &p->syms[rank[j]], size);
        gm_free(size);
    }
    gm_rt_puts(t, "</g>\n");
    gm_free(c.tags);
    gm_free(rank);
    return c.placed;
}
