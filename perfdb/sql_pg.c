/*
 * sql_pg.c - the PostgreSQL engine of the SQL layer (sql.h), through libpq:
 * a store a fleet of testbeds shares on one server. The only file in perfdb
 * that calls PQ*.
 *
 * Statements are kept as text with SQLite's `?`/`?N` placeholders rewritten
 * to `$N`; each step of a fresh statement runs it once (PQexecParams, text
 * parameters whose types the server infers from the SQL) and later steps
 * walk the rows. Transactions are READ COMMITTED: writers meet only on the
 * unique keys of commits, testbeds and benchmarks, where INSERT ... ON
 * CONFLICT waits for the other transaction and then sees its row, so no
 * serialization failure can happen; a deadlock (40P01) is reported as
 * XO_SQL_BUSY for the caller to retry.
 */
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sql.h"

struct pg {
	struct xo_sql base;
	PGconn *c;
	bool readonly; /* opened for reading: every transaction is READ ONLY */
};

struct pg_stmt {
	struct xo_sql_stmt base;
	char *sql;      /* with $N placeholders */
	int nparams;    /* highest $N */
	char **val;     /* nparams values, NULL for SQL NULL; owned */
	Oid *type;      /* nparams: float8 for a double, else 0 (the server infers) */
	PGresult *res;  /* after the first step */
	int row, nrows; /* the row the getters read, rows in res */
};

static PGconn *conn(struct xo_sql *db)
{
	return ((struct pg *)db)->c;
}

/* The server's SQLSTATE as an XO_SQL_* code. */
static int code_of(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (!state)
		return XO_SQL_ERROR;
	/* serialization failure, deadlock, lock not available */
	if (!strcmp(state, "40001") || !strcmp(state, "40P01") || !strcmp(state, "55P03"))
		return XO_SQL_BUSY;
	if (!strcmp(state, "25006")) /* read-only transaction */
		return XO_SQL_READONLY;
	return XO_SQL_ERROR;
}

static int fail(struct xo_sql *db, const PGresult *res)
{
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	xo_sql_set_error(db, code_of(res), "%s", msg ? msg : PQerrorMessage(conn(db)));
	return db->errcode;
}

/* Notices (CREATE ... IF NOT EXISTS on an existing table) are not errors
 * and would otherwise go to stderr. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void pg_close(struct xo_sql *db)
{
	PQfinish(conn(db));
	free(db);
}

/*
 * SQLite's placeholders as PostgreSQL's: `?N` is `$N`, a bare `?` the next
 * number after the highest so far (SQLite's rule). Quoted strings and
 * identifiers are copied as they are. Returns the highest number, -1 when
 * out of memory.
 */
static int rewrite(const char *sql, char **out)
{
	size_t n = 0, cap = 2 * strlen(sql) + 16;
	char *o = malloc(cap);
	int top = 0;

	if (!o)
		return -1;
	for (const char *p = sql; *p;) {
		if (*p == '\'' || *p == '"') {
			char q = *p;

			o[n++] = *p++;
			while (*p && *p != q)
				o[n++] = *p++;
			if (*p)
				o[n++] = *p++;
			continue;
		}
		if (*p != '?') {
			o[n++] = *p++;
			continue;
		}
		int k;

		p++;
		if (*p >= '0' && *p <= '9') {
			k = (int)strtol(p, (char **)&p, 10);
		} else {
			k = top + 1;
		}
		if (k > top)
			top = k;
		/* "$N" is at most 1 + 10 chars where "?" was 1: cap is 2x + 16 */
		if (n + 16 >= cap) {
			char *g = realloc(o, cap *= 2);

			if (!g) {
				free(o);
				return -1;
			}
			o = g;
		}
		n += (size_t)snprintf(o + n, cap - n, "$%d", k);
	}
	o[n] = '\0';
	*out = o;
	return top;
}

