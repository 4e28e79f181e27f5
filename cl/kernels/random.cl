/*
 * random.cl - Philox4x32-10, word for word core/philox.c, and dropout whose
 * mask is drawn inside the kernel that applies it. Element i of a dropout
 * tensor uses counter {i/4 lo, i/4 hi, step lo32, layer}, key {seed lo,
 * seed hi}, word i%4; uniform = (word >> 8) * 2^-24; keep iff uniform >= rate
 * (xo_dropout_keep). One work-item per block of 4 elements, so each Philox
 * block is computed once.
 */

#define XO_PHILOX_M0 0xD2511F53u
#define XO_PHILOX_M1 0xCD9E8D57u
#define XO_PHILOX_W0 0x9E3779B9u
#define XO_PHILOX_W1 0xBB67AE85u

/* Scalar words and ulong products, like core/philox.c: PoCL vectorises
 * across work-items only scalar code (uint4 state and mul_hi ran ~10x
 * slower there). */
static inline uint4 xo_philox4x32_10(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1)
{
	for (int round = 0; round < 10; round++) {
		ulong p0 = (ulong)XO_PHILOX_M0 * c0;
		ulong p1 = (ulong)XO_PHILOX_M1 * c2;

		c0 = (uint)(p1 >> 32) ^ c1 ^ k0;
		c1 = (uint)p1;
		c2 = (uint)(p0 >> 32) ^ c3 ^ k1;
		c3 = (uint)p0;
		k0 += XO_PHILOX_W0;
		k1 += XO_PHILOX_W1;
	}
	return (uint4)(c0, c1, c2, c3);
}

/* dst[i] for one Philox word (see xo_cl_dropout_apply). */
static inline void xo_dropout_one(__global const float *src, __global float *dst, int i, uint word,
			   float rate, float scale)
{
	float u = (float)(word >> 8) * (1.0f / 16777216.0f);

	dst[i] = u >= rate ? src[i] * scale : 0.0f;
}

/* dst[i] = keep(i) ? src[i] * scale : 0 for i in [0, n); scale = 1/(1-rate)
 * computed by the host in float. Used for forward (src = x) and backward
 * (src = dy): the same mask either way. */
__kernel void xo_cl_dropout_apply(__global const float *src, int so, __global float *dst, int dso,
				  int n, uint seed_lo, uint seed_hi, uint step_lo, uint layer,
				  float rate, float scale)
{
	int blk = get_global_id(0);
	int i0 = blk * 4;
	uint4 r;

	if (i0 >= n)
		return;
	/* n < 2^31, so the block number's high word is 0. */
	r = xo_philox4x32_10((uint)blk, 0u, step_lo, layer, seed_lo, seed_hi);
	src += so;
	dst += dso;
	xo_dropout_one(src, dst, i0, r.x, rate, scale);
	if (i0 + 1 < n)
		xo_dropout_one(src, dst, i0 + 1, r.y, rate, scale);
	if (i0 + 2 < n)
		xo_dropout_one(src, dst, i0 + 2, r.z, rate, scale);
	if (i0 + 3 < n)
		xo_dropout_one(src, dst, i0 + 3, r.w, rate, scale);
}
