/*
 * sql_sqlite.c - the SQLite engine of the SQL layer (sql.h): the embedded
 * default store, one file. The only file in perfdb that calls sqlite3_*.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

struct lite {
	struct xo_sql base;
	sqlite3 *h;
};

struct lite_stmt {
	struct xo_sql_stmt base;
	sqlite3_stmt *s;
};

static sqlite3 *handle(struct xo_sql *db)
{
	return ((struct lite *)db)->h;
}

/* SQLite's primary code as an XO_SQL_* code: a lock held elsewhere is BUSY. */
static int code_of(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_LOCKED ? XO_SQL_BUSY : rc;
}

static int fail(struct xo_sql *db, int rc)
{
	xo_sql_set_error(db, code_of(rc), "%s", sqlite3_errmsg(handle(db)));
	return code_of(rc);
}

static void lite_close(struct xo_sql *db)
{
	sqlite3_close_v2(handle(db));
	free(db);
}

static int lite_prepare(struct xo_sql *db, const char *sql, struct xo_sql_stmt **out)
{
	struct lite_stmt *ls = calloc(1, sizeof(*ls));
	int rc;

	if (!ls) {
		xo_sql_set_error(db, XO_SQL_ERROR, "out of memory");
		return XO_SQL_ERROR;
	}
	rc = sqlite3_prepare_v2(handle(db), sql, -1, &ls->s, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(db, rc);
		sqlite3_finalize(ls->s);
		free(ls);
		return rc;
	}
	ls->base.db = db;
	*out = &ls->base;
	return XO_SQL_OK;
}

static sqlite3_stmt *st_of(struct xo_sql_stmt *s)
{
	return ((struct lite_stmt *)s)->s;
}

static int lite_bind(struct xo_sql_stmt *s, int i, int type, int64_t iv, double dv, const char *tv)
{
	int rc;

	switch (type) {
	case XO_SQL_T_INT:
		rc = sqlite3_bind_int64(st_of(s), i, iv);
		break;
	case XO_SQL_T_DOUBLE:
		rc = sqlite3_bind_double(st_of(s), i, dv);
		break;
	case XO_SQL_T_TEXT:
		rc = sqlite3_bind_text(st_of(s), i, tv, -1, SQLITE_TRANSIENT);
		break;
	default:
		rc = sqlite3_bind_null(st_of(s), i);
		break;
	}
	return rc == SQLITE_OK ? XO_SQL_OK : fail(s->db, rc);
}

static int lite_step(struct xo_sql_stmt *s)
{
	int rc = sqlite3_step(st_of(s));

	if (rc == SQLITE_ROW)
		return XO_SQL_ROW;
	if (rc == SQLITE_DONE) {
		s->db->changes = sqlite3_changes(handle(s->db));
		return XO_SQL_DONE;
	}
	return fail(s->db, rc);
}

static int lite_reset(struct xo_sql_stmt *s)
{
	sqlite3_reset(st_of(s));
	return XO_SQL_OK;
}

static void lite_finalize(struct xo_sql_stmt *s)
{
	sqlite3_finalize(st_of(s));
	free(s);
}

static int64_t lite_column_int64(struct xo_sql_stmt *s, int i)
{
	return sqlite3_column_int64(st_of(s), i);
}

static double lite_column_double(struct xo_sql_stmt *s, int i)
{
	return sqlite3_column_double(st_of(s), i);
}

static const char *lite_column_text(struct xo_sql_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(st_of(s), i);
}

static bool lite_column_null(struct xo_sql_stmt *s, int i)
{
	return sqlite3_column_type(st_of(s), i) == SQLITE_NULL;
}

static int lite_exec(struct xo_sql *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(handle(db), sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		/* SQLite's reason, copied before anything else can replace it */
		xo_sql_set_error(db, code_of(rc), "%s", msg ? msg : sqlite3_errmsg(handle(db)));
		sqlite3_free(msg);
		return code_of(rc);
	}
	db->changes = sqlite3_changes(handle(db));
	return XO_SQL_OK;
}