static int pg_prepare(struct xo_sql *db, const char *sql, struct xo_sql_stmt **out)
{
	struct pg_stmt *ps = calloc(1, sizeof(*ps));
	int top;

	if (!ps || (top = rewrite(sql, &ps->sql)) < 0 ||
	    !(ps->val = calloc((size_t)(top ? top : 1), sizeof(*ps->val))) ||
	    !(ps->type = calloc((size_t)(top ? top : 1), sizeof(*ps->type)))) {
		if (ps) {
			free(ps->sql);
			free(ps->val);
		}
		free(ps);
		xo_sql_set_error(db, XO_SQL_ERROR, "out of memory");
		return XO_SQL_ERROR;
	}
	ps->nparams = top;
	ps->base.db = db;
	*out = &ps->base;
	return XO_SQL_OK;
}

static int pg_bind(struct xo_sql_stmt *s, int i, int type, int64_t iv, double dv, const char *tv)
{
	struct pg_stmt *ps = (struct pg_stmt *)s;
	char buf[40];
	const char *v = buf;

	if (i < 1 || i > ps->nparams) {
		xo_sql_set_error(s->db, XO_SQL_ERROR, "bind index %d out of range 1..%d", i,
		                 ps->nparams);
		return XO_SQL_ERROR;
	}
	switch (type) {
	case XO_SQL_T_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)iv);
		break;
	case XO_SQL_T_DOUBLE:
		/* %.17g round-trips every double; the server's names for the rest */
		if (isnan(dv))
			v = "NaN";
		else if (isinf(dv))
			v = dv > 0 ? "Infinity" : "-Infinity";
		else
			snprintf(buf, sizeof(buf), "%.17g", dv);
		break;
	case XO_SQL_T_TEXT:
		v = tv;
		break;
	default:
		v = NULL;
		break;
	}
	free(ps->val[i - 1]);
	ps->val[i - 1] = NULL;
	/* a double is float8 whatever the context (`0.8 * ?` would otherwise
	 * be numeric in one place and float8 in another); integers and text
	 * take the type their context gives (substr(x, 1, ?) wants int4) */
	ps->type[i - 1] = type == XO_SQL_T_DOUBLE ? 701 /* FLOAT8OID */ : 0;
	if (v && !(ps->val[i - 1] = strdup(v))) {
		xo_sql_set_error(s->db, XO_SQL_ERROR, "out of memory");
		return XO_SQL_ERROR;
	}
	return XO_SQL_OK;
}

static int pg_step(struct xo_sql_stmt *s)
{
	struct pg_stmt *ps = (struct pg_stmt *)s;

	if (!ps->res) {
		const char *trace = getenv("XO_SQL_TRACE");
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		PGresult *res = PQexecParams(conn(s->db), ps->sql, ps->nparams, ps->type,
		                             (const char *const *)ps->val, NULL, NULL, 0);
		ExecStatusType est = PQresultStatus(res);

		/* XO_SQL_TRACE=time: every execution's round trip in ms and rows,
		 * then the statement, on stderr (profiling: sort by the first field) */
		if (trace && !strcmp(trace, "time")) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			fprintf(stderr, "xo sql: %.3f ms %d rows: %s\n",
			        1e3 * (double)(t1.tv_sec - t0.tv_sec) +
			            1e-6 * (double)(t1.tv_nsec - t0.tv_nsec),
			        est == PGRES_TUPLES_OK ? PQntuples(res) : 0, ps->sql);
		}

		if (est != PGRES_TUPLES_OK && est != PGRES_COMMAND_OK) {
			int rc = fail(s->db, res);

			/* XO_SQL_TRACE=1: the statement and the server's reason on
			 * stderr, for queries whose failure a caller takes as "none" */
			if (trace)
				fprintf(stderr, "xo sql: %s\n  in: %s\n", s->db->errmsg, ps->sql);

			PQclear(res);
			return rc;
		}
		ps->res = res;
		ps->row = -1;
		ps->nrows = est == PGRES_TUPLES_OK ? PQntuples(res) : 0;
		s->db->changes = strtoll(PQcmdTuples(res), NULL, 10);
	}
	if (ps->row + 1 < ps->nrows) {
		ps->row++;
		return XO_SQL_ROW;
	}
	ps->row = ps->nrows;
	return XO_SQL_DONE;
}

static int pg_reset(struct xo_sql_stmt *s)
{
	struct pg_stmt *ps = (struct pg_stmt *)s;

	PQclear(ps->res);
	ps->res = NULL;
	return XO_SQL_OK;
}

