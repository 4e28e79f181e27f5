/*
 * fuzz_case.c - shapes-file and `xo check` case lines (suites/harness.c
 * xo_case_parse over core/params.c and core/shapes.c): every line of the
 * input is parsed; an accepted case also has its backward shapes, canonical
 * line and conv/pool geometry computed, where huge sizes, strides and pools
 * reach the overflow-checked arithmetic.
 */
#include <string.h>

#include "fuzz.h"
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *next;
	int lines = 0;

	if (size > 1 << 14)
		return 0;
	text = xo_fuzz_cstr(data, size);
	if (!text)
		return 0;
	for (line = text; line && lines < 64; line = next, lines++) {
		struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
		struct xo_params p;
		enum xo_status st;
		enum xo_op op;
		char canon[1024];
		int64_t out_len, pad;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		st = xo_case_parse(line, &op, &p);
		xo_fuzz_check_refusal(st, "case");
		if (st || op == XO_OP_COUNT)
			continue;
		for (int d = 0; d < XO_DIR_COUNT; d++) {
			st = xo_op_shapes(op, (enum xo_dir)d, &p, ss, ds);
			xo_fuzz_check_refusal(st, "case/shapes");
			if (!st)
				xo_params_format(op, (enum xo_dir)d, &p, canon, sizeof(canon));
		}
		xo_fuzz_check_refusal(xo_conv1d_geometry(&p, &out_len, &pad), "case/conv1d");
		xo_fuzz_check_refusal(xo_pool1d_geometry(&p, &out_len, &pad), "case/pool1d");
		{
			struct xo_pool2d_geom g;
			int64_t out_w, pad_top;

			xo_fuzz_check_refusal(xo_pool2d_geometry_of(XO_OP_max_pooling2d, &p, &g),
			                      "case/pool2d");
			xo_fuzz_check_refusal(
			    xo_conv2d_geometry(&p, &out_len, &out_w, &pad_top, &pad), "case/conv2d");
		}
	}
	free(text);
	return 0;
}
