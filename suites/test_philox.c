/*
 * test_philox.c - core/philox.c against the Philox4x32-10 known-answer
 * vectors published with Random123 (kat_vectors), and the properties the
 * dropout mask relies on: xo_philox_uniform in [0, 1) with 24-bit
 * resolution, one block of four words per counter, a keep fraction near
 * 1 - rate, and xo_philox_shuffle drawing every order of a small array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xo.h"

static void check_block(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4])
{
	uint32_t out[4];

	xo_philox4x32_10(ctr, key, out);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i], want[i]);
}

static void test_kat_zero(void **state)
{
	(void)state;
	check_block((const uint32_t[4]){0, 0, 0, 0}, (const uint32_t[2]){0, 0},
		    (const uint32_t[4]){0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
}

static void test_kat_ones(void **state)
{
	(void)state;
	check_block((const uint32_t[4]){0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
		    (const uint32_t[2]){0xffffffff, 0xffffffff},
		    (const uint32_t[4]){0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
}

static void test_kat_pi(void **state)
{
	(void)state;
	check_block((const uint32_t[4]){0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
		    (const uint32_t[2]){0xa4093822, 0x299f31d0},
		    (const uint32_t[4]){0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

/* Element i is word i%4 of the block at counter {i/4, 0, a, b}, top 24 bits. */
static void test_uniform_layout(void **state)
{
	uint32_t out[4];

	(void)state;
	xo_philox4x32_10((const uint32_t[4]){1, 0, 5, 9}, (const uint32_t[2]){42, 0}, out);
	for (uint64_t i = 4; i < 8; i++) {
		float u = xo_philox_uniform(42, 5, 9, i);

		assert_true(u == (float)(out[i & 3] >> 8) * 0x1p-24f);
		assert_true(u >= 0.0f && u < 1.0f);
	}
}

/* The keep fraction of 100000 draws at rate 0.5: binomial standard deviation
 * sqrt(0.25 / 1e5) = 0.0016, so 0.5 +- 0.01 is a 6-sigma bound. */
static void test_dropout_fraction(void **state)
{
	int64_t kept = 0, n = 100000;

	(void)state;
	for (int64_t i = 0; i < n; i++)
		kept += xo_dropout_keep(7, 3, 2, (uint64_t)i, 0.5f);
	assert_true(kept > n / 2 - n / 100 && kept < n / 2 + n / 100);
	/* rate 0 keeps everything */
	for (int64_t i = 0; i < 1000; i++)
		assert_true(xo_dropout_keep(7, 3, 2, (uint64_t)i, 0.0f));
}

/* xo_philox_shuffle is a uniform shuffle (Fisher-Yates, j uniform on 0..i):
 * over 600 seeds each of the 6 orders of 3 elements comes out about 100
 * times (binomial standard deviation sqrt(600 * 1/6 * 5/6) = 9.1, so
 * 100 +- 50 is a 5.5-sigma bound). A shuffle that never leaves an element
 * in place (j on 0..i-1, Sattolo's algorithm) makes only the 2 cyclic orders
 * and an off-by-one in the other direction reads past the array. */
static void test_shuffle_uniform(void **state)
{
	int count[3][3][3] = {{{0}}};

	(void)state;
	for (uint64_t seed = 0; seed < 600; seed++) {
		int32_t idx[3];

		xo_philox_shuffle(idx, 3, seed, 5, 1);
		for (int i = 0; i < 3; i++)
			assert_true(idx[i] >= 0 && idx[i] < 3);
		assert_true(idx[0] != idx[1] && idx[1] != idx[2] && idx[0] != idx[2]);
		count[idx[0]][idx[1]][idx[2]]++;
	}
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
			for (int c = 0; c < 3; c++)
				if (a != b && b != c && a != c) {
					assert_true(count[a][b][c] > 50);
					assert_true(count[a][b][c] < 150);
				}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kat_zero),
		cmocka_unit_test(test_kat_ones),
		cmocka_unit_test(test_kat_pi),
		cmocka_unit_test(test_uniform_layout),
		cmocka_unit_test(test_dropout_fraction),
		cmocka_unit_test(test_shuffle_uniform),
	};

	return cmocka_run_group_tests_name("philox", tests, NULL, NULL);
}
