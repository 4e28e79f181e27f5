/*
 * sql.h - the one SQL layer perfdb talks to, over two engines: SQLite (the
 * embedded default, sql_sqlite.c) and PostgreSQL through libpq (sql_pg.c, a
 * shared store for a fleet of testbeds). Nothing else in perfdb includes
 * sqlite3.h or libpq-fe.h.
 *
 * SQL text is written once, with `?` or `?N` placeholders (the PostgreSQL
 * engine rewrites them to `$N`), SQLite's and PostgreSQL's common dialect
 * (ON CONFLICT ... DO NOTHING, RETURNING id, substr/length/coalesce), and
 * the few differences in one table (struct xo_sql_dialect): the type names
 * of the schema text, how a write transaction starts, and the store's
 * identity (application id, schema version) that SQLite keeps in PRAGMAs.
 *
 * The calls mirror SQLite's: prepare, bind (1-based), step (XO_SQL_ROW until
 * XO_SQL_DONE), column getters (0-based), reset (bindings kept), finalize.
 * Text binds are copied. Errors: a non-zero code and xo_sql_errmsg().
 */
#ifndef XO_SQL_H
#define XO_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xo_sql;      /* opaque: a connection */
struct xo_sql_stmt; /* opaque: a prepared statement */

enum xo_sql_engine { XO_SQL_SQLITE, XO_SQL_POSTGRES };

/* Result codes; the values are SQLite's so either engine reads the same. */
enum {
	XO_SQL_OK = 0,
	XO_SQL_ERROR = 1,
	XO_SQL_BUSY = 5,     /* locked, serialization failure or deadlock: retry the transaction */
	XO_SQL_READONLY = 8, /* a write to a read-only store */
	XO_SQL_CANTOPEN = 14,
	XO_SQL_NOTADB = 26, /* the file is not a SQLite database */
	XO_SQL_ROW = 100,
	XO_SQL_DONE = 101,
};

/* The engine differences, one row per engine. Schema text uses the tokens
 * @ID (an auto-numbered primary key), @INT (64-bit integer) and @REAL
 * (double), expanded by xo_sql_exec_schema. */
struct xo_sql_dialect {
	const char *name;          /* "SQLite", "PostgreSQL" */
	const char *id_type;       /* @ID */
	const char *int_type;      /* @INT */
	const char *real_type;     /* @REAL */
	const char *begin_write;   /* a transaction that writes (SQLite: take the write lock now) */
	const char *begin_migrate; /* BEGIN plus a lock one migrating process holds at a time */
	const char *count_objects; /* schema objects in the store, 0 when new */
	const char *setup_write;   /* after opening for writing (SQLite: WAL mode) */
	const char *setup_read;    /* after opening for reading */
	const char *row_order;     /* a column that orders a table's rows as inserted */
};

const struct xo_sql_dialect *xo_sql_dialect(const struct xo_sql *db);
enum xo_sql_engine xo_sql_engine(const struct xo_sql *db);

/*
 * A PostgreSQL connection string rather than a SQLite path: a URI
 * (postgresql:// or postgres://), or a libpq conninfo string (keyword=value
 * pairs libpq's own parser takes whole, e.g. "host=h dbname=d"; libpq too
 * takes a string holding '=' as one). A file named like a conninfo string
 * is reached as ./host=h...
 */
bool xo_sql_is_uri(const char *target);
/*
 * target with every password replaced by "***", for messages: every form
 * libpq takes (a URI's user:password@ up to its last '@' before the path, a
 * URI parameter whose percent-decoded name holds "password", a conninfo
 * keyword holding "password" with its value quoted or not), and the same
 * keyword anywhere in a path, whatever store it names; a URI anywhere inside
 * target (libpq takes one as a conninfo dbname= value) and a scheme in any
 * case are covered too.
 */
void xo_sql_redact(const char *target, char *out, size_t size);
/* Whether msg holds any password of target, as written or as libpq may
 * have read it (%xx decoded, conninfo quoting undone). */
bool xo_sql_quotes_secret(const char *target, const char *msg);

/*
 * Opens target: a PostgreSQL URI, else a SQLite path (flags: readonly, create,
 * uri as sqlite3_open_v2's SQLITE_OPEN_URI). On failure returns non-zero with
 * a one-line reason in why (never the password) and *out NULL.
 */
int xo_sql_open(const char *target, bool readonly, bool create, bool uri, struct xo_sql **out,
                char *why, size_t why_size);
