/*
 * cost.c - the cost model (cost.h has the formula): a predicted step split
 * from a probe, per-layer costs and the step's structure; and the crossover
 * batch of two time curves.
 */
#include <math.h>
#include <stdio.h>

#include "cost.h"

/* A probe figure that applies: finite and > 0. */
static bool have(double v)
{
	return isfinite(v) && v > 0;
}

/* seconds for amount at rate, 0 where the rate does not apply */
static double over(double amount, double rate)
{
	return have(rate) && amount > 0 ? amount / rate : 0;
}

static double times(double count, double each)
{
	return have(each) && count > 0 ? count * each : 0;
}

/* One roofline term: adds flops and bytes to t and returns max(time of
 * each). */
static double roofline(const struct xo_probe *p, double flops, double bytes,
                       struct xo_cost_terms *t)
{
	double tf = over(flops, p->flops), tb = over(bytes, p->mem_bw);

	t->flops += flops;
	t->bytes += bytes;
	t->compute_flops_s += tf;
	t->compute_bytes_s += tb;
	if (tf > tb && tf > 0)
		t->flop_bound_layers++;
	return tf > tb ? tf : tb;
}

/* The cpu fused path's pool (cost.h): sets t->pool_* and adds pool_s to
 * t->compute_s (the roofline sum so far). */
static void pool(const struct xo_probe *p, const struct xo_cost_step *step,
                 struct xo_cost_terms *t)
{
	double u = p->units, c = t->compute_flops_s, macs = 0;

	if (!(step->pool_min_macs > 0) || !(u > 1) || !(c > 0))
		return;
	for (int i = 0; i < step->nlayers; i++)
		macs += step->layers[i].flops_fwd / 2;
	macs *= (double)step->batch * (step->training ? 3 : 1);
	t->pool_macs = macs;
	if (macs < step->pool_min_macs) {
		t->pool_threads = 1;
		t->pool_s = c * (u - 1);
	} else {
		double join = have(p->handoff_s) ? p->handoff_s : 0;

		t->pool_threads = p->units;
		t->pool_s = c * u <= join ? c * (u - 1) : join * (1 - 1 / u);
	}
	t->compute_s += t->pool_s;
}

/* Layer c's FLOPs and bytes in the step. */
static void layer_amounts(const struct xo_cost_step *step, const struct xo_layer_cost *c,
                          double *flops, double *bytes)
{
	double n = (double)step->batch, act = c->act_bytes_fwd, w = c->w_bytes_fwd;

	*flops = n * c->flops_fwd;
	if (step->training) {
		*flops += n * c->flops_bwd;
		act += c->ws_bytes + c->act_bytes_bwd;
		w += c->w_bytes_bwd;
	} else if (!c->ops_predict) {
		act = 0; /* dropout: the identity at inference, no op */
	}
	if (step->fused)
		act = 0; /* counted once by the caller: the model's input and output */
	*bytes = n * act + w;
}

/* Layer c's roofline time in the step: its FLOP or byte time, the larger
 * (as roofline() takes it, without counting the terms). */
static double layer_roofline(const struct xo_probe *p, const struct xo_cost_step *step,
                             const struct xo_layer_cost *c)
{
	double flops, bytes;

	layer_amounts(step, c, &flops, &bytes);
	return fmax(over(flops, p->flops), over(bytes, p->mem_bw));
}

/* One recurrent step at the step's width (cost.h): the serial latency plus
 * one sample's chain of macs spread over rnn_lanes work-items. */
static double step_time(const struct xo_probe *p, const struct xo_cost_step *step, double macs)
{
	double t = have(p->step_s) ? p->step_s : 0;

	if (step->rnn_lanes > 0 && have(p->lane_mac_s) && macs > 0)
		t += macs / step->rnn_lanes * p->lane_mac_s;
	return t;
}

/* Layer c's time steps in series: T x step forward, and back through time
 * in training (*passes 1 or 2); 0 for a layer that is not recurrent. */
static double serial_time(const struct xo_probe *p, const struct xo_cost_step *step,
                          const struct xo_layer_cost *c, double *passes)
{
	double T = (double)c->steps, s;

	*passes = 0;
	if (!(c->steps > 0))
		return 0;
	s = T * step_time(p, step, c->step_macs_fwd);
	*passes = 1;
	if (step->training && c->step_macs_bwd > 0) {
		s += T * step_time(p, step, c->step_macs_bwd);
		*passes = 2;
	}
	return s;
}

