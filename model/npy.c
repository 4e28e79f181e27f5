/*
 * npy.c - NumPy .npy files (format 1.0, 2.0 and 3.0), little-endian float32
 * in C order only: how weights, inputs and predictions move between
 * crossover, NumPy and Keras. Anything else (another dtype, Fortran order,
 * truncated data, a header that is absurd or too large, a bad magic) is
 * rejected with a one-line reason naming the file.
 */
#include <errno.h>
#include <inttypes.h>
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

static enum xo_status parse_header(const char *path, const char *h, struct xo_npy *out)
{
	const char *v;
	int64_t count = 1;

	v = dict_value(h, "descr");
	if (!v)
		return xo_error(XO_EFORMAT, "%s: npy header has no 'descr'", path);
	if (strncmp(v, "'<f4'", 5) && strncmp(v, "\"<f4\"", 5)) {
		char got[16] = "";
		size_t n = strcspn(v, ",}");

		snprintf(got, sizeof(got), "%.*s", (int)(n < 15 ? n : 15), v);
		return xo_error(XO_EFORMAT,
		                "%s: dtype %s is not supported (need little-endian float32 '<f4')",
		                path, got);
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
	out->count = count;
	return XO_OK;
}

enum xo_status xo_npy_read(const char *path, struct xo_npy *out)
{
	unsigned char pre[12];
	char *header = NULL;
	uint32_t hlen;
	long pos, end;
	struct stat sb;
	FILE *f;
	enum xo_status st;

	if (!path || !out)
		return xo_error(XO_EINVAL, "xo_npy_read: NULL argument");
	memset(out, 0, sizeof(*out));
	f = fopen(path, "rb");
	if (!f)
		return xo_error(XO_EIO, "%s: cannot open: %s", path, strerror(errno));
	/* fopen opens a directory too; its reads then fail as "too short" */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		st = xo_error(XO_EIO, "%s: is a directory, not a .npy file", path);
		goto out_close;
	}
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
	st = parse_header(path, header, out);
	if (st)
		goto out_free_header;
	/* The data must be exactly count float32 values: no less, no more. */
	pos = ftell(f);
	if (pos < 0 || fseek(f, 0, SEEK_END) || (end = ftell(f)) < 0 || fseek(f, pos, SEEK_SET)) {
		st = xo_error(XO_EIO, "%s: cannot seek: %s", path, strerror(errno));
		goto out_free_header;
	}
	if ((int64_t)(end - pos) < out->count * 4) {
		st = xo_error(XO_EFORMAT,
		              "%s: truncated data: %ld bytes for %" PRId64 " float32 values", path,
		              end - pos, out->count);
		goto out_free_header;
	}
	if ((int64_t)(end - pos) > out->count * 4) {
		st = xo_error(XO_EFORMAT, "%s: %" PRId64 " bytes after the data", path,
		              (int64_t)(end - pos) - out->count * 4);
		goto out_free_header;
	}
	if ((uint64_t)out->count > SIZE_MAX / 4) {
		st = xo_error(XO_EOVERFLOW, "%s: array too large", path);
		goto out_free_header;
	}
	out->data = malloc(out->count ? (size_t)out->count * 4 : 4);
	if (!out->data) {
		st = xo_error(XO_ENOMEM, "%s: out of memory for %" PRId64 " values", path,
		              out->count);
		goto out_free_header;
	}
	if (fread(out->data, 4, (size_t)out->count, f) != (size_t)out->count) {
		st = xo_error(XO_EIO, "%s: read failed", path);
		goto out_free_data;
	}
	if (!host_is_little_endian())
		swap32(out->data, out->count);
	free(header);
	fclose(f);
	return XO_OK;

out_free_data:
	free(out->data);
	out->data = NULL;
out_free_header:
	free(header);
out_close:
	fclose(f);
	return st;
}

void xo_npy_free(struct xo_npy *a)
{
	if (!a)
		return;
	free(a->data);
	a->data = NULL;
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
	char header[256], shape[160], tmp[4096];
	unsigned char pre[10];
	int64_t count = 1;
	size_t hlen, total;
	float *swapped = NULL;
	const float *src = data;
	enum xo_status st = XO_OK;
	FILE *f;
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
	/* Written next to the target, then renamed over it: a reader (or a
	 * crash) never sees half a file. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		st = xo_error(XO_EINVAL, "%s: path too long", path);
		goto out_free;
	}
	f = fopen(tmp, "wb");
	if (!f) {
		st = xo_error(XO_EIO, "%s: cannot create: %s", tmp, strerror(errno));
		goto out_free;
	}
	if (fwrite(pre, 1, 10, f) != 10 || fwrite(header, 1, hlen, f) != hlen ||
	    fwrite(src, 4, (size_t)count, f) != (size_t)count) {
		st = xo_error(XO_EIO, "%s: write failed: %s", tmp, strerror(errno));
		fclose(f);
		remove(tmp);
		goto out_free;
	}
	if (fclose(f)) {
		st = xo_error(XO_EIO, "%s: write failed: %s", tmp, strerror(errno));
		remove(tmp);
		goto out_free;
	}
	if (rename(tmp, path)) {
		st = xo_error(XO_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
		remove(tmp);
	}
out_free:
	free(swapped);
	return st;
}
