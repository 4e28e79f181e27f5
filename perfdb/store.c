/*
 * store.c - the store of perf runs, on either engine of sql.h (a SQLite file
 * or a PostgreSQL URI): open (refusing stores that are not ours), schema
 * migrations keyed on the schema version (SQLite's PRAGMA user_version), and
 * the one write transaction of a run (DESIGN section 9). The schema text is
 * written once; @ID, @INT and @REAL are the engine's type names.
 *
 * Every database, new or old, reaches the current schema through the same
 * chain of migrations (0 -> 1 -> ... -> 6), so the migration path is exercised by
 * every fresh store, not only by old files.
 */
#include <inttypes.h>
#include <math.h>
#include "sql.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfdb.h"

struct xo_perfdb {
	struct xo_sql *h;      /* the connection */
	char path[1024]; /* for messages */
	bool locked; /* the last failure was XO_SQL_BUSY/LOCKED: worth a retry */
	bool stale;  /* a read-only open found a schema older than this xo's */
};

static enum xo_status db_err(struct xo_perfdb *db, const char *what)
{
	return xo_error(XO_EDB, "%s: %s: %s", db->path, what, xo_sql_errmsg(db->h));
}

static bool is_busy(int rc)
{
	return rc == XO_SQL_BUSY;
}

static enum xo_status exec(struct xo_perfdb *db, const char *sql)
{
	int rc = xo_sql_exec(db->h, sql);

	if (rc != XO_SQL_OK) {
		db->locked = is_busy(rc);
		return xo_error(XO_EDB, "%s: %s", db->path, xo_sql_errmsg(db->h));
	}
	return XO_OK;
}

/*
 * Runs a query that returns one integer. Messages name the file, what was
 * being read (what) and SQLite's reason, never the SQL text.
 */
static enum xo_status pragma_int(struct xo_perfdb *db, const char *sql, const char *what,
                                 int64_t *out)
{
	struct xo_sql_stmt *s = NULL;
	int rc = xo_sql_prepare(db->h, sql, &s);

	if (rc == XO_SQL_OK)
		rc = xo_sql_step(s);
	if (rc != XO_SQL_ROW) {
		enum xo_status st;

		db->locked = is_busy(rc) || is_busy(xo_sql_errcode(db->h));
		if (rc == XO_SQL_NOTADB || xo_sql_errcode(db->h) == XO_SQL_NOTADB)
			st = xo_error(XO_EDB,
			              "%s: not a SQLite database (corrupt or another kind of file)",
			              db->path);
		else
			st = db_err(db, what);
		xo_sql_finalize(s);
		return st;
	}
	*out = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return XO_OK;
}

/* The store's identity key (sql.h xo_sql_meta_get); messages as pragma_int's. */
static enum xo_status meta_int(struct xo_perfdb *db, const char *key, const char *what,
                               int64_t *out)
{
	int rc = xo_sql_meta_get(db->h, key, out);

	if (rc == XO_SQL_OK)
		return XO_OK;
	db->locked = is_busy(rc);
	if (rc == XO_SQL_NOTADB)
		return xo_error(XO_EDB, "%s: not a SQLite database (corrupt or another kind of file)",
		                db->path);
	return db_err(db, what);
}

/* ---- migrations ------------------------------------------------------------- */

/* Version 1: the first schema (commit, testbed, benchmark, run, summary, samples). */
static const char migrate_1[] =
    "CREATE TABLE commits(id @ID, sha TEXT NOT NULL, subject TEXT,"
    " date @INT);"
    "CREATE UNIQUE INDEX commits_sha ON commits(sha);"
    "CREATE TABLE testbeds(id @ID, hash TEXT NOT NULL UNIQUE,"
    " cpu_model TEXT, cores @INT);"
    "CREATE TABLE benchmarks(id @ID, name TEXT NOT NULL UNIQUE, params TEXT);"
    "CREATE TABLE runs(id @ID, commit_id @INT NOT NULL REFERENCES commits(id),"
    " testbed_id @INT NOT NULL REFERENCES testbeds(id), started @INT);"
    "CREATE TABLE results(id @ID, run_id @INT NOT NULL REFERENCES runs(id),"
    " benchmark_id @INT NOT NULL REFERENCES benchmarks(id), n @INT, min @REAL,"
    " median @REAL, max @REAL);"
    "CREATE TABLE samples(result_id @INT NOT NULL REFERENCES results(id), idx @INT,"
    " wall_s @REAL);";

/*
 * Version 2: dirty work trees are their own commits (sha + diff hash), the
 * full testbed (BLAS core type, OpenCL driver, build flags, environment),
 * benchmark metadata and version hash, run state (incomplete/complete),
 * the 1-minute load average at its start and end, quartiles and median CI,
 * the OpenCL split per sample, kernel time per op, and the changes table. v1 runs were only ever
 * written whole: "complete".
 */
