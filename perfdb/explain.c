/*
 * explain.c - `xo explain` (explain.h): measure, predict, split, diagnose,
 * then the crossover and what would move it.
 *
 * Measured: a training step on a batch resident on the device
 * (xo_model_bench_train_step: nothing crosses the bus) and a predict call as
 * a user makes it (xo_model_predict: the batch written, the probabilities
 * read back), each timed `repeat` times or more after one warm-up call; the
 * median and the interquartile range are kept. On cl the per-step event
 * totals (xo_backend_stats) give the measured split and the launch count;
 * a host backend's step is all compute (its kernels run inline).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "explain.h"
#include "jsonout.h"
#include "perfdb.h"

#define MAX_REPS    51
#define MIN_POINT_S 0.02 /* keep timing small steps at least this long */

struct dev {
	const char *spec;
	char desc[512];
	bool is_cl;
	bool have_probe;
	struct xo_probe probe; /* as measured */
	double gemm_flops;     /* xo_explain_gemm_rate, median of gemm_samples (one per batch) */
	double call_s;         /* xo_explain_call_time (host backends), median likewise */
	int gemm_samples;
	struct xo_probe model; /* what the cost model gets: flops = the GEMM rate */
	char probe_error[256];
	struct xo_explain_point pt[XO_EXPLAIN_MAX_BATCHES][2]; /* [batch][predict, train] */
	struct xo_cost_step step[XO_EXPLAIN_MAX_BATCHES][2];
};

/* "12.3 G" style rate */
static const char *fmt_rate(double v, const char *unit, char *buf, size_t size)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else if (v >= 1e9)
		snprintf(buf, size, "%.1f G%s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, size, "%.1f M%s", v / 1e6, unit);
	else
		snprintf(buf, size, "%.0f %s", v, unit);
	return buf;
}

/* One training step (bench, resident batch) or predict call (x written,
 * probabilities read) at batch n, timed after a warm-up. */
static enum xo_status time_point(struct xo_model *m, struct xo_backend *be, bool is_cl,
                                 bool training, int64_t n, const float *x, float *probs, int repeat,
                                 struct xo_explain_point *pt)
{
	double t[MAX_REPS], spent = 0, enq = 0, h2d = 0, ker = 0, d2h = 0, wait = 0, launches = 0;
	enum xo_status st;
	int reps = 0;

	st = training ? xo_model_bench_train_step(m) : xo_model_predict(m, x, n, n, probs);
	while (!st && reps < MAX_REPS && (reps < repeat || spent < MIN_POINT_S)) {
		struct xo_backend_stats s;
		double t0;

		xo_backend_stats_reset(be);
		t0 = xo_now_s();
		st = training ? xo_model_bench_train_step(m) : xo_model_predict(m, x, n, n, probs);
		t[reps] = xo_now_s() - t0;
		spent += t[reps];
		xo_backend_stats_get(be, &s);
		enq += (double)s.enqueue_ns * 1e-9;
		h2d += (double)s.h2d_ns * 1e-9;
		ker += (double)s.kernel_ns * 1e-9;
		d2h += (double)s.d2h_ns * 1e-9;
		wait += (double)s.wait_ns * 1e-9;
		launches += (double)s.launches;
		reps++;
	}
	if (st)
		return st;
	qsort(t, (size_t)reps, sizeof(t[0]), xo_cmp_double);
	pt->batch = n;
	pt->training = training;
	pt->reps = reps;
	/* the perf store's quartiles (t is sorted above) */
	pt->measured_s = xo_perf_quantile(t, (size_t)reps, 0.5);
	pt->measured_lo = xo_perf_quantile(t, (size_t)reps, 0.25);
	pt->measured_hi = xo_perf_quantile(t, (size_t)reps, 0.75);
	if (is_cl) {
		pt->launches = launches / reps;
		xo_split_from_events(pt->measured_s, enq / reps, h2d / reps, ker / reps, d2h / reps,
		                     wait / reps, pt->launches, &pt->measured);
	} else {
		xo_split_host(pt->measured_s, &pt->measured);
	}
	return XO_OK;
}

void xo_explain_rnn_lanes(struct xo_backend *be, struct xo_cost_step *s)
{
	for (int i = 0; i < s->nlayers; i++) {
		const struct xo_layer_cost *c = &s->layers[i];
		struct xo_params p = xo_params_default();
		double lanes;

		if (!(c->steps > 0) || !c->recurrent)
			continue;
		p.batch = s->batch;
		p.units = c->units;
		lanes = xo_backend_rnn_lanes(be, c->rnn_op, &p);
		if (lanes > 0 && s->rnn_lanes > 0)
			s->rnn_lanes = lanes;
		return; /* the first recurrent layer's, for the step */
	}
}

