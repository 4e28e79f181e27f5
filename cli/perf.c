/*
 * perf.c - `xo perf`: record, compare, detect, accept/ignore/fix, report,
 * advise, import (DESIGN sections 8 and 9; docs/perf.md). Argument parsing
 * only; the work is in perfdb/.
 *
 * Exit codes: 0 success, 1 a regression was confirmed (compare, detect),
 * 2 bad usage or bad input, with one line on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "perfdb.h"
#include "sql.h"
#include "xo.h"

#define MAX_DEVICES 16
#define MAX_OPTS    32

static const char usage_text[] =
    "usage: xo perf COMMAND [OPTIONS]\n"
    "\n"
    "  record  [--db F] [--filter RE] [--device D ...] [--quick] [--samples N]\n"
    "          [--model SPEC] [--list [--json]] [--no-progress] [--no-probe]\n"
    "          [--metric time|instructions|time,instructions]\n"
    "                       time the benchmarks, store them for this commit\n"
    "                       (with a probe of each device measured, `xo probe`);\n"
    "                       instructions: each call counted under valgrind's\n"
    "                       callgrind (ref and cpu; AVX2, one thread);\n"
    "                       --model SPEC: that model's benchmarks alone\n"
    "                       (--filter . adds the seed's op set)\n"
    "  compare [--db F] [--threshold PCT] [--alpha P] [--filter RE] [--json]\n"
    "          [--testbed HOST] [--metric time|instructions] BASE [HEAD]\n"
    "                       BASE/HEAD are run:N, a commit sha prefix or any git\n"
    "                       revision; a commit pools its record runs (peers apart);\n"
    "                       HEAD defaults to the latest run's commit\n"
    "  continuous [--db F] [--rounds N] [--threshold PCT] [--filter RE] [--device D ...]\n"
    "          [--quick] [--samples N] [--model SPEC] [--build-dir DIR] [--json]\n"
    "          [--metric time|instructions]\n"
    "          BASE [HEAD]\n"
    "                       build BASE and HEAD (git revisions; HEAD defaults to\n"
    "                       HEAD) in temporary clones, record them in alternating\n"
    "                       rounds (6), compare; threshold 10% unless given;\n"
    "                       --build-dir keeps the builds (DIR/SHA) for the next run;\n"
    "                       while a benchmark is UNKNOWN, more rounds up to\n"
    "                       --max-rounds N (2 x rounds) or --budget SECONDS\n"
    "  bisect  --good REV --bad REV [--db F] [--filter RE] [--device D ...]\n"
    "          [--metric time|instructions] [--rounds N] [--max-rounds N] [--budget S]\n"
    "          [--threshold PCT]\n"
    "          [--quick] [--samples N] [--model SPEC] [--build-dir DIR] [--json]\n"
    "                       the first commit on --bad's first-parent line whose\n"
    "                       change against --good is a confirmed slowdown (SLOWER);\n"
    "                       each tested commit built and recorded against --good in\n"
    "                       alternating rounds (as continuous); a commit that does\n"
    "                       not build or stays UNKNOWN is skipped\n"
    "  detect  [--db F] [--threshold PCT] [--alpha P] [--filter RE] [--json]\n"
    "          [--testbed HOST] [--metric time|instructions]\n"
    "                       (compare, detect: that testbed's runs only)\n"
    "                       step detection over every history, stored as changes\n"
    "  accept ID | ignore ID | fix ID  [--db F]\n"
    "                       set a change's state (accepted starts a new baseline)\n"
    "  report  [--db F] [--model M] [--testbed HOST] --out DIR\n"
    "                       gnuplot PNG/SVG and index.html (every model in the store\n"
    "                       unless --model; a line per testbed unless --testbed)\n"
    "  advise  [--db F] [--model M] [--json]   the faster device per batch size\n"
    "                       (every model in the store, listed, unless --model)\n"
    "  import  [--db F] --peer NAME --json FILE   another framework's timings\n"
    "  import-db [--db F] SOURCE  merge every complete run of the store SOURCE\n"
    "                       (a testbed's perf.sqlite) into --db; twice adds nothing\n"
    "\n"
    "--db F is a SQLite file or a PostgreSQL URI (postgresql://USER@HOST/DB, a\n"
    "store a fleet shares).\n"
    "--db defaults to perf.sqlite. compare/detect exit 1 when a regression is\n"
    "confirmed: Mann-Whitney p < alpha (0.002) and |change| > max(threshold (5%),\n"
    "base IQR/median, and for compare the run-to-run noise once a series has\n"
    ">= 4 runs). --metric instructions (callgrind's counts): a change is one every\n"
    "sample pair shows beyond the threshold (0.5% unless given). Options a command\n"
    "does not take are refused. docs/perf.md.\n";

struct perf_args {
	const char *db;
	const char *filter;
	const char *devices[MAX_DEVICES];
	int ndevices;
	bool quick, list, no_progress, no_probe;
	bool json_out; /* --json (a flag) for the readers; import's --json takes a FILE */
	int samples, rounds;
	const char *model;
	double threshold, alpha;
	const char *out, *peer, *json, *build_dir;
	const char *good, *bad, *metric, *count_child;
	const char *testbed; /* --testbed NAME: compare/detect on that testbed only */
	unsigned metrics; /* --metric: XO_PERF_METRIC_* bits, 0 when not given */
	int max_rounds;
	double budget;
	const char *pos[2];
	int npos;
	const char *opt_seen[MAX_OPTS]; /* every option given, to refuse what sub ignores */
	int nopt;
};

