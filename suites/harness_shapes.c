/*
 * harness_shapes.c - shapes-file lines: "op key=value ..." parsed into an op
 * and its parameters (the suites' shapes files and `xo check --shape`).
 */
#include "harness_internal.h"

/* ---- shapes-file lines ----------------------------------------------------------- */

enum xo_status xo_case_parse(const char *line, enum xo_op *op, struct xo_params *p)
{
	char buf[1024], *tok, *save = NULL, *hash;
	struct xo_slot_shape ss[XO_MAX_SRC], ds[XO_MAX_DST];
	enum xo_status st;

	*op = XO_OP_COUNT;
	*p = xo_params_default();
	if (strlen(line) >= sizeof(buf))
		return xo_error(XO_EINVAL, "line longer than %zu characters", sizeof(buf) - 1);
	strcpy(buf, line);
	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';
	tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok)
		return XO_OK;
	*op = xo_op_from_name(tok);
	if (*op == XO_OP_COUNT)
		return xo_error(XO_EINVAL, "unknown op '%s'", tok);
	*p = xo_params_default_op(*op);
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok) {
			*op = XO_OP_COUNT;
			return xo_error(XO_EINVAL, "expected key=value, got '%s'", tok);
		}
		*eq = '\0';
		st = xo_params_set(p, tok, eq + 1);
		if (st) {
			*op = XO_OP_COUNT;
			return st;
		}
	}
	st = xo_op_shapes(*op, XO_DIR_FWD, p, ss, ds);
	if (st)
		*op = XO_OP_COUNT;
	return st;
}