static void pg_finalize(struct xo_sql_stmt *s)
{
	struct pg_stmt *ps = (struct pg_stmt *)s;

	PQclear(ps->res);
	for (int i = 0; i < ps->nparams; i++)
		free(ps->val[i]);
	free(ps->val);
	free(ps->type);
	free(ps->sql);
	free(ps);
}

/* The current row's column i as text; NULL for SQL NULL or no row. */
static const char *value(struct xo_sql_stmt *s, int i)
{
	struct pg_stmt *ps = (struct pg_stmt *)s;

	if (!ps->res || ps->row < 0 || ps->row >= ps->nrows || i < 0 || i >= PQnfields(ps->res) ||
	    PQgetisnull(ps->res, ps->row, i))
		return NULL;
	return PQgetvalue(ps->res, ps->row, i);
}

/* Text as SQLite reads a number: booleans ('t'/'f', what a comparison
 * returns here) as 1/0, numeric (avg, sum) and real values truncated. */
static double as_double(const char *v)
{
	if (!v)
		return 0.0;
	if (!strcmp(v, "t"))
		return 1.0;
	if (!strcmp(v, "f"))
		return 0.0;
	return strtod(v, NULL);
}

static int64_t pg_column_int64(struct xo_sql_stmt *s, int i)
{
	const char *v = value(s, i);
	char *end;
	long long x;

	if (!v)
		return 0;
	x = strtoll(v, &end, 10);
	if (*end || end == v) {
		double d = as_double(v);

		return isfinite(d) && fabs(d) < 9.2e18 ? (int64_t)d : 0;
	}
	return x;
}

static double pg_column_double(struct xo_sql_stmt *s, int i)
{
	return as_double(value(s, i));
}

static const char *pg_column_text(struct xo_sql_stmt *s, int i)
{
	return value(s, i);
}

static bool pg_column_null(struct xo_sql_stmt *s, int i)
{
	return !value(s, i);
}

