/*
 * modelid.c - the name and architecture fingerprint a model's benchmarks are
 * stored under (`xo perf record --model FILE`, `xo seed --model FILE --db`),
 * and the check that keeps two different models of one name apart.
 *
 * Name: the file's stem (models/tiny.model -> tiny, ~/mnist_cnn.keras ->
 * mnist_cnn), as `xo perf report/advise --model FILE` name it; the built-in
 * seed is "seed". Architecture: FNV-1a over the parsed spec (input shape;
 * per layer its kind, shapes and the parameters that change the work), not
 * the file's bytes: a Keras file and a spec of the same network, or one
 * model with other weights or layer names, share it. Each model benchmark
 * carries " arch=<16 hex>" in its params; a record whose name is already in
 * the store with another arch is refused before anything is measured, so
 * two models' series never mix in one plot (rename the file, or use another
 * --db). A params string without arch= (a store written before it) is taken
 * as the same model.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#include "perfdb.h"
#include "xo.h"
#include "xo/model_spec.h"

static uint64_t fnv_i64(uint64_t h, int64_t v)
{
	return xo_perf_fnv(h, &v, sizeof(v));
}

/* h with layer l's kind, shapes and the parameters that change its work
 * (graph: the model is a graph, whose wiring is hashed too). */
static uint64_t layer_hash(uint64_t h, const struct xo_layer_spec *l, bool graph)
{
	const int64_t v[] = {l->kind,         l->in_len,        l->in_ch,
	                     l->out_len,      l->out_ch,        l->w_count,
	                     l->b_count,      l->p.filters,     l->p.kernel_size,
	                     /* conv2d: the resolved stride (below) */
	                     l->kind == XO_LAYER_CONV2D ? 0 : l->p.strides,
	                     l->p.dilation_rate, l->p.padding,
	                     l->p.activation, l->p.pool_size,   l->p.units,
	                     (int64_t)(l->p.rate * 1e6f)};

	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		h = fnv_i64(h, v[k]);
	/* the width axis (rank-3 samples, 2-D pooling): hashed only
	 * where it is not the default, so the fingerprints of models
	 * without one stay as they were */
	if (l->kind != XO_LAYER_CONV2D &&
	    (l->in_w != 1 || l->out_w != 1 || l->p.pool_w || l->p.strides_w)) {
		const int64_t w[] = {l->in_w, l->out_w, l->p.pool_w, l->p.strides_w};

		for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++)
			h = fnv_i64(h, w[k]);
	}
	/* layer_normalization (a kind without older fingerprints to
	 * keep): center and scale, as its gamma and beta counts */
	if (l->kind == XO_LAYER_LAYER_NORMALIZATION)
		h = fnv_i64(fnv_i64(h, l->gamma_count), l->beta_count);
	/* a graph's wiring (hashed only for a graph, so sequential
	 * fingerprints stay): two models that differ only in what
	 * each layer takes are different models; inputs by index */
	if (graph) {
		h = fnv_i64(h, l->ninputs);
		for (int k = 0; k < l->ninputs; k++)
			h = fnv_i64(h, l->inputs[k]);
	}
	/* concatenate on an axis before the last (a kind without older
	 * fingerprints to keep for it) */
	if (l->kind == XO_LAYER_CONCATENATE && l->axis)
		h = fnv_i64(h, l->axis);
	if (l->kind == XO_LAYER_EMBEDDING) /* input_dim, output_dim */
		h = fnv_i64(fnv_i64(h, l->p.rows), l->p.ch);
	/* Keras's mask: an embedding's mask_zero and the masked mean it
	 * makes (only where set, so older fingerprints stay) */
	if (l->p.mask_zero)
		h = fnv_i64(h, 1);
	if (xo_layer_rnn_op(l->kind) != XO_OP_COUNT) {
		/* the recurrent layers' keys (units, activation and
		 * use_bias are in v[] above) */
		const int64_t r[] = {l->p.recurrent_activation, l->p.return_sequences,
		                     l->p.go_backwards, l->p.reset_after, l->rk_count};

		for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++)
			h = fnv_i64(h, r[k]);
	}
	/* conv2d (a kind without older fingerprints to keep): the
	 * width and every geometry key of both axes, resolved (an
	 * absent kernel_w is the kernel_size it stands for, strides 0
	 * is 1), so equal models hash equal however their spec spells
	 * the defaults */
	if (l->kind == XO_LAYER_CONV2D) {
		struct xo_params q = xo_params_width_axis(&l->p);
		const int64_t c[] = {l->in_w,           l->out_w,
		                     q.kernel_size,     xo_conv1d_stride(&l->p),
		                     xo_conv1d_stride(&q), q.dilation_rate};

		for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++)
			h = fnv_i64(h, c[k]);
	}
	/* time_distributed: the wrapped kind, and over Conv1D its
	 * kernel width and dilation (the conv2d form's width axis) */
	if (l->kind == XO_LAYER_TIME_DISTRIBUTED) {
		const int64_t t[] = {l->inner, l->p.kernel_w, l->p.dilation_w};

		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			h = fnv_i64(h, t[k]);
	}
	/* bidirectional: the wrapped kind, its recurrent keys and the
	 * merge mode (sum, mul and ave have one output shape) */
	if (l->kind == XO_LAYER_BIDIRECTIONAL) {
		const int64_t b[] = {l->inner, l->p.recurrent_activation,
		                     l->p.return_sequences, l->p.reset_after, l->rk_count,
		                     l->p.mode};

		for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++)
			h = fnv_i64(h, b[k]);
	}
	/* multi_head_attention: the heads and widths, the value's length
	 * and features, and the causal mask (the cl kernels skip the
	 * masked keys: less work) */
	if (l->kind == XO_LAYER_MULTI_HEAD_ATTENTION) {
		const int64_t a[] = {l->p.heads, l->p.key_dim, xo_attention_value_dim(&l->p),
		                     l->p.len_kv, l->p.ch_b, l->p.causal};

		for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++)
			h = fnv_i64(h, a[k]);
		/* its attention_mask input (hashed only when there is one,
		 * so older fingerprints stay) */
		if (l->att_mask)
			h = fnv_i64(h, l->att_mask);
	}
	return h;
}

