/*
 * backend_host.h — the host backend's stream and event operations (backend_host_stream.c),
 * gathered into gm_backend_host_ops by backend_host.c.
 */
#ifndef GM_RUNTIME_BACKEND_HOST_H
#define GM_RUNTIME_BACKEND_HOST_H

#include "runtime/backend_internal.h"

gm_status gm_host_stream_create(gm_stream *s, gm_error *err);
gm_status gm_host_stream_sync(gm_stream *s, gm_error *err);
void gm_host_stream_destroy(gm_stream *s);
gm_status gm_host_copy(gm_stream *s, void *dst, gm_device *dst_dev, const void *src,
                       gm_device *src_dev, size_t size, gm_copy_kind kind, gm_error *err);
gm_status gm_host_host_fn(gm_stream *s, gm_host_fn fn, void *user, gm_error *err);
gm_status gm_host_fill(gm_stream *s, void *dst, size_t size, uint64_t seed, gm_error *err);
gm_status gm_host_verify(gm_stream *s, const void *src, size_t size, uint64_t seed,
                         uint64_t *mismatches, gm_error *err);

gm_status gm_host_event_create(gm_event *e, gm_error *err);
void gm_host_event_destroy(gm_event *e);
gm_status gm_host_event_record(gm_event *e, gm_stream *s, gm_error *err);
gm_status gm_host_stream_wait(gm_stream *s, gm_event *e, gm_error *err);
gm_status gm_host_event_query(gm_event *e, bool *done, gm_error *err);
gm_status gm_host_event_sync(gm_event *e, gm_error *err);

#endif