void xo_explain_cost_step(struct xo_model *m, const struct xo_layer_cost *lc, bool is_cl,
                          bool training, int64_t n, double launches, bool fused,
                          double op_call_s, struct xo_cost_step *s)
{
	int ops = training ? XO_MODEL_TRAIN_EXTRA_OPS : 0;

	for (int i = 0; i < xo_model_layer_count(m); i++)
		ops += training ? lc[i].ops_train_fwd + lc[i].ops_bwd : lc[i].ops_predict;
	*s = (struct xo_cost_step){
	    .layers = lc,
	    .nlayers = xo_model_layer_count(m),
	    .params = xo_model_param_count(m),
	    .in_size = xo_model_input_size(m),
	    .classes = xo_model_classes(m),
	    .batch = n,
	    .training = training,
	    .fused = fused,
	    .ops = ops,
	    .op_call_s = is_cl || !(op_call_s > 0) ? 0 : op_call_s,
	};
	/* cpu's fused path is one pool round for the net, plus one for Adam in
	 * training (kernels/cpu_net.c); op by op, one round per op */
	s->launches = is_cl ? launches : fused ? (training ? 2 : 1) : ops;
	/* cl: one lane until xo_explain_rnn_lanes asks the backend (rnn.cl's
	 * general kernel runs a sample's whole step in one work-item, its tiled
	 * kernels spread it over wg / nb); the cpu splits a step's GEMM over the
	 * batch, its per-step cost is the probe's step_s alone */
	s->rnn_lanes = is_cl ? 1 : 0;
	s->cl = is_cl;
	/* the fused path's threading rule (kernels/cpu_net.c NET_PAR_MIN, the
	 * same as the op wrappers' XO_CPU_PAR_MIN in kernels/cpu.c): a call of
	 * fewer multiply-adds runs on the caller's thread alone */
	if (!is_cl && fused)
		s->pool_min_macs = XO_EXPLAIN_CPU_PAR_MIN;
	if (!is_cl && fused && training) {
		/* kernels/cpu_net.c: the weights of layers that pass a gradient
		 * back are packed transposed (read + write), and the weight
		 * gradients are summed from a per-part buffer (zeroed, written,
		 * read) into the flat gradients (written): one part below
		 * NET_PAR_MIN multiply-adds, else more; one is the floor */
		double wt = 0;

		for (int i = 0; i < s->nlayers; i++)
			wt += lc[i].w_bytes_bwd - lc[i].w_bytes_fwd; /* 4 x w_count where dx */
		s->extra_bytes = 2 * wt + 4 * 4.0 * (double)s->params;
	}
	if (!training) {
		s->h2d_bytes = 4.0 * (double)(n * s->in_size);
		s->d2h_bytes = 4.0 * (double)(n * s->classes);
		s->h2d_count = s->d2h_count = 1;
	}
}

enum xo_cross xo_explain_what_if(const struct xo_probe *pa, const struct xo_probe *pb,
                                 const struct xo_cost_step *sa, const struct xo_cost_step *sb,
                                 int n, double *batch)
{
	double x[XO_EXPLAIN_MAX_BATCHES], a[XO_EXPLAIN_MAX_BATCHES], b[XO_EXPLAIN_MAX_BATCHES];
	struct xo_split s;

	if (n > XO_EXPLAIN_MAX_BATCHES)
		n = XO_EXPLAIN_MAX_BATCHES;
	for (int i = 0; i < n; i++) {
		x[i] = (double)sa[i].batch;
		xo_cost_predict(pa, &sa[i], &s, NULL);
		a[i] = s.wall_s;
		xo_cost_predict(pb, &sb[i], &s, NULL);
		b[i] = s.wall_s;
	}
	return xo_cost_crossover(x, a, b, n, batch);
}

