/*
 * h5read.c - reading an untrusted Keras file (.keras, .h5, .weights.h5) in
 * an isolated child process (docs/model.md, "Untrusted model files").
 *
 * libhdf5 crashes and hangs on some corrupt files, and an HDF5 file can make
 * it read other files (external raw storage, external links, virtual
 * datasets). No check made before handing bytes to libhdf5 catches all of
 * that, so libhdf5 and libzip only ever see the file inside a forked child:
 *
 *  - the child sets its limits first (address space, CPU time, no file
 *    growth, few descriptors, no core dump, no HDF5 filter plugins), reads
 *    the file into memory and opens it as an in-memory image, so libhdf5
 *    opens no path at all;
 *  - it walks every link, refusing soft, external and user-defined links,
 *    datasets with external storage or a virtual layout, attributes of the
 *    wrong shape or class, and anything over a limit, by name;
 *  - it streams back records (tag, 64-bit length, payload): the config
 *    text, each group's layer_names / weight_names, each dataset's path,
 *    shape and (when asked) float32 values, then an end record; or one
 *    refusal record with its reason;
 *  - the parent reads the stream under a wall-clock deadline, bounds every
 *    length by what was received and by the limits below before allocating,
 *    and reaps the child. A crash, kill, timeout, missing end record or
 *    malformed stream is one line naming the file.
 *
 * The result, struct xo_h5_file, holds only checked data; keras.c maps it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "model_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define XO_H5_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XO_H5_ASAN 1
#endif
#endif

/* The limits (docs/model.md lists them). */
#define FILE_MAX (INT64_C(1) << 30)   /* bytes of a .h5 file or archive member */
#define CONFIG_MAX (16 << 20)         /* bytes of a config text */
#define NAME_MAX_H5 1024              /* bytes of a link path or listed name */
#define LINKS_MAX 100000              /* links in one file */
#define STRINGS_MAX 100000            /* names in one attribute */
#define MEM_BUDGET (INT64_C(4) << 30) /* child address space beyond its start */
#define STREAM_MAX ((XO_MODEL_PARAMS_MAX + (INT64_C(64) << 20)) * 4)
#define DEADLINE_S 60                 /* wall clock and CPU seconds */

enum { REC_CONFIG = 'C', REC_TRAINING = 'T', REC_GROUP = 'G', REC_NAMES = 'N',
       REC_DATASET = 'D', REC_REFUSE = 'E', REC_END = 'Z' };
/* DS_ALIAS: the same HDF5 object as an earlier dataset (a hard link): its
 * values are not stored twice, so not counted twice as stored */
/* what the child reads: the config alone, also dataset shapes, also values */
enum { WANT_CONFIG, WANT_SHAPES, WANT_DATA };
enum { DS_FLOAT = 1, DS_DATA = 2, DS_STORED = 4, DS_ALIAS = 8 };
/* open addressing over object addresses (+ 1; 0 is empty), at most half
 * full with LINKS_MAX datasets */
#define SEEN_SIZE (1 << 18)
_Static_assert(SEEN_SIZE >= 2 * LINKS_MAX, "seen set below half load");
/* the weights member of a .keras: its floats at the limit plus room for
 * HDF5's own structures */
#define WEIGHTS_MEMBER_MAX (XO_MODEL_PARAMS_MAX * 4 + (INT64_C(64) << 20))

/* ---- child: writing records ---------------------------------------------- */

struct child {
	int fd;
	bool data;       /* send dataset values */
	hid_t root;
	long links;
	int64_t floats;  /* float elements of distinct datasets so far */
	int64_t visited; /* float elements of every dataset (links included) */
	uint64_t *seen;  /* addresses of the datasets so far (SEEN_SIZE) */
	char err[512];   /* the refusal, when set */
};

static bool put(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

static bool rec_head(int fd, char tag, uint64_t len)
{
	return put(fd, &tag, 1) && put(fd, &len, sizeof(len));
}

static bool rec(int fd, char tag, const void *p, uint64_t len)
{
	return rec_head(fd, tag, len) && put(fd, p, (size_t)len);
}

/* A name from the file, printable: bytes outside 0x20..0x7e become '?'. */
static void printable(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; src && src[i] && i + 1 < cap; i++)
		dst[i] = (unsigned char)src[i] < 0x20 || (unsigned char)src[i] > 0x7e ? '?' : src[i];
	dst[i] = '\0';
}

static int refuse(struct child *c, const char *fmt, const char *name)
{
	char n[160];

	printable(n, sizeof(n), name);
	snprintf(c->err, sizeof(c->err), fmt, n);
	return -1;
}

/* ---- child: checked attributes ------------------------------------------- */

/*
 * A string attribute: class string, fixed or variable length, ASCII or
 * UTF-8, of a scalar or one-element dataspace (want_list false), or a
 * rank-1 list of at most STRINGS_MAX names (want_list true; an empty array
 * of any class, which Keras writes for a layer without weights, is an empty
 * list). Each string is bounded by cap bytes. *out: n malloc'd strings.
 * Returns n, 0 when absent (*present false), or -1 with c->err set.
 */