enum xo_status xo_perf_model_ident(const char *path, char *name, size_t name_size, char *arch,
                                   size_t arch_size)
{
	struct xo_model_spec spec;
	char *text = NULL;
	const char *base;
	uint64_t h = XO_FNV_OFFSET;
	enum xo_status st;

	if (path) {
		st = xo_spec_read_file(path, &text);
		if (st)
			return st;
		st = xo_spec_parse(text, path, &spec);
		free(text);
	} else {
		st = xo_spec_parse(xo_model_seed_spec, "seed (built in)", &spec);
	}
	if (st)
		return st;
	h = fnv_i64(fnv_i64(fnv_i64(h, spec.in_len), spec.in_ch), spec.in_rank);
	if (spec.in_w != 1)
		h = fnv_i64(h, spec.in_w);
	if (spec.in_int) /* int32 ids: hashed only when set (old fingerprints stay) */
		h = fnv_i64(h, 32);
	if (spec.in_int && spec.in_ids) /* ids that are not the first input */
		h = fnv_i64(h, spec.in_ids);
	/* the later inputs of a multi-input model, in order (hashed only
	 * when there are any: one-input fingerprints stay) */
	for (int k = 1; k < spec.ninputs; k++) {
		const struct xo_input_spec *q = &spec.input[k];

		h = fnv_i64(fnv_i64(fnv_i64(fnv_i64(fnv_i64(h, k), q->rank), q->len), q->w), q->ch);
	}
	for (int i = 0; i < spec.nlayers; i++)
		h = layer_hash(h, &spec.layers[i], spec.graph);
	xo_spec_free(&spec);
	if (path) {
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		snprintf(name, name_size, "%.*s", (int)strcspn(base, "."), base);
	} else {
		snprintf(name, name_size, "seed");
	}
	if (!name[0])
		return xo_error(XO_EINVAL, "%s: no file stem to name the model by", path);
	/* the name goes into benchmark names, stored and printed in lines and
	 * plots: a control byte there would split or rewrite them */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return xo_error(XO_EINVAL, "%s: the file stem has a control byte, which a "
			                "benchmark name cannot hold: rename the file", path);
	snprintf(arch, arch_size, "%016" PRIx64, h);
	return XO_OK;
}

enum xo_status xo_perfdb_model_claim(struct xo_perfdb *db, const char *name, const char *arch,
                                     const char *path)
{
	struct xo_sql_stmt *s = NULL;
	enum xo_status st = XO_OK;
	char want[32];

	snprintf(want, sizeof(want), "arch=%s", arch);
	if (xo_sql_prepare(xo_perfdb_sql(db),
	                       "SELECT params FROM benchmarks WHERE kind = 'model' AND model = ?"
	                       " AND instr(params, ' arch=') > 0 AND instr(params, ?) = 0 LIMIT 1", &s) != XO_SQL_OK)
		return xo_error(XO_EDB, "model check: %s", xo_sql_errmsg(xo_perfdb_sql(db)));
	xo_sql_bind_text(s, 1, name);
	xo_sql_bind_text(s, 2, want);
	if (xo_sql_step(s) == XO_SQL_ROW) {
		const char *p = xo_sql_column_text(s, 0), *a = p ? strstr(p, " arch=") : NULL;

		st = xo_error(XO_EINVAL,
		              "--model %s: the store already holds another model named '%s' "
		              "(arch=%.16s, this one arch=%s); rename the file or use another --db",
		              path ? path : "seed", name, a ? a + 6 : "?", arch);
	}
	xo_sql_finalize(s);
	return st;
}