/* Names layer c in out's serial fields when its serial time v beats the
 * leading one so far (*lead); counts it either way. */
static void serial_note(struct xo_split *out, const struct xo_layer_cost *c, double v,
                        double passes, double *lead, int *count)
{
	if (v > *lead) {
		*lead = v;
		out->serial_passes = passes;
		out->serial_steps = (double)c->steps;
		out->serial_step_s = v / passes / (double)c->steps;
		snprintf(out->serial_layer, sizeof(out->serial_layer), "%s(%lld)",
		         c->recurrent ? c->recurrent : "RNN", (long long)c->units);
	}
	(*count)++;
	out->serial_more = *count - 1;
}

void xo_cost_predict(const struct xo_probe *p, const struct xo_cost_step *step,
                     struct xo_split *out, struct xo_cost_terms *terms)
{
	struct xo_cost_terms t = {0};
	double n = (double)step->batch, fl = 4.0 * (double)step->classes, lead = 0;
	int nserial = 0;

	*out = (struct xo_split){0};
	for (int i = 0; i < step->nlayers; i++) {
		const struct xo_layer_cost *c = &step->layers[i];
		double flops, bytes, r, ser, passes;

		layer_amounts(step, c, &flops, &bytes);
		r = roofline(p, flops, bytes, &t);
		/* a recurrent layer: no faster than its steps in series */
		ser = serial_time(p, step, c, &passes);
		t.serial_steps += passes * (double)c->steps;
		if (ser > r) {
			t.serial_s += ser;
			serial_note(out, c, ser, passes, &lead, &nserial);
			r = ser;
		}
		/* an attention layer: no faster than its serial part (the
		 * roofline takes its FLOPs as one GEMM's) */
		if (c->heads > 0) {
			struct xo_cost_attention a;

			xo_cost_attention(p, step, c, &a);
			if (a.serial_s > r) {
				t.attention_serial_s += a.serial_s;
				r = a.serial_s;
			}
		}
		t.compute_s += r;
	}
	if (step->fused) /* the input samples read, the probabilities written */
		t.compute_s += roofline(p, 0, n * (4.0 * (double)step->in_size + fl), &t);
	if (step->training) {
		/* loss, accuracy, loss gradient: read probabilities and labels
		 * (2 + 2 + 2 rows), write the gradient (1 row) per sample; Adam:
		 * reads gradient, parameter, m, v and writes the last three */
		t.compute_s += roofline(p, 0, n * 7 * fl, &t);
		t.compute_s += roofline(p, 0, 7 * 4.0 * (double)step->params, &t);
	}
	if (step->extra_bytes > 0)
		t.compute_s += roofline(p, 0, step->extra_bytes, &t);
	pool(p, step, &t);
	/* a host backend's kernels cost a fixed time per call however small the
	 * call (dispatch, checks, loop set-up): what dominates at batch 1 */
	t.op_fixed_s = times(step->ops, step->op_call_s);
	t.compute_s += t.op_fixed_s;
	t.launch_s = times(step->launches, p->launch_s);
	/* a blocking copy's latency is a round trip during which the bus is
	 * idle: launch and sync latency in the split's terms, as measured */
	t.copy_lat_s = times(step->h2d_count, p->h2d_lat_s) + times(step->d2h_count, p->d2h_lat_s);
	t.h2d_s = over(step->h2d_bytes, p->h2d_bw);
	t.d2h_s = over(step->d2h_bytes, p->d2h_bw);
	out->part_s[XO_SPLIT_LAUNCH] = t.launch_s + t.copy_lat_s;
	out->part_s[XO_SPLIT_TRANSFER] = t.h2d_s + t.d2h_s;
	out->part_s[XO_SPLIT_COMPUTE] = t.compute_s;
	out->part_s[XO_SPLIT_OTHER] = 0;
	out->wall_s = t.launch_s + t.copy_lat_s + t.h2d_s + t.d2h_s + t.compute_s;
	out->launches = step->launches > 0 ? step->launches : 0;
	out->serial_s = t.serial_s;
	if (terms)
		*terms = t;
}