/*
 * `record --model M`: the spec is parsed (on ref, batch 1) before anything is
 * timed or stored, so a bad spec is one line and exit 2, not one skipped
 * benchmark per model case.
 */
static int check_model(const char *path)
{
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	enum xo_status st;

	if ((st = xo_backend_open("ref", &be)) == XO_OK)
		st = xo_model_open(path, be, 1, &m);
	xo_model_close(m);
	xo_backend_close(be);
	if (st) {
		/* through xo_error: a control byte in the path is escaped */
		xo_error(st, "xo perf record: --model %s: %s", path, xo_last_error());
		fprintf(stderr, "%s\n", xo_last_error());
		return 2;
	}
	return 0;
}

static int fail(const char *sub)
{
	fprintf(stderr, "xo perf %s: %s\n", sub, xo_last_error());
	return 2;
}

static bool parse_double(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return end != s && (!*end || (*end == '%' && !end[1]));
}

/* Options every subcommand shares one parser for; each rejects what it does
 * not use by checking afterwards. */
static int parse(const char *sub, int argc, char **argv, struct perf_args *a)
{
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (o[0] == '-' && o[1] && a->nopt < MAX_OPTS)
			a->opt_seen[a->nopt++] = o;

#define NEED_VALUE()                                                                               \
	do {                                                                                       \
		if (!v)                                                                            \
			return xo_usage_error("perf", "%s %s needs a value", sub, o);              \
		i++;                                                                               \
	} while (0)
		if (!strcmp(o, "--db")) {
			NEED_VALUE();
			a->db = v;
		} else if (!strcmp(o, "--filter")) {
			NEED_VALUE();
			a->filter = v;
		} else if (!strcmp(o, "--device")) {
			NEED_VALUE();
			if (a->ndevices == MAX_DEVICES)
				return xo_usage_error("perf", "too many --device");
			char cmd[32];

			snprintf(cmd, sizeof(cmd), "perf %s", sub);
			if (xo_cli_gpu_requested(cmd, v))
				return 2;
			a->devices[a->ndevices++] = v;
		} else if (!strcmp(o, "--quick")) {
			a->quick = true;
		} else if (!strcmp(o, "--list")) {
			a->list = true;
		} else if (!strcmp(o, "--no-progress")) {
			a->no_progress = true;
		} else if (!strcmp(o, "--no-probe")) {
			a->no_probe = true;
		} else if (!strcmp(o, "--samples")) {
			int64_t n;

			NEED_VALUE();
			if (!xo_cli_parse_i64(v, 10, 100000, &n))
				return xo_usage_error("perf", "--samples %s: need an integer >= 10",
				                      v);
			a->samples = (int)n;
		} else if (!strcmp(o, "--rounds")) {
			int64_t n;

			NEED_VALUE();
			if (!xo_cli_parse_i64(v, 1, 100, &n))
				return xo_usage_error("perf", "--rounds %s: need an integer 1..100", v);
			a->rounds = (int)n;
		} else if (!strcmp(o, "--max-rounds")) {
			int64_t n;

			NEED_VALUE();
			if (!xo_cli_parse_i64(v, 1, 1000, &n))
				return xo_usage_error("perf", "--max-rounds %s: need an integer 1..1000",
				                      v);
			a->max_rounds = (int)n;
		} else if (!strcmp(o, "--budget")) {
			NEED_VALUE();
			/* NaN fails: every comparison with it is false */
			if (!parse_double(v, &a->budget) || !(a->budget > 0 && a->budget <= 1e7) ||
			    strchr(v, '%'))
				return xo_usage_error("perf", "--budget %s: need seconds, 0 < S <= 1e7",
				                      v);
		} else if (!strcmp(o, "--good")) {
			NEED_VALUE();
			a->good = v;
		} else if (!strcmp(o, "--bad")) {
			NEED_VALUE();
			a->bad = v;
		} else if (!strcmp(o, "--metric")) {
			NEED_VALUE();
			/* record takes both at once; the readers one */
			if (!strcmp(v, "time"))
				a->metrics = XO_PERF_METRIC_TIME;
			else if (!strcmp(v, "instructions"))
				a->metrics = XO_PERF_METRIC_INSTRUCTIONS;
			else if (!strcmp(sub, "record") &&
			         (!strcmp(v, "time,instructions") || !strcmp(v, "instructions,time")))
				a->metrics = XO_PERF_METRIC_TIME | XO_PERF_METRIC_INSTRUCTIONS;
			else
				return xo_usage_error(
				    "perf", "--metric %s: need time or instructions%s", v,
				    strcmp(sub, "record") ? "" : " (or time,instructions: both)");
			a->metric = v;
		} else if (!strcmp(o, "--count-child")) {
			/* internal: the counting child under callgrind (runner.c) */
			NEED_VALUE();
			a->count_child = v;
		} else if (!strcmp(o, "--model")) {
			NEED_VALUE();
			a->model = v;
		} else if (!strcmp(o, "--threshold")) {
			NEED_VALUE();
			/* written so that NaN fails too: every comparison with it is false */
			if (!parse_double(v, &a->threshold) ||
			    !(a->threshold >= 0 && a->threshold < 1000))
				return xo_usage_error("perf",
				                      "--threshold %s: need a percentage from 0 to 1000",
				                      v);
			a->threshold /= 100.0;
		} else if (!strcmp(o, "--alpha")) {
			NEED_VALUE();
			if (!parse_double(v, &a->alpha) || !(a->alpha > 0 && a->alpha < 1))
				return xo_usage_error("perf", "--alpha %s: need 0 < p < 1", v);
		} else if (!strcmp(o, "--out")) {
			NEED_VALUE();
			a->out = v;
		} else if (!strcmp(o, "--build-dir")) {
			NEED_VALUE();
			a->build_dir = v;
		} else if (!strcmp(o, "--peer")) {
			NEED_VALUE();
			a->peer = v;
		} else if (!strcmp(o, "--testbed")) {
			NEED_VALUE();
			a->testbed = v;
		} else if (!strcmp(o, "--json") && !strcmp(sub, "import")) {
			NEED_VALUE();
			a->json = v;
		} else if (!strcmp(o, "--json")) {
			a->json_out = true;
		} else if (o[0] == '-' && o[1]) {
			return xo_usage_error(
			    "perf", "%s: unknown option '%s' (try `xo perf --help`)", sub, o);
		} else {
			if (a->npos == 2)
				return xo_usage_error("perf", "%s: unexpected argument '%s'", sub,
				                      o);
			a->pos[a->npos++] = o;
		}
#undef NEED_VALUE
	}
	return 0;
}

