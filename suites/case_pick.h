/*
 * case_pick.h - runs part of a CMocka suite, so that one slow suite can be
 * several ctest entries (a group of cases each) without a case being lost.
 *
 * XO_TEST_CASES="a,b,c" keeps the cases named a, b and c; "!a,b,c" keeps
 * every case but those, so a last group written as the complement of the
 * others picks up a case added later. Unset or empty keeps them all. A name
 * that is not a case of the suite is a mistake in the registration: one line
 * on stderr and exit 2, never a group that silently runs nothing.
 * Include after cmocka.h.
 */
#ifndef XO_CASE_PICK_H
#define XO_CASE_PICK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether name is one of the comma-separated names in list. */
static inline bool case_pick_listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == len && !strncmp(p, name, n))
			return true;
		p += n + (end != NULL);
	}
	return false;
}

/* Moves the cases XO_TEST_CASES keeps to the front of tests (in their
 * order) and returns how many; exits 2 on a name the suite lacks. */
static inline size_t case_pick(struct CMUnitTest *tests, size_t n)
{
	const char *env = getenv("XO_TEST_CASES");
	bool except = env && env[0] == '!';
	const char *list = except ? env + 1 : env;
	size_t kept = 0;

	if (!env || !*env)
		return n;
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool known = false;

		for (size_t i = 0; i < n && !known; i++)
			known = strlen(tests[i].name) == len && !strncmp(tests[i].name, p, len);
		if (!known) {
			fprintf(stderr, "XO_TEST_CASES: '%.*s' is no case of this suite\n",
				(int)len, p);
			exit(2);
		}
		p += len + (end != NULL);
	}
	for (size_t i = 0; i < n; i++)
		if (case_pick_listed(list, tests[i].name) != except)
			tests[kept++] = tests[i];
	return kept;
}

#endif