static int pg_exec(struct xo_sql *db, const char *sql)
{
	PGresult *res = PQexec(conn(db), sql);
	ExecStatusType est = PQresultStatus(res);
	int rc = XO_SQL_OK;

	if (est != PGRES_COMMAND_OK && est != PGRES_TUPLES_OK)
		rc = fail(db, res);
	else
		db->changes = strtoll(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return rc;
}

static bool known_key(const char *key)
{
	return !strcmp(key, "application_id") || !strcmp(key, "user_version");
}

/* SQLite keeps these in its file header; here a two-column table, created
 * by the first migration's first write. */
static int pg_meta_get(struct xo_sql *db, const char *key, int64_t *out)
{
	struct xo_sql_stmt *s = NULL;
	int rc;

	*out = 0;
	if (!known_key(key)) {
		xo_sql_set_error(db, XO_SQL_ERROR, "unknown store key %s", key);
		return XO_SQL_ERROR;
	}
	/* an MVCC query of the catalog, not to_regclass: after waiting on the
	 * migration's advisory lock it must see the table another process just
	 * committed, and the catalog cache is not refreshed by that lock */
	if ((rc = pg_prepare(db,
	                     "SELECT count(*) FROM pg_catalog.pg_tables WHERE"
	                     " schemaname = current_schema() AND tablename = 'xo_meta'",
	                     &s)) ||
	    (rc = pg_step(s)) != XO_SQL_ROW)
		goto out;
	if (!pg_column_int64(s, 0)) {
		rc = XO_SQL_OK; /* a new store */
		goto out;
	}
	pg_finalize(s);
	if ((rc = pg_prepare(db, "SELECT value FROM xo_meta WHERE key = ?", &s)) ||
	    (rc = pg_bind(s, 1, XO_SQL_T_TEXT, 0, 0.0, key)))
		goto out;
	rc = pg_step(s);
	if (rc == XO_SQL_ROW)
		*out = pg_column_int64(s, 0);
	if (rc == XO_SQL_ROW || rc == XO_SQL_DONE)
		rc = XO_SQL_OK;
out:
	if (s)
		pg_finalize(s);
	return rc == XO_SQL_ROW ? XO_SQL_OK : rc;
}

static int pg_meta_set(struct xo_sql *db, const char *key, int64_t v)
{
	char sql[320];

	if (!known_key(key)) {
		xo_sql_set_error(db, XO_SQL_ERROR, "unknown store key %s", key);
		return XO_SQL_ERROR;
	}
	/* key is one of the two names above: no quoting needed */
	snprintf(sql, sizeof(sql),
	         "CREATE TABLE IF NOT EXISTS xo_meta(key TEXT PRIMARY KEY, value BIGINT NOT NULL);"
	         " INSERT INTO xo_meta(key, value) VALUES ('%s', %lld)"
	         " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	         key, (long long)v);
	return pg_exec(db, sql);
}

static bool pg_readonly(struct xo_sql *db)
{
	return ((struct pg *)db)->readonly;
}

static const struct xo_sql_dialect pg_dialect = {
    .name = "PostgreSQL",
    .id_type = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    .int_type = "BIGINT",
    .real_type = "DOUBLE PRECISION",
    .begin_write = "BEGIN ISOLATION LEVEL READ COMMITTED",
    /* the lock is held to the end of the transaction; its key is the
     * store's application id */
    .begin_migrate = "BEGIN; SELECT pg_advisory_xact_lock(2020569188)",
    .count_objects = "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
                     " ON n.oid = c.relnamespace WHERE n.nspname = current_schema()",
    .setup_write = "SET default_transaction_read_only = off",
    .setup_read = "SET default_transaction_read_only = on",
    /* a row's place in the heap: insertion order for rows never updated
     * (result_ops rows are written once, in one transaction) */
    .row_order = "ctid",
};

static const struct xo_sql_ops pg_ops = {
    .dialect = &pg_dialect,
    .engine = XO_SQL_POSTGRES,
    .close = pg_close,
    .prepare = pg_prepare,
    .bind = pg_bind,
    .step = pg_step,
    .reset = pg_reset,
    .finalize = pg_finalize,
    .column_int64 = pg_column_int64,
    .column_double = pg_column_double,
    .column_text = pg_column_text,
    .column_null = pg_column_null,
    .exec = pg_exec,
    .meta_get = pg_meta_get,
    .meta_set = pg_meta_set,
    .readonly = pg_readonly,
};

/*
 * Whether libpq's message quotes a password of uri: one of the forms
 * xo_sql_quotes_secret knows, or a value libpq's own parse gives a keyword
 * holding "password". Masking the password inside the message would not do:
 * where the masks land tells a short or common password ("p", "server")
 * from the text around it.
 */
static bool quotes_secret(const char *uri, const char *msg)
{
	PQconninfoOption *opts;
	bool found = xo_sql_quotes_secret(uri, msg);

	if (!found && (opts = PQconninfoParse(uri, NULL))) {
		for (PQconninfoOption *o = opts; o->keyword; o++)
			if (o->val && *o->val && strstr(o->keyword, "password") &&
			    strstr(msg, o->val))
				found = true;
		PQconninfoFree(opts);
	}
	return found;
}

bool xo_sql_pg_is_conninfo(const char *s)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(s, &err);

	PQfreemem(err);
	PQconninfoFree(opts);
	return opts != NULL;
}

int xo_sql_pg_open(const char *uri, bool readonly, struct xo_sql **out, char *why, size_t why_size)
{
	struct pg *db = calloc(1, sizeof(*db));
	char *nl;

	*out = NULL;
	if (!db) {
		snprintf(why, why_size, "out of memory");
		return XO_SQL_ERROR;
	}
	db->base.ops = &pg_ops;
	db->readonly = readonly;
	db->c = PQconnectdb(uri);
	if (!db->c || PQstatus(db->c) != CONNECTION_OK) {
		const char *msg = db->c ? PQerrorMessage(db->c) : "out of memory";

		/* libpq's message as is, unless it quotes a password back (a
		 * malformed connection string is echoed): then none of it */
		if (quotes_secret(uri, msg))
			snprintf(why, why_size,
			         "libpq's error message is withheld: it quotes the "
			         "connection string's password");
		else
			snprintf(why, why_size, "%s", msg);
		while ((nl = strpbrk(why, "\r\n\t")))
			*nl = nl[1] ? ' ' : '\0';
		PQfinish(db->c);
		free(db);
		return XO_SQL_CANTOPEN;
	}
	PQsetNoticeProcessor(db->c, quiet, NULL);
	*out = &db->base;
	return XO_SQL_OK;
}