int xo_cost_serial_measured(const struct xo_probe *p, const struct xo_cost_step *step,
                            const double *layer_s, struct xo_split *measured)
{
	double total = 0, lead = 0, compute = measured->part_s[XO_SPLIT_COMPUTE];
	int n = 0;

	measured->serial_s = 0;
	measured->serial_layer[0] = 0;
	for (int i = 0; i < step->nlayers; i++) {
		const struct xo_layer_cost *c = &step->layers[i];
		double roof, ser, passes, k = layer_s[i], per, sstep, rstep;

		if (!(c->steps > 0) || !(k > 0) || !isfinite(k))
			continue;
		roof = layer_roofline(p, step, c);
		ser = serial_time(p, step, c, &passes);
		if (!(ser > 0))
			continue;
		per = k / passes / (double)c->steps;
		sstep = ser / passes / (double)c->steps;
		rstep = roof / passes / (double)c->steps;
		/* nearer (in log ratio) to the serial step than to the FLOP or
		 * byte time per step: the steps' latency, not the rate, set it */
		if (rstep > 0 && !(fabs(log(per / sstep)) < fabs(log(per / rstep))))
			continue;
		total += k;
		serial_note(measured, c, k, passes, &lead, &n);
	}
	measured->serial_s = total < compute ? total : compute;
	return n;
}

void xo_cost_attention(const struct xo_probe *p, const struct xo_cost_step *step,
                       const struct xo_layer_cost *c, struct xo_cost_attention *out)
{
	bool is_cl = step->cl;
	double n = (double)step->batch, h = (double)c->heads, tq = (double)c->len_q;
	double tk = (double)c->len_kv, dk = (double)c->key_dim, dv = (double)c->value_dim;
	double passes = step->training ? 3 : 1, exp_flops, units = p->units > 0 ? p->units : 1;

	*out = (struct xo_cost_attention){0};
	if (!(c->heads > 0))
		return;
	out->pairs = n * h;
	out->scores = n * h * tq * tk;
	out->scores_flops = passes * 2 * out->scores * dk;
	out->wsum_flops = passes * 2 * out->scores * dv;
	out->proj_flops = n * (c->flops_fwd + (step->training ? c->flops_bwd : 0)) -
	                  out->scores_flops - out->wsum_flops;
	out->gemm_s = over(out->proj_flops + out->scores_flops + out->wsum_flops, p->flops);
	/* cpu: each score written and read (8 bytes); cl: no score is stored,
	 * each query row's work-item reads its head's K rows for the maximum,
	 * the sum and the output and its V rows once, 4 (3 dk + dv) bytes a
	 * score */
	out->softmax_bytes = passes * out->scores * (is_cl ? 4 * (3 * dk + dv) : 8);
	exp_flops = passes * 20 * out->scores;
	out->softmax_s = fmax(over(exp_flops, p->flops), over(out->softmax_bytes, p->mem_bw));
	if (is_cl) {
		out->chain_macs = tk * (3 * dk + dv) * (step->training ? 3 : 1);
		out->serial_s = times(out->chain_macs, p->lane_mac_s);
	} else {
		out->calls = out->pairs * (step->training ? 7 : 2);
		out->serial_s = times(out->calls / units, p->step_s);
	}
	out->roofline_s = layer_roofline(p, step, c);
	out->bound = "GEMM";
	if (out->softmax_s > out->gemm_s && out->softmax_s >= out->serial_s)
		out->bound = "softmax";
	else if (out->serial_s > out->gemm_s && out->serial_s > out->softmax_s)
		out->bound = "serial";
}

enum xo_cross xo_cost_crossover(const double *x, const double *a, const double *b, int n,
                                double *batch)
{
	if (n < 1)
		return XO_CROSS_NONE;
	if (b[0] < a[0]) {
		*batch = x[0];
		return XO_CROSS_BELOW;
	}
	for (int i = 1; i < n; i++) {
		double d0, d1, f;

		if (!(b[i] < a[i]))
			continue;
		/* b slower (or equal) at i-1, faster at i: where log(b / a),
		 * linear in log2(batch), is 0 */
		d0 = log(b[i - 1] / a[i - 1]);
		d1 = log(b[i] / a[i]);
		f = d0 - d1 > 0 ? d0 / (d0 - d1) : 1;
		*batch = exp2(log2(x[i - 1]) + f * (log2(x[i]) - log2(x[i - 1])));
		return XO_CROSS_AT;
	}
	return XO_CROSS_NONE;
}
