/*
 * npy.c - NumPy .npy files (format 1.0, 2.0 and 3.0), little-endian float32
 * in C order: how weights, inputs and predictions move between crossover,
 * NumPy and Keras. A model input or label file may also be float64 or
 * big-endian (converted to float32 while it is read, as Keras casts its
 * float64 inputs) or integers. Anything else (another dtype, Fortran order,
 * truncated data, a header that is absurd or too large, a bad magic) is
 * rejected with a one-line reason naming the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xo.h"

/* Largest header accepted. NumPy itself refuses headers above 10000 bytes
 * when loading untrusted files; 64 KiB leaves room and still bounds memory. */
#define NPY_MAX_HEADER 65536

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static bool host_is_little_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 1;
}

static void swap32(void *buf, int64_t count)
{
	unsigned char *b = buf;

	for (int64_t i = 0; i < count; i++, b += 4) {
		unsigned char t0 = b[0], t1 = b[1];

		b[0] = b[3];
		b[1] = b[2];
		b[2] = t1;
		b[3] = t0;
	}
}

/* Skips spaces in the header dictionary. */
static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* Finds the value of 'key' (quoted either way) in the header dict; NULL when absent. */
static const char *dict_value(const char *h, const char *key)
{
	size_t klen = strlen(key);

	for (const char *s = h; (s = strpbrk(s, "'\"")) != NULL; s++) {
		char q = *s;

		if (!strncmp(s + 1, key, klen) && s[1 + klen] == q) {
			s = skip_ws(s + 2 + klen);
			if (*s != ':')
				return NULL;
			return skip_ws(s + 1);
		}
	}
	return NULL;
}

/* Whether 'key' is a key of the header dict twice: NumPy takes the last,
 * a reader taking the first would read another array, so refused. */
static bool dict_dup(const char *h, const char *key)
{
	const char *v = dict_value(h, key);

	return v && dict_value(v, key);
}

/* The descr value v is the quoted dtype d (either quote). */
static bool descr_is(const char *v, const char *d)
{
	size_t n = strlen(d);

	return (v[0] == '\'' || v[0] == '"') && !strncmp(v + 1, d, n) && v[1 + n] == v[0];
}

/* The end of the value at v: a quoted string, a parenthesized tuple of
 * integers, or a word (True, False); NULL when it is none of them. */
static const char *value_end(const char *v)
{
	if (*v == '\'' || *v == '"') {
		const char *q = strchr(v + 1, *v);

		return q ? q + 1 : NULL;
	}
	if (*v == '(') {
		const char *c = strchr(v, ')');

		return c && c == v + 1 + strspn(v + 1, "0123456789, \t") ? c + 1 : NULL;
	}
	while ((*v >= 'A' && *v <= 'Z') || (*v >= 'a' && *v <= 'z'))
		v++;
	return v;
}

/* Whether the header is a dict NumPy reads: '{', then exactly the keys
 * descr, fortran_order and shape (quoted, each a value), separated by
 * commas, an optional trailing one, '}', and only spaces and the newline
 * after it. NumPy refuses another key and an unterminated dict; a reader
 * that skipped them would take an array NumPy calls no array. */
static bool dict_shape_ok(const char *h)
{
	int keys = 0;

	h = skip_ws(h);
	if (*h++ != '{')
		return false;
	for (h = skip_ws(h); *h != '}'; h = skip_ws(h)) {
		static const char *const names[] = {"descr", "fortran_order", "shape"};
		const char *end;
		bool known = false;

		if (*h != '\'' && *h != '"')
			return false;
		for (int i = 0; i < 3; i++) {
			size_t n = strlen(names[i]);

			known |= !strncmp(h + 1, names[i], n) && h[1 + n] == *h;
		}
		if (!known || !(end = value_end(h)))
			return false;
		h = skip_ws(end);
		if (*h++ != ':')
			return false;
		h = skip_ws(h);
		if (!(end = value_end(h)) || end == h)
			return false;
		keys++;
		h = skip_ws(end);
		if (*h == ',')
			h++;
		else if (*h != '}')
			return false;
	}
	return keys == 3 && !*skip_ws(h + 1);
}

/* What npy_read takes beside '<f4': NPY_INTS the integers NumPy writes,
 * signed and unsigned of 1, 2, 4 and 8 bytes in either byte order
 * (out->is_int, out->itemsize, *sign, *big for '>'), bool '|b1' (is_int
 * and is_bool, itemsize 1), and the floats '<f8', '>f4' and '>f8'
 * (itemsize 4 or 8, *big for '>'). */
enum npy_kinds { NPY_FLOATS, NPY_INTS };