/*
 * The options each subcommand reads. An option another subcommand would take
 * is refused rather than silently ignored: `compare --quick` or `report
 * --device cl` means the user expects something that will not happen.
 */
static const struct {
	const char *sub, *opts;
} sub_options[] = {
    {"record", " --db --filter --device --quick --list --no-progress --no-probe --samples --model"
               " --json --metric --count-child "},
    {"compare", " --db --threshold --alpha --filter --json --testbed --metric "},
    {"detect", " --db --threshold --alpha --filter --json --testbed --metric "},
    {"continuous", " --db --threshold --alpha --filter --json --rounds --device --quick"
                   " --samples --model --build-dir --max-rounds --budget --metric "},
    {"bisect", " --db --threshold --alpha --filter --json --rounds --device --quick"
               " --samples --model --build-dir --max-rounds --budget --good --bad --metric "},
    {"accept", " --db "},
    {"ignore", " --db "},
    {"fix", " --db "},
    {"report", " --db --out --model --testbed "},
    {"advise", " --db --model --json "},
    {"import", " --db --peer --json "},
    {"import-db", " --db "},
};

static bool threshold_given(const struct perf_args *a)
{
	for (int i = 0; i < a->nopt; i++)
		if (!strcmp(a->opt_seen[i], "--threshold"))
			return true;
	return false;
}