char *xo_explain_cross_sentence(enum xo_cross c, double batch, const char *a, const char *b,
                                int64_t first, int64_t last, char *buf, size_t size)
{
	switch (c) {
	case XO_CROSS_AT:
		snprintf(buf, size, "%s is faster than %s from batch ~%.0f", b, a, batch);
		break;
	case XO_CROSS_BELOW:
		snprintf(buf, size, "%s is faster than %s at every batch from %" PRId64, b, a,
		         first);
		break;
	default:
		snprintf(buf, size,
		         "%s is not faster than %s at any batch in %" PRId64 "..%" PRId64, b, a,
		         first, last);
		break;
	}
	return buf;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *probe_json(const struct dev *d)
{
	const struct xo_probe *p = &d->probe;
	json_t *o;

	if (!d->have_probe)
		return json_null();
	o = json_object();
	xo_probe_json_set(o, p);
	json_object_set_new(o, "gemm_flops", jnum(d->gemm_flops));
	json_object_set_new(o, "model_flops", jnum(d->model.flops));
	return o;
}

static const char *what_name(bool training)
{
	return training ? "train step" : "predict call";
}

/* "1.2 GFLOP" style amount */
static const char *fmt_amount(double v, const char *unit, char *buf, size_t size)
{
	if (v >= 1e9)
		snprintf(buf, size, "%.2f G%s", v / 1e9, unit);
	else if (v >= 1e6)
		snprintf(buf, size, "%.2f M%s", v / 1e6, unit);
	else
		snprintf(buf, size, "%.0f %s", v, unit);
	return buf;
}

/* The sentence naming attention layer c's parts at this point (cost.h,
 * xo_cost_attention, a filled in): GEMM-shaped, memory-bound, serial. */
static char *attention_sentence(const struct dev *d, const struct xo_layer_cost *c,
                                const struct xo_cost_attention *a, char *buf, size_t size)
{
	char pf[32], sf[32], wf[32], g[32], sb[32], ss[32], se[32], ch[32], st[32];
	int l;

	l = snprintf(buf, size,
	             "attention (%" PRId64 " heads, Tq %" PRId64 " x Tk %" PRId64 ", dk %" PRId64
	             ", dv %" PRId64 "): GEMM-shaped, compute-bound at the GEMM rate: the 4 "
	             "projections %s, Q K^T %s, P V %s -> %s; memory-bound: the softmax over "
	             "%.3g scores (%s moved%s, an exp each) -> %s; head split/merge: none "
	             "(strided head views, no copy); serial: ",
	             c->heads, c->len_q, c->len_kv, c->key_dim, c->value_dim,
	             fmt_amount(a->proj_flops, "FLOP", pf, sizeof(pf)),
	             fmt_amount(a->scores_flops, "FLOP", sf, sizeof(sf)),
	             fmt_amount(a->wsum_flops, "FLOP", wf, sizeof(wf)),
	             xo_fmt_seconds(a->gemm_s, g, sizeof(g)), a->scores,
	             fmt_amount(a->softmax_bytes, "B", sb, sizeof(sb)),
	             d->is_cl ? ": K rows 3x and V rows once per query row" : "",
	             xo_fmt_seconds(a->softmax_s, ss, sizeof(ss)));
	if (l < 0 || (size_t)l >= size)
		return buf;
	if (d->is_cl)
		snprintf(buf + l, size - (size_t)l,
		         "one work-item per (sample, query row, head), each a chain of %.0f "
		         "multiply-adds x %s -> %s at least; largest part: %s",
		         a->chain_macs, xo_fmt_seconds(d->model.lane_mac_s, ch, sizeof(ch)),
		         xo_fmt_seconds(a->serial_s, se, sizeof(se)), a->bound);
	else
		snprintf(buf + l, size - (size_t)l,
		         "%.0f (sample, head) pairs, %.0f small GEMM calls in per-pair chains "
		         "over %d threads x %s a call -> %s; largest part: %s",
		         a->pairs, a->calls, d->model.units > 0 ? d->model.units : 1,
		         xo_fmt_seconds(d->model.step_s, st, sizeof(st)),
		         xo_fmt_seconds(a->serial_s, se, sizeof(se)), a->bound);
	return buf;
}

/* Each attention layer's parts at this point as JSON objects (NULL when
 * the model has none or there is no probe). */
static json_t *attention_json(const struct dev *d, const struct xo_cost_step *step)
{
	json_t *arr = NULL;
	char buf[1024];

	for (int i = 0; d->have_probe && i < step->nlayers; i++) {
		const struct xo_layer_cost *c = &step->layers[i];
		struct xo_cost_attention a;
		json_t *o;

		if (!(c->heads > 0))
			continue;
		xo_cost_attention(&d->model, step, c, &a);
		o = json_object();
		json_object_set_new(o, "layer", json_integer(i));
		json_object_set_new(o, "heads", json_integer(c->heads));
		json_object_set_new(o, "len_q", json_integer(c->len_q));
		json_object_set_new(o, "len_kv", json_integer(c->len_kv));
		json_object_set_new(o, "key_dim", json_integer(c->key_dim));
		json_object_set_new(o, "value_dim", json_integer(c->value_dim));
		json_object_set_new(o, "gemm_proj_flops", jnum(a.proj_flops));
		json_object_set_new(o, "gemm_scores_flops", jnum(a.scores_flops));
		json_object_set_new(o, "gemm_wsum_flops", jnum(a.wsum_flops));
		json_object_set_new(o, "gemm_s", jnum(a.gemm_s));
		json_object_set_new(o, "softmax_bytes", jnum(a.softmax_bytes));
		json_object_set_new(o, "softmax_s", jnum(a.softmax_s));
		json_object_set_new(o, "roofline_s", jnum(a.roofline_s));
		json_object_set_new(o, "head_split_merge_bytes", json_integer(0));
		json_object_set_new(o, "pairs", jnum(a.pairs));
		json_object_set_new(o, "serial_calls", jnum(d->is_cl ? NAN : a.calls));
		json_object_set_new(o, "serial_chain_macs", jnum(d->is_cl ? a.chain_macs : NAN));
		json_object_set_new(o, "serial_s", jnum(a.serial_s));
		json_object_set_new(o, "bound", json_string(a.bound));
		json_object_set_new(o, "diagnosis",
		                    json_string(attention_sentence(d, c, &a, buf, sizeof(buf))));
		if (!arr)
			arr = json_array();
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *point_json(const struct dev *d, const struct xo_explain_point *pt,
                          const struct xo_cost_step *step)
{
	json_t *o = json_object();
	char buf[512];

	json_object_set_new(o, "device", json_string(d->spec));
	json_object_set_new(o, "batch", json_integer(pt->batch));
	json_object_set_new(o, "what", json_string(pt->training ? "train_step" : "predict"));
	json_object_set_new(o, "reps", json_integer(pt->reps));
	json_object_set_new(o, "launches", jnum(step->launches));
	json_object_set_new(o, "measured_s", jnum(pt->measured_s));
	json_object_set_new(o, "measured_q1", jnum(pt->measured_lo));
	json_object_set_new(o, "measured_q3", jnum(pt->measured_hi));
	for (int p = 0; p < XO_SPLIT_COUNT; p++) {
		snprintf(buf, sizeof(buf), "measured_%s_s", xo_split_part_name(p));
		json_object_set_new(o, buf, jnum(pt->measured.part_s[p]));
	}
	json_object_set_new(o, "predicted_s", jnum(pt->predicted.wall_s));
	for (int p = 0; p < XO_SPLIT_COUNT; p++) {
		snprintf(buf, sizeof(buf), "predicted_%s_s", xo_split_part_name(p));
		json_object_set_new(o, buf, jnum(d->have_probe ? pt->predicted.part_s[p] : NAN));
	}
	json_object_set_new(o, "predicted_flops", jnum(d->have_probe ? pt->terms.flops : NAN));
	json_object_set_new(o, "predicted_bytes", jnum(d->have_probe ? pt->terms.bytes : NAN));
	json_object_set_new(o, "predicted_op_fixed_s",
	                    jnum(d->have_probe ? pt->terms.op_fixed_s : NAN));
	json_object_set_new(o, "predicted_pool_s", jnum(d->have_probe ? pt->terms.pool_s : NAN));
	json_object_set_new(o, "predicted_pool_threads",
	                    json_integer(d->have_probe ? pt->terms.pool_threads : 0));
	json_object_set_new(o, "predicted_serial_s", jnum(d->have_probe ? pt->terms.serial_s : NAN));
	json_object_set_new(o, "predicted_serial_steps",
	                    jnum(d->have_probe ? pt->terms.serial_steps : NAN));
	json_object_set_new(o, "predicted_attention_serial_s",
	                    jnum(d->have_probe ? pt->terms.attention_serial_s : NAN));
	json_object_set_new(o, "measured_serial_s",
	                    jnum(pt->serial_checked ? pt->measured.serial_s : NAN));
	json_object_set_new(o, "ratio", jnum(pt->predicted.wall_s / pt->measured_s));
	json_object_set_new(
	    o, "diagnosis",
	    json_string(xo_split_diagnose(&pt->measured, d->spec, what_name(pt->training),
	                                  pt->batch, buf, sizeof(buf))));
	if (d->have_probe) {
		json_object_set_new(
		    o, "predicted_diagnosis",
		    json_string(xo_split_diagnose(&pt->predicted, d->spec, what_name(pt->training),
		                                  pt->batch, buf, sizeof(buf))));
		json_object_set_new(o, "diagnosis_match",
		                    json_boolean(xo_split_dominant(&pt->measured) ==
		                                 xo_split_dominant(&pt->predicted)));
	} else {
		json_object_set_new(o, "predicted_diagnosis", json_null());
		json_object_set_new(o, "diagnosis_match", json_null());
	}
	{
		json_t *att = attention_json(d, step);

		if (att)
			json_object_set_new(o, "attention", att);
	}
	return o;
}

static void print_probe(FILE *f, const struct dev *d)
{
	const struct xo_probe *p = &d->probe;
	char a[32], b[32], c[32], e[32], g[32], h[32], k[32];

	if (!d->have_probe) {
		fprintf(f, "probe: none (%s): no predictions\n", d->probe_error);
		return;
	}
	fprintf(f, "probe (%.1f s): launch %s, FMA peak %s, memory %s, units %d", p->wall_s,
	        xo_fmt_seconds(p->launch_s, a, sizeof(a)), fmt_rate(p->flops, "FLOP/s", b, sizeof(b)),
	        fmt_rate(p->mem_bw, "B/s", c, sizeof(c)), p->units);
	if (isfinite(p->h2d_lat_s) || isfinite(p->d2h_lat_s))
		fprintf(f, "; h2d %s + bytes / %s, d2h %s + bytes / %s",
		        xo_fmt_seconds(p->h2d_lat_s, e, sizeof(e)), fmt_rate(p->h2d_bw, "B/s", g, sizeof(g)),
		        xo_fmt_seconds(p->d2h_lat_s, h, sizeof(h)),
		        fmt_rate(p->d2h_bw, "B/s", k, sizeof(k)));
	fprintf(f,
	        "\ncompute rate for the cost model: GEMM probe (dense 512x64->64 or more rows, less "
	        "a 1x1 call's launch and sync; median of %d samples, one before each batch) %s = "
	        "%.1f%% of the FMA peak\n",
	        d->gemm_samples, fmt_rate(d->model.flops, "FLOP/s", a, sizeof(a)),
	        100 * d->model.flops / p->flops);
	if (d->call_s > 0)
		fprintf(f, "fixed cost per op call (dense 1x1->1, median likewise): %s\n",
		        xo_fmt_seconds(d->call_s, a, sizeof(a)));
}

/* split as "L/T/C/O" percentages */
static const char *fmt_split(const struct xo_split *s, char *buf, size_t size)
{
	double w = s->wall_s > 0 ? s->wall_s : 1;

	if (!isfinite(s->wall_s))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%3.0f/%3.0f/%3.0f/%3.0f", 100 * s->part_s[0] / w,
		         100 * s->part_s[1] / w, 100 * s->part_s[2] / w, 100 * s->part_s[3] / w);
	return buf;
}

/* A line per attention layer under a point's diagnosis (attention_sentence). */
static void print_attention(FILE *f, const struct dev *d, const struct xo_cost_step *step)
{
	char buf[1024];

	for (int i = 0; i < step->nlayers; i++) {
		struct xo_cost_attention a;

		if (!(step->layers[i].heads > 0))
			continue;
		xo_cost_attention(&d->model, step, &step->layers[i], &a);
		fprintf(f, "        %s\n", attention_sentence(d, &step->layers[i], &a, buf, sizeof(buf)));
	}
}

static void print_point(FILE *f, const struct dev *d, const struct xo_explain_point *pt,
                        const struct xo_cost_step *step)
{
	const struct xo_cost_terms *t = &pt->terms;
	char m[32], lo[32], hi[32], pr[32], sm[64], sp[64], diag[512], a[32], b[32], c[32], e[32],
	    fx[320];
	char lat[32];

	fprintf(f, "%6" PRId64 "  %-7s %10s (%s..%s) %10s %6.2f  %s  %s\n", pt->batch,
	        pt->training ? "train" : "predict", xo_fmt_seconds(pt->measured_s, m, sizeof(m)),
	        xo_fmt_seconds(pt->measured_lo, lo, sizeof(lo)), xo_fmt_seconds(pt->measured_hi, hi, sizeof(hi)),
	        xo_fmt_seconds(pt->predicted.wall_s, pr, sizeof(pr)), pt->predicted.wall_s / pt->measured_s,
	        fmt_split(&pt->measured, sm, sizeof(sm)),
	        fmt_split(&pt->predicted, sp, sizeof(sp)));
	fprintf(f, "        %s\n",
	        xo_split_diagnose(&pt->measured, d->spec, what_name(pt->training), pt->batch, diag,
	                          sizeof(diag)));
	if (!d->have_probe)
		return;
	fx[0] = 0;
	if (t->op_fixed_s > 0) {
		char each[32];

		snprintf(fx, sizeof(fx), ", %.0f op calls x %s fixed", step->ops,
		         xo_fmt_seconds(step->op_call_s, each, sizeof(each)));
	}
	if (t->pool_threads > 0) {
		char ps[32];
		size_t l = strlen(fx);

		snprintf(fx + l, sizeof(fx) - l, ", pool %d thread%s +%s", t->pool_threads,
		         t->pool_threads == 1 ? "" : "s", xo_fmt_seconds(t->pool_s, ps, sizeof(ps)));
	}
	if (t->serial_steps > 0) {
		char ss[32], st[32];
		size_t l = strlen(fx);

		snprintf(fx + l, sizeof(fx) - l, ", %.0f serial steps x %s step",
		         t->serial_steps, xo_fmt_seconds(d->model.step_s, st, sizeof(st)));
		l = strlen(fx);
		if (isfinite(d->model.lane_mac_s) && step->rnn_lanes > 0)
			snprintf(fx + l, sizeof(fx) - l, " + chain x %s",
			         xo_fmt_seconds(d->model.lane_mac_s, st, sizeof(st)));
		l = strlen(fx);
		snprintf(fx + l, sizeof(fx) - l, " (serial-bound %s)",
		         xo_fmt_seconds(t->serial_s, ss, sizeof(ss)));
	}
	if (t->attention_serial_s > 0) {
		char as[32];
		size_t l = strlen(fx);

		snprintf(fx + l, sizeof(fx) - l, ", attention serial-bound %s",
		         xo_fmt_seconds(t->attention_serial_s, as, sizeof(as)));
	}
	print_attention(f, d, step);
	fprintf(f,
	        "        predicted: %.1f launches x %s = %s, copy latency %s; copies %s; "
	        "compute %.3g FLOP -> %s, %.3g B -> %s%s, compute %s\n",
	        step->launches, xo_fmt_seconds(d->model.launch_s, a, sizeof(a)),
	        xo_fmt_seconds(t->launch_s, b, sizeof(b)), xo_fmt_seconds(t->copy_lat_s, lat, sizeof(lat)),
	        xo_fmt_seconds(t->h2d_s + t->d2h_s, c, sizeof(c)), t->flops,
	        xo_fmt_seconds(t->compute_flops_s, e, sizeof(e)), t->bytes,
	        xo_fmt_seconds(t->compute_bytes_s, m, sizeof(m)), fx, xo_fmt_seconds(t->compute_s, pr, sizeof(pr)));
}

/*
 * The rate compute runs at on this device's own kernels: the backend's dense
 * forward op (a GEMM, y = x w + b, linear) on a fixed shape that is not the
 * model's, 512 x 64 -> 64 (2 x 512 x 64 x 64 = 4.19 MFLOP per call), timed
 * with its launch and sync, median of GEMM_REPS after a warm-up. The FMA peak
 * of the probe is what the units could do; kernels of this size reach a
 * fraction of it (PoCL's a few percent), and this is the figure the cost
 * model divides FLOPs by (docs/explain.md). NAN when it cannot run.
 *
 * The cost model counts each launch's latency on its own (launches x
 * launch_s), so the rate is the MARGINAL one: the call's time less the time
 * of the smallest call (1 x 1 -> 1, the same launch and sync). On a host
 * backend that fixed part is under 2% of the call; on a GPU it was most of
 * it (an H200 through NVIDIA's OpenCL, 2026-11-26: 25 us per call of which
 * ~19 us launch and sync, so the whole-call rate of 165 GFLOP/s, 0.3% of the
 * FMA peak, made the seed model's batch-8192 step 6.8x slower than measured).
 * When the kernel's own part is under the fixed part the difference is noise:
 * the rows double (up to GEMM_N_MAX) until it is not.
 */
#define GEMM_N     512
#define GEMM_N_MAX 65536
#define GEMM_K     64
#define GEMM_M     64
#define GEMM_REPS 9

/* Median seconds of the backend's dense forward op, y = x w + b (linear),
 * n x k -> m, with its sync, over GEMM_REPS calls after a warm-up; NAN when
 * it cannot run. */
static double dense_time(struct xo_backend *be, int64_t n, int64_t k, int64_t mm)
{
	struct xo_tensor *x = NULL, *w = NULL, *b = NULL, *y = NULL;
	float *h = NULL;
	double t[GEMM_REPS], med = NAN;
	int64_t most = n * k > k * mm ? n * k : k * mm;
	struct xo_op_args a = {.p = xo_params_default()};
	enum xo_status st;

	st = xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){n, k}, &x);
	if (!st)
		st = xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){k, mm}, &w);
	if (!st)
		st = xo_tensor_create(be, XO_DTYPE_F32, 1, (int64_t[]){mm}, &b);
	if (!st)
		st = xo_tensor_create(be, XO_DTYPE_F32, 2, (int64_t[]){n, mm}, &y);
	h = malloc(sizeof(*h) * (size_t)most);
	if (st || !h)
		goto out_free;
	for (int64_t i = 0; i < most; i++)
		h[i] = xo_philox_uniform(2, XO_STREAM_BENCH, 2, (uint64_t)i) - 0.5f;
	st = xo_tensor_write(x, h, 0, n * k);
	if (!st)
		st = xo_tensor_write(w, h, 0, k * mm);
	if (!st)
		st = xo_tensor_write(b, h, 0, mm);
	a.p.batch = n;
	a.p.ch = k;
	a.p.units = mm;
	a.p.use_bias = true;
	a.p.activation = XO_ACTIVATION_LINEAR;
	a.src[0] = x;
	a.src[1] = w;
	a.src[2] = b;
	a.dst[0] = y;
	for (int r = -1; !st && r < GEMM_REPS; r++) {
		double t0 = xo_now_s();

		st = xo_op_run(be, XO_OP_dense, XO_DIR_FWD, &a);
		if (!st)
			st = xo_backend_sync(be);
		if (r >= 0)
			t[r] = xo_now_s() - t0;
	}
	if (!st)
		med = xo_median(t, GEMM_REPS);
