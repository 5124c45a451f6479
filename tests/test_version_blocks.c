/*
 * test_version_blocks.c — VersionBlocks (reference §6.5): ToBit/ToAllBit, FindNext per
 * destination (stale entries erased, entries sent to all erased, each destination sent once),
 * FindNextForAll.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/version_blocks.h"
#include "util/alloc.h"

static void test_to_all_bit(void **state)
{
    (void)state;
    assert_int_equal(gm_vb_to_bit(3), 8);
    assert_int_equal(gm_vb_to_all_bit(4, 0), 0xE); /* bits 1, 2, 3 only */
    assert_int_equal(gm_vb_to_all_bit(4, 1), 0xD); /* bits 0, 2, 3 */
    assert_int_equal(gm_vb_to_all_bit(1, 0), 0);
    assert_true(gm_vb_to_all_bit(64, 63) == (~(uint64_t)0 >> 1));
}

static size_t drain(gm_version_blocks *vb, uint32_t dst, uint64_t all, gm_versioned **got)
{
    size_t n = 0;
    gm_version_block e;
    for (size_t it = 0; gm_version_blocks_find_next(vb, &it, dst, all, &e);) got[n++] = e.block;
    return n;
}

static void test_find_next_sends_each_destination_once(void **state)
{
    (void)state;
    gm_version_blocks vb = {0};
    gm_versioned a = {5}, b = {7};
    gm_version_blocks_push(&vb, &a);
    gm_version_blocks_push(&vb, &b);
    const uint64_t all = gm_vb_to_all_bit(3, 0); /* owner 0; destinations 1 and 2 */
    gm_versioned *got[4];
    assert_int_equal(drain(&vb, 1, all, got), 2);
    assert_int_equal(drain(&vb, 1, all, got), 0); /* already sent to 1 */
    assert_int_equal(vb.n, 2);
    assert_int_equal(drain(&vb, 2, all, got), 2);
    assert_int_equal(vb.n, 2); /* sent to all now, erased on the next pass */
    assert_int_equal(drain(&vb, 1, all, got), 0);
    assert_int_equal(vb.n, 0);
    gm_version_blocks_fini(&vb);
}

static void test_stale_entries_erased(void **state)
{
    (void)state;
    gm_version_blocks vb = {0};
    gm_versioned a = {1}, b = {1}, c = {1};
    gm_version_blocks_push(&vb, &a);
    gm_version_blocks_push(&vb, &b);
    gm_version_blocks_push(&vb, &c);
    b.version++; /* b was recycled globally after it was queued */
    gm_versioned *got[4];
    const uint64_t all = gm_vb_to_all_bit(4, 0);
    size_t n = drain(&vb, 2, all, got);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) assert_ptr_not_equal(got[i], &b);
    assert_int_equal(vb.n, 2);
    gm_version_blocks_fini(&vb);
}

static void test_find_next_stops_at_each(void **state)
{
    (void)state;
    gm_version_blocks vb = {0};
    gm_versioned x[5] = {{0}, {0}, {0}, {0}, {0}};
    for (int i = 0; i < 5; i++) gm_version_blocks_push(&vb, &x[i]);
    x[0].version = 9; /* the first stale: erased by swapping the last in, which is still visited */
    size_t it = 0, seen = 0;
    gm_version_block e;
    while (gm_version_blocks_find_next(&vb, &it, 1, gm_vb_to_all_bit(2, 0), &e)) {
        assert_int_equal(e.sent_flags, 2);
        seen++;
    }
    assert_int_equal(seen, 4);
    gm_version_blocks_fini(&vb);
}

static void test_find_next_for_all(void **state)
{
    (void)state;
    gm_version_blocks vb = {0};
    gm_versioned a = {0}, b = {0}, c = {0};
    gm_version_blocks_push(&vb, &a);
    gm_version_blocks_push(&vb, &b);
    gm_version_blocks_push(&vb, &c);
    const uint64_t all = gm_vb_to_all_bit(2, 0);
    gm_versioned *got[4];
    assert_int_equal(drain(&vb, 1, all, got), 3); /* a, b, c now sent to all */
    gm_version_blocks_push(&vb, &a);             /* queued again, not sent yet */
    c.version = 3;
    size_t n = 0;
    gm_version_block e;
    for (size_t it = 0; gm_version_blocks_find_next_for_all(&vb, &it, all, &e);) {
        assert_ptr_equal(e.block, &a);
        assert_int_equal(e.sent_flags, 0); /* no destination marked */
        n++;
    }
    assert_int_equal(n, 1);
    assert_int_equal(vb.n, 1);
    gm_version_blocks_fini(&vb);
}

static void test_push_out_of_memory(void **state)
{
    (void)state;
    gm_version_blocks vb = {0};
    gm_versioned a = {0};
    gm_alloc_fail_after(0);
    assert_int_equal(gm_version_blocks_push(&vb, &a), -1);
    gm_alloc_fail_after(-1);
    assert_int_equal(vb.n, 0);
    gm_version_blocks_fini(&vb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_all_bit),           cmocka_unit_test(test_find_next_sends_each_destination_once),
        cmocka_unit_test(test_stale_entries_erased), cmocka_unit_test(test_find_next_stops_at_each),
        cmocka_unit_test(test_find_next_for_all),    cmocka_unit_test(test_push_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