static int check_options(const char *sub, const struct perf_args *a)
{
	const char *opts = NULL;
	char key[64];

	for (size_t i = 0; i < sizeof(sub_options) / sizeof(sub_options[0]); i++)
		if (!strcmp(sub_options[i].sub, sub))
			opts = sub_options[i].opts;
	for (int i = 0; opts && i < a->nopt; i++) {
		snprintf(key, sizeof(key), " %s ", a->opt_seen[i]);
		if (!strstr(opts, key))
			return xo_usage_error("perf", "%s does not take %s (try `xo perf --help`)",
			                      sub, a->opt_seen[i]);
	}
	return 0;
}

/* The arguments each command needs beyond its options; 0 or the usage
 * error's exit code. record --model without --filter keeps the model's
 * benchmarks only. */
static int check_arity(const char *sub, struct perf_args *ap)
{
	struct perf_args a = *ap;
	int rc;

	/* arity per command */
	if (!strcmp(sub, "compare") || !strcmp(sub, "continuous") ? a.npos < 1
	    : (!strcmp(sub, "accept") || !strcmp(sub, "ignore") || !strcmp(sub, "fix") ||
	       !strcmp(sub, "import-db"))
	        ? a.npos != 1
	        : a.npos != 0)
		return xo_usage_error("perf",
		                      "%s: wrong number of arguments (try `xo perf --help`)", sub);
	if (!strcmp(sub, "bisect") && (!a.good || !a.bad))
		return xo_usage_error("perf", "bisect needs --good REV and --bad REV");
	if (!strcmp(sub, "report") && !a.out)
		return xo_usage_error("perf", "report needs --out DIR");
	if (!strcmp(sub, "import") && (!a.json || !a.peer))
		return xo_usage_error("perf", "import needs --peer NAME and --json FILE");
	if (a.json_out && !strcmp(sub, "record") && !a.list)
		return xo_usage_error("perf", "record takes --json only with --list");
	if (!strcmp(sub, "record") && a.model && (rc = check_model(a.model)))
		return rc;
	/* record --model FILE times that model; the seed's op benchmarks too
	 * only when a --filter asks for them (--filter . keeps everything) */
	if (!strcmp(sub, "record") && a.model && !a.filter)
		ap->filter = "^model/";
	return 0;
}

/* record without a store: the counting child (the parent stores what it
 * writes), or --list. */
static int record_nostore(const char *sub, const struct perf_args *ap)
{
	struct perf_args a = *ap;

	if (a.count_child && !strcmp(sub, "record")) {
		/* the counting child: no store (the parent stores what it writes) */
		struct xo_perf_record_opts ro = {.filter = a.filter,
		                                 .devices = a.ndevices ? a.devices : NULL,
		                                 .ndevices = a.ndevices,
		                                 .quick = a.quick,
		                                 .model_path = a.model,
		                                 .metrics = XO_PERF_METRIC_INSTRUCTIONS,
		                                 .count_dir = a.count_child};
		int64_t id = 0;

		return xo_perf_record(NULL, &ro, stdout, &id) ? fail(sub) : 0;
	}
	{
		struct xo_perf_record_opts ro = {.filter = a.filter,
		                                 .devices = a.ndevices ? a.devices : NULL,
		                                 .ndevices = a.ndevices,
		                                 .quick = a.quick,
		                                 .model_path = a.model,
		                                 .list_only = true,
		                                 .json = a.json_out};
		int64_t id;

		return xo_perf_record(NULL, &ro, stdout, &id) ? fail(sub) : 0;
	}
}