out_free:
	free(h);
	xo_tensor_free(x);
	xo_tensor_free(w);
	xo_tensor_free(b);
	xo_tensor_free(y);
	return med;
}

double xo_explain_marginal_rate(double flops, double call_s, double fixed_s)
{
	if (!(flops > 0) || !(call_s > 0) || !isfinite(call_s))
		return NAN;
	if (!(fixed_s > 0) || !isfinite(fixed_s))
		return flops / call_s;
	if (call_s - fixed_s < fixed_s)
		return NAN; /* too small to tell the kernel from the launch: grow */
	return flops / (call_s - fixed_s);
}

double xo_explain_gemm_rate(struct xo_backend *be, double fixed)
{
	double rate = NAN, t = NAN;

	for (int64_t n = GEMM_N; n <= GEMM_N_MAX; n *= 2) {
		t = dense_time(be, n, GEMM_K, GEMM_M);
		if (!isfinite(t))
			return NAN;
		rate = xo_explain_marginal_rate(2.0 * (double)n * GEMM_K * GEMM_M, t, fixed);
		if (isfinite(rate))
			return rate;
	}
	/* the largest shape still within its launch: its whole-call rate */
	return 2.0 * GEMM_N_MAX * GEMM_K * GEMM_M / t;
}

double xo_explain_call_time(struct xo_backend *be)
{
	return dense_time(be, 1, 1, 1);
}

