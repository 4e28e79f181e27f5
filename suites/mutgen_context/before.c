	for (int i = 0; i < spec.nlayers; i++) {
		const struct xo_layer_spec *l = &spec.layers[i];
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
		if (l->kind == XO_LAYER_EMBEDDING) /* input_dim, output_dim */
			h = fnv_i64(fnv_i64(h, l->p.rows), l->p.ch);
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
	}
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
