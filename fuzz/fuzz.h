/*
 * fuzz.h - shared by the fuzz targets (docs/fuzzing.md). Each target defines
 * LLVMFuzzerTestOneInput for one parser of outside input; it is linked either
 * with libFuzzer (clang, -DXO_FUZZ=ON) or with replay_main.c, which feeds it
 * the files of fuzz/regress/<target>/ and the seed files under ctest.
 */
#ifndef XO_FUZZ_H
#define XO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The contract of every refusal (DESIGN section 10): a status other than
 * XO_OK comes with a message that is one non-empty printable line. A
 * violation is a finding: abort, so libFuzzer keeps the input.
 */
static inline void xo_fuzz_check_refusal(enum xo_status st, const char *target)
{
	const char *msg = xo_last_error();

	if (st == XO_OK)
		return;
	if (!msg || !*msg) {
		fprintf(stderr, "%s: status %d without a message\n", target, (int)st);
		abort();
	}
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "%s: message with control byte 0x%02x: %s\n", target, *p,
			        msg);
			abort();
		}
}

/* A NUL-terminated copy of the input (the text parsers take C strings). */
static inline char *xo_fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		for (size_t i = 0; i < size; i++)
			s[i] = (char)data[i];
		s[size] = '\0';
	}
	return s;
}

#endif