void xo_explain_model_probe(const struct xo_probe *p, double gemm_flops, struct xo_probe *out)
{
	*out = *p;
	if (isfinite(gemm_flops) && gemm_flops > 0 && !(gemm_flops > p->flops))
		out->flops = gemm_flops;
	else if (isfinite(gemm_flops) && gemm_flops > 0 && !isfinite(p->flops))
		out->flops = gemm_flops;
}

/* Each layer's device kernel time in one training step, op by op (the
 * model's bench batch prepared), into pt->layer_s: what the serial check
 * compares with the probe's step latency (xo_cost_serial_measured). */
static enum xo_status profile_layers(struct xo_model *m, struct xo_explain_point *pt)
{
	uint64_t ns[XO_EXPLAIN_MAX_LAYERS], launches[XO_EXPLAIN_MAX_LAYERS], extra = 0;
	enum xo_status st = xo_model_bench_profile_step(m, ns, launches, &extra);

	if (st)
		return st;
	for (int i = 0; i < xo_model_layer_count(m); i++)
		pt->layer_s[i] = (double)ns[i] * 1e-9;
	pt->serial_checked = true;
	return XO_OK;
}

/* Opens, probes and measures one device. Returns 0 or 2 (after a line). */
static int run_device(const struct xo_explain_options *o, struct dev *d, FILE *txt)
{
	struct xo_backend *be = NULL;
	struct xo_model *m = NULL;
	struct xo_layer_cost *lc = NULL;
	float *x = NULL, *probs = NULL;
	int64_t maxb = 1;
	enum xo_status st;
	int rc = 2;
	double gemm[XO_EXPLAIN_MAX_BATCHES], call[XO_EXPLAIN_MAX_BATCHES];
	bool rnn = false; /* recurrent layers: the measured serial check on cl */

	for (int i = 0; i < o->nbatches; i++)
		maxb = o->batches[i] > maxb ? o->batches[i] : maxb;
	if (xo_backend_open(d->spec, &be)) {
		fprintf(o->err, "xo explain: %s\n", xo_last_error());
		return 2;
	}
	snprintf(d->desc, sizeof(d->desc), "%s", xo_backend_describe(be));
	d->is_cl = !strcmp(xo_backend_name(be), "cl");
	if ((o->model_path
	         ? xo_model_open(o->model_path, be, maxb, &m)
	         : xo_model_open_string(xo_model_seed_spec, "seed.model", be, maxb, &m)) ||
	    xo_model_init(m, 1)) {
		fprintf(o->err, "xo explain: %s\n", xo_last_error());
		goto out_free;
	}
	fprintf(txt, "== %s: %s\n", d->spec, d->desc);
	if (d->is_cl && xo_perf_cl_on_cpu(d->desc))
		fprintf(txt, "%s (PoCL or another CPU device): its figures are not a GPU's; "
		             "for a GPU, %s\n",
		        XO_PERF_NO_GPU, XO_PERF_GPU_INSTALL);
	if (o->progress)
		fprintf(o->progress, "xo explain: %s: probing\n", d->spec);
	d->have_probe = !xo_backend_probe(be, o->probe_budget_s, &d->probe);
	if (!d->have_probe)
		snprintf(d->probe_error, sizeof(d->probe_error), "%s", xo_last_error());
	lc = calloc((size_t)xo_model_layer_count(m), sizeof(*lc));
	x = malloc(sizeof(*x) * (size_t)(maxb * xo_model_input_size(m)));
	probs = malloc(sizeof(*probs) * (size_t)(maxb * xo_model_classes(m)));
	if (!lc || !x || !probs) {
		fprintf(o->err, "xo explain: out of memory\n");
		goto out_free;
	}
	for (int i = 0; i < xo_model_layer_count(m); i++) {
		xo_model_layer_cost(m, i, &lc[i]);
		rnn |= lc[i].steps > 0;
	}
	/* the serial check needs each layer's kernel time (op by op, the path
	 * the recurrent layers take on cl) */
	rnn = rnn && xo_model_layer_count(m) <= XO_EXPLAIN_MAX_LAYERS && !xo_model_fused(m, true);
	xo_model_synthetic_x(m, 1, maxb, x); /* ids for an embedding's input */
	/* the GEMM rate and the call time are sampled before each batch, and
	 * the cost model gets their medians over the run: the steps are timed
	 * over its whole span, and a load that comes and goes during it (other
	 * jobs on the same cores) moves the probe's figures as much as the
	 * steps' (docs/explain.md) */
	for (int b = 0; b < o->nbatches; b++) {
		int64_t n = o->batches[b];

		if (o->progress) {
			fprintf(o->progress, "xo explain: %s: batch %" PRId64 " (%d of %d)\n",
			        d->spec, n, b + 1, o->nbatches);
			fflush(o->progress);
		}
		/* the 1x1 call's time: the cpu's fixed cost per op call, and what
		 * the GEMM rate leaves out on every device */
		call[b] = d->have_probe ? xo_explain_call_time(be) : NAN;
		gemm[b] = d->have_probe ? xo_explain_gemm_rate(be, call[b]) : NAN;
		if (d->is_cl)
			call[b] = NAN; /* cl: launch latency carries a call's fixed cost */
		st = xo_model_bench_prepare(m, n, 1);
		for (int k = 0; !st && k < 2; k++) {
			struct xo_explain_point *pt = &d->pt[b][k];

			st = time_point(m, be, d->is_cl, k == 1, n, x, probs, o->repeat, pt);
			if (!st) {
				xo_explain_cost_step(m, lc, d->is_cl, pt->training, n, pt->launches,
				                     xo_model_fused(m, k == 1), 0, &d->step[b][k]);
				xo_explain_rnn_lanes(be, &d->step[b][k]);
			}
			if (!st && k == 1 && rnn && d->is_cl)
				st = profile_layers(m, pt);
		}
		if (st) {
			fprintf(o->err, "xo explain: %s batch %" PRId64 ": %s\n", d->spec, n,
			        xo_last_error());
			goto out_free;
		}
	}
	d->gemm_samples = o->nbatches;
	d->gemm_flops = xo_median(gemm, (size_t)o->nbatches);
	d->call_s = xo_median(call, (size_t)o->nbatches);
	xo_explain_model_probe(&d->probe, d->gemm_flops, &d->model);
	print_probe(txt, d);
	fprintf(txt, " batch  what      measured (IQR)              predicted  ratio  "
	             "split L/T/C/O %% measured  predicted\n");
	for (int b = 0; b < o->nbatches; b++) {
		for (int k = 0; k < 2; k++) {
			struct xo_explain_point *pt = &d->pt[b][k];
			struct xo_cost_step *step = &d->step[b][k];

			step->op_call_s = d->is_cl || !(d->call_s > 0) ? 0 : d->call_s;
			if (d->have_probe) {
				xo_cost_predict(&d->model, step, &pt->predicted, &pt->terms);
				if (pt->serial_checked)
					xo_cost_serial_measured(&d->model, step, pt->layer_s,
					                        &pt->measured);
			} else {
				memset(&pt->predicted, 0, sizeof(pt->predicted));
				pt->predicted.wall_s = NAN;
			}
			print_point(txt, d, pt, step);
		}
	}
	/* the steps above share the layer costs: keep them for the what-ifs */
	lc = NULL;
	rc = 0;
out_free:
	if (rc) {
		free(lc);
		for (int b = 0; b < o->nbatches; b++)
			d->step[b][0].layers = d->step[b][1].layers = NULL;
	}
	free(x);
	free(probs);
	xo_model_close(m);
	xo_backend_close(be);
	return rc;
}