/* NumPy's integer descrs without their byte-order character, and bool */
static const struct {
	const char *code, *name;
	int itemsize;
	bool sign;
} npy_ints[] = {
    {"i1", "int8", 1, true},   {"u1", "uint8", 1, false},  {"i2", "int16", 2, true},
    {"u2", "uint16", 2, false}, {"i4", "int32", 4, true},  {"u4", "uint32", 4, false},
    {"i8", "int64", 8, true},  {"u8", "uint64", 8, false}, {"b1", "bool", 1, false},
};

/* The descr value v is an integer or bool dtype: its row of npy_ints, *big
 * for '>' ('|' and '<' little; one-byte types take any order mark). */
static int npy_int_kind(const char *v, bool *big)
{
	char q = *v;

	/* v[1] first: strchr finds a NUL too, and the string may end there */
	if ((q != '\'' && q != '"') || !v[1] || !strchr("<>|", v[1]))
		return -1;
	for (int k = 0; k < (int)(sizeof(npy_ints) / sizeof(npy_ints[0])); k++)
		if (!strncmp(v + 2, npy_ints[k].code, 2) && v[4] == q &&
		    (v[1] != '|' || npy_ints[k].itemsize == 1)) {
			*big = v[1] == '>';
			return k;
		}
	return -1;
}

static enum xo_status parse_header(const char *path, const char *h, struct xo_npy *out,
                                   enum npy_kinds ints, bool *big, bool *sign)
{
	int k;

	const char *v;
	int64_t count = 1;

	for (int i = 0; i < 3; i++) {
		static const char *const keys[] = {"descr", "fortran_order", "shape"};

		if (dict_dup(h, keys[i]))
			return xo_error(XO_EFORMAT, "%s: npy header has the key '%s' twice", path,
			                keys[i]);
	}
	v = dict_value(h, "descr");
	if (!v)
		return xo_error(XO_EFORMAT, "%s: npy header has no 'descr'", path);
	out->is_int = false;
	out->is_bool = false;
	out->itemsize = 4;
	out->dtype = "float32";
	*big = false;
	*sign = true;
	if (ints && (descr_is(v, "<f8") || descr_is(v, ">f8") || descr_is(v, ">f4"))) {
		*big = v[1] == '>';
		out->itemsize = v[3] == '8' ? 8 : 4;
		out->dtype = v[3] == '8' ? "float64" : "float32";
	} else if (ints && (k = npy_int_kind(v, big)) >= 0) {
		out->is_int = true;
		out->is_bool = !strcmp(npy_ints[k].name, "bool");
		out->itemsize = npy_ints[k].itemsize;
		out->dtype = npy_ints[k].name;
		*sign = npy_ints[k].sign;
	} else if (!descr_is(v, "<f4")) {
		char got[16] = "";
		size_t n = strcspn(v, ",}");

		snprintf(got, sizeof(got), "%.*s", (int)(n < 15 ? n : 15), v);
		return xo_error(XO_EFORMAT, "%s: dtype %s is not supported (need %s)", path, got,
		                ints ? "float32 '<f4', float64 '<f8', an integer ('<i4', '|u1', "
		                       "'<i8', ...) or bool '|b1'"
		                     : "little-endian float32 '<f4'");
	}
	v = dict_value(h, "fortran_order");
	if (!v)
		return xo_error(XO_EFORMAT, "%s: npy header has no 'fortran_order'", path);
	if (!strncmp(v, "True", 4))
		return xo_error(XO_EFORMAT,
		                "%s: fortran_order=True is not supported (save a C-order array)",
		                path);
	if (strncmp(v, "False", 5))
		return xo_error(XO_EFORMAT, "%s: bad fortran_order value in npy header", path);
	v = dict_value(h, "shape");
	if (!v || *v != '(')
		return xo_error(XO_EFORMAT, "%s: npy header has no 'shape' tuple", path);
	v = skip_ws(v + 1);
	out->ndim = 0;
	while (*v != ')') {
		char *end;
		long long d;

		if (*v < '0' || *v > '9')
			return xo_error(XO_EFORMAT, "%s: bad shape in npy header", path);
		errno = 0;
		d = strtoll(v, &end, 10);
		if (errno || d < 0)
			return xo_error(XO_EFORMAT, "%s: shape dimension out of range", path);
		if (out->ndim == XO_MAX_DIMS)
			return xo_error(XO_EFORMAT, "%s: more than %d dimensions", path,
			                XO_MAX_DIMS);
		if (!xo_mul_ok(count, d, &count) || count > INT64_MAX / 8)
			return xo_error(XO_EFORMAT, "%s: shape size overflows", path);
		out->dim[out->ndim++] = d;
		v = skip_ws(end);
		if (*v == ',')
			v = skip_ws(v + 1);
		else if (*v != ')')
			return xo_error(XO_EFORMAT, "%s: bad shape in npy header", path);
	}
	/* the keys' values read: the whole dict checked last, so that a
	 * missing or bad key is named as such */
	if (!dict_shape_ok(h))
		return xo_error(XO_EFORMAT,
		                "%s: npy header is not the dict NumPy writes ({'descr': ..., "
		                "'fortran_order': ..., 'shape': (...)}: another key, or no closing "
		                "brace)",
		                path);
	out->count = count;
	return XO_OK;
}