static const char migrate_2[] =
    "ALTER TABLE commits ADD COLUMN parent TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE commits ADD COLUMN dirty @INT NOT NULL DEFAULT 0;"
    "ALTER TABLE commits ADD COLUMN dirty_hash TEXT NOT NULL DEFAULT '';"
    "DROP INDEX commits_sha;"
    "CREATE UNIQUE INDEX commits_identity ON commits(sha, dirty_hash);"
    "ALTER TABLE testbeds ADD COLUMN hostname TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN os TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN compiler TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN cflags TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN blas_name TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN blas_version TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN blas_coretype TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN blas_config TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN cl_platform TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN cl_device TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN cl_driver TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN env TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE testbeds ADD COLUMN describe TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN kind TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN device TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN what TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN dir TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN model TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE benchmarks ADD COLUMN batch @INT NOT NULL DEFAULT 0;"
    "ALTER TABLE benchmarks ADD COLUMN version TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN finished @INT;"
    "ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT 'complete';"
    "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN load_start @REAL;"
    "ALTER TABLE runs ADD COLUMN load_end @REAL;"
    "ALTER TABLE results ADD COLUMN version TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE results ADD COLUMN reps @INT NOT NULL DEFAULT 1;"
    "ALTER TABLE results ADD COLUMN q1 @REAL;"
    "ALTER TABLE results ADD COLUMN q3 @REAL;"
    "ALTER TABLE results ADD COLUMN mean @REAL;"
    "ALTER TABLE results ADD COLUMN ci_lo @REAL;"
    "ALTER TABLE results ADD COLUMN ci_hi @REAL;"
    "ALTER TABLE results ADD COLUMN has_split @INT NOT NULL DEFAULT 0;"
    "CREATE UNIQUE INDEX results_run_benchmark ON results(run_id, benchmark_id);"
    "CREATE INDEX results_benchmark ON results(benchmark_id);"
    "ALTER TABLE samples ADD COLUMN enqueue_s @REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE samples ADD COLUMN h2d_s @REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE samples ADD COLUMN kernel_s @REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE samples ADD COLUMN d2h_s @REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE samples ADD COLUMN wait_s @REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE samples ADD COLUMN launches @REAL NOT NULL DEFAULT 0;"
    "CREATE INDEX samples_result ON samples(result_id);"
    "CREATE TABLE result_ops(result_id @INT NOT NULL REFERENCES results(id),"
    " op TEXT NOT NULL, dir TEXT NOT NULL, kernel_s @REAL NOT NULL, launches @REAL NOT NULL);"
    "CREATE INDEX result_ops_result ON result_ops(result_id);"
    "CREATE TABLE changes(id @ID,"
    " benchmark_id @INT NOT NULL REFERENCES benchmarks(id),"
    " testbed_id @INT NOT NULL REFERENCES testbeds(id),"
    " commit_id @INT NOT NULL REFERENCES commits(id),"
    " prev_commit_id @INT REFERENCES commits(id),"
    " direction TEXT NOT NULL, ratio @REAL NOT NULL, p_value @REAL NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN"
    " ('detected','confirmed','accepted','ignored','fixed')),"
    " detected @INT, updated @INT,"
    " UNIQUE(benchmark_id, testbed_id, commit_id));";

/*
 * Version 3: the CPU time other processes used during the run, in cores
 * (machine busy time minus our own, over the wall time). The load average
 * cannot tell this: it counts the recorder's own threads and lags a minute.
 * Older runs: NULL (unknown).
 */
static const char migrate_3[] = "ALTER TABLE runs ADD COLUMN others_cpu @REAL;";

/*
 * Version 4: the device probe (struct xo_probe, `xo probe`) of each device a
 * run measured, written with the run's results; NULL where a figure does not
 * apply to the device (NAN in the struct). `device` is the benchmark label
 * ("cpu", "cl"), as benchmarks.device.
 */
static const char migrate_4[] =
    "CREATE TABLE probes(run_id @INT NOT NULL REFERENCES runs(id), device TEXT NOT NULL,"
    " launch_s @REAL, enqueue_s @REAL, sync_s @REAL, h2d_lat_s @REAL, h2d_bw @REAL, d2h_lat_s @REAL,"
    " d2h_bw @REAL, flops @REAL, mem_bw @REAL, handoff_s @REAL, units @INT, wall_s @REAL,"
    " PRIMARY KEY(run_id, device));";

/*
 * Version 5: what a series measures. metric is 'time' (a
 * sample is the wall time per call in seconds, unit 's') or 'instructions' (a
 * sample is the instructions one call executed, counted by Valgrind's
 * callgrind around the call, unit 'instructions'); the sample's value is in
 * samples.wall_s either way, so every reader of a series reads one column. A
 * count and a time of one benchmark are two series (two benchmark names:
 * "op/relu/fwd/SHAPE/instructions/cpu" beside "op/relu/fwd/SHAPE/cpu").
 * Older rows: time in seconds.
 */
static const char migrate_5[] =
    "ALTER TABLE benchmarks ADD COLUMN metric TEXT NOT NULL DEFAULT 'time';"
    "ALTER TABLE benchmarks ADD COLUMN unit TEXT NOT NULL DEFAULT 's';";

/*
 * Version 6: runs are found by commit and testbed. compare
 * pools a commit's runs on a testbed, detect and the report order a history
 * by each commit's first run, the report and the changes list look up a
 * change's runs; each of these searched table runs by commit_id, and SQLite
 * and PostgreSQL both scanned the whole table for it (EXPLAIN; on PostgreSQL
 * at 10 000 runs, per series or per point). Also from version 6 a run is
 * written in one transaction and so is never 'incomplete'; older stores may
 * still hold such rows, which every reader skips (no data change here).
 */
static const char migrate_6[] = "CREATE INDEX runs_commit_testbed ON runs(commit_id, testbed_id);";

/*
 * Version 7: what detect last fitted, per series, so that a detect after a
 * new run fits only the series that have new runs. A series' row holds the
 * count of its complete results and its newest run at that detect, the
 * detect settings (threshold, alpha, the rule's version) as text, and the
 * order of history then: the newest commit id it knew and a hash of the
 * order of the commits up to it (order.c), so that a commit recorded later
 * into the middle of the history refits everything. `accept`, `ignore` and
 * `fix` delete the row of their series (its baseline moved). "IF NOT
 * EXISTS": a store whose version was set back by hand keeps the table.
 */
static const char migrate_7[] =
    "CREATE TABLE IF NOT EXISTS detect_state(benchmark_id @INT NOT NULL REFERENCES benchmarks(id),"
    " testbed_id @INT NOT NULL REFERENCES testbeds(id), results @INT NOT NULL,"
    " last_run @INT NOT NULL, settings TEXT NOT NULL, order_upto @INT NOT NULL,"
    " order_hash TEXT NOT NULL, PRIMARY KEY(benchmark_id, testbed_id));";

static const char *const migrations[XO_PERFDB_SCHEMA_VERSION] = {
    migrate_1, migrate_2, migrate_3, migrate_4, migrate_5, migrate_6, migrate_7};

/*
 * A schema version this xo can read or migrate: 0 (new) to the current one.
 * The version indexes the migration table, so anything outside that range
 * is refused here, before it is used (a negative user_version would read
 * before the table).
 */