enum xo_cross xo_explain_crossover_interval(const double *x, const double *alo, const double *a,
                                            const double *ahi, const double *blo, const double *b,
                                            const double *bhi, int n, double *batch, double *lo,
                                            double *hi)
{
	enum xo_cross c = xo_cost_crossover(x, a, b, n, batch);
	double v;

	/* b at its fast end against a at its slow end crosses first; the
	 * other way round, last */
	*lo = xo_cost_crossover(x, ahi, blo, n, &v) != XO_CROSS_NONE ? v : NAN;
	*hi = xo_cost_crossover(x, alo, bhi, n, &v) != XO_CROSS_NONE ? v : NAN;
	if (c == XO_CROSS_NONE)
		*batch = NAN;
	return c;
}

/* The measured crossover of a and b (training steps or predict calls: k),
 * its interval and the predicted one; JSON into obj, text into txt. */
static void crossover(const struct xo_explain_options *o, const struct dev *a, const struct dev *b,
                      int k, json_t *obj, FILE *txt)
{
	double x[XO_EXPLAIN_MAX_BATCHES], am[XO_EXPLAIN_MAX_BATCHES], bm[XO_EXPLAIN_MAX_BATCHES];
	double alo[XO_EXPLAIN_MAX_BATCHES], ahi[XO_EXPLAIN_MAX_BATCHES];
	double blo[XO_EXPLAIN_MAX_BATCHES], bhi[XO_EXPLAIN_MAX_BATCHES];
	double ap[XO_EXPLAIN_MAX_BATCHES], bp[XO_EXPLAIN_MAX_BATCHES];
	double cm = NAN, clo = NAN, chi = NAN, cp = NAN, v;
	int n = o->nbatches;
	enum xo_cross c, cpk = XO_CROSS_NONE;
	const char *what = k ? "training steps" : "predict calls";
	char s[256];
	json_t *wi = json_array();

	for (int i = 0; i < n; i++) {
		x[i] = (double)a->pt[i][k].batch;
		am[i] = a->pt[i][k].measured_s;
		alo[i] = a->pt[i][k].measured_lo;
		ahi[i] = a->pt[i][k].measured_hi;
		bm[i] = b->pt[i][k].measured_s;
		blo[i] = b->pt[i][k].measured_lo;
		bhi[i] = b->pt[i][k].measured_hi;
		ap[i] = a->pt[i][k].predicted.wall_s;
		bp[i] = b->pt[i][k].predicted.wall_s;
	}
	c = xo_explain_crossover_interval(x, alo, am, ahi, blo, bm, bhi, n, &cm, &clo, &chi);
	if (a->have_probe && b->have_probe) {
		cpk = xo_cost_crossover(x, ap, bp, n, &cp);
		if (cpk == XO_CROSS_NONE)
			cp = NAN;
	}
	fprintf(txt, "\n%s, %s vs %s:\n  measured: %s", what, a->spec, b->spec,
	        xo_explain_cross_sentence(c, cm, a->spec, b->spec, o->batches[0], o->batches[n - 1],
	                                  s, sizeof(s)));
	if (isfinite(clo) || isfinite(chi)) {
		char lo[32] = "?", hi[32] = "none in range";

		if (isfinite(clo))
			snprintf(lo, sizeof(lo), "%.0f", clo);
		if (isfinite(chi))
			snprintf(hi, sizeof(hi), "%.0f", chi);
		fprintf(txt, " (interval from the IQRs: %s..%s)", lo, hi);
	}
	fprintf(txt, "\n");
	if (a->have_probe && b->have_probe)
		fprintf(txt, "  predicted: %s\n",
		        xo_explain_cross_sentence(cpk, cp, a->spec, b->spec, o->batches[0],
		                                  o->batches[n - 1], s, sizeof(s)));
	json_object_set_new(obj, "what", json_string(k ? "train_step" : "predict"));
	json_object_set_new(obj, "a", json_string(a->spec));
	json_object_set_new(obj, "b", json_string(b->spec));
	json_object_set_new(obj, "measured",
	                    json_string(c == XO_CROSS_AT      ? "at"
	                                : c == XO_CROSS_BELOW ? "below"
	                                                      : "none"));
	json_object_set_new(obj, "measured_batch", jnum(cm));
	json_object_set_new(obj, "measured_lo", jnum(clo));
	json_object_set_new(obj, "measured_hi", jnum(chi));
	json_object_set_new(obj, "predicted_batch", jnum(cp));
	if (a->have_probe && b->have_probe) {
		/* what would move it: b with 5 us launches; b with 10x the
		 * FLOP/s and memory bandwidth */
		struct xo_cost_step sa[XO_EXPLAIN_MAX_BATCHES], sb[XO_EXPLAIN_MAX_BATCHES];
		struct xo_probe q[3] = {b->model, b->model, b->model};
		const char *desc[3] = {"with 5 us launches",
		                       "with 10x the FLOP/s and memory bandwidth",
		                       "with 5 us launches and 100x the FLOP/s and memory "
		                       "bandwidth (a discrete GPU's order)"};
		char line[512];

		q[0].launch_s = 5e-6;
		q[1].flops *= 10;
		q[1].mem_bw *= 10;
		q[2].launch_s = 5e-6;
		q[2].flops *= 100;
		q[2].mem_bw *= 100;
		for (int i = 0; i < n; i++) {
			sa[i] = a->step[i][k];
			sb[i] = b->step[i][k];
		}
		for (int j = 0; j < 3; j++) {
			enum xo_cross w = xo_explain_what_if(&a->model, &q[j], sa, sb, n, &v);

			if (w == XO_CROSS_AT)
				snprintf(line, sizeof(line),
				         "a %s %s would cross %s at batch ~%.0f", b->spec, desc[j],
				         a->spec, v);
			else if (w == XO_CROSS_BELOW)
				snprintf(
				    line, sizeof(line),
				    "a %s %s would be faster than %s at every batch from %" PRId64,
				    b->spec, desc[j], a->spec, o->batches[0]);
			else
				snprintf(line, sizeof(line),
				         "a %s %s would still not be faster than %s in %" PRId64
				         "..%" PRId64,
				         b->spec, desc[j], a->spec, o->batches[0],
				         o->batches[n - 1]);
			fprintf(txt, "  what if: %s\n", line);
			json_array_append_new(wi, json_string(line));
		}
		/* the search: the smallest power-of-2 speed-up of b's compute
		 * (FLOP/s and memory bandwidth, launches as probed) at which b
		 * is faster somewhere in the range */
		if (cpk == XO_CROSS_NONE)
			for (double f = 2; f <= 4096; f *= 2) {
				struct xo_probe qf = b->model;
				enum xo_cross w;

				qf.flops *= f;
				qf.mem_bw *= f;
				w = xo_explain_what_if(&a->model, &qf, sa, sb, n, &v);
				if (w == XO_CROSS_NONE)
					continue;
				if (w == XO_CROSS_AT)
					snprintf(
					    line, sizeof(line),
					    "%s would need %.0fx its compute rate (as probed) to "
					    "be "
					    "faster than %s, from batch ~%.0f; its launches as "
					    "probed",
					    b->spec, f, a->spec, v);
				else
					snprintf(line, sizeof(line),
					         "%s would need %.0fx its compute rate (as probed) "
					         "to be "
					         "faster than %s at every batch from %" PRId64,
					         b->spec, f, a->spec, o->batches[0]);
				fprintf(txt, "  what if: %s\n", line);
				json_array_append_new(wi, json_string(line));
				break;
			}
	}
	json_object_set_new(obj, "what_if", wi);
}

