/*
 * harness.h - the comparison harness: the ONE place where a backend's result
 * is judged against the reference (DESIGN section 5). The ctest suites
 * (test_ops, test_selftest) and `xo check` all run cases through it, so a
 * tolerance is derived and written down once, in harness.c, next to its op.
 *
 * A case is (op, direction, parameters, fill seed, mode). Running it makes
 * deterministic host inputs from the seed, runs "ref" and the backend under
 * test on the same inputs, and compares every destination slot:
 *
 *   exact      small-integer fills, every partial sum exact in float32:
 *              the result must equal ref bit for bit (zero's sign aside)
 *   real       real-valued fills: |y - y_ref| <= a bound derived per op and
 *              slot (Higham's accumulation bound, ulps of the builtins)
 *   nonfinite  real fills with NaN/Inf planted in the inputs of elementwise
 *              ops: NaN where NaN, same-signed Inf
 *
 * A case whose reference output is uninformative (more than 30% zeros beyond
 * the zeros the op must produce, or one constant value) FAILS: its fill or
 * shape must change (rule and structural zeros: harness.c, "mistrust").
 * Every destination the backend writes is a view into a larger tensor whose
 * guard zones hold a canary; the destination itself is poisoned first. A
 * failure report names backend, op, direction, mode, slot, the first bad
 * element with its coordinates, got/expected (and hex), the bound, how many
 * elements are bad, the seed, and one `xo check ...` line that reruns it.
 */
#ifndef XO_SUITES_HARNESS_H
#define XO_SUITES_HARNESS_H

#include <stdio.h>

#include "xo/backend.h"

/* The fill seed of a case when none is given (shapes files, `xo check`). */
#define XO_CASE_SEED_DEFAULT 1u

enum xo_hmode {
	XO_HMODE_EXACT,     /* integer fills, bit-for-bit */
	XO_HMODE_REAL,      /* real fills, derived error bound */
	XO_HMODE_NONFINITE, /* NaN/Inf planted in inputs */
	XO_HMODE_COUNT
};

const char *xo_hmode_name(enum xo_hmode m);
/* XO_HMODE_COUNT when unknown. */
enum xo_hmode xo_hmode_from_name(const char *name);
/* Whether a mode applies to (op, dir, p): exact only for the linear ops (and
 * conv1d/dense with a linear or relu activation), nonfinite only for the
 * forward pass of the elementwise ops. */
bool xo_hmode_applies(enum xo_op op, enum xo_dir dir, const struct xo_params *p, enum xo_hmode m);

struct xo_case {
	enum xo_op op;
	enum xo_dir dir;
	enum xo_hmode mode;
	struct xo_params p; /* op parameters (p.seed is the dropout key, not the fill) */
	uint64_t seed;      /* fill seed */
	bool uninformative_ok; /* an uninformative reference does not fail the case:
	                        * it is compared all the same and flagged in
	                        * r->uninformative (the geometry sweep, whose
	                        * degenerate windows give constant outputs under
	                        * every fill) */
};

/* Why a case failed. A case may fail for several reasons; see fails. */
enum xo_fail {
	XO_FAIL_NONE,
	XO_FAIL_RUN,         /* the backend under test returned an error */
	XO_FAIL_MISTRUST,    /* ref output uninformative: the fill must change */
	XO_FAIL_GUARD,       /* a write landed in a guard zone around a dst */
	XO_FAIL_SRC_CHANGED, /* a source tensor was modified */
	XO_FAIL_UNWRITTEN,   /* a dst element still holds the poison pattern */
	XO_FAIL_NONFINITE,   /* NaN/Inf where ref has none, or the other way round */
	XO_FAIL_MISMATCH,    /* finite value beyond its bound (or not bit-equal) */
	XO_FAIL_COUNT
};
const char *xo_fail_name(enum xo_fail f);

struct xo_case_result {
	enum xo_fail fail; /* the first reason found; XO_FAIL_NONE when passed */
	unsigned fails;    /* bit (1u << reason) for every reason found */
	int64_t nbad;      /* bad elements over all dst slots */
	bool uninformative; /* the reference was uninformative, accepted by
	                     * c->uninformative_ok */
	double worst;      /* largest |got - ref| / bound over bounded elements
	                    * (how close a passing case came; 0 when all exact) */
	double max_err;    /* largest |got - ref| over finite elements */
	double max_bound;  /* the bound at that element (0: bit-exact) */
	char repro[1024];  /* `xo check ...` line rerunning exactly this case */
	char report[8192]; /* multi-line failure report ("" when passed) */
};

/* Writes the repro command line of c on backend spec. */
void xo_case_repro(const struct xo_case *c, const char *backend, char *buf, size_t size);

/*
 * Runs case c on be against ref (an open "ref" backend). Returns XO_OK when
 * the case ran to a verdict (r->fail says pass or why not), or a status when
 * it could not run at all: invalid parameters (XO_EINVAL with the reason),
 * out of memory, ref itself failing. be may be any backend, including one
 * built in a test around a faulty table (test_selftest).
 */
enum xo_status xo_case_run(struct xo_backend *ref, struct xo_backend *be, const struct xo_case *c,
                           struct xo_case_result *r);

/*
 * Parses one shapes-file line "op key=value ..." ('#' starts a comment).
 * *op is XO_OP_COUNT for a blank or comment-only line. The parameters start
 * from xo_params_default() and are checked with xo_op_shapes (forward).
 * XO_EINVAL with a message (without file:line) on a bad line.
 */
enum xo_status xo_case_parse(const char *line, enum xo_op *op, struct xo_params *p);

#endif /* XO_SUITES_HARNESS_H */