/* continuous and bisect: they record into the store themselves. */
static int run_continuous(const char *sub, const struct perf_args *ap)
{
	struct perf_args a = *ap;
	enum xo_status st;
	bool failed = false;
	bool thr = false;
	struct xo_perf_continuous_opts cont = {
	    .db_path = a.db,
	    .filter = a.filter,
	    .devices = a.ndevices ? a.devices : NULL,
	    .ndevices = a.ndevices,
	    .quick = a.quick,
	    /* see compare: 6 a side for an alarm; a count needs no rounds to
	       average over (its samples must agree), one a side */
	    .rounds = a.rounds                                   ? a.rounds
	              : a.metrics == XO_PERF_METRIC_INSTRUCTIONS ? 1
	                                                         : 6,
	    .samples = a.samples,
	    .model = a.model,
	    .build_dir = a.build_dir,
	    /* Pinpoint's rule: UNKNOWN gets more rounds, up to twice as many */
	    .max_rounds = a.max_rounds                                 ? a.max_rounds
	                  : a.metrics == XO_PERF_METRIC_INSTRUCTIONS ? 2 * (a.rounds ? a.rounds : 1)
	                                                             : 2 * (a.rounds ? a.rounds : 6),
	    .budget_s = a.budget,
	    .jobs = (int)sysconf(_SC_NPROCESSORS_ONLN)};

	for (int i = 0; i < a.nopt; i++)
		thr |= !strcmp(a.opt_seen[i], "--threshold");
	cont.cmp = (struct xo_perf_compare_opts){.threshold = thr ? a.threshold : 0.10,
	                                         .alpha = a.alpha,
	                                         .filter = a.filter,
	                                         .json = a.json_out,
	                                         .metric = a.metric};
	cont.metrics = a.metrics;
	if (a.metrics == XO_PERF_METRIC_INSTRUCTIONS && !thr)
		cont.cmp.threshold = XO_PERF_COUNT_THRESHOLD;
	if (!strcmp(sub, "bisect")) {
		bool found;

		cont.cmp.json = false;
		if (xo_perf_bisect(a.good, a.bad, &cont, a.json_out, stdout, stderr, &found))
			return fail(sub);
		return 0;
	}
	st = xo_perf_continuous(a.pos[0], a.npos > 1 ? a.pos[1] : NULL, &cont, stdout,
	                        stderr, &failed);
	if (st)
		return fail(sub);
	return failed ? 1 : 0;
}

/* The commands on an open store; st and *failed as they ended, or the exit
 * code of a usage error in *usage (then db is closed). */
static enum xo_status run_on_store(const char *sub, const struct perf_args *ap,
                                   struct xo_perfdb *db, const struct xo_perf_compare_opts *cop,
                                   bool *failed, int *usage)
{
	struct perf_args a = *ap;
	const struct xo_perf_compare_opts co = *cop;
	enum xo_status st;

	if (!strcmp(sub, "record")) {
		struct xo_perf_record_opts ro = {.filter = a.filter,
		                                 .devices = a.ndevices ? a.devices : NULL,
		                                 .ndevices = a.ndevices,
		                                 .quick = a.quick,
		                                 .samples = a.samples,
		                                 .model_path = a.model,
		                                 .progress = !a.no_progress && isatty(2),
		                                 .no_probe = a.no_probe,
		                                 .metrics = a.metrics};
		int64_t id = 0;

		st = xo_perf_record(db, &ro, stdout, &id);
	} else if (!strcmp(sub, "compare")) {
		st = xo_perf_compare(db, a.pos[0], a.npos > 1 ? a.pos[1] : NULL, &co, stdout,
		                     failed);
	} else if (!strcmp(sub, "detect")) {
		st = xo_perf_detect(db, &co, stdout, failed);
	} else if (!strcmp(sub, "report")) {
		char scripts[4096];

		snprintf(scripts, sizeof(scripts), "%s/scripts", xo_perf_source_dir());
		st = xo_perf_report_testbed(db, a.out, scripts, a.model, co.testbed, stdout);
	} else if (!strcmp(sub, "advise")) {
		st = xo_perf_advise(db, a.model, a.json_out, stdout);
	} else if (!strcmp(sub, "import")) {
		st = xo_perf_import(db, a.peer, a.json, stdout);
	} else if (!strcmp(sub, "import-db")) {
		char name[1024];

		xo_sql_redact(a.db, name, sizeof(name));
		st = xo_perfdb_import_db(db, a.pos[0], name, stdout);
	} else {
		int64_t id;

		if (!xo_cli_parse_i64(a.pos[0], INT64_MIN, INT64_MAX, &id)) {
			*usage = xo_usage_error("perf", "%s: '%s' is not a change id", sub, a.pos[0]);
			return XO_OK;
		}
		st = xo_perf_change_set(db, id,
		                        !strcmp(sub, "accept")   ? "accepted"
		                        : !strcmp(sub, "ignore") ? "ignored"
		                                                 : "fixed",
		                        stdout);
	}
	return st;
}

