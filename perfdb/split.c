/*
 * split.c - the wall-time decomposition and its one-sentence diagnosis
 * (split.h says what each part means and why they add up).
 */
#include <math.h>
#include <stdio.h>

#include "split.h"

const char *xo_split_part_name(enum xo_split_part p)
{
	static const char *const names[XO_SPLIT_COUNT] = {"launch", "transfer", "compute", "other"};

	return (unsigned)p < XO_SPLIT_COUNT ? names[p] : "?";
}

static double nonneg(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

void xo_split_from_events(double wall_s, double enqueue_s, double h2d_s, double kernel_s,
                          double d2h_s, double wait_s, double launches, struct xo_split *out)
{
	double w = nonneg(wall_s), compute = nonneg(kernel_s), transfer = nonneg(h2d_s) + nonneg(d2h_s);
	double busy = compute + transfer, idle, host_other;

	if (busy > w && busy > 0) { /* clock skew between device and host timers */
		compute *= w / busy;
		transfer *= w / busy;
		busy = compute + transfer;
	}
	idle = w > busy ? w - busy : 0;
	host_other = w - nonneg(enqueue_s) - nonneg(wait_s);
	host_other = host_other > 0 ? host_other : 0;
	if (host_other > idle)
		host_other = idle;
	*out = (struct xo_split){0}; /* no serial attribution unless one is made */
	out->part_s[XO_SPLIT_COMPUTE] = compute;
	out->part_s[XO_SPLIT_TRANSFER] = transfer;
	out->part_s[XO_SPLIT_OTHER] = host_other;
	/* what is left, so the parts add up to w whatever the rounding */
	out->part_s[XO_SPLIT_LAUNCH] = nonneg(w - compute - transfer - host_other);
	out->wall_s = out->part_s[XO_SPLIT_COMPUTE] + out->part_s[XO_SPLIT_TRANSFER] +
	              out->part_s[XO_SPLIT_OTHER] + out->part_s[XO_SPLIT_LAUNCH];
	out->launches = nonneg(launches);
}

void xo_split_host(double wall_s, struct xo_split *out)
{
	xo_split_from_events(wall_s, 0, 0, wall_s, 0, 0, 0, out);
}

enum xo_split_part xo_split_dominant(const struct xo_split *s)
{
	enum xo_split_part best = XO_SPLIT_LAUNCH;

	for (int p = 1; p < XO_SPLIT_COUNT; p++)
		if (s->part_s[p] > s->part_s[best])
			best = (enum xo_split_part)p;
	return best;
}

char *xo_fmt_seconds(double s, char *buf, size_t size)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (s < 1e-3)
		snprintf(buf, size, "%.3g us", s * 1e6);
	else if (s < 1)
		snprintf(buf, size, "%.3g ms", s * 1e3);
	else
		snprintf(buf, size, "%.3g s", s);
	return buf;
}

bool xo_split_serial_dominates(const struct xo_split *s)
{
	double c = s->part_s[XO_SPLIT_COMPUTE];

	if (!(s->serial_s > 0) || xo_split_dominant(s) != XO_SPLIT_COMPUTE ||
	    s->serial_s < c - s->serial_s)
		return false;
	for (int p = 0; p < XO_SPLIT_COUNT; p++)
		if (p != XO_SPLIT_COMPUTE && s->part_s[p] > s->serial_s)
			return false;
	return true;
}

char *xo_split_diagnose(const struct xo_split *s, const char *device, const char *what,
                        int64_t batch, char *buf, size_t size)
{
	enum xo_split_part d = xo_split_dominant(s);
	double pct = s->wall_s > 0 ? 100 * s->part_s[d] / s->wall_s : 0;
	char t[32], passes[32] = "", more[48] = "";

	if (!size)
		return buf;
	if (xo_split_serial_dominates(s)) {
		xo_fmt_seconds(s->serial_step_s, t, sizeof(t));
		if (s->serial_passes > 1.5)
			snprintf(passes, sizeof(passes), "%.0f x ", s->serial_passes);
		if (s->serial_more > 0)
			snprintf(more, sizeof(more), ", and %d more recurrent layer%s", s->serial_more,
			         s->serial_more > 1 ? "s" : "");
		snprintf(buf, size,
		         "at batch %lld the %s %s is %.0f%% serial time steps: %s%.0f steps x %s "
		         "(%s%s)",
		         (long long)batch, device, what,
		         s->wall_s > 0 ? 100 * s->serial_s / s->wall_s : 0, passes, s->serial_steps, t,
		         s->serial_layer, more);
		return buf;
	}
	switch (d) {
	case XO_SPLIT_LAUNCH:
		if (s->launches >= 1) {
			xo_fmt_seconds(s->part_s[d] / s->launches, t, sizeof(t));
			snprintf(buf, size,
			         "at batch %lld the %s %s is %.0f%% launch and sync latency: %.0f "
			         "launch%s x %s",
			         (long long)batch, device, what, pct, s->launches,
			         s->launches < 1.5 ? "" : "es", t);
		} else {
			snprintf(buf, size, "at batch %lld the %s %s is %.0f%% launch and sync latency",
			         (long long)batch, device, what, pct);
		}
		break;
	case XO_SPLIT_TRANSFER:
		snprintf(buf, size, "at batch %lld the %s %s is transfer-bound (%.0f%% in host-device "
		         "copies)", (long long)batch, device, what, pct);
		break;
	case XO_SPLIT_COMPUTE:
		snprintf(buf, size, "at batch %lld the %s %s is compute-bound (%.0f%% in kernels)",
		         (long long)batch, device, what, pct);
		break;
	default:
		snprintf(buf, size, "at batch %lld the %s %s is %.0f%% host work outside the device",
		         (long long)batch, device, what, pct);
		break;
	}
	return buf;
}
