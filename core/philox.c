/*
 * philox.c - Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
 * as 1, 2, 3", SC'11), the counter-based generator behind dropout masks and
 * weight initialisation. Counter-based, so every backend (and the OpenCL
 * kernels in cl/kernels/random.cl) draws the same number for the same
 * (seed, stream, index) without sharing state.
 */
#include "xo.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void xo_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];

	for (int round = 0; round < 10; round++) {
		uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
		uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
		uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
		uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;

		c0 = hi1 ^ c1 ^ k0;
		c1 = lo1;
		c2 = hi0 ^ c3 ^ k1;
		c3 = lo0;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

uint32_t xo_philox_u32(uint64_t seed, uint32_t a, uint32_t b, uint64_t i)
{
	uint64_t block = i >> 2;
	uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), a, b};
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	uint32_t w[4];

	xo_philox4x32_10(ctr, key, w);
	return w[i & 3];
}

float xo_philox_uniform(uint64_t seed, uint32_t a, uint32_t b, uint64_t i)
{
	/* 24 bits: exactly representable, strictly below 1. */
	return (float)(xo_philox_u32(seed, a, b, i) >> 8) * 0x1p-24f;
}

bool xo_dropout_keep(uint64_t seed, uint64_t step, uint32_t layer, uint64_t i, float rate)
{
	return xo_philox_uniform(seed, (uint32_t)step, layer, i) >= rate;
}