static enum xo_status check_version(struct xo_perfdb *db, int64_t version, int64_t tables)
{
	if (version > XO_PERFDB_SCHEMA_VERSION)
		return xo_error(XO_EDB,
		                "%s: schema version %" PRId64 " is newer than this xo knows (%d); "
		                "use a newer xo",
		                db->path, version, XO_PERFDB_SCHEMA_VERSION);
	if (version < 0)
		return xo_error(XO_EDB,
		                "%s: schema version %" PRId64 " is not one xo writes (corrupt or "
		                "edited store; %" PRId64 " schema objects)",
		                db->path, version, tables);
	return XO_OK;
}

static enum xo_status migrate(struct xo_perfdb *db, int64_t tables)
{
	enum xo_status st;
	int64_t version;

	/* IMMEDIATE (SQLite) or an advisory lock (PostgreSQL): a second process
	 * opening a fresh store waits here, then sees the version the first one
	 * wrote and does nothing. */
	if ((st = exec(db, xo_sql_dialect(db->h)->begin_migrate)))
		return st;
	if ((st = meta_int(db, "user_version", "reading the schema version", &version)))
		goto out_rollback;
	/* open_setup checked the range; another process may have written it since */
	if ((st = check_version(db, version, tables)))
		goto out_rollback;
	for (int64_t v = version; v < XO_PERFDB_SCHEMA_VERSION; v++) {
		/* the first migration also marks the store as ours */
		if ((v == 0 && xo_sql_meta_set(db->h, "application_id", XO_PERFDB_APP_ID)) ||
		    xo_sql_exec_schema(db->h, migrations[v]) != XO_SQL_OK) {
			st = xo_error(XO_EDB, "%s: migrating schema version %" PRId64 " to %" PRId64
			              " failed: %s", db->path, v, v + 1, xo_sql_errmsg(db->h));
			db->locked = is_busy(xo_sql_errcode(db->h));
			goto out_rollback;
		}
	}
	if (xo_sql_meta_set(db->h, "user_version", XO_PERFDB_SCHEMA_VERSION)) {
		st = db_err(db, "writing the schema version");
		goto out_rollback;
	}
	if ((st = exec(db, "COMMIT")))
		goto out_rollback;
	return XO_OK;

out_rollback:
	xo_sql_exec(db->h, "ROLLBACK");
	return st;
}

/*
 * Everything after sqlite3_open: refuse files that are not ours and versions
 * outside the migration table. A writer then switches to WAL and migrates;
 * a reader (readonly) only checks that the store needs no migration.
 * Sets db->locked when it failed on another connection's lock.
 */
static enum xo_status open_setup(struct xo_perfdb *db, bool readonly)
{
	int64_t app_id = 0, version = 0, tables = 0;
	enum xo_status st;

	db->locked = false;
	/* reading the schema is the first access to the file's header */
	if ((st = pragma_int(db, xo_sql_dialect(db->h)->count_objects, "reading the schema",
	                     &tables)) ||
	    (st = meta_int(db, "application_id", "reading the application id", &app_id)) ||
	    (st = meta_int(db, "user_version", "reading the schema version", &version)))
		return st;
	if (tables > 0 && app_id != XO_PERFDB_APP_ID)
		return xo_error(XO_EDB,
		                "%s: a SQLite database of another program (application_id %" PRId64
		                ", %" PRId64 " schema objects), not a crossover perf store",
		                db->path, app_id, tables);
	if ((st = check_version(db, version, tables)))
		return st;
	if (readonly) {
		db->stale = version < XO_PERFDB_SCHEMA_VERSION;
		if (db->stale)
			return xo_error(XO_EDB,
			                "%s: schema version %" PRId64 " needs migrating to %d, and "
			                "the store is read-only (`xo perf record` on a writable copy "
			                "migrates it)",
			                db->path, version, XO_PERFDB_SCHEMA_VERSION);
		return exec(db, xo_sql_dialect(db->h)->setup_read);
	}
	if ((st = exec(db, xo_sql_dialect(db->h)->setup_write)))
		return st;
	if (version < XO_PERFDB_SCHEMA_VERSION && (st = migrate(db, tables)))
		return st;
	return XO_OK;
}

/*
 * A store is a regular file (or a path not there yet, for a writer): a
 * directory, FIFO or device is refused before SQLite opens it (opening a
 * FIFO would block forever).
 */
static enum xo_status check_path(const char *path, bool readonly)
{
	struct stat sb;
	char name[1024];

	if (!path || !*path)
		return xo_error(XO_EINVAL, "perfdb: empty database path");
	/* a string libpq would not parse may still hold "password=": redacted */
	xo_sql_redact(path, name, sizeof(name));
	if (stat(path, &sb)) {
		if (errno == ENOENT && !readonly)
			return XO_OK;
		return xo_error(XO_EINVAL, "%s: %s", name,
		                errno == ENOENT ? "no such database (check --db, or record first)"
		                                : strerror(errno));
	}
	if (S_ISDIR(sb.st_mode))
		return xo_error(XO_EINVAL, "%s: is a directory, not a perf store", name);
	if (!S_ISREG(sb.st_mode))
		return xo_error(XO_EINVAL, "%s: not a regular file (FIFO, socket or device), not a "
		                "perf store", name);
	return XO_OK;
}

/*
 * A WAL store in a directory the reader cannot write: SQLite needs to create
 * the -shm (and -wal) files even to read, and fails. When no -wal file with
 * content is there (the last writer closed cleanly, so everything is in the
 * main file), the file can be read as immutable: no locks, no side files.
 */
static bool wal_blocked(struct xo_perfdb *db)
{
	int rc = xo_sql_errcode(db->h);
	char wal[sizeof(db->path) + 8];
	struct stat sb;

	if (xo_sql_engine(db->h) != XO_SQL_SQLITE || (rc != XO_SQL_READONLY && rc != XO_SQL_CANTOPEN))
		return false;
	snprintf(wal, sizeof(wal), "%s-wal", db->path);
	return stat(wal, &sb) || sb.st_size == 0;
}