static long attr_strings(struct child *c, hid_t obj, const char *name, bool want_list,
                         size_t cap, char ***out, bool *present)
{
	hid_t a = -1, t = -1, s = -1, mt = -1;
	hssize_t n = -1;
	long got = -1;
	char **v = NULL;
	int rank;

	*out = NULL;
	*present = false;
	if (H5Aexists(obj, name) <= 0)
		return 0;
	*present = true;
	if ((a = H5Aopen(obj, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 ||
	    (s = H5Aget_space(a)) < 0) {
		refuse(c, "attribute %s cannot be read", name);
		goto out_close_attr;
	}
	rank = H5Sget_simple_extent_ndims(s);
	n = H5Sget_simple_extent_npoints(s);
	if (want_list && n == 0 && rank == 1) {
		got = 0;
		goto out_close_attr;
	}
	if (H5Tget_class(t) != H5T_STRING) {
		refuse(c, "attribute %s is not a string", name);
		goto out_close_attr;
	}
	if (rank < 0 || rank > 1 || n < 1 || (!want_list && n != 1) || n > STRINGS_MAX) {
		refuse(c, want_list ? "attribute %s is not a list of names"
		                    : "attribute %s is not one string (wrong dataspace)",
		       name);
		goto out_close_attr;
	}
	v = calloc((size_t)n, sizeof(*v));
	if (!v || (mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_cset(mt, H5Tget_cset(t)) < 0) {
		refuse(c, "attribute %s: out of memory", name);
		goto out_close_attr;
	}
	if (H5Tis_variable_str(t) > 0) {
		if (H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Aread(a, mt, v) < 0) {
			refuse(c, "attribute %s cannot be read", name);
			memset(v, 0, (size_t)n * sizeof(*v));
			goto out_close_attr;
		}
		got = (long)n;
		for (long i = 0; i < got; i++) {
			char *h = v[i];

			if (h && strlen(h) > cap && got >= 0) {
				refuse(c, "attribute %s holds a string over the size limit", name);
				got = -1;
			}
			v[i] = got >= 0 ? strdup(h ? h : "") : NULL;
			if (got >= 0 && !v[i]) {
				refuse(c, "attribute %s: out of memory", name);
				got = -1;
			}
			if (h)
				H5free_memory(h);
		}
		if (got < 0)
			for (long i = 0; i < (long)n; i++)
				free(v[i]);
	} else {
		size_t sz = H5Tget_size(t);
		char *flat;

		if (!sz || sz > cap) {
			refuse(c, "attribute %s holds a string over the size limit", name);
			goto out_close_attr;
		}
		flat = calloc((size_t)n, sz);
		if (!flat || H5Tset_size(mt, sz) < 0 || H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0 ||
		    H5Aread(a, mt, flat) < 0) {
			refuse(c, "attribute %s cannot be read", name);
			free(flat);
			goto out_close_attr;
		}
		got = (long)n;
		/* NUL padding ends a fixed-length string; a byte other than NUL
		 * after it is not padding: the string is not text (h5py reads
		 * those bytes and Keras's json.loads refuses them), as a
		 * .keras config.json with a NUL in it is refused */
		for (long i = 0; i < got; i++) {
			const char *e = flat + (size_t)i * sz;
			size_t len = strnlen(e, sz);

			for (size_t j = len; j < sz && got >= 0; j++)
				if (e[j])
					got = -2;
		}
		for (long i = 0; i < got; i++)
			if (!(v[i] = strndup(flat + (size_t)i * sz, sz)))
				got = -1;
		free(flat);
		if (got == -2)
			refuse(c, "attribute %s is not text (a NUL byte)", name);
		else if (got < 0)
			refuse(c, "attribute %s: out of memory", name);
		if (got < 0) {
			got = -1;
			for (long i = 0; i < (long)n; i++)
				free(v[i]);
		}
	}
out_close_attr:
	if (got < 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	if (mt >= 0)
		H5Tclose(mt);
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
	if (a >= 0)
		H5Aclose(a);
	return got;
}

static void strings_drop(char **v, long n)
{
	for (long i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The list attributes a group may carry, as REC_NAMES records. */
static int group_names(struct child *c, hid_t g)
{
	static const char *const which[] = {"layer_names", "weight_names"};

	for (int k = 0; k < 2; k++) {
		char **v;
		bool present;
		long n = attr_strings(c, g, which[k], true, NAME_MAX_H5, &v, &present);
		uint64_t len = 1 + 4;
		bool ok = true;

		if (n < 0)
			return -1;
		if (!present)
			continue;
		for (long i = 0; i < n; i++)
			len += 4 + strlen(v[i]);
		uint8_t kk = (uint8_t)k;
		uint32_t nn = (uint32_t)n;

		ok = rec_head(c->fd, REC_NAMES, len) && put(c->fd, &kk, 1) && put(c->fd, &nn, 4);
		for (long i = 0; ok && i < n; i++) {
			uint32_t l = (uint32_t)strlen(v[i]);

			ok = put(c->fd, &l, 4) && put(c->fd, v[i], l);
		}
		strings_drop(v, n);
		if (!ok)
			return refuse(c, "%s", "cannot write to the parent");
	}
	return 0;
}

/* ---- child: the walk ------------------------------------------------------ */

/* Whether dataset d is an object seen before (a hard link to it); else
 * remembers it. An object without an address counts as new. */
static bool seen_add(struct child *c, hid_t d)
{
	H5O_info_t oi;
	uint64_t key, k;

	if (H5Oget_info2(d, &oi, H5O_INFO_BASIC) < 0)
		return false;
	if (!c->seen && !(c->seen = calloc(SEEN_SIZE, sizeof(*c->seen))))
		return false;
	key = (uint64_t)oi.addr + 1;
	for (k = (key * 0x9e3779b97f4a7c15u) >> 46; c->seen[k]; k = (k + 1) & (SEEN_SIZE - 1))
		if (c->seen[k] == key)
			return true;
	c->seen[k] = key;
	return false;
}

/* Whether every chunk of chunked dataset d (rank nd, shape dims) was
 * written. libhdf5 calls such a dataset only partly allocated whenever its
 * chunks' bytes differ from its values' (compressed chunks are smaller; edge
 * chunks past the shape and checksums are larger), so the chunks are
 * counted instead: as many as the chunk shape needs to cover the shape. A
 * chunk never written has no storage and reads as fill values, which no
 * Keras file holds. space: d's dataspace (libhdf5 1.10 takes no H5S_ALL
 * there). */
static bool chunks_all_written(hid_t d, hid_t dcpl, hid_t space, int nd, const hsize_t *dims)
{
	hsize_t cdims[H5S_MAX_RANK], have = 0, need = 1;

	if (nd < 0 || H5Pget_chunk(dcpl, nd, cdims) != nd || H5Dget_num_chunks(d, space, &have) < 0)
		return false;
	for (int i = 0; i < nd; i++) {
		if (cdims[i] == 0)
			return false;
		need *= (dims[i] + cdims[i] - 1) / cdims[i]; /* at most the values: no overflow */
	}
	return have == need;
}

/* NULL when libhdf5 decodes every filter in dcpl's pipeline (deflate,
 * shuffle, fletcher32, scale-offset, n-bit: built in; no plugin is ever
 * loaded here), else words naming the first that it cannot. */
static const char *filters_undecodable(hid_t dcpl)
{
	static char why[96]; /* the child is one thread */
	int nf = H5Pget_nfilters(dcpl);

	for (int i = 0; i < nf; i++) {
		unsigned int flags, cd[8];
		size_t ncd = 8;
		char fname[48] = "";
		H5Z_filter_t id =
		    H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof(fname), fname, NULL);

		if (id < 0 || H5Zfilter_avail(id) <= 0) {
			for (char *p = fname; *p; p++) /* the file's own words: no '%', printable */
				if (*p < ' ' || *p > '~' || *p == '%')
					*p = '?';
			snprintf(why, sizeof(why), "HDF5 filter %d%s%s%s", (int)id,
			         *fname ? " (" : "", fname, *fname ? ")" : "");
			return why;
		}
	}
	return NULL;
}

static int child_dataset(struct child *c, const char *name)
{
	hid_t d, dcpl = -1, s = -1, t = -1;
	hsize_t dims[H5S_MAX_RANK];
	uint64_t d64[XO_MAX_DIMS];
	int nd = -1, rc = 0;
	uint8_t flags = 0;
	int64_t n = 1;
	float *buf = NULL;
	H5D_space_status_t ss = H5D_SPACE_STATUS_ERROR;

	if ((d = H5Dopen2(c->root, name, H5P_DEFAULT)) < 0)
		return refuse(c, "dataset '%s' cannot be opened", name);
	if ((dcpl = H5Dget_create_plist(d)) < 0) {
		rc = refuse(c, "dataset '%s' cannot be read", name);
		goto out_close_dataset;
	}
	if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
		rc = refuse(c, "dataset '%s' is a virtual dataset (data from other files): refused",
		            name);
		goto out_close_dataset;
	}
	if (H5Pget_external_count(dcpl) != 0) {
		rc = refuse(c, "dataset '%s' has external raw-data storage (data in another file): "
		               "refused", name);
		goto out_close_dataset;
	}
	if ((s = H5Dget_space(d)) < 0 || (t = H5Dget_type(d)) < 0 ||
	    (nd = H5Sget_simple_extent_ndims(s)) < 0 || nd > H5S_MAX_RANK ||
	    H5Sget_simple_extent_dims(s, dims, NULL) < 0) {
		rc = refuse(c, "dataset '%s' has an unreadable shape", name);
		goto out_close_dataset;
	}
	for (int i = 0; i < nd; i++) {
		if (dims[i] > (hsize_t)XO_MODEL_PARAMS_MAX || n * (int64_t)dims[i] > XO_MODEL_PARAMS_MAX) {
			rc = refuse(c, "dataset '%s' holds more values than the limit", name);
			goto out_close_dataset;
		}
		n *= (int64_t)dims[i];
	}
	if (H5Tget_class(t) == H5T_FLOAT && nd <= XO_MAX_DIMS)
		flags |= DS_FLOAT;
	if (n == 0 || (H5Pget_layout(dcpl) == H5D_CHUNKED
	                   ? chunks_all_written(d, dcpl, s, nd, dims)
	                   : H5Dget_space_status(d, &ss) >= 0 && ss == H5D_SPACE_STATUS_ALLOCATED))
		flags |= DS_STORED;
	if ((flags & DS_FLOAT) && (flags & DS_STORED) && c->data) {
		const char *why = filters_undecodable(dcpl);

		if (why) {
			char fmt[192];

			snprintf(fmt, sizeof(fmt),
			         "dataset '%%s' is stored with %s, which this build cannot decode",
			         why);
			rc = refuse(c, fmt, name);
			goto out_close_dataset;
		}
	}
	if ((flags & DS_FLOAT) && (flags & DS_STORED)) {
		if (c->visited + n > XO_MODEL_PARAMS_MAX) {
			rc = refuse(c, "%s: the file holds more float values than the limit", name);
			goto out_close_dataset;
		}
		c->visited += n;
		if (seen_add(c, d))
			flags |= DS_ALIAS;
		else
			c->floats += n;
		if (c->data) {
			buf = malloc((size_t)(n ? n : 1) * sizeof(*buf));
			if (!buf) {
				rc = refuse(c, "dataset '%s': out of memory", name);
				goto out_close_dataset;
			}
			if (n && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
				rc = refuse(c, "dataset '%s' cannot be read", name);
				goto out_close_dataset;
			}
			flags |= DS_DATA;
		}
	}
	{
		uint32_t pl = (uint32_t)strlen(name);
		uint8_t k = (uint8_t)(nd <= XO_MAX_DIMS ? nd : 0);
		uint64_t len = 4 + pl + 2 + 8 * (uint64_t)k +
		               ((flags & DS_DATA) ? (uint64_t)n * sizeof(float) : 0);

		for (int i = 0; i < k; i++)
			d64[i] = dims[i];
		if (!rec_head(c->fd, REC_DATASET, len) || !put(c->fd, &pl, 4) ||
		    !put(c->fd, name, pl) || !put(c->fd, &flags, 1) || !put(c->fd, &k, 1) ||
		    !put(c->fd, d64, 8 * (size_t)k) ||
		    ((flags & DS_DATA) && !put(c->fd, buf, (size_t)n * sizeof(float))))
			rc = refuse(c, "%s", "cannot write to the parent");
	}
out_close_dataset:
	free(buf);
	if (t >= 0)
		H5Tclose(t);
	if (s >= 0)
		H5Sclose(s);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	H5Dclose(d);
	return rc;
}

static herr_t child_link(hid_t loc, const char *name, const H5L_info_t *info, void *op)
{
	struct child *c = op;
	hid_t o;
	H5I_type_t ty;
	int rc = 0;

	(void)loc;
	if (++c->links > LINKS_MAX)
		return refuse(c, "%s", "more links than the limit");
	if (strlen(name) >= NAME_MAX_H5)
		return refuse(c, "%s", "a link path over the size limit");
	if (info->type == H5L_TYPE_SOFT)
		return refuse(c, "'%s' is a soft link: refused", name);
	if (info->type == H5L_TYPE_EXTERNAL)
		return refuse(c, "'%s' is an external link (to another file): refused", name);
	if (info->type != H5L_TYPE_HARD)
		return refuse(c, "'%s' is a user-defined link: refused", name);
	if ((o = H5Oopen(c->root, name, H5P_DEFAULT)) < 0)
		return refuse(c, "'%s' cannot be opened", name);
	ty = H5Iget_type(o);
	if (ty == H5I_GROUP) {
		uint32_t pl = (uint32_t)strlen(name);

		if (!rec(c->fd, REC_GROUP, name, pl))
			rc = refuse(c, "%s", "cannot write to the parent");
		else
			rc = group_names(c, o);
	} else if (ty == H5I_DATASET) {
		rc = child_dataset(c, name);
	}
	H5Oclose(o);
	return rc;
}

/* The root's attributes (model_config, training_config) and lists, then
 * every link below it. */
static int child_walk(struct child *c, bool want_config)
{
	static const char *const cfg[] = {"model_config", "training_config"};

	if (!rec(c->fd, REC_GROUP, "", 0))
		return refuse(c, "%s", "cannot write to the parent");
	for (int k = 0; want_config && k < 2; k++) {
		char **v;
		bool present;
		long n = attr_strings(c, c->root, cfg[k], false, CONFIG_MAX, &v, &present);
		bool ok;

		if (n < 0)
			return -1;
		if (!present)
			continue;
		ok = rec(c->fd, k ? REC_TRAINING : REC_CONFIG, v[0], strlen(v[0]));
		strings_drop(v, n);
		if (!ok)
			return refuse(c, "%s", "cannot write to the parent");
	}
	if (group_names(c, c->root))
		return -1;
	if (H5Lvisit(c->root, H5_INDEX_NAME, H5_ITER_INC, child_link, c) < 0 && !c->err[0])
		return refuse(c, "%s", "its links cannot be read (a corrupt HDF5 file)");
	return c->err[0] ? -1 : 0;
}

/* ---- child: the file ----------------------------------------------------- */

/* The bytes of the file open at fd (checked regular and at most FILE_MAX
 * by the parent). */
static char *child_slurp(struct child *c, int fd, size_t *len)
{
	struct stat sb;
	char *buf = NULL;
	size_t got = 0;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > FILE_MAX) {
		refuse(c, "%s", "not a regular file of at most 1 GiB");
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && got < (size_t)sb.st_size) {
		ssize_t r = pread(fd, buf + got, (size_t)sb.st_size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (!buf || got != (size_t)sb.st_size) {
		refuse(c, "%s", buf ? "read failed" : "out of memory");
		free(buf);
		return NULL;
	}
	*len = got;
	return buf;
}

/* The name of a zip compression method (APPNOTE.TXT 4.4.5). */
static const char *zip_method_name(zip_uint16_t m)
{
	switch (m) {
	case ZIP_CM_STORE: return "stored";
	case ZIP_CM_DEFLATE: return "deflate";
	case ZIP_CM_DEFLATE64: return "deflate64";
	case ZIP_CM_BZIP2: return "bzip2";
	case ZIP_CM_LZMA: return "LZMA";
	case 93: return "zstd"; /* ZIP_CM_ZSTD of newer libzip */
	case ZIP_CM_XZ: return "xz";
	case ZIP_CM_PPMD: return "PPMd";
	default: return "unknown";
	}
}

/* A member of the archive, at most cap bytes (NUL added). */
static char *child_member(struct child *c, zip_t *z, const char *name, int64_t cap, size_t *len)
{
	zip_stat_t zs;
	zip_file_t *zf;
	char *buf, extra;

	if (zip_stat(z, name, 0, &zs) || !(zs.valid & ZIP_STAT_SIZE)) {
		refuse(c, "not a Keras archive: no %s in it", name);
		return NULL;
	}
	if (zs.size > (uint64_t)cap) {
		refuse(c, "its %s is larger than the limit", name);
		return NULL;
	}
	/* An encrypted member (general-purpose flag bit 0, or bit 6's strong
	 * encryption): Python's zipfile, and so Keras, wants a password for
	 * it and refuses the file; so does xo, by name, before libzip's own
	 * refusal reads as a corrupt archive. */
	if ((zs.valid & ZIP_STAT_ENCRYPTION_METHOD) && zs.encryption_method != ZIP_EM_NONE) {
		snprintf(c->err, sizeof(c->err),
		         "member '%s' is encrypted (zip flag bit 0): Keras (Python's zipfile) "
		         "refuses it without a password; save the model unencrypted",
		         name);
		return NULL;
	}
	/* Python's zipfile (and so Keras) reads stored, deflated, bzip2, LZMA
	 * and (Python 3.14 on) zstd members, no other method: one it cannot
	 * read is refused here too, even where this libzip could */
	if ((zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method != ZIP_CM_STORE &&
	    zs.comp_method != ZIP_CM_DEFLATE && zs.comp_method != ZIP_CM_BZIP2 &&
	    zs.comp_method != ZIP_CM_LZMA && zs.comp_method != 93) {
		snprintf(c->err, sizeof(c->err),
		         "member '%s' uses compression method %u (%s), which Keras (Python's "
		         "zipfile) cannot read; re-save it stored or deflated",
		         name, (unsigned)zs.comp_method, zip_method_name(zs.comp_method));
		return NULL;
	}
	/* ... and some that libzip may be built without (bzip2, LZMA, zstd):
	 * said as such, not as a corrupt archive */
	if ((zs.valid & ZIP_STAT_COMP_METHOD) &&
	    !zip_compression_method_supported(zs.comp_method, 0)) {
		snprintf(c->err, sizeof(c->err),
		         "member '%s' uses compression method %u (%s), which this build cannot "
		         "read; re-save it stored or deflated",
		         name, (unsigned)zs.comp_method, zip_method_name(zs.comp_method));
		return NULL;
	}
	buf = malloc((size_t)zs.size + 1);
	zf = buf ? zip_fopen(z, name, 0) : NULL;
	if (!zf || zip_fread(zf, buf, zs.size) != (zip_int64_t)zs.size) {
		refuse(c, buf ? "its %s cannot be read (a corrupt archive)" : "%s: out of memory",
		       name);
		free(buf);
		buf = NULL;
	} else if (zip_fread(zf, &extra, 1) != 0) {
		/* libzip checks a member's CRC-32 only when a read reaches its
		 * end: this read does (0), or fails on a bad CRC (-1), or finds
		 * more bytes than the directory says. Keras writes the members
		 * stored, so the CRC is the only check of the weights' bytes:
		 * without it a flipped bit gives wrong answers where Python's
		 * zipfile, and so Keras, refuses the file. */
		refuse(c, "its %s fails its CRC-32 check (a corrupt archive)", name);
		free(buf);
		buf = NULL;
	} else {
		buf[zs.size] = '\0';
		*len = (size_t)zs.size;
	}
	if (zf && zip_fclose(zf) && buf) {
		refuse(c, "its %s cannot be read (a corrupt archive)", name);
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The HDF5 image, walked; the image is the core driver's own copy. */
static int child_h5(struct child *c, char *img, size_t len, bool want_config)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	int rc;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	c->root = -1;
	/* the name is never opened: the core driver reads the image */
	if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
	    H5Pset_file_image(fapl, img, len) >= 0)
		c->root = H5Fopen("xo-untrusted-image.h5", H5F_ACC_RDONLY, fapl);
	if (fapl >= 0)
		H5Pclose(fapl);
	free(img);
	if (c->root < 0)
		return refuse(c, "%s", "not a readable HDF5 file");
	rc = child_walk(c, want_config);
	H5Fclose(c->root);
	return rc;
}

/* Every descriptor but 0-2, out and in closed. */
static void child_fds(int out, int in)
{
	int lo = out < in ? out : in, hi = out < in ? in : out;

	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0U, 0);
}

/* The architecture a seccomp filter checks its syscall numbers against
 * (the numbers are the build's own); 0: no filter is installed. */
#if defined(__x86_64__)
#define XO_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define XO_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#define XO_AUDIT_ARCH 0
#endif
/* One denied syscall in the filter below: EPERM for its number. */
#define DENY(nr)                                                                   \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                           \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/*
 * What a memory bug in libhdf5 or libzip that a hostile file reaches could
 * do with the child beyond reading memory and writing the pipe: run a
 * program, start a process, reach the network, change the file system (the
 * rlimits already stop new descriptors once the archive is read, and file
 * growth). A deny-list (EPERM), so that every call the libraries make to
 * read, map and free memory stays as it is; no_new_privs first, which an
 * unprivileged filter needs. A syscall another architecture lacks is left
 * out by its own #ifdef; on an architecture without XO_AUDIT_ARCH no filter
 * is installed (the rlimits and the fork still hold).
 */
static void child_seccomp(void)
{
#if XO_AUDIT_ARCH
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, XO_AUDIT_ARCH, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    DENY(__NR_execve), DENY(__NR_execveat), DENY(__NR_clone),
#ifdef __NR_clone3
	    DENY(__NR_clone3),
#endif
#ifdef __NR_fork
	    DENY(__NR_fork), DENY(__NR_vfork),
#endif
	    DENY(__NR_socket), DENY(__NR_socketpair), DENY(__NR_connect),
	    DENY(__NR_ptrace), DENY(__NR_process_vm_writev),
	    DENY(__NR_unlinkat), DENY(__NR_renameat), DENY(__NR_mkdirat),
	    DENY(__NR_symlinkat), DENY(__NR_linkat), DENY(__NR_fchmodat),
	    DENY(__NR_fchownat), DENY(__NR_fchmod), DENY(__NR_fchown),
	    DENY(__NR_truncate), DENY(__NR_ftruncate),
#ifdef __NR_renameat2
	    DENY(__NR_renameat2),
#endif
#ifdef __NR_unlink
	    DENY(__NR_unlink), DENY(__NR_rename), DENY(__NR_rmdir), DENY(__NR_mkdir),
	    DENY(__NR_symlink), DENY(__NR_link), DENY(__NR_chmod), DENY(__NR_chown),
	    DENY(__NR_lchown), DENY(__NR_creat),
#endif
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};

	if (!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

static void child_limits(int deadline)
{
	struct rlimit r;
	long vm = 0, pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld", &pages) == 1)
			vm = pages * sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	r.rlim_cur = r.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &r);
	setrlimit(RLIMIT_FSIZE, &r);
	/* SIGXCPU at the deadline; the hard limit a second later, so that the
	 * kernel's SIGKILL (which would read as a crash) never comes first */
	r.rlim_cur = (rlim_t)deadline;
	r.rlim_max = (rlim_t)deadline + 1;
	setrlimit(RLIMIT_CPU, &r);
	r.rlim_cur = r.rlim_max = 16; /* libzip dups the archive's; 0 once it is read */
	setrlimit(RLIMIT_NOFILE, &r);
#ifndef XO_H5_ASAN
	/* ASan reserves terabytes of shadow address space: no limit there */
	if (vm > 0) {
		r.rlim_cur = r.rlim_max = (rlim_t)(vm + MEM_BUDGET);
		setrlimit(RLIMIT_AS, &r);
	}
#else
	(void)vm;
#endif
	prctl(PR_SET_DUMPABLE, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	H5PLset_loading_state(0);
	child_seccomp();
}

/* The child's whole life: never returns. */
static void child_main(int fd, int in, enum xo_keras_kind kind, int want, int deadline)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGPIPE, SIGXFSZ};
	struct child c = {.fd = fd, .data = want == WANT_DATA};
	const char *fault = getenv("XO_HDF5_READER_FAULT");
	char *img = NULL;
	size_t len = 0;
	int rc = -1;

	/* a crash is the parent's to report: no handler (a sanitizer's or a
	 * fuzzer's) writes reports or files from here */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	child_fds(fd, in);
	child_limits(deadline);
	/* test-only hook (docs/model.md): prove a crash, a hang and garbage are
	 * contained */
	if (fault && !strcmp(fault, "segv"))
		raise(SIGSEGV);
	if (fault && !strcmp(fault, "spin"))
		for (volatile int spin = 1; spin;)
			;
	if (fault && !strcmp(fault, "exec")) {
		/* what a hijacked child would try first: run a program; the
		 * filter answers EPERM, and the refusal says so */
		char *const argv[] = {(char *)"true", NULL};

		execv("/bin/true", argv);
		refuse(&c, "cannot run a program from the reader: %s", strerror(errno));
		rec(fd, REC_REFUSE, c.err, strlen(c.err));
		_exit(3);
	}
	if (fault && !strcmp(fault, "garbage")) {
		static const char junk[] = "C\xff\xff\xff\xff\xff\xff\xff\x7fjunk";

		put(fd, junk, sizeof(junk));
		_exit(0);
	}
	if (kind == XO_KERAS_ZIP) {
		int err = 0;
		zip_t *z = zip_fdopen(in, ZIP_CHECKCONS, &err);
		char *cfg;

		if (!z) {
			/* libzip's reason: a damaged archive, or one it refuses as
			 * inconsistent (a member name twice, which Python's zipfile
			 * reads as the last one's) */
			zip_error_t ze;

			zip_error_init_with_code(&ze, err);
			if (err == ZIP_ER_EXISTS)
				refuse(&c, "%s", "not a readable .keras archive (a member name "
				                 "appears twice; Keras's zipfile would read the "
				                 "last one)");
			else
				refuse(&c, "not a readable .keras archive (a corrupt zip: %s)",
				       zip_error_strerror(&ze));
			zip_error_fini(&ze);
		} else {
			cfg = child_member(&c, z, "config.json", CONFIG_MAX, &len);
			if (cfg && strlen(cfg) != len)
				refuse(&c, "%s", "its config.json is not text (a NUL byte)");
			else if (cfg && !rec(fd, REC_CONFIG, cfg, len))
				refuse(&c, "%s", "cannot write to the parent");
			if (cfg && !c.err[0] && want == WANT_CONFIG)
				rc = 0;
			else if (cfg && !c.err[0])
				img = child_member(&c, z, "model.weights.h5", WEIGHTS_MEMBER_MAX, &len);
			free(cfg);
			zip_discard(z);
		}
	} else {
		img = child_slurp(&c, in, &len);
	}
	if (img) {
		/* libzip is done: from here no new descriptor at all */
		struct rlimit r = {0, 0};

		setrlimit(RLIMIT_NOFILE, &r);
		rc = child_h5(&c, img, len, kind != XO_KERAS_ZIP);
	}
	if (rc || c.err[0]) {
		rec(fd, REC_REFUSE, c.err, strlen(c.err));
		_exit(3);
	}
	rec(fd, REC_END, "", 0);
	_exit(0);
}

/* ---- parent --------------------------------------------------------------- */

static int deadline_s(void)
{
	const char *e = getenv("XO_HDF5_DEADLINE_S");
	long v = e ? strtol(e, NULL, 10) : 0;

	return v >= 1 && v <= 3600 ? (int)v : DEADLINE_S;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The child's whole stream into *buf under the deadline: 0, 1 (timed out)
 * or -1 (read error, over STREAM_MAX, out of memory). */
static int stream_read(int fd, double end, char **buf, size_t *len)
{
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double left = end - now_s();
		int r;

		if (left <= 0)
			return 1;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			continue;
		if (cap - *len < 65536) {
			size_t nc = cap ? cap * 2 : 1 << 16;
			char *nb;

			if (nc > (size_t)STREAM_MAX + 65536 || !(nb = realloc(*buf, nc)))
				return -1;
			*buf = nb;
			cap = nc;
		}
		ssize_t got = read(fd, *buf + *len, cap - *len);

		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -1;
		if (!got)
			return 0;
		*len += (size_t)got;
	}
}

/* ---- parent: decoding --------------------------------------------------- */

struct cursor {
	const char *p;
	size_t left;
};

static bool take(struct cursor *c, void *dst, size_t n)
{
	if (c->left < n)
		return false;
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static char *take_str(struct cursor *c, size_t n, size_t cap)
{
	char *s;

	if (n > cap || c->left < n || !(s = malloc(n + 1)))
		return NULL;
	take(c, s, n);
	s[n] = '\0';
	if (strlen(s) != n) { /* a NUL inside: not text */
		free(s);
		return NULL;
	}
	return s;
}

static bool decode_names(struct xo_h5_file *f, struct cursor *c)
{
	struct xo_h5_group *g = f->ng ? &f->groups[f->ng - 1] : NULL;
	uint8_t k;
	uint32_t n;
	char ***dst;
	int *cnt;

	if (!g || !take(c, &k, 1) || k > 1 || !take(c, &n, 4) || n > STRINGS_MAX ||
	    (size_t)n * 4 > c->left)
		return false;
	dst = k ? &g->weight_names : &g->layer_names;
	cnt = k ? &g->n_weight_names : &g->n_layer_names;
	if (*cnt >= 0 || !(*dst = calloc(n ? n : 1, sizeof(char *))))
		return false;
	*cnt = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t l;

		if (!take(c, &l, 4) || !((*dst)[i] = take_str(c, l, NAME_MAX_H5)))
			return false;
		*cnt = (int)i + 1;
	}
	return c->left == 0;
}

static bool decode_dataset(struct xo_h5_file *f, struct cursor *c)
{
	struct xo_h5_dataset *d;
	uint32_t pl;
	uint8_t nd;
	int64_t n = 1;

	if (f->nd % 64 == 0) {
		void *nv = realloc(f->datasets, ((size_t)f->nd + 64) * sizeof(*f->datasets));

		if (!nv)
			return false;
		f->datasets = nv;
	}
	d = &f->datasets[f->nd];
	memset(d, 0, sizeof(*d));
	if (!take(c, &pl, 4) || !(d->path = take_str(c, pl, NAME_MAX_H5)))
		return false;
	f->nd++;
	if (!take(c, &d->flags, 1) || !take(c, &nd, 1) || nd > XO_MAX_DIMS)
		return false;
	d->ndim = nd;
	for (int i = 0; i < nd; i++) {
		uint64_t v;

		if (!take(c, &v, 8) || v > (uint64_t)XO_MODEL_PARAMS_MAX ||
		    n * (int64_t)v > XO_MODEL_PARAMS_MAX)
			return false;
		d->dim[i] = (int64_t)v;
		n *= (int64_t)v;
	}
	d->count = n;
	if ((d->flags & DS_FLOAT) && (d->flags & DS_STORED) && !(d->flags & DS_ALIAS)) {
		if (f->floats + n > XO_MODEL_PARAMS_MAX)
			return false;
		f->floats += n;
	}
	if (d->flags & DS_DATA) {
		if (!(d->flags & DS_FLOAT) || c->left != (size_t)n * sizeof(float) ||
		    !(d->data = malloc((size_t)(n ? n : 1) * sizeof(float))))
			return false;
		take(c, d->data, (size_t)n * sizeof(float));
	}
	return c->left == 0;
}

/* The records of buf into f; false: malformed (f holds what was decoded). */
static bool decode(struct xo_h5_file *f, const char *buf, size_t len, bool *ended, char **why)
{
	struct cursor all = {buf, len};

	*ended = false;
	while (all.left && !*ended) {
		char tag;
		uint64_t rl;
		struct cursor c;
		bool ok = true;

		if (!take(&all, &tag, 1) || !take(&all, &rl, 8) || rl > all.left)
			return false;
		c.p = all.p;
		c.left = (size_t)rl;
		take(&all, NULL, (size_t)rl);
		switch (tag) {
		case REC_CONFIG:
		case REC_TRAINING: {
			char **dst = tag == REC_CONFIG ? &f->config : &f->training;

			ok = !*dst && (*dst = take_str(&c, c.left, CONFIG_MAX));
			if (ok && tag == REC_CONFIG)
				f->config_len = rl;
			break;
		}
		case REC_GROUP:
			if (f->ng % 64 == 0) {
				void *nv = realloc(f->groups, ((size_t)f->ng + 64) * sizeof(*f->groups));

				if (!nv)
					return false;
				f->groups = nv;
			}
			memset(&f->groups[f->ng], 0, sizeof(f->groups[0]));
			f->groups[f->ng].n_layer_names = f->groups[f->ng].n_weight_names = -1;
			ok = (f->groups[f->ng].path = take_str(&c, c.left, NAME_MAX_H5)) != NULL;
			f->ng += ok;
			break;
		case REC_NAMES:
			ok = decode_names(f, &c);
			break;
		case REC_DATASET:
			ok = decode_dataset(f, &c);
			break;
		case REC_REFUSE:
			free(*why);
			*why = take_str(&c, c.left < 400 ? c.left : 400, 400);
			ok = *why != NULL;
			break;
		case REC_END:
			*ended = true;
			break;
		default:
			ok = false;
		}
		if (!ok)
			return false;
	}
	return !all.left;
}

void xo_h5_file_free(struct xo_h5_file *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->ng; i++) {
		struct xo_h5_group *g = &f->groups[i];

		for (int k = 0; k < g->n_layer_names; k++)
			free(g->layer_names[k]);
		for (int k = 0; k < g->n_weight_names; k++)
			free(g->weight_names[k]);
		free(g->layer_names);
		free(g->weight_names);
		free(g->path);
	}
	for (int i = 0; i < f->nd; i++) {
		free(f->datasets[i].path);
		free(f->datasets[i].data);
	}
	free(f->groups);
	free(f->datasets);
	free(f->config);
	free(f->training);
	memset(f, 0, sizeof(*f));
}

/* The child's end as one line: a refusal it sent, or how it died. */
static enum xo_status verdict(const char *path, int status, int rd, bool timed_out, int deadline,
                              bool decoded, bool ended, const char *why)
{
	if (timed_out)
		return xo_error(XO_EFORMAT, "%s: HDF5 reader timed out after %d s (a hanging or "
		                            "hostile file)", path, deadline);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
		return xo_error(XO_EFORMAT, "%s: HDF5 reader timed out after %d s of CPU time (a "
		                            "hanging or hostile file)", path, deadline);
	if (WIFSIGNALED(status))
		return xo_error(XO_EFORMAT, "%s: HDF5 reader crashed (signal %d) on this file", path,
		                WTERMSIG(status));
	if (rd < 0)
		return xo_error(XO_EFORMAT, "%s: HDF5 reader sent more than the limit or could not "
		                            "be read", path);
	if (decoded && why)
		return xo_error(XO_EFORMAT, "%s: %s", path, why);
	if (!decoded || !ended || !WIFEXITED(status) || WEXITSTATUS(status))
		return xo_error(XO_EFORMAT, "%s: HDF5 reader failed (exit %d, %s)", path,
		                WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		                decoded ? "no end record" : "malformed reply");
	return XO_OK;
}

static int group_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xo_h5_group *)a)->path, ((const struct xo_h5_group *)b)->path);
}