/* The identity keys are PRAGMA names; anything else is a programming error. */
static bool known_key(const char *key)
{
	return !strcmp(key, "application_id") || !strcmp(key, "user_version");
}

static int lite_meta_get(struct xo_sql *db, const char *key, int64_t *out)
{
	char sql[64];
	sqlite3_stmt *s = NULL;
	int rc;

	if (!known_key(key)) {
		xo_sql_set_error(db, XO_SQL_ERROR, "unknown store key %s", key);
		return XO_SQL_ERROR;
	}
	snprintf(sql, sizeof(sql), "PRAGMA %s", key);
	rc = sqlite3_prepare_v2(handle(db), sql, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		/* the statement's code, or the connection's when preparing failed */
		if (rc == SQLITE_OK || rc == SQLITE_DONE)
			rc = sqlite3_errcode(handle(db));
		rc = fail(db, rc);
		sqlite3_finalize(s);
		return rc ? rc : XO_SQL_ERROR;
	}
	*out = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return XO_SQL_OK;
}

static int lite_meta_set(struct xo_sql *db, const char *key, int64_t v)
{
	char sql[96];

	if (!known_key(key)) {
		xo_sql_set_error(db, XO_SQL_ERROR, "unknown store key %s", key);
		return XO_SQL_ERROR;
	}
	snprintf(sql, sizeof(sql), "PRAGMA %s = %lld", key, (long long)v);
	return lite_exec(db, sql);
}

static bool lite_readonly(struct xo_sql *db)
{
	return sqlite3_db_readonly(handle(db), "main") == 1;
}

static const struct xo_sql_dialect lite_dialect = {
    .name = "SQLite",
    .id_type = "INTEGER PRIMARY KEY",
    .int_type = "INTEGER",
    .real_type = "REAL",
    .begin_write = "BEGIN IMMEDIATE",
    .begin_migrate = "BEGIN IMMEDIATE",
    .count_objects = "SELECT count(*) FROM sqlite_master",
    .setup_write = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                   " PRAGMA foreign_keys = ON",
    .setup_read = "PRAGMA foreign_keys = ON",
    .row_order = "rowid",
};

static const struct xo_sql_ops lite_ops = {
    .dialect = &lite_dialect,
    .engine = XO_SQL_SQLITE,
    .close = lite_close,
    .prepare = lite_prepare,
    .bind = lite_bind,
    .step = lite_step,
    .reset = lite_reset,
    .finalize = lite_finalize,
    .column_int64 = lite_column_int64,
    .column_double = lite_column_double,
    .column_text = lite_column_text,
    .column_null = lite_column_null,
    .exec = lite_exec,
    .meta_get = lite_meta_get,
    .meta_set = lite_meta_set,
    .readonly = lite_readonly,
};

int xo_sql_sqlite_open(const char *path, bool readonly, bool create, bool uri, struct xo_sql **out,
                       char *why, size_t why_size)
{
	struct lite *db = calloc(1, sizeof(*db));
	int flags = readonly ? SQLITE_OPEN_READONLY
	                     : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
	int rc;

	*out = NULL;
	if (!db) {
		snprintf(why, why_size, "out of memory");
		return XO_SQL_ERROR;
	}
	db->base.ops = &lite_ops;
	rc = sqlite3_open_v2(path, &db->h, flags | (uri ? SQLITE_OPEN_URI : 0), NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, why_size, "%s", db->h ? sqlite3_errmsg(db->h) : "out of memory");
		sqlite3_close_v2(db->h);
		free(db);
		return code_of(rc);
	}
	sqlite3_busy_timeout(db->h, 60000);
	*out = &db->base;
	return XO_SQL_OK;
}

/* The raw handle of a SQLite store, for tests that inspect the file; NULL
 * for another engine. */
struct sqlite3 *xo_sql_sqlite_handle(struct xo_sql *db)
{
	return db && db->ops == &lite_ops ? handle(db) : NULL;
}