int xo_explain_run(const struct xo_explain_options *o)
{
	static struct dev devs[XO_EXPLAIN_MAX_DEVICES];
	FILE *txt = o->json ? o->err : o->out;
	json_t *root = NULL, *jdevs, *jpts;
	double t0 = xo_now_s();
	int ndev = 0, within = 0, match = 0, npred = 0, rc = 2;

	memset(devs, 0, sizeof(devs));
	for (int i = 0; i < o->ndevices; i++)
		devs[ndev++].spec = o->devices[i];
	root = json_object();
	jdevs = json_array();
	jpts = json_array();
	/* owned by root from here, so an early exit frees them with it */
	json_object_set_new(root, "model", json_string(o->model_path ? o->model_path : "seed"));
	json_object_set_new(root, "devices", jdevs);
	json_object_set_new(root, "points", jpts);
	for (int i = 0; i < ndev; i++) {
		if (run_device(o, &devs[i], txt))
			goto out_free;
		json_t *jd = json_object();

		json_object_set_new(jd, "device", json_string(devs[i].spec));
		json_object_set_new(jd, "describe", json_string(devs[i].desc));
		json_object_set_new(jd, "probe", probe_json(&devs[i]));
		json_array_append_new(jdevs, jd);
		for (int b = 0; b < o->nbatches; b++)
			for (int k = 1; k >= 0; k--) {
				const struct xo_explain_point *pt = &devs[i].pt[b][k];
				double r = pt->predicted.wall_s / pt->measured_s;

				json_array_append_new(
				    jpts, point_json(&devs[i], pt, &devs[i].step[b][k]));
				if (!devs[i].have_probe)
					continue;
				npred++;
				within += r >= 0.5 && r <= 2;
				match += xo_split_dominant(&pt->measured) ==
				         xo_split_dominant(&pt->predicted);
			}
	}
	if (ndev >= 2) {
		json_t *ct = json_object(), *cp = json_object();

		crossover(o, &devs[0], &devs[1], 1, ct, txt);
		crossover(o, &devs[0], &devs[1], 0, cp, txt);
		json_object_set_new(root, "crossover", ct);
		json_object_set_new(root, "crossover_predict", cp);
	} else {
		json_object_set_new(root, "crossover", json_null());
		json_object_set_new(root, "crossover_predict", json_null());
	}
	{
		json_t *acc = json_object();

		json_object_set_new(acc, "points", json_integer(npred));
		json_object_set_new(acc, "within_2x", json_integer(within));
		json_object_set_new(acc, "diagnosis_match", json_integer(match));
		json_object_set_new(root, "accuracy", acc);
	}
	if (npred)
		fprintf(txt,
		        "\naccuracy: %d of %d points predicted within 2x (%.0f%%); dominant cost "
		        "named as measured at %d of %d\n",
		        within, npred, 100.0 * within / npred, match, npred);
	fprintf(txt, "wall time %.1f s\n", xo_now_s() - t0);
	json_object_set_new(root, "wall_s", json_real(xo_now_s() - t0));
	if (o->json)
		xo_perf_json_print(root, o->out);
	rc = 0;
out_free:
	for (int i = 0; i < ndev; i++) {
		free((void *)devs[i].step[0][0].layers);
		for (int b = 0; b < XO_EXPLAIN_MAX_BATCHES; b++)
			devs[i].step[b][0].layers = devs[i].step[b][1].layers = NULL;
	}
	json_decref(root);
	return rc;
}