static int dataset_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xo_h5_dataset *)a)->path,
	              ((const struct xo_h5_dataset *)b)->path);
}

static enum xo_status h5_read(const char *path, int want, struct xo_h5_file *out)
{
	enum xo_keras_kind kind = xo_keras_sniff(path);
	int fds[2], status = 0, deadline = deadline_s(), rd, in;
	struct stat sb;
	char *buf = NULL, *why = NULL;
	size_t len = 0;
	bool timed_out = false, decoded = false, ended = false;
	enum xo_status st;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (kind == XO_KERAS_NONE)
		return xo_error(XO_EFORMAT, "%s: not a Keras .keras or HDF5 file", path);
	/* opened here, read only by the child: a FIFO or device swapped in
	 * after the sniff is refused, never read */
	in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return xo_error(XO_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(in, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > FILE_MAX) {
		close(in);
		return xo_error(XO_EFORMAT, "%s: not a regular file of at most 1 GiB", path);
	}
	if (pipe2(fds, O_CLOEXEC)) {
		close(in);
		return xo_error(XO_EIO, "%s: cannot start the HDF5 reader: %s", path,
		                strerror(errno));
	}
	/* the library's own start-up (no file involved) done once here, not
	 * again in every child: most of a child's cost */
	H5open();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(in);
		close(fds[0]);
		close(fds[1]);
		return xo_error(XO_EIO, "%s: cannot start the HDF5 reader: %s", path,
		                strerror(errno));
	}
	if (!pid) {
		close(fds[0]);
		child_main(fds[1], in, kind, want, deadline);
	}
	close(in);
	close(fds[1]);
	rd = stream_read(fds[0], now_s() + deadline, &buf, &len);
	close(fds[0]);
	if (rd == 1) {
		timed_out = true;
		kill(pid, SIGKILL);
	} else if (rd < 0) {
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rd == 0)
		decoded = decode(out, buf, len, &ended, &why);
	free(buf);
	st = verdict(path, status, rd, timed_out, deadline, decoded, ended, why);
	free(why);
	if (st) {
		xo_h5_file_free(out);
	} else {
		/* sorted by path: every lookup below is a binary search, so
		 * loading stays O(n log n) in the layers and links */
		if (out->ng)
			qsort(out->groups, (size_t)out->ng, sizeof(*out->groups), group_cmp);
		if (out->nd)
			qsort(out->datasets, (size_t)out->nd, sizeof(*out->datasets), dataset_cmp);
	}
	return st;
}

