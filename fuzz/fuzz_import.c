/*
 * fuzz_import.c - peer JSON for `xo perf import` (perfdb/import.c): jansson
 * and the checks after it. An accepted file must hold only what the store
 * may keep: safe names, integer batches in range, finite positive times.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "perfdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xo_perf_import imp;
	enum xo_status st;

	if (size > 1 << 20)
		return 0;
	st = xo_perf_import_parse((const char *)data, size, "fuzz.json", NULL, &imp);
	xo_fuzz_check_refusal(st, "import");
	if (st)
		return 0;
	for (size_t i = 0; i < imp.n; i++) {
		const struct xo_perf_result *r = &imp.res[i];

		if (r->b.batch < 1 || r->b.batch > XO_PERF_IMPORT_MAX_BATCH || r->n < 1 ||
		    strspn(r->b.name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		                      "0123456789._+-/") != strlen(r->b.name))
			abort();
		for (size_t k = 0; k < r->n; k++)
			if (!isfinite(r->samples[k].wall_s) || !(r->samples[k].wall_s > 0))
				abort();
	}
	for (const unsigned char *p = (const unsigned char *)imp.note; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
	xo_perf_import_free(&imp);
	return 0;
}
