/*
 * json_read_ahead.h — the nodes of a split JSON model parsed ahead on a second thread while the
 * reader walks the ones before (json_read.c): cJSON's parse and the number scan of each node
 * are about half the reading of a big model, and they need nothing the walk builds.
 *
 * Most nodes are read the fast way instead (json_read_fast.h): no tree, the node built here,
 * linked in by the reader.
 *
 * The reader sees the same elements, trees and failures, in the same order, as parsing each
 * node itself: a failure is handed over only when the reader reaches that node, with the
 * message and kind the reader would have produced there, and the thread parses nothing after
 * it. Stopping (a failure in the walk, or the end) joins the thread before the reader goes on,
 * so the rest of the reading (settle()) runs alone as before.
 */
#ifndef GM_JSON_READ_AHEAD_H
#define GM_JSON_READ_AHEAD_H

#include "io/json_read_fast.h"
#include "io/json_read_internal.h"

typedef struct gm_jr_ahead gm_jr_ahead;

/* Starts parsing array a's elements ahead; NULL when it is not worth a thread (a small array,
 * one core) or none can start: the reader then parses each element itself. */
gm_jr_ahead *gm_jr_ahead_start(const jr *r, const gm_json_array_split *a);
/* The next element, in order: its tree and its numbers, lent until the next call (the thread
 * deletes the tree, where it was made); or, read the fast way (*node NULL), its reading with
 * its node, given (*fast), and the links it points into, lent (*links: json_read_fast.h); or its failure, reported into r as
 * gm_jr_parse_element would have (*parsed likewise). */
gm_status gm_jr_ahead_next(gm_jr_ahead *h, jr *r, cJSON **node, gm_json_nums **nums, gm_jr_fast *fast,
                           const gm_jr_links **links, bool *parsed);
/* The element the next call will give, when it is read already (false otherwise): its tree, or
 * its fast reading. For a look ahead only, no wait. */
bool gm_jr_ahead_peek(const gm_jr_ahead *h, const cJSON **node, const gm_jr_fast **fast, const gm_jr_links **links);
/* Stops the thread, waits for it and frees what it parsed and nobody took. NULL is a no-op. */
void gm_jr_ahead_stop(gm_jr_ahead *h);

#endif