/* "file:" URI of path with ?immutable=1; every byte outside a safe set is
 * percent-encoded so '?', '#' and '%' in a name stay part of it. */
static bool immutable_uri(const char *path, char *uri, size_t size)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                           "0123456789/._-~";
	size_t n = (size_t)snprintf(uri, size, "file:");

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (n + 4 >= size)
			return false;
		if (strchr(safe, *p))
			uri[n++] = (char)*p;
		else
			n += (size_t)snprintf(uri + n, size - n, "%%%02X", *p);
	}
	return (size_t)snprintf(uri + n, size - n, "?immutable=1") < size - n;
}

static enum xo_status open_mode(const char *path, bool readonly, struct xo_perfdb **out,
                                bool *stale)
{
	struct xo_perfdb *db;
	enum xo_status st;
	double waited = 0.0;
	char why[512];

	*out = NULL;
	if (!xo_sql_is_uri(path) && (st = check_path(path, readonly)))
		return st;
	db = calloc(1, sizeof(*db));
	if (!db)
		return xo_error(XO_ENOMEM, "perfdb: out of memory");
	/* messages name the store; a URI's password never appears in them */
	xo_sql_redact(path, db->path, sizeof(db->path));
	if (xo_sql_open(path, readonly, true, false, &db->h, why, sizeof(why)) != XO_SQL_OK) {
		st = xo_error(XO_EDB, "%s: cannot %s: %s", db->path,
		              xo_sql_is_uri(path) ? "connect" : "open", why);
		goto out_close;
	}
	/*
	 * The busy timeout does not cover every lock conflict: when two
	 * processes set up a fresh file at once, one can hold a read lock while
	 * wanting more (the switch to WAL) as the other waits to commit its
	 * migration, and SQLite answers XO_SQL_BUSY at once instead of
	 * deadlocking (seen: 89 of 600 concurrent opens of a new file). The
	 * setup is idempotent, so try it again after a short, growing pause,
	 * within the same 60 s as the busy timeout.
	 */
	for (unsigned pause_us = 1000;; pause_us = pause_us < 100000 ? 2 * pause_us : pause_us) {
		st = open_setup(db, readonly);
		if (!st || !db->locked || waited > 60.0)
			break;
		usleep(pause_us + (unsigned)(getpid() % 1000)); /* apart from the other */
		waited += 1e-6 * pause_us;
	}
	if (st && readonly && wal_blocked(db)) {
		char uri[3 * sizeof(db->path) + 32];

		xo_sql_close(db->h);
		db->h = NULL;
		snprintf(why, sizeof(why), "path too long");
		if (!immutable_uri(path, uri, sizeof(uri)) ||
		    xo_sql_open(uri, readonly, false, true, &db->h, why, sizeof(why)) != XO_SQL_OK) {
			st = xo_error(XO_EDB, "%s: cannot open read-only: %s", db->path, why);
			goto out_close;
		}
		st = open_setup(db, readonly);
	}
	if (st) {
		if (stale)
			*stale = db->stale;
		goto out_close;
	}
	*out = db;
	return XO_OK;

out_close:
	xo_perfdb_close(db);
	return st;
}

enum xo_status xo_perfdb_open(const char *path, struct xo_perfdb **out)
{
	return open_mode(path, false, out, NULL);
}

enum xo_status xo_perfdb_open_readonly(const char *path, struct xo_perfdb **out)
{
	bool stale = false;
	enum xo_status st = open_mode(path, true, out, &stale);

	/* a store older than this xo (or a new, empty file) is migrated first
	 * when it can be written, as any writer would; otherwise the refusal
	 * above stands */
	if (st && stale && (xo_sql_is_uri(path) || !access(path, W_OK))) {
		xo_error_clear();
		if (!(st = open_mode(path, false, out, NULL))) {
			xo_perfdb_close(*out);
			st = open_mode(path, true, out, NULL);
		}
	}
	return st;
}

void xo_perfdb_close(struct xo_perfdb *db)
{
	if (!db)
		return;
	xo_sql_close(db->h);
	free(db);
}

struct xo_sql *xo_perfdb_sql(struct xo_perfdb *db)
{
	return db->h;
}

struct sqlite3 *xo_perfdb_sqlite(struct xo_perfdb *db)
{
	return xo_sql_sqlite_handle(db->h);
}

/* ---- writes ----------------------------------------------------------------- */

static int bind_text(struct xo_sql_stmt *s, int i, const char *v)
{
	return xo_sql_bind_text(s, i, v ? v : "");
}

/* Runs a prepared statement that returns no row (or ignores it) and resets it. */
static int step_done(struct xo_sql_stmt *s)
{
	int rc = xo_sql_step(s);

	xo_sql_reset(s);
	return rc == XO_SQL_DONE || rc == XO_SQL_ROW ? XO_SQL_OK : rc;
}

static enum xo_status select_id(struct xo_perfdb *db, struct xo_sql_stmt *s, int64_t *id)
{
	int rc = xo_sql_step(s);

	if (rc != XO_SQL_ROW) {
		xo_sql_reset(s);
		return db_err(db, "lookup");
	}
	*id = xo_sql_column_int64(s, 0);
	xo_sql_reset(s);
	return XO_OK;
}

/* The 1-minute load average: other work on the machine during a run shows
 * in every threaded timing, so compare reports it. */
static double load_average(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

/*
 * CPU seconds the whole machine was busy (user, nice, system, irq, softirq
 * and steal of /proc/stat's first line: steal is the hypervisor giving our
 * cores to someone else), and the seconds this process used (all threads,
 * PoCL's included). -1 when unknown.
 */
static double machine_busy_s(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;
	long tick = sysconf(_SC_CLK_TCK);

	if (!f)
		return -1.0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	           &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8 || tick <= 0)
		return -1.0;
	/* v[3] idle and v[4] iowait are the idle time */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)tick;
}

