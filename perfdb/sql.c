/*
 * sql.c - the engine-neutral half of the SQL layer (sql.h): dispatch to the
 * engine's table, the schema-token expansion and URI handling.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* A URI's scheme at the start, as libpq tells one (case as written). */
static bool uri_prefix(const char *t)
{
	return !strncmp(t, "postgresql://", 13) || !strncmp(t, "postgres://", 11);
}

bool xo_sql_is_uri(const char *target)
{
	return target &&
	       (uri_prefix(target) || (strchr(target, '=') && xo_sql_pg_is_conninfo(target)));
}

/* A span [start, start + len) of target that holds a secret. */
struct secret {
	const char *start;
	size_t len;
};

#define SECRETS_MAX 16

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

/* s[0..n) percent-decoded into out (size > n), as libpq decodes URI parts;
 * a malformed %xx is kept as written. */
static void pct_decode(const char *s, size_t n, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
		    hexval((unsigned char)s[i + 2]) >= 0) {
			out[k++] = (char)(hexval((unsigned char)s[i + 1]) * 16 +
			                  hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
}

/* Whether key[0..n), percent-decoded, names a password (password,
 * sslpassword, in any case). */
static bool password_key(const char *key, size_t n)
{
	char dec[256];

	if (n >= sizeof(dec))
		return true; /* too long to tell: treat as secret */
	pct_decode(key, n, dec);
	for (char *p = dec; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return strstr(dec, "password") != NULL;
}

/* Past SECRETS_MAX spans the last one grows to run from the earliest start
 * it has seen to the end of the string: more is hidden, never less. */
static void add_secret(struct secret *sec, int *n, const char *start, size_t len)
{
	struct secret *last = &sec[SECRETS_MAX - 1];

	if (!len)
		return;
	if (*n < SECRETS_MAX) {
		sec[*n].start = start;
		sec[*n].len = len;
		(*n)++;
		return;
	}
	if (start < last->start)
		last->start = start;
	last->len = strlen(last->start);
}

/* conninfo values: 'quoted' (backslash escapes) or up to whitespace. Every
 * "password" (any case) followed by optional blanks and '=' starts one, in
 * any text, so a conninfo string and a garbled target are both covered. */
static void conninfo_secrets(const char *t, struct secret *sec, int *n)
{
	for (const char *p = t; *p; p++) {
		const char *v;

		if (strncasecmp(p, "password", 8))
			continue;
		v = p + 8;
		while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
			v++;
		if (*v != '=')
			continue;
		v++;
		while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
			v++;
		const char *e = v;

		if (*e == '\'') {
			for (e++; *e && *e != '\''; e++)
				if (*e == '\\' && e[1])
					e++;
			if (*e)
				e++;
		} else {
			for (; *e && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r'; e++)
				if (*e == '\\' && e[1])
					e++;
		}
		add_secret(sec, n, v, (size_t)(e - v));
		p = e > p ? e - 1 : p;
	}
}

/* Length of a PostgreSQL URI scheme ("postgresql://", "postgres://", any
 * case) at p, else 0. */
static size_t scheme_len(const char *p)
{
	if (!strncasecmp(p, "postgresql://", 13))
		return 13;
	if (!strncasecmp(p, "postgres://", 11))
		return 11;
	return 0;
}

/*
 * Where the URI whose scheme starts at u (inside t) ends: the whole of t
 * when t is the URI; else the URI is a conninfo value (libpq expands a URI
 * given as dbname's value), which ends at the closing quote when it was
 * opened by one and at a blank when not, backslash escapes skipped.
 */
static const char *uri_end(const char *t, const char *u)
{
	bool quoted = u > t && u[-1] == '\'';
	const char *e = u;

	if (u == t)
		return u + strlen(u);
	for (; *e; e++) {
		if (*e == '\\' && e[1])
			e++;
		else if (quoted ? *e == '\''
		                : (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r'))
			break;
	}
	return e;
}

/* The secrets of a URI whose authority starts at auth and which ends at end. */
static void uri_secrets(const char *auth, const char *end, struct secret *sec, int *n)
{
	const char *slash = auth, *at = NULL, *q;

	/* libpq ends the user info at the first '@' before any '/'; a password
	 * holding '@' then spills into the host. Up to the last '@' before the
	 * first '/' covers both readings (and a '?' or '#' in the password). */
	for (; slash < end && *slash != '/'; slash++)
		if (*slash == '@')
			at = slash;
	if (at) {
		const char *colon = memchr(auth, ':', (size_t)(at - auth));

		if (colon)
			add_secret(sec, n, colon + 1, (size_t)(at - colon - 1));
	}
	/* parameters: '&'-separated key=value after the first '?' past the
	 * user info; libpq percent-decodes the key and knows no fragment */
	q = at ? at : auth;
	q = memchr(q, '?', (size_t)(end - q));
	while (q && q < end) {
		const char *k = q + 1, *e = k, *eq;

		while (e < end && *e != '&')
			e++;
		eq = memchr(k, '=', (size_t)(e - k));
		if (eq && password_key(k, (size_t)(eq - k)))
			add_secret(sec, n, eq + 1, (size_t)(e - eq - 1));
		q = e < end ? e : NULL;
	}
}

/* Every secret span of target, in order of their start, overlaps merged:
 * a conninfo string's password= values (not in a URI, whose parameters
 * are its own), and the password of every PostgreSQL URI inside target,
 * wherever it starts. */
static int find_secrets(const char *t, struct secret *sec)
{
	int n = 0, m = 0;

	if (!uri_prefix(t))
		conninfo_secrets(t, sec, &n);
	for (const char *p = t; *p; p++) {
		size_t k = scheme_len(p);

		if (k)
			uri_secrets(p + k, uri_end(t, p), sec, &n);
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && sec[j].start < sec[j - 1].start; j--) {
			struct secret x = sec[j];

			sec[j] = sec[j - 1];
			sec[j - 1] = x;
		}
	for (int i = 0; i < n; i++) {
		const char *e = sec[i].start + sec[i].len;

		if (m && sec[i].start <= sec[m - 1].start + sec[m - 1].len) {
			if (e > sec[m - 1].start + sec[m - 1].len)
				sec[m - 1].len = (size_t)(e - sec[m - 1].start);
			continue;
		}
		sec[m++] = sec[i];
	}
	return m;
}

void xo_sql_redact(const char *target, char *out, size_t size)
{
	struct secret sec[SECRETS_MAX];
	int ns, i = 0;
	size_t n = 0;

	if (!size)
		return;
	out[0] = '\0';
	if (!target)
		return;
	ns = find_secrets(target, sec);
	for (const char *p = target; *p && n + 1 < size;) {
		if (i < ns && p == sec[i].start) {
			n += (size_t)snprintf(out + n, size - n, "***");
			p += sec[i].len;
			i++;
			continue;
		}
		out[n++] = *p++;
		out[n] = '\0';
	}
	if (n >= size)
		out[size - 1] = '\0';
}

/* s (NUL-terminated) with conninfo quoting undone into out (as large): the
 * enclosing quotes dropped, each backslash escape replaced by its byte. */
static void unquote(const char *s, char *out)
{
	size_t k = 0, n = strlen(s);

	if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'')
		s++, n -= 2;
	for (size_t j = 0; j < n; j++) {
		if (s[j] == '\\' && j + 1 < n)
			j++;
		out[k++] = s[j];
	}
	out[k] = '\0';
}

static bool holds(const char *msg, const char *s)
{
	return *s && strstr(msg, s);
}

bool xo_sql_quotes_secret(const char *target, const char *msg)
{
	struct secret sec[SECRETS_MAX];
	int ns = target && msg ? find_secrets(target, sec) : 0;

	for (int i = 0; i < ns; i++) {
		char raw[1024], dec[1024], unq[1024], both[1024];

		/* a secret too long to copy: assume the message holds it */
		if (sec[i].len >= sizeof(raw))
			return true;
		memcpy(raw, sec[i].start, sec[i].len);
		raw[sec[i].len] = '\0';
		pct_decode(raw, sec[i].len, dec);
		unquote(raw, unq);
		pct_decode(unq, strlen(unq), both);
		if (holds(msg, raw) || holds(msg, dec) || holds(msg, unq) || holds(msg, both))
			return true;
	}
	return false;
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