void xo_sql_close(struct xo_sql *db); /* accepts NULL */

int xo_sql_prepare(struct xo_sql *db, const char *sql, struct xo_sql_stmt **out);
int xo_sql_bind_int64(struct xo_sql_stmt *s, int i, int64_t v);
int xo_sql_bind_double(struct xo_sql_stmt *s, int i, double v);
int xo_sql_bind_text(struct xo_sql_stmt *s, int i, const char *v); /* NULL binds NULL */
int xo_sql_bind_null(struct xo_sql_stmt *s, int i);
int xo_sql_step(struct xo_sql_stmt *s);
int xo_sql_reset(struct xo_sql_stmt *s);
void xo_sql_finalize(struct xo_sql_stmt *s); /* accepts NULL */
int64_t xo_sql_column_int64(struct xo_sql_stmt *s, int i);
int xo_sql_column_int(struct xo_sql_stmt *s, int i);
double xo_sql_column_double(struct xo_sql_stmt *s, int i);
const char *xo_sql_column_text(struct xo_sql_stmt *s, int i); /* NULL for NULL */
bool xo_sql_column_null(struct xo_sql_stmt *s, int i);

/* Runs one or more statements that return no rows. */
int xo_sql_exec(struct xo_sql *db, const char *sql);
/* exec of schema text after expanding @ID, @INT and @REAL. */
int xo_sql_exec_schema(struct xo_sql *db, const char *sql);
const char *xo_sql_errmsg(struct xo_sql *db);
int xo_sql_errcode(struct xo_sql *db);     /* the last failure's XO_SQL_* code */
int64_t xo_sql_changes(struct xo_sql *db); /* rows the last statement changed */

/* The store's identity: "application_id" and "user_version" (SQLite's
 * PRAGMAs; a table xo_meta on PostgreSQL). 0 when never set. */
int xo_sql_meta_get(struct xo_sql *db, const char *key, int64_t *out);
int xo_sql_meta_set(struct xo_sql *db, const char *key, int64_t v);
/* The store cannot be written through this connection. */
bool xo_sql_readonly(struct xo_sql *db);

/* ---- the engines' entry points (sql.c dispatches on db->ops) ---- */
struct xo_sql_ops {
	const struct xo_sql_dialect *dialect;
	enum xo_sql_engine engine;
	void (*close)(struct xo_sql *db);
	int (*prepare)(struct xo_sql *db, const char *sql, struct xo_sql_stmt **out);
	int (*bind)(struct xo_sql_stmt *s, int i, int type, int64_t iv, double dv, const char *tv);
	int (*step)(struct xo_sql_stmt *s);
	int (*reset)(struct xo_sql_stmt *s);
	void (*finalize)(struct xo_sql_stmt *s);
	int64_t (*column_int64)(struct xo_sql_stmt *s, int i);
	double (*column_double)(struct xo_sql_stmt *s, int i);
	const char *(*column_text)(struct xo_sql_stmt *s, int i);
	bool (*column_null)(struct xo_sql_stmt *s, int i);
	int (*exec)(struct xo_sql *db, const char *sql);
	int (*meta_get)(struct xo_sql *db, const char *key, int64_t *out);
	int (*meta_set)(struct xo_sql *db, const char *key, int64_t v);
	bool (*readonly)(struct xo_sql *db);
};

enum { XO_SQL_T_INT, XO_SQL_T_DOUBLE, XO_SQL_T_TEXT, XO_SQL_T_NULL };

/* What both engines' structs start with. */
struct xo_sql {
	const struct xo_sql_ops *ops;
	int errcode;      /* last failure, XO_SQL_* */
	int64_t changes;  /* rows the last statement changed */
	char errmsg[512]; /* last failure, one line */
};
struct xo_sql_stmt {
	struct xo_sql *db;
};

void xo_sql_set_error(struct xo_sql *db, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int xo_sql_sqlite_open(const char *path, bool readonly, bool create, bool uri, struct xo_sql **out,
                       char *why, size_t why_size);
int xo_sql_pg_open(const char *uri, bool readonly, struct xo_sql **out, char *why, size_t why_size);
/* Whether libpq parses s as a conninfo string (known keywords, valid syntax). */
bool xo_sql_pg_is_conninfo(const char *s);
struct sqlite3;
struct sqlite3 *xo_sql_sqlite_handle(struct xo_sql *db);

#endif