const struct xo_h5_group *xo_h5_group_find(const struct xo_h5_file *f, const char *path)
{
	struct xo_h5_group key = {.path = (char *)path};

	return f->ng ? bsearch(&key, f->groups, (size_t)f->ng, sizeof(key), group_cmp) : NULL;
}

const struct xo_h5_dataset *xo_h5_dataset_find(const struct xo_h5_file *f, const char *path)
{
	struct xo_h5_dataset key = {.path = (char *)path};

	return f->nd ? bsearch(&key, f->datasets, (size_t)f->nd, sizeof(key), dataset_cmp) : NULL;
}

int xo_h5_group_children(const struct xo_h5_file *f, const char *path)
{
	size_t n = strlen(path);
	int count = 0;

	for (int i = 0; i < f->ng + f->nd; i++) {
		const char *p = i < f->ng ? f->groups[i].path : f->datasets[i - f->ng].path;

		if (!strncmp(p, path, n) && p[n] == '/' && !strchr(p + n + 1, '/'))
			count++;
	}
	return count;
}

enum xo_status xo_h5_read(const char *path, bool data, struct xo_h5_file *out)
{
	return h5_read(path, data ? WANT_DATA : WANT_SHAPES, out);
}

enum xo_status xo_h5_read_config(const char *path, struct xo_h5_file *out)
{
	return h5_read(path, WANT_CONFIG, out);
}