static double self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1.0;
	return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
	       (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double wall_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Cores other processes used on average since xo_perf_run_start; -1 unknown. */
static double others_cpu(const struct xo_perf_run *run)
{
	double busy = machine_busy_s(), self = self_cpu_s(), wall = wall_s() - run->wall0;

	if (busy < 0 || self < 0 || run->busy0 < 0 || run->self0 < 0 || wall < 0.5)
		return -1.0;
	return fmax(0.0, (busy - run->busy0) - (self - run->self0)) / wall;
}

static void testbed_hash(const struct xo_perf_testbed *t, char out[24])
{
	const char *f[] = {t->hostname,    t->cpu_model,   t->os,           t->compiler,
	                   t->cflags,      t->blas_name,   t->blas_version, t->blas_coretype,
	                   t->blas_config, t->cl_platform, t->cl_device,    t->cl_driver,
	                   t->env};
	uint64_t h = XO_FNV_OFFSET;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		h = xo_perf_fnv(h, f[i], strlen(f[i]) + 1);
	h = xo_perf_fnv(h, &t->cores, sizeof(t->cores));
	snprintf(out, 24, "%016" PRIx64, h);
}

void xo_perf_run_start(struct xo_perf_run *run, const struct xo_perf_commit *c,
                       const struct xo_perf_testbed *t, const char *note)
{
	memset(run, 0, sizeof(*run));
	run->commit = *c;
	run->testbed = *t;
	snprintf(run->note, sizeof(run->note), "%s", note ? note : "");
	run->started = (int64_t)time(NULL);
	run->load_start = load_average();
	run->busy0 = machine_busy_s();
	run->self0 = self_cpu_s();
	run->wall0 = wall_s();
}

/* The commit and testbed rows of a run (inserted when new) and their ids,
 * inside the caller's transaction. */
static enum xo_status store_identity(struct xo_perfdb *db, const struct xo_perf_commit *c,
                                     const struct xo_perf_testbed *t, int64_t *commit_id,
                                     int64_t *testbed_id)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st;
	char hash[24];

	if (xo_sql_prepare(db->h,
	                       "INSERT INTO commits(sha, parent, subject, date, dirty,"
	                       " dirty_hash) VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING", &s))
		goto out_db;
	bind_text(s, 1, c->sha);
	bind_text(s, 2, c->parent);
	bind_text(s, 3, c->subject);
	xo_sql_bind_int64(s, 4, c->date);
	xo_sql_bind_int64(s, 5, c->dirty);
	bind_text(s, 6, c->dirty_hash);
	if (step_done(s))
		goto out_db;
	xo_sql_finalize(s);
	s = NULL;
	if (xo_sql_prepare(db->h, "SELECT id FROM commits WHERE sha = ? AND dirty_hash = ?", &s))
		goto out_db;
	bind_text(s, 1, c->sha);
	bind_text(s, 2, c->dirty_hash);
	if ((st = select_id(db, s, commit_id)))
		goto out;
	xo_sql_finalize(s);
	s = NULL;

	testbed_hash(t, hash);
	if (xo_sql_prepare(
	        db->h,
	        "INSERT INTO testbeds(hash, hostname, cpu_model, cores, os,"
	        " compiler, cflags, blas_name, blas_version, blas_coretype,"
	        " blas_config, cl_platform, cl_device, cl_driver, env, describe)"
	        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING", &s))
		goto out_db;
	bind_text(s, 1, hash);
	bind_text(s, 2, t->hostname);
	bind_text(s, 3, t->cpu_model);
	xo_sql_bind_int64(s, 4, t->cores);
	bind_text(s, 5, t->os);
	bind_text(s, 6, t->compiler);
	bind_text(s, 7, t->cflags);
	bind_text(s, 8, t->blas_name);
	bind_text(s, 9, t->blas_version);
	bind_text(s, 10, t->blas_coretype);
	bind_text(s, 11, t->blas_config);
	bind_text(s, 12, t->cl_platform);
	bind_text(s, 13, t->cl_device);
	bind_text(s, 14, t->cl_driver);
	bind_text(s, 15, t->env);
	bind_text(s, 16, t->describe);
	if (step_done(s))
		goto out_db;
	xo_sql_finalize(s);
	s = NULL;
	if (xo_sql_prepare(db->h, "SELECT id FROM testbeds WHERE hash = ?", &s))
		goto out_db;
	bind_text(s, 1, hash);
	st = select_id(db, s, testbed_id);
	goto out;

out_db:
	st = db_err(db, "recording the run");
out:
	xo_sql_finalize(s);
	return st;
}

enum { S_BENCH_UPSERT, S_BENCH_ID, S_RESULT, S_SAMPLE, S_OP, S_PROBE, S_COUNT };

static const char *const finish_sql[S_COUNT] = {
    [S_BENCH_UPSERT] = "INSERT INTO benchmarks(name, params, kind, device, what, dir, model,"
                       " batch, version, metric, unit) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                       " ON CONFLICT(name) DO"
                       " UPDATE SET params = excluded.params, kind = excluded.kind,"
                       " device = excluded.device, what = excluded.what, dir = excluded.dir,"
                       " model = excluded.model, batch = excluded.batch,"
                       " version = excluded.version, metric = excluded.metric,"
                       " unit = excluded.unit",
    [S_BENCH_ID] = "SELECT id FROM benchmarks WHERE name = ?",
    [S_RESULT] = "INSERT INTO results(run_id, benchmark_id, n, min, median, max, version,"
                 " reps, q1, q3, mean, ci_lo, ci_hi, has_split)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
    [S_SAMPLE] = "INSERT INTO samples(result_id, idx, wall_s, enqueue_s, h2d_s, kernel_s,"
                 " d2h_s, wait_s, launches) VALUES (?,?,?,?,?,?,?,?,?)",
    [S_OP] = "INSERT INTO result_ops(result_id, op, dir, kernel_s, launches)"
             " VALUES (?,?,?,?,?)",
    [S_PROBE] = "INSERT INTO probes(run_id, device, launch_s, enqueue_s, sync_s, h2d_lat_s,"
                " h2d_bw, d2h_lat_s, d2h_bw, flops, mem_bw, handoff_s, units, wall_s)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

static enum xo_status store_result(struct xo_perfdb *db, struct xo_sql_stmt **s, int64_t run_id,
                                   const struct xo_perf_result *r)
{
	const struct xo_perf_bench *b = &r->b;
	struct xo_perf_summary sum;
	int64_t bench_id = 0, result_id;
	enum xo_status st;
	double *wall;

	bind_text(s[S_BENCH_UPSERT], 1, b->name);
	bind_text(s[S_BENCH_UPSERT], 2, b->params);
	bind_text(s[S_BENCH_UPSERT], 3, b->kind);
	bind_text(s[S_BENCH_UPSERT], 4, b->device);
	bind_text(s[S_BENCH_UPSERT], 5, b->what);
	bind_text(s[S_BENCH_UPSERT], 6, b->dir);
	bind_text(s[S_BENCH_UPSERT], 7, b->model);
	xo_sql_bind_int64(s[S_BENCH_UPSERT], 8, b->batch);
	bind_text(s[S_BENCH_UPSERT], 9, b->version);
	bind_text(s[S_BENCH_UPSERT], 10, b->metric[0] ? b->metric : "time");
	bind_text(s[S_BENCH_UPSERT], 11, b->unit[0] ? b->unit : "s");
	if (step_done(s[S_BENCH_UPSERT]))
		return db_err(db, "storing a benchmark");
	bind_text(s[S_BENCH_ID], 1, b->name);
	if ((st = select_id(db, s[S_BENCH_ID], &bench_id)))
		return st;

	wall = malloc((r->n ? r->n : 1) * sizeof(*wall));
	if (!wall)
		return xo_error(XO_ENOMEM, "perfdb: out of memory");
	for (size_t i = 0; i < r->n; i++)
		wall[i] = r->samples[i].wall_s;
	xo_perf_summarize(wall, r->n, &sum);
	free(wall);

	struct xo_sql_stmt *q = s[S_RESULT];

	xo_sql_bind_int64(q, 1, run_id);
	xo_sql_bind_int64(q, 2, bench_id);
	xo_sql_bind_int64(q, 3, (int64_t)r->n);
	xo_sql_bind_double(q, 4, sum.min);
	xo_sql_bind_double(q, 5, sum.median);
	xo_sql_bind_double(q, 6, sum.max);
	bind_text(q, 7, b->version);
	xo_sql_bind_int64(q, 8, r->reps);
	xo_sql_bind_double(q, 9, sum.q1);
	xo_sql_bind_double(q, 10, sum.q3);
	xo_sql_bind_double(q, 11, sum.mean);
	xo_sql_bind_double(q, 12, sum.ci_lo);
	xo_sql_bind_double(q, 13, sum.ci_hi);
	xo_sql_bind_int64(q, 14, r->has_split);
	if (select_id(db, q, &result_id))
		return db_err(db, "storing a result");

	q = s[S_SAMPLE];
	for (size_t i = 0; i < r->n; i++) {
		const struct xo_perf_sample *x = &r->samples[i];

		xo_sql_bind_int64(q, 1, result_id);
		xo_sql_bind_int64(q, 2, (int64_t)i);
		xo_sql_bind_double(q, 3, x->wall_s);
		xo_sql_bind_double(q, 4, x->enqueue_s);
		xo_sql_bind_double(q, 5, x->h2d_s);
		xo_sql_bind_double(q, 6, x->kernel_s);
		xo_sql_bind_double(q, 7, x->d2h_s);
		xo_sql_bind_double(q, 8, x->wait_s);
		xo_sql_bind_double(q, 9, x->launches);
		if (step_done(q))
			return db_err(db, "storing a sample");
	}
	q = s[S_OP];
	for (int op = 0; op < XO_OP_COUNT; op++)
		for (int d = 0; d < XO_DIR_COUNT; d++) {
			if (r->op_kernel_s[op][d] <= 0.0 && r->op_launches[op][d] <= 0.0)
				continue;
			xo_sql_bind_int64(q, 1, result_id);
			bind_text(q, 2, xo_op_name((enum xo_op)op));
			bind_text(q, 3, xo_dir_name((enum xo_dir)d));
			xo_sql_bind_double(q, 4, r->op_kernel_s[op][d]);
			xo_sql_bind_double(q, 5, r->op_launches[op][d]);
			if (step_done(q))
				return db_err(db, "storing an op time");
		}
	for (int i = 0; i < r->nlayers; i++) {
		xo_sql_bind_int64(q, 1, result_id);
		bind_text(q, 2, r->layer_name[i]);
		bind_text(q, 3, "layer");
		xo_sql_bind_double(q, 4, r->layer_kernel_s[i]);
		xo_sql_bind_double(q, 5, r->layer_launches[i]);
		if (step_done(q))
			return db_err(db, "storing a layer time");
	}
	return XO_OK;
}

/* A probe figure: NULL where it does not apply (NAN) or is not finite. */
static void bind_figure(struct xo_sql_stmt *s, int i, double v)
{
	if (isfinite(v))
		xo_sql_bind_double(s, i, v);
	else
		xo_sql_bind_null(s, i);
}

static enum xo_status store_probe(struct xo_perfdb *db, struct xo_sql_stmt *q, int64_t run_id,
                                  const struct xo_perf_probe *pr)
{
	const struct xo_probe *p = &pr->p;

	xo_sql_bind_int64(q, 1, run_id);
	bind_text(q, 2, pr->device);
	bind_figure(q, 3, p->launch_s);
	bind_figure(q, 4, p->enqueue_s);
	bind_figure(q, 5, p->sync_s);
	bind_figure(q, 6, p->h2d_lat_s);
	bind_figure(q, 7, p->h2d_bw);
	bind_figure(q, 8, p->d2h_lat_s);
	bind_figure(q, 9, p->d2h_bw);
	bind_figure(q, 10, p->flops);
	bind_figure(q, 11, p->mem_bw);
	bind_figure(q, 12, p->handoff_s);
	xo_sql_bind_int64(q, 13, p->units);
	bind_figure(q, 14, p->wall_s);
	if (step_done(q))
		return db_err(db, "storing a device probe");
	return XO_OK;
}

/*
 * The run row, complete from the start: the state column stays for older
 * stores, whose killed two-transaction writers left 'incomplete' rows that
 * every reader still skips.
 */
static enum xo_status store_run_row(struct xo_perfdb *db, const struct xo_perf_run *run,
                                    int64_t commit_id, int64_t testbed_id, int64_t *run_id)
{
	struct xo_sql_stmt *s = NULL;
	double others = others_cpu(run);
	enum xo_status st;

	if (xo_sql_prepare(db->h,
	                   "INSERT INTO runs(commit_id, testbed_id, started, finished, state, note,"
	                   " load_start, load_end, others_cpu)"
	                   " VALUES (?,?,?,?,'complete',?,?,?,?) RETURNING id",
	                   &s))
		return db_err(db, "recording the run");
	xo_sql_bind_int64(s, 1, commit_id);
	xo_sql_bind_int64(s, 2, testbed_id);
	xo_sql_bind_int64(s, 3, run->started);
	xo_sql_bind_int64(s, 4, (int64_t)time(NULL));
	bind_text(s, 5, run->note);
	xo_sql_bind_double(s, 6, run->load_start);
	xo_sql_bind_double(s, 7, load_average());
	if (others >= 0)
		xo_sql_bind_double(s, 8, others);
	else
		xo_sql_bind_null(s, 8);
	st = select_id(db, s, run_id);
	xo_sql_finalize(s);
	return st;
}

enum xo_status xo_perfdb_run_store(struct xo_perfdb *db, const struct xo_perf_run *run,
                                   const struct xo_perf_result *r, size_t n,
                                   const struct xo_perf_probe *probes, size_t nprobes,
                                   int64_t *run_id)
{
	struct xo_sql_stmt *s[S_COUNT] = {0};
	int64_t commit_id = 0, testbed_id = 0, id = 0;
	enum xo_status st;

	if ((st = exec(db, xo_sql_dialect(db->h)->begin_write)))
		return st;
	if ((st = store_identity(db, &run->commit, &run->testbed, &commit_id, &testbed_id)) ||
	    (st = store_run_row(db, run, commit_id, testbed_id, &id)))
		goto out_rollback;
	for (int i = 0; i < S_COUNT; i++)
		if (xo_sql_prepare(db->h, finish_sql[i], &s[i]) != XO_SQL_OK) {
			st = db_err(db, "preparing the run's statements");
			goto out_rollback;
		}
	for (size_t i = 0; i < n; i++)
		if ((st = store_result(db, s, id, &r[i])))
			goto out_rollback;
	for (size_t i = 0; i < nprobes; i++)
		if ((st = store_probe(db, s[S_PROBE], id, &probes[i])))
			goto out_rollback;
	for (int i = 0; i < S_COUNT; i++)
		xo_sql_finalize(s[i]);
	if ((st = exec(db, "COMMIT")))
		goto out_rollback_only;
	*run_id = id;
	return XO_OK;

out_rollback:
	for (int i = 0; i < S_COUNT; i++)
		xo_sql_finalize(s[i]);
out_rollback_only:
	xo_sql_exec(db->h, "ROLLBACK");
	return st;
}

enum xo_status xo_perfdb_run_write(struct xo_perfdb *db, const struct xo_perf_commit *c,
                                   const struct xo_perf_testbed *t, const char *note,
                                   const struct xo_perf_result *r, size_t n, int64_t *run_id)
{
	struct xo_perf_run *run = malloc(sizeof(*run)); /* 4 KiB: not on the stack */
	enum xo_status st;

	if (!run)
		return xo_error(XO_ENOMEM, "perfdb: out of memory");
	xo_perf_run_start(run, c, t, note);
	st = xo_perfdb_run_store(db, run, r, n, NULL, 0, run_id);
	free(run);
	return st;
}

enum xo_status xo_perf_resolve_run(struct xo_perfdb *db, const char *spec, int64_t *run_id)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	if (!spec) {
		/* the latest run of our own devices: a peer import is not a HEAD */
		if (xo_sql_prepare(db->h,
		                       "SELECT ru.id FROM runs ru WHERE ru.state = 'complete' AND"
		                       " EXISTS (SELECT 1 FROM results res JOIN benchmarks b"
		                       " ON b.id = res.benchmark_id WHERE res.run_id = ru.id AND"
		                       " (b.device IN ('ref','cpu') OR b.device LIKE 'cl%'))"
		                       " ORDER BY ru.id DESC LIMIT 1", &s))
			return db_err(db, "finding the latest run");
		rc = xo_sql_step(s);
		if (rc == XO_SQL_ROW)
			*run_id = xo_sql_column_int64(s, 0);
		else
			st = xo_error(XO_EINVAL, "%s: no complete run of ref/cpu/cl recorded yet",
			              db->path);
		xo_sql_finalize(s);
		return st;
	}
	if (!strncmp(spec, "run:", 4)) {
		char *end;
		long long id = strtoll(spec + 4, &end, 10);

		if (end == spec + 4 || *end)
			return xo_error(XO_EINVAL, "'%s': expected run:N", spec);
		/* the store is outside input too: a NULL state reads as not complete */
		if (xo_sql_prepare(db->h, "SELECT state = 'complete' FROM runs WHERE id = ?", &s))
			return db_err(db, "finding a run");
		xo_sql_bind_int64(s, 1, id);
		rc = xo_sql_step(s);
		if (rc != XO_SQL_ROW)
			st = xo_error(XO_EINVAL, "%s: no run %lld", db->path, id);
		else if (xo_sql_column_int(s, 0) != 1)
			st = xo_error(XO_EINVAL, "%s: run %lld is incomplete (killed or failed)",
			              db->path, id);
		else
			*run_id = id;
		xo_sql_finalize(s);
		return st;
	}
	if (strlen(spec) < 4 || strspn(spec, "0123456789abcdefABCDEF") != strlen(spec)) {
		if (strcmp(spec, "nogit"))
			return xo_error(
			    XO_EINVAL,
			    "'%s': expected run:N or a commit sha prefix of >= 4 hex digits", spec);
	}
	/* the latest complete run of the commits matching the prefix; a dirty
	 * tree counts as the commit it sits on (its latest run wins) */
	if (xo_sql_prepare(db->h,
	                       "SELECT r.id, (SELECT count(DISTINCT sha) FROM commits"
	                       " WHERE substr(sha, 1, length(?1)) = ?1)"
	                       " FROM runs r JOIN commits c ON c.id = r.commit_id"
	                       " WHERE r.state = 'complete' AND substr(c.sha, 1, length(?1)) = ?1"
	                       " ORDER BY r.id DESC LIMIT 1", &s))
		return db_err(db, "finding a commit");
	bind_text(s, 1, spec);
	rc = xo_sql_step(s);
	if (rc != XO_SQL_ROW)
		st = xo_error(XO_EINVAL, "%s: no complete run of a commit '%s'", db->path, spec);
	else if (xo_sql_column_int64(s, 1) > 1)
		st = xo_error(XO_EINVAL, "'%s' is ambiguous: %lld commits match", spec,
		              (long long)xo_sql_column_int64(s, 1));
	else
		*run_id = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return st;
}

enum xo_status xo_perfdb_testbed_find(struct xo_perfdb *db, const char *name, int64_t *id)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	char hosts[512] = "";
	int rc;

	/* coalesce: NULL sorts first in PostgreSQL's DESC, last in SQLite's */
	if (xo_sql_prepare(db->h,
	                   "SELECT t.id FROM testbeds t WHERE t.hostname = ?1 OR t.hash = ?1"
	                   " ORDER BY coalesce((SELECT max(ru.id) FROM runs ru WHERE"
	                   " ru.testbed_id = t.id AND ru.state = 'complete'), 0) DESC, t.id DESC"
	                   " LIMIT 1", &s))
		return db_err(db, "finding a testbed");
	xo_sql_bind_text(s, 1, name);
	rc = xo_sql_step(s);
	if (rc == XO_SQL_ROW) {
		*id = xo_sql_column_int64(s, 0);
		xo_sql_finalize(s);
		return XO_OK;
	}
	xo_sql_finalize(s);
	if (rc != XO_SQL_DONE)
		return db_err(db, "finding a testbed");
	if (!xo_sql_prepare(db->h, "SELECT hostname FROM testbeds GROUP BY hostname ORDER BY hostname",
	                    &s)) {
		while (xo_sql_step(s) == XO_SQL_ROW && strlen(hosts) < sizeof(hosts) - 80)
			snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "%s%.64s",
			         hosts[0] ? ", " : "", xo_sql_column_text(s, 0));
		xo_sql_finalize(s);
	}
	st = xo_error(XO_EINVAL, "--testbed '%s': no such hostname or testbed hash in %s (hosts: %s)",
	              name, db->path, hosts[0] ? hosts : "none");
	return st;
}