/* Values converted per read: a float64 file's only buffer beside the
 * float32 result (8 KiB, on the stack). */
#define NPY_CHUNK 1024

/* The count float values of the file at f (itemsize 4 or 8, big-endian when
 * big) into data as float32: a float64 rounded to nearest (C's conversion
 * under the default rounding mode, as NumPy's astype), read and converted a
 * chunk at a time so no float64 copy of the whole array is made. A finite
 * float64 that rounds to an infinity (beyond float32's range) is refused
 * naming the file and its first such index; NaN and +-Inf stay as they are
 * (the callers' checks refuse them where they must). */
static enum xo_status read_floats(const char *path, FILE *f, int itemsize, bool big,
                                  float *data, int64_t count)
{
	unsigned char buf[NPY_CHUNK * 8];
	bool swap = big == host_is_little_endian();

	for (int64_t done = 0; done < count;) {
		size_t n = count - done < NPY_CHUNK ? (size_t)(count - done) : NPY_CHUNK;

		if (fread(itemsize == 4 ? (void *)(data + done) : buf, (size_t)itemsize, n, f) != n)
			return xo_error(XO_EIO, "%s: read failed", path);
		if (itemsize == 4) {
			if (swap)
				swap32(data + done, (int64_t)n);
			done += (int64_t)n;
			continue;
		}
		for (size_t i = 0; i < n; i++, done++) {
			unsigned char *b = buf + 8 * i;
			uint64_t u = 0;
			double d;

			for (int k = 0; k < 8; k++)
				u = u << 8 | b[big ? k : 7 - k];
			memcpy(&d, &u, sizeof(d));
			data[done] = (float)d;
			if (isinf(data[done]) && isfinite(d))
				return xo_error(XO_EFORMAT,
				                "%s: float64 value %g at index %" PRId64
				                " is beyond float32's range (it would become %sInf)",
				                path, d, done, d < 0 ? "-" : "+");
		}
	}
	return XO_OK;
}

/* The count integers of the file at f (itemsize 1, 2, 4 or 8, big-endian
 * when big, signed when sign) into out->ints as int64, whatever the host
 * order: NumPy's bool 0 or 1 (nonzero true), the signed types sign
 * extended, the unsigned zero extended; a uint64 beyond int64's range is
 * refused naming its index. Read a chunk at a time: the int64 result is
 * the only full-size buffer. */
static enum xo_status read_ints(const char *path, FILE *f, struct xo_npy *out, bool big,
                                bool sign)
{
	unsigned char buf[NPY_CHUNK * 8];
	int size = out->itemsize;

	out->ints = malloc(out->count ? (size_t)out->count * 8 : 8);
	if (!out->ints)
		return xo_error(XO_ENOMEM, "%s: out of memory for %" PRId64 " values", path,
		                out->count);
	for (int64_t done = 0; done < out->count;) {
		size_t n = out->count - done < NPY_CHUNK ? (size_t)(out->count - done) : NPY_CHUNK;

		if (fread(buf, (size_t)size, n, f) != n)
			return xo_error(XO_EIO, "%s: read failed", path);
		for (size_t i = 0; i < n; i++, done++) {
			const unsigned char *b = buf + (size_t)size * i;
			uint64_t u = 0;

			for (int k = 0; k < size; k++)
				u = u << 8 | b[big ? k : size - 1 - k];
			if (out->is_bool)
				u = u != 0;
			else if (sign && size < 8 && (u >> (8 * size - 1)) & 1)
				u |= ~UINT64_C(0) << (8 * size); /* sign extended */
			if (!sign && u > (uint64_t)INT64_MAX)
				return xo_error(XO_EFORMAT,
				                "%s: uint64 value %" PRIu64 " at index %" PRId64
				                " is beyond int64's range",
				                path, u, done);
			out->ints[done] = (int64_t)u;
		}
	}
	return XO_OK;
}

