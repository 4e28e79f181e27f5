













enum xo_status xo_perfdb_model_claim(struct xo_perfdb *db, const char *name, const char *arch,
                                     const char *path)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	char want[32];

	snprintf(want, sizeof(want), "arch=%s", arch);
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT params FROM benchmarks WHERE kind = 'model' AND model = ?"
	                       " AND instr(params, ' arch=') > 0 AND instr(params, ?) = 0 LIMIT 1", &s) != XO_SQL_OK)
		return xo_error(XO_EDB, "model check: %s", xo_sql_errmsg(xo_perfdb_sql(db)));
	xo_sql_bind_text(s, 1, name);
	xo_sql_bind_text(s, 2, want);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *p = xo_sql_column_text(s, 0), *a = p ? strstr(p, " arch=") : NULL;

		st = xo_error(XO_EINVAL,
		              "--model %s: the store already holds another model named '%s' "
		              "(arch=%.16s, this one arch=%s); rename the file or use another --db",
		              path ? path : "seed", name, a ? a + 6 : "?", arch);
	}
	xo_sql_finalize(s);
	return st;
}