int64_t xo_perfdb_prev_reps(struct xo_perfdb *db, const struct xo_perf_testbed *t,
                            const char *name)
{
	struct xo_sql_stmt *s = NULL;
	int64_t reps = 0;
	char hash[24];

	testbed_hash(t, hash);
	if (xo_sql_prepare(db->h,
	                       "SELECT res.reps FROM results res JOIN runs ru ON ru.id = res.run_id"
	                       " JOIN benchmarks b ON b.id = res.benchmark_id"
	                       " JOIN testbeds t ON t.id = ru.testbed_id"
	                       " WHERE b.name = ?1 AND ru.state = 'complete' AND t.hash = ?2"
	                       " ORDER BY ru.id DESC LIMIT 1", &s) != XO_SQL_OK)
		return 0;
	xo_sql_bind_text(s, 1, name);
	xo_sql_bind_text(s, 2, hash);
	if (xo_sql_step(s) == XO_SQL_ROW)
		reps = xo_sql_column_int64(s, 0);
	xo_sql_finalize(s);
	return reps;
}

/* A REAL column of a probes row: NAN where NULL. */
static double column_figure(struct xo_sql_stmt *s, int i)
{
	return xo_sql_column_null(s, i) ? NAN : xo_sql_column_double(s, i);
}

enum xo_status xo_perfdb_probe_get(struct xo_perfdb *db, int64_t run_id, const char *device,
                                   struct xo_probe *out)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	int rc;

	if (xo_sql_prepare(db->h,
	                       "SELECT launch_s, enqueue_s, sync_s, h2d_lat_s, h2d_bw, d2h_lat_s,"
	                       " d2h_bw, flops, mem_bw, handoff_s, units, wall_s FROM probes"
	                       " WHERE run_id = ? AND device = ?", &s) != XO_SQL_OK)
		return db_err(db, "reading a device probe");
	xo_sql_bind_int64(s, 1, run_id);
	bind_text(s, 2, device);
	rc = xo_sql_step(s);
	if (rc == XO_SQL_ROW) {
		*out = (struct xo_probe){
		    .launch_s = column_figure(s, 0),
		    .enqueue_s = column_figure(s, 1),
		    .sync_s = column_figure(s, 2),
		    .h2d_lat_s = column_figure(s, 3),
		    .h2d_bw = column_figure(s, 4),
		    .d2h_lat_s = column_figure(s, 5),
		    .d2h_bw = column_figure(s, 6),
		    .flops = column_figure(s, 7),
		    .mem_bw = column_figure(s, 8),
		    .handoff_s = column_figure(s, 9),
		    .units = (int)xo_sql_column_int64(s, 10),
		    .wall_s = column_figure(s, 11),
		};
	} else if (rc == XO_SQL_DONE) {
		st = xo_error(XO_ENODEV, "%s: run %lld has no probe of device %s", db->path,
		              (long long)run_id, device);
	} else {
		st = db_err(db, "reading a device probe");
	}
	xo_sql_finalize(s);
	return st;
}