static enum xo_status npy_read(const char *path, struct xo_npy *out, enum npy_kinds ints)
{
	unsigned char pre[12];
	char *header = NULL;
	uint32_t hlen;
	long pos, end;
	int64_t bytes;
	struct stat sb;
	FILE *f;
	bool big = false, sign = true;
	enum xo_status st;

	if (!path || !out)
		return xo_error(XO_EINVAL, "xo_npy_read: NULL argument");
	memset(out, 0, sizeof(*out));
	if ((st = xo_input_open(path, "a .npy file", &f, &sb)))
		return st;
	if (fread(pre, 1, 10, f) != 10) {
		st = xo_error(XO_EFORMAT, "%s: too short for a .npy file", path);
		goto out_close;
	}
	if (memcmp(pre, npy_magic, sizeof(npy_magic))) {
		st = xo_error(XO_EFORMAT, "%s: not a .npy file (bad magic)", path);
		goto out_close;
	}
	if (pre[6] == 1 && pre[7] == 0) {
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
	} else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			st = xo_error(XO_EFORMAT, "%s: truncated .npy header", path);
			goto out_close;
		}
		hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
		       (uint32_t)pre[11] << 24;
	} else {
		st = xo_error(XO_EFORMAT, "%s: unsupported .npy format version %d.%d", path, pre[6],
		              pre[7]);
		goto out_close;
	}
	if (hlen == 0 || hlen > NPY_MAX_HEADER) {
		st = xo_error(XO_EFORMAT,
		              "%s: .npy header length %" PRIu32 " is absurd (limit %d bytes)", path,
		              hlen, NPY_MAX_HEADER);
		goto out_close;
	}
	header = malloc((size_t)hlen + 1);
	if (!header) {
		st = xo_error(XO_ENOMEM, "%s: out of memory", path);
		goto out_close;
	}
	if (fread(header, 1, hlen, f) != hlen) {
		st = xo_error(XO_EFORMAT, "%s: truncated .npy header", path);
		goto out_free_header;
	}
	header[hlen] = '\0';
	if (strlen(header) != hlen || skip_ws(header)[0] != '{') {
		st = xo_error(XO_EFORMAT, "%s: .npy header is not a dictionary", path);
		goto out_free_header;
	}
	st = parse_header(path, header, out, ints, &big, &sign);
	if (st)
		goto out_free_header;
	/* The data must be exactly count values: no less, no more (count is
	 * at most INT64_MAX / 8, so count * itemsize cannot overflow). */
	bytes = out->count * out->itemsize;
	pos = ftell(f);
	if (pos < 0 || fseek(f, 0, SEEK_END) || (end = ftell(f)) < 0 || fseek(f, pos, SEEK_SET)) {
		st = xo_error(XO_EIO, "%s: cannot seek: %s", path, strerror(errno));
		goto out_free_header;
	}
	if ((int64_t)(end - pos) < bytes) {
		st = xo_error(XO_EFORMAT, "%s: truncated data: %ld bytes for %" PRId64 " values",
		              path, end - pos, out->count);
		goto out_free_header;
	}
	if ((int64_t)(end - pos) > bytes && !out->count) {
		/* a 0 in the shape: an empty array, said as such (the data after
		 * it is not "extra" to an array that was meant to hold some) */
		st = xo_error(XO_EFORMAT,
		              "%s: shape %s is an empty array (a 0 in its shape), yet %ld bytes "
		              "of data follow its header",
		              path, xo_npy_shape_str(out), end - pos);
		goto out_free_header;
	}
	if ((int64_t)(end - pos) > bytes) {
		st = xo_error(XO_EFORMAT, "%s: %" PRId64 " bytes after the data", path,
		              (int64_t)(end - pos) - bytes);
		goto out_free_header;
	}
	if ((uint64_t)out->count > SIZE_MAX / 8) {
		st = xo_error(XO_EOVERFLOW, "%s: array too large", path);
		goto out_free_header;
	}
	if (!out->is_int) {
		/* float32 out of the file's floats: the result is the only
		 * full-size buffer */
		out->data = malloc(out->count ? (size_t)out->count * 4 : 4);
		if (!out->data) {
			st = xo_error(XO_ENOMEM, "%s: out of memory for %" PRId64 " values", path,
			              out->count);
			goto out_free_header;
		}
		if ((st = read_floats(path, f, out->itemsize, big, out->data, out->count)))
			goto out_free_data;
	} else if ((st = read_ints(path, f, out, big, sign))) {
		goto out_free_data;
	}
	free(header);
	fclose(f);
	return XO_OK;

