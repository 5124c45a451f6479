/*
 * test_mif.c — GE's MIF bitmap (reference §6.1): every operation, the word-per-observer
 * meaning, and streams beyond the inline eight up to 64.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/mif.h"
#include "util/alloc.h"

static void test_reinit_zeroes(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    assert_int_equal(gm_mif_reinit(&m, 4), 0);
    for (uint32_t s = 0; s < 4; s++) assert_false(gm_mif_is_any_set(&m, s));
    gm_mif_set(&m, 1, 2);
    assert_int_equal(gm_mif_reinit(&m, 4), 0);
    assert_false(gm_mif_is_any_set(&m, 1));
    assert_int_equal(gm_mif_reinit(&m, 65), -1);
    gm_mif_fini(&m);
}

static void test_set_clear_is_set(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    gm_mif_reinit(&m, 3);
    gm_mif_set(&m, 0, 2);
    assert_true(gm_mif_is_set(&m, 0, 2));
    assert_false(gm_mif_is_set(&m, 2, 0)); /* observer and subject are not symmetric */
    assert_false(gm_mif_is_any_set(&m, 1));
    gm_mif_clear(&m, 0, 2);
    assert_false(gm_mif_is_any_set(&m, 0));
    gm_mif_clear(&m, 0, 2); /* clearing a clear bit is harmless */
    assert_int_equal(gm_mif_word(&m, 0), 0);
    gm_mif_fini(&m);
}

static void test_set_all_and_maintained_all(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    gm_mif_reinit(&m, 4);
    gm_mif_set_all(&m, 2);
    for (uint32_t o = 0; o < 4; o++) assert_int_equal(gm_mif_word(&m, o), 1u << 2);
    gm_mif_set_maintained_all(&m, 3);
    assert_int_equal(gm_mif_word(&m, 3), 0xF);
    assert_int_equal(gm_mif_word(&m, 0), 1u << 2);
    gm_mif_fini(&m);
}

static void test_merge_cleared_from(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    gm_mif_reinit(&m, 3);
    gm_mif_set_all(&m, 0);
    gm_mif_set_all(&m, 1); /* everyone: 0 and 1 use it */
    gm_mif_clear(&m, 0, 0); /* stream 0 released, only 0 knows */
    assert_true(gm_mif_is_set(&m, 1, 0));
    gm_mif_merge_cleared_from(&m, 0, 1); /* 1 learns it */
    assert_false(gm_mif_is_set(&m, 1, 0));
    assert_true(gm_mif_is_set(&m, 1, 1));
    assert_true(gm_mif_is_set(&m, 2, 0)); /* 2 has not heard */
    /* merging never sets a bit the destination had cleared */
    gm_mif_clear(&m, 2, 1);
    gm_mif_merge_cleared_from(&m, 1, 2);
    assert_false(gm_mif_is_set(&m, 2, 1));
    assert_false(gm_mif_is_set(&m, 2, 0));
    gm_mif_fini(&m);
}

static void test_sixty_four_streams(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    assert_int_equal(gm_mif_reinit(&m, 64), 0); /* beyond the inline eight: heap words */
    gm_mif_set_all(&m, 63);
    gm_mif_set_maintained_all(&m, 10);
    assert_true(gm_mif_word(&m, 10) == ~(uint64_t)0);
    assert_true(gm_mif_is_set(&m, 40, 63));
    gm_mif_clear(&m, 40, 63);
    assert_false(gm_mif_is_any_set(&m, 40));
    assert_int_equal(gm_mif_reinit(&m, 9), 0); /* keeps the larger array */
    assert_false(gm_mif_is_any_set(&m, 8));
    gm_mif_fini(&m);
}

static void test_reinit_out_of_memory(void **state)
{
    (void)state;
    gm_mif m;
    gm_mif_init(&m);
    gm_alloc_fail_after(0);
    assert_int_equal(gm_mif_reinit(&m, 16), -1);
    gm_alloc_fail_after(-1);
    assert_int_equal(gm_mif_reinit(&m, 8), 0); /* inline needs nothing */
    gm_mif_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reinit_zeroes),          cmocka_unit_test(test_set_clear_is_set),
        cmocka_unit_test(test_set_all_and_maintained_all), cmocka_unit_test(test_merge_cleared_from),
        cmocka_unit_test(test_sixty_four_streams),     cmocka_unit_test(test_reinit_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