int xo_cmd_perf(int argc, char **argv)
{
	struct perf_args a = {.db = "perf.sqlite", .threshold = 0.05, .alpha = 0.002};
	struct xo_perf_compare_opts co;
	struct xo_perfdb *db = NULL;
	const char *sub;
	enum xo_status st;
	bool failed = false;
	int rc, usage = 0;

	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(sub, "record") && strcmp(sub, "compare") && strcmp(sub, "detect") &&
	    strcmp(sub, "accept") && strcmp(sub, "ignore") && strcmp(sub, "fix") &&
	    strcmp(sub, "report") && strcmp(sub, "advise") && strcmp(sub, "import") &&
	    strcmp(sub, "continuous") && strcmp(sub, "bisect") && strcmp(sub, "import-db"))
		return xo_usage_error("perf", "unknown command '%s' (try `xo perf --help`)", sub);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		}
	if ((rc = parse(sub, argc, argv, &a)))
		return rc;
	if ((rc = check_options(sub, &a)))
		return rc;

	if ((rc = check_arity(sub, &a)))
		return rc;
	if ((a.count_child || a.list) && !strcmp(sub, "record"))
		return record_nostore(sub, &a);
	if (!strcmp(sub, "continuous") || !strcmp(sub, "bisect"))
		return run_continuous(sub, &a);

	/* only record and import create a store: a mistyped --db for the
	 * readers would otherwise leave an empty perf.sqlite behind and report
	 * "no run" instead of the real problem */
	if (strcmp(sub, "record") && strcmp(sub, "import") && strcmp(sub, "import-db") &&
	    !xo_sql_is_uri(a.db) &&
	    access(a.db, F_OK)) {
		char name[1024];

		/* a garbled connection string lands here: its password is
		 * redacted, its control bytes escaped */
		xo_sql_redact(a.db, name, sizeof(name));
		xo_error(XO_EINVAL, "xo perf %s: %s: no such database (check --db, or record first)",
		         sub, name);
		fprintf(stderr, "%s\n", xo_last_error());
		return 2;
	}
	/* readers open the store read-only: a store in a read-only directory or
	 * mount can be compared, reported and advised on */
	if (!strcmp(sub, "compare") || !strcmp(sub, "report") || !strcmp(sub, "advise")
	        ? xo_perfdb_open_readonly(a.db, &db)
	        : xo_perfdb_open(a.db, &db))
		return fail(sub);
	co = (struct xo_perf_compare_opts){.threshold = a.threshold,
	                                   .alpha = a.alpha,
	                                   .filter = a.filter,
	                                   .json = a.json_out,
	                                   .metric = a.metric};
	if (a.metrics == XO_PERF_METRIC_INSTRUCTIONS && !threshold_given(&a))
		co.threshold = XO_PERF_COUNT_THRESHOLD; /* a deterministic metric: 0.5% */
	if (a.testbed && xo_perfdb_testbed_find(db, a.testbed, &co.testbed)) {
		xo_perfdb_close(db);
		return fail(sub);
	}
	st = run_on_store(sub, &a, db, &co, &failed, &usage);
	if (usage) {
		xo_perfdb_close(db);
		return usage;
	}
	xo_perfdb_close(db);
	if (st)
		return fail(sub);
	return failed ? 1 : 0;
}