out_free_data: /* the float32 result, or the ints */
	free(out->data);
	out->data = NULL;
	free(out->ints);
	out->ints = NULL;
out_free_header:
	free(header);
out_close:
	fclose(f);
	return st;
}

enum xo_status xo_npy_read(const char *path, struct xo_npy *out)
{
	return npy_read(path, out, NPY_FLOATS);
}

enum xo_status xo_npy_read_labels(const char *path, struct xo_npy *out)
{
	return npy_read(path, out, NPY_INTS);
}

enum xo_status xo_npy_read_inputs(const char *path, struct xo_npy *out)
{
	return npy_read(path, out, NPY_INTS);
}

void xo_npy_free(struct xo_npy *a)
{
	if (!a)
		return;
	free(a->data);
	a->data = NULL;
	free(a->ints);
	a->ints = NULL;
}

/* Formats a shape as NumPy prints it: "(3, 1, 16)", "(5,)". */
static void format_shape(char *buf, size_t size, int ndim, const int64_t *dims)
{
	size_t used = 0;

	used += (size_t)snprintf(buf, size, "(");
	for (int i = 0; i < ndim && used < size; i++)
		used +=
		    (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", dims[i]);
	if (used < size)
		snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

const char *xo_npy_shape_str(const struct xo_npy *a)
{
	static _Thread_local char buf[160];

	format_shape(buf, sizeof(buf), a->ndim, a->dim);
	return buf;
}

enum xo_status xo_npy_read_shaped(const char *path, int ndim, const int64_t *dims, float *data)
{
	struct xo_npy a;
	enum xo_status st;
	bool same;

	st = xo_npy_read(path, &a);
	if (st)
		return st;
	same = a.ndim == ndim;
	for (int i = 0; same && i < ndim; i++)
		same = a.dim[i] == dims[i];
	if (!same) {
		char want[96], got[96];

		format_shape(want, sizeof(want), ndim, dims);
		format_shape(got, sizeof(got), a.ndim, a.dim);
		xo_npy_free(&a);
		return xo_error(XO_EINVAL, "%s: shape %s does not match the expected %s", path, got,
		                want);
	}
	memcpy(data, a.data, (size_t)a.count * 4);
	xo_npy_free(&a);
	return XO_OK;
}

enum xo_status xo_npy_write(const char *path, int ndim, const int64_t *dims, const float *data)
{
	char header[256], shape[160];
	unsigned char pre[10];
	struct xo_output out;
	int64_t count = 1;
	size_t hlen, total;
	float *swapped = NULL;
	const float *src = data;
	enum xo_status st = XO_OK;
	int n;

	if (!path || !dims || !data || ndim < 0 || ndim > XO_MAX_DIMS)
		return xo_error(XO_EINVAL, "xo_npy_write: bad argument");
	for (int i = 0; i < ndim; i++)
		if (!xo_mul_ok(count, dims[i], &count))
			return xo_error(XO_EOVERFLOW, "%s: array size overflows", path);
	format_shape(shape, sizeof(shape), ndim, dims);
	n = snprintf(header, sizeof(header),
	             "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
	if (n < 0 || (size_t)n >= sizeof(header) - 70)
		return xo_error(XO_EINVAL, "%s: shape too long", path);
	/* Pad with spaces and end with '\n' so the data starts 64-byte aligned,
	 * as NumPy does. */
	hlen = (size_t)n;
	total = 10 + hlen + 1;
	while (total % 64) {
		header[hlen++] = ' ';
		total++;
	}
	header[hlen++] = '\n';
	memcpy(pre, npy_magic, 6);
	pre[6] = 1;
	pre[7] = 0;
	pre[8] = (unsigned char)(hlen & 0xff);
	pre[9] = (unsigned char)(hlen >> 8);
	if (!host_is_little_endian()) {
		swapped = malloc((size_t)count * 4 + 4);
		if (!swapped)
			return xo_error(XO_ENOMEM, "%s: out of memory", path);
		memcpy(swapped, data, (size_t)count * 4);
		swap32(swapped, count);
		src = swapped;
	}
	/* Through model/output.c: symlinks followed, non-files refused, the
	 * target replaced whole or not at all. */
	st = xo_output_open(&out, path);
	if (!st)
		st = xo_output_write(&out, pre, 10);
	if (!st)
		st = xo_output_write(&out, header, hlen);
	if (!st)
		st = xo_output_write(&out, src, (size_t)count * 4);
	if (!st)
		st = xo_output_commit(&out);
	else
		xo_output_abort(&out);
	free(swapped);
	return st;
}
