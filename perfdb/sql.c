/*
 * sql.c - the engine-neutral half of the SQL layer (sql.h): dispatch to the
 * engine's table, the schema-token expansion and URI handling.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

void xo_sql_set_error(struct xo_sql *db, int code, const char *fmt, ...)
{
	va_list ap;
	char *nl;

	db->errcode = code;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	/* one line: libpq's messages end in (and may contain) newlines */
	while ((nl = strpbrk(db->errmsg, "\r\n")))
		*nl = nl[1] ? ' ' : '\0';
}

bool xo_sql_is_uri(const char *target)
{
	return target &&
	       (!strncmp(target, "postgresql://", 13) || !strncmp(target, "postgres://", 11));
}

/*
 * The password of a URI sits between "user:" and "@" in the authority, or in
 * a "password=" parameter; both become "***". Anything else is kept so the
 * message still names the server and database.
 */
void xo_sql_redact(const char *target, char *out, size_t size)
{
	const char *scheme = strstr(target, "://");
	size_t n = 0;

	if (!size)
		return;
	out[0] = '\0';
	if (!xo_sql_is_uri(target) || !scheme) {
		snprintf(out, size, "%s", target);
		return;
	}
	const char *auth = scheme + 3, *end = auth + strcspn(auth, "/?#"), *at = NULL;

	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;

	for (const char *p = target; *p && n + 1 < size;) {
		if (colon && p == colon + 1) {
			n += (size_t)snprintf(out + n, size - n, "***");
			p = at;
			continue;
		}
		if (p > end && (p[-1] == '?' || p[-1] == '&') && !strncmp(p, "password=", 9)) {
			n += (size_t)snprintf(out + n, size - n, "password=***");
			p += 9 + strcspn(p + 9, "&#");
			continue;
		}
		out[n++] = *p++;
		out[n] = '\0';
	}
	if (n >= size)
		out[size - 1] = '\0';
}

int xo_sql_open(const char *target, bool readonly, bool create, bool uri, struct xo_sql **out,
                char *why, size_t why_size)
{
	*out = NULL;
	if (xo_sql_is_uri(target))
		return xo_sql_pg_open(target, readonly, out, why, why_size);
	return xo_sql_sqlite_open(target, readonly, create, uri, out, why, why_size);
}

void xo_sql_close(struct xo_sql *db)
{
	if (db)
		db->ops->close(db);
}

const struct xo_sql_dialect *xo_sql_dialect(const struct xo_sql *db)
{
	return db->ops->dialect;
}

enum xo_sql_engine xo_sql_engine(const struct xo_sql *db)
{
	return db->ops->engine;
}

int xo_sql_prepare(struct xo_sql *db, const char *sql, struct xo_sql_stmt **out)
{
	*out = NULL;
	return db->ops->prepare(db, sql, out);
}

int xo_sql_bind_int64(struct xo_sql_stmt *s, int i, int64_t v)
{
	return s->db->ops->bind(s, i, XO_SQL_T_INT, v, 0.0, NULL);
}

int xo_sql_bind_double(struct xo_sql_stmt *s, int i, double v)
{
	return s->db->ops->bind(s, i, XO_SQL_T_DOUBLE, 0, v, NULL);
}

int xo_sql_bind_text(struct xo_sql_stmt *s, int i, const char *v)
{
	return s->db->ops->bind(s, i, v ? XO_SQL_T_TEXT : XO_SQL_T_NULL, 0, 0.0, v);
}

int xo_sql_bind_null(struct xo_sql_stmt *s, int i)
{
	return s->db->ops->bind(s, i, XO_SQL_T_NULL, 0, 0.0, NULL);
}

int xo_sql_step(struct xo_sql_stmt *s)
{
	return s->db->ops->step(s);
}

int xo_sql_reset(struct xo_sql_stmt *s)
{
	return s ? s->db->ops->reset(s) : XO_SQL_OK;
}

void xo_sql_finalize(struct xo_sql_stmt *s)
{
	if (s)
		s->db->ops->finalize(s);
}

int64_t xo_sql_column_int64(struct xo_sql_stmt *s, int i)
{
	return s->db->ops->column_int64(s, i);
}

int xo_sql_column_int(struct xo_sql_stmt *s, int i)
{
	return (int)s->db->ops->column_int64(s, i);
}

double xo_sql_column_double(struct xo_sql_stmt *s, int i)
{
	return s->db->ops->column_double(s, i);
}

const char *xo_sql_column_text(struct xo_sql_stmt *s, int i)
{
	return s->db->ops->column_text(s, i);
}

bool xo_sql_column_null(struct xo_sql_stmt *s, int i)
{
	return s->db->ops->column_null(s, i);
}

int xo_sql_exec(struct xo_sql *db, const char *sql)
{
	return db->ops->exec(db, sql);
}

int xo_sql_exec_schema(struct xo_sql *db, const char *sql)
{
	const struct xo_sql_dialect *d = db->ops->dialect;
	static const char *const token[] = {"@ID", "@INT", "@REAL"};
	const char *with[] = {d->id_type, d->int_type, d->real_type};
	size_t cap = 2 * strlen(sql) + 256, n = 0;
	char *out = malloc(cap);
	int rc;

	if (!out) {
		xo_sql_set_error(db, XO_SQL_ERROR, "out of memory");
		return XO_SQL_ERROR;
	}
	for (const char *p = sql; *p;) {
		size_t k = 0;

		while (k < 3 && strncmp(p, token[k], strlen(token[k])))
			k++;
		if (k < 3) {
			size_t w = strlen(with[k]);

			if (n + w + 1 >= cap) {
				char *grown = realloc(out, cap = 2 * cap + w);

				if (!grown) {
					free(out);
					xo_sql_set_error(db, XO_SQL_ERROR, "out of memory");
					return XO_SQL_ERROR;
				}
				out = grown;
			}
			memcpy(out + n, with[k], w);
			n += w;
			p += strlen(token[k]);
			continue;
		}
		if (n + 2 >= cap) {
			char *grown = realloc(out, cap *= 2);

			if (!grown) {
				free(out);
				xo_sql_set_error(db, XO_SQL_ERROR, "out of memory");
				return XO_SQL_ERROR;
			}
			out = grown;
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	rc = db->ops->exec(db, out);
	free(out);
	return rc;
}

const char *xo_sql_errmsg(struct xo_sql *db)
{
	return db->errmsg[0] ? db->errmsg : "unknown error";
}

int xo_sql_errcode(struct xo_sql *db)
{
	return db->errcode;
}

int64_t xo_sql_changes(struct xo_sql *db)
{
	return db->changes;
}

int xo_sql_meta_get(struct xo_sql *db, const char *key, int64_t *out)
{
	return db->ops->meta_get(db, key, out);
}

int xo_sql_meta_set(struct xo_sql *db, const char *key, int64_t v)
{
	return db->ops->meta_set(db, key, v);
}

bool xo_sql_readonly(struct xo_sql *db)
{
	return db->ops->readonly(db);
}
