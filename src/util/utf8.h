/*
 * utf8.h — UTF-8 validation and text positions. Readers check their input is UTF-8 before
 * parsing (cJSON does not) and report problems as line:column, so these live in one place.
 */
#ifndef GM_UTF8_H
#define GM_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence). Otherwise *bad_offset (when not NULL) receives the offset
 * of the first byte of the first ill-formed sequence. NUL bytes are valid UTF-8. */
bool gm_utf8_valid(const char *s, size_t len, size_t *bad_offset);

/* 1-based line and column of byte `offset` in text. Columns count characters (UTF-8 lead
 * bytes), which is what editors show; lines end at '\n'. */
void gm_text_position(const char *text, size_t len, size_t offset, size_t *line, size_t *col);

#endif
