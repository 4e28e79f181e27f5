/*
 * ident.c - what a measurement belongs to: the commit (the one the binary
 * was built from, cli/git_version.cmake, with parent, subject and date from
 * git; git HEAD of the source tree when the build's is unknown) and the testbed (CPU,
 * build, OpenBLAS core type, OpenCL platform/device/driver, environment).
 * A BLAS that detected the CPU wrongly is a 4-5x slowdown; the core type it
 * chose is recorded so that `xo perf compare` shows it.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "perfdb.h"
#include "perfdb_build.h"
#include "proc.h"

/* OpenBLAS's own introspection (declared here to avoid cblas.h). */
char *openblas_get_config(void);
char *openblas_get_corename(void);

const char *xo_perf_source_dir(void)
{
	const char *env = getenv("XO_SOURCE_DIR");

	return env && *env ? env : XO_BUILD_SOURCE_DIR;
}

bool xo_perf_version_known(const char *v)
{
	return v && v[0] && strcmp(v, XO_PERF_VERSION_UNKNOWN) != 0;
}

bool xo_perf_same_code(const char *a, const char *b)
{
	return xo_perf_version_known(a) && xo_perf_version_known(b) && !strcmp(a, b);
}

/*
 * The manifest is "unit<TAB>version" lines (perfdb/versions.cmake), found as
 * xo.versions in the directory of the running binary (/proc/self/exe: the
 * build's cli/ or the install's bin/). A version is taken only when it is 16
 * hex digits; anything else is unknown.
 */
