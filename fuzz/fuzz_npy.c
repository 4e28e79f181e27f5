/*
 * fuzz_npy.c - the .npy reader (model/npy.c): header, shape and data. The
 * input is written to an in-memory file (memfd) and read through its
 * /proc/self/fd path, so the reader runs unchanged. An accepted array's
 * values are all read, so ASan sees any size the header got wrong.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xo_npy a;
	enum xo_status st;
	volatile float sink = 0;
	int64_t count = 1;

	if (fd < 0) {
		fd = memfd_create("xo-fuzz-npy", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) ||
	    (size && write(fd, data, size) != (ssize_t)size))
		abort();
	/* a model input's reader (ints and bools too): a bool is 0 or 1 */
	st = xo_npy_read_inputs(path, &a);
	xo_fuzz_check_refusal(st, "npy");
	for (int64_t i = 0; !st && a.is_bool && i < a.count; i++)
		if (a.ints[i] != 0 && a.ints[i] != 1)
			abort();
	/* an integer of the file's width and signedness, as int64 */
	for (int64_t i = 0; !st && a.is_int && !a.is_bool && a.itemsize < 8 && i < a.count; i++) {
		int64_t half = INT64_C(1) << (8 * a.itemsize - 1);

		if (a.dtype[0] == 'u' ? a.ints[i] < 0 || a.ints[i] >= 2 * half
		                      : a.ints[i] < -half || a.ints[i] >= half)
			abort();
	}
	for (int64_t i = 0; !st && a.is_int && a.dtype[0] == 'u' && i < a.count; i++)
		if (a.ints[i] < 0)
			abort();
	/* a float file of any accepted order and width ('<f8' ...): count
	 * float32 values, every one read */
	for (int64_t i = 0; !st && !a.is_int && i < a.count; i++)
		sink += a.data[i];
	if (!st)
		xo_npy_free(&a);
	st = xo_npy_read(path, &a);
	xo_fuzz_check_refusal(st, "npy");
	if (st)
		return 0;
	/* the shape and the element count must agree, without overflow unless
	 * some dimension is 0 */
	for (int i = 0; i < a.ndim; i++)
		if (a.dim[i] < 0)
			abort();
	for (int i = 0; i < a.ndim; i++)
		if (a.dim[i] == 0)
			count = 0;
	for (int i = 0; i < a.ndim && count; i++)
		if (__builtin_mul_overflow(count, a.dim[i], &count))
			abort();
	if (count != a.count)
		abort();
	for (int64_t i = 0; i < a.count; i++)
		sink += a.data[i];
	(void)sink;
	xo_npy_free(&a);
	return 0;
}