void xo_perf_unit_version(const char *unit, char *out, size_t n)
{
	char exe[4096], line[256];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	FILE *f;

	snprintf(out, n, "%s", XO_PERF_VERSION_UNKNOWN);
	if (len <= 0)
		return;
	exe[len] = '\0';
	if (!(slash = strrchr(exe, '/')) || (size_t)(slash - exe) + sizeof("/xo.versions") > sizeof(exe))
		return;
	strcpy(slash, "/xo.versions");
	if (!(f = fopen(exe, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		size_t k;

		if (line[0] == '#' || !tab)
			continue;
		*tab++ = '\0';
		if (strcmp(line, unit))
			continue;
		for (k = 0; k < 16 && isxdigit((unsigned char)tab[k]); k++)
			;
		if (k == 16 && (tab[16] == '\n' || tab[16] == '\0'))
			snprintf(out, n, "%.16s", tab);
		break;
	}
	fclose(f);
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/*
 * Runs `git -C dir ARGS...` (an argument vector: no shell sees dir) and puts
 * the first line of its output into out. false when git fails or prints
 * nothing. When h is not NULL, all output is hashed (up to 64 MiB: a larger
 * diff makes the hash "unknown", not a wrong one).
 */
static bool git_line(const char *dir, const char *const *args, char *out, size_t size,
                     uint64_t *h)
{
	const char *argv[16] = {"git", "-C", dir};
	struct xo_proc p = {.argv = argv, .capture = true, .capture_max = (size_t)64 << 20};
	char *text = NULL;
	size_t len = 0, n = 3;
	int code;

	for (; *args && n + 1 < sizeof(argv) / sizeof(argv[0]); args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (out && size)
		out[0] = '\0';
	if (xo_proc_run(&p, &code, &text, &len)) {
		xo_error_clear();
		return false;
	}
	if (out && size) {
		snprintf(out, size, "%.*s", (int)strcspn(text, "\n"), text);
		chomp(out);
	}
	if (h)
		*h = xo_perf_fnv(*h, text, len);
	free(text);
	return code == 0 && len > 0;
}

#define GIT(...) ((const char *const[]){__VA_ARGS__, NULL})

void xo_perf_commit_probe(const char *dir, struct xo_perf_commit *c)
{
	char buf[512], status[512];
	uint64_t h = XO_FNV_OFFSET;

	memset(c, 0, sizeof(*c));
	if (!git_line(dir, GIT("rev-parse", "--verify", "HEAD"), c->sha, sizeof(c->sha), NULL) ||
	    strlen(c->sha) < 40) {
		snprintf(c->sha, sizeof(c->sha), "nogit");
		snprintf(c->subject, sizeof(c->subject), "(not a git work tree: %s)", dir);
		return;
	}
	if (git_line(dir, GIT("log", "-1", "--format=%P", "HEAD"), buf, sizeof(buf), NULL)) {
		buf[strcspn(buf, " ")] = '\0';
		snprintf(c->parent, sizeof(c->parent), "%s", buf);
	}
	git_line(dir, GIT("log", "-1", "--format=%s", "HEAD"), c->subject, sizeof(c->subject), NULL);
	if (git_line(dir, GIT("log", "-1", "--format=%ct", "HEAD"), buf, sizeof(buf), NULL))
		c->date = strtoll(buf, NULL, 10);
	/* tracked changes only: build outputs and scratch files do not count */
	if (git_line(dir, GIT("status", "--porcelain", "--untracked-files=no"), status, sizeof(status),
	             NULL)) {
		c->dirty = true;
		if (!git_line(dir, GIT("diff", "HEAD"), NULL, 0, &h))
			h = 0; /* unknown: every such tree shares one identity */
		snprintf(c->dirty_hash, sizeof(c->dirty_hash), "%016" PRIx64, h);
	}
}

static char build_sha[48], build_dirty_hash[24];

void xo_perf_build_commit_set(const char *sha, const char *dirty_hash)
{
	size_t n = sha ? strspn(sha, "0123456789abcdef") : 0;

	build_sha[0] = build_dirty_hash[0] = '\0';
	if (n != 40 || sha[40])
		return;
	snprintf(build_sha, sizeof(build_sha), "%s", sha);
	snprintf(build_dirty_hash, sizeof(build_dirty_hash), "%s", dirty_hash ? dirty_hash : "");
}

void xo_perf_commit_of_build(struct xo_perf_commit *c)
{
	const char *dir = xo_perf_source_dir();
	char buf[512];

	if (!build_sha[0]) {
		xo_perf_commit_probe(dir, c);
		fprintf(stderr,
		        "xo perf: this binary's build commit is unknown (built outside git): the "
		        "run is stored under the source tree's commit %.12s (%s)\n",
		        c->sha, dir);
		return;
	}
	memset(c, 0, sizeof(*c));
	snprintf(c->sha, sizeof(c->sha), "%s", build_sha);
	c->dirty = build_dirty_hash[0] != '\0';
	snprintf(c->dirty_hash, sizeof(c->dirty_hash), "%s", build_dirty_hash);
	/* "--end-of-options": the sha is data, never an option */
	if (git_line(dir, GIT("log", "-1", "--format=%P", "--end-of-options", build_sha), buf,
	             sizeof(buf), NULL)) {
		buf[strcspn(buf, " ")] = '\0';
		snprintf(c->parent, sizeof(c->parent), "%s", buf);
	}
	git_line(dir, GIT("log", "-1", "--format=%s", "--end-of-options", build_sha), c->subject,
	         sizeof(c->subject), NULL);
	if (git_line(dir, GIT("log", "-1", "--format=%ct", "--end-of-options", build_sha), buf,
	             sizeof(buf), NULL))
		c->date = strtoll(buf, NULL, 10);
}

static void read_cpu_model(char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':');

			if (v) {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				chomp(v);
				snprintf(out, size, "%s", v);
			}
			break;
		}
	}
	fclose(f);
}

/* Copies the value after "key" in desc (up to ',', ';', '|', ')' or a newline). */
static void desc_field(const char *desc, const char *key, char *out, size_t size)
{
	const char *p = strstr(desc, key);
	size_t n;

	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ' || *p == ':' || *p == '=')
		p++;
	n = strcspn(p, ",;|)\n");
	while (n && p[n - 1] == ' ')
		n--;
	snprintf(out, size, "%.*s", (int)n, p);
}

/* Field i of a " | "-separated description, trimmed. */
static void desc_part(const char *desc, int i, char *out, size_t size)
{
	const char *p = desc;
	size_t n;

	for (; i > 0 && p; i--) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	if (!p)
		return;
	while (*p == ' ')
		p++;
	n = strcspn(p, "|\n");
	while (n && p[n - 1] == ' ')
		n--;
	snprintf(out, size, "%.*s", (int)n, p);
}

/*
 * The cl backend describes itself as "platform name | device name | driver D |
 * device version | platform VERSION, extras | tune ..."; the testbed keeps
 * platform (name and version), device (name and version) and driver.
 */
static void parse_cl(const char *d, struct xo_perf_testbed *t)
{
	char name[128] = "", ver[128] = "", dev[128] = "", dver[128] = "";

	desc_part(d, 0, name, sizeof(name));
	desc_field(d, "platform", ver, sizeof(ver));
	desc_part(d, 1, dev, sizeof(dev));
	desc_part(d, 3, dver, sizeof(dver));
	desc_field(d, "driver", t->cl_driver, sizeof(t->cl_driver));
	snprintf(t->cl_platform, sizeof(t->cl_platform), "%s%s%s", name, ver[0] ? " / " : "", ver);
	snprintf(t->cl_device, sizeof(t->cl_device), "%s%s%s", dev, dver[0] ? " / " : "", dver);
}

void xo_perf_testbed_probe(struct xo_perf_testbed *t)
{
	static const char *const env_vars[] = {
	    "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",   "OMP_NUM_THREADS",
	    "GOTO_NUM_THREADS",  "XO_CL_DEVICE",           "XO_THREADS",
	    "POCL_DEVICES",      "POCL_MAX_PTHREAD_COUNT",
	};
	struct utsname u;
	char *cfg;

	memset(t, 0, sizeof(*t));
	if (gethostname(t->hostname, sizeof(t->hostname) - 1))
		snprintf(t->hostname, sizeof(t->hostname), "unknown");
	read_cpu_model(t->cpu_model, sizeof(t->cpu_model));
	t->cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (!uname(&u))
		snprintf(t->os, sizeof(t->os), "%s %s %s", u.sysname, u.release, u.machine);
	snprintf(t->compiler, sizeof(t->compiler), "%s", XO_BUILD_COMPILER);
	snprintf(t->cflags, sizeof(t->cflags), "%s", XO_BUILD_FLAGS);

	snprintf(t->blas_name, sizeof(t->blas_name), "OpenBLAS");
	cfg = openblas_get_config();
	if (cfg) {
		snprintf(t->blas_config, sizeof(t->blas_config), "%s", cfg);
		if (!strncmp(cfg, "OpenBLAS ", 9)) {
			size_t n = strcspn(cfg + 9, " ");

			snprintf(t->blas_version, sizeof(t->blas_version), "%.*s", (int)n, cfg + 9);
		}
	}
	cfg = openblas_get_corename();
	snprintf(t->blas_coretype, sizeof(t->blas_coretype), "%s", cfg ? cfg : "unknown");

	for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
		const char *v = getenv(env_vars[i]);
		size_t n = strlen(t->env);

		if (v)
			snprintf(t->env + n, sizeof(t->env) - n, "%s%s=%s", n ? " " : "",
			         env_vars[i], v);
	}

	/* every device's own description; the cl one carries platform, device
	 * and driver */
	for (int i = 0; i < xo_backend_count(); i++) {
		const char *kind = xo_backend_kind(i);
		struct xo_backend *be = NULL;
		size_t n = strlen(t->describe);
		const char *d;

		if (xo_backend_open(kind, &be) != XO_OK) {
			snprintf(t->describe + n, sizeof(t->describe) - n, "%s: unavailable (%s)\n",
			         kind, xo_last_error());
			xo_error_clear();
			continue;
		}
		d = xo_backend_describe(be);
		snprintf(t->describe + n, sizeof(t->describe) - n, "%s: %s\n", kind, d);
		if (!strcmp(kind, "cl")) {
			parse_cl(d, t);
		}
		xo_backend_close(be);
	}
	chomp(t->describe);
	for (char *p = t->describe; *p; p++)
		if (!isprint((unsigned char)*p) && *p != '\n')
			*p = ' ';
}

bool xo_perf_cl_on_cpu(const char *d)
{
	return d && (strstr(d, "PoCL") || strstr(d, "Portable Computing Language") ||
	             strstr(d, "pthread") || strstr(d, "type CPU"));
}
