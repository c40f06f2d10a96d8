// SPDX-License-Identifier: MIT
/*
 * --svg FILE: a flame chart of each thread's last N calls in time order,
 * a lane group per thread, callers above callees, the stop at the right
 * edge.  Self-contained SVG 1.1: no script, no fonts, no links; a
 * <title> on every box is the browser's tooltip.
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "btrace/btrace.h"
#include "timeline_span.h"

#define SVG_W		1200
#define CHART_X0	10
#define CHART_X1	1060		/* the stop; its label to the right */
#define ROW_H		20
#define BOX_H		18
#define LANE_HEAD	24
#define LANE_GAP	12
#define TOP		48
#define AXIS_H		40
#define CHAR_W		6.7		/* monospace 11px, for labels' widths */
#define STOP_NAME_MAX	18		/* what fits right of the stop */

/* The time window drawn: [t0, t1] on the clock, mapped to the chart. */
struct frame {
	uint64_t t0, t1;
	double scale;		/* pixels per clock unit */
};

/* @s as XML character data or an attribute's value. */
static void put_xml(FILE *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* control bytes are not XML */
			if ((unsigned char)s[i] >= 0x20)
				fputc(s[i], out);
		}
	}
}

/* The same colour for the same function, in flame colours. */
static void fill_of(const char *name, char *buf, size_t size)
{
	unsigned h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	snprintf(buf, size, "hsl(%u,%u%%,%u%%)", h % 50, 60 + (h >> 8) % 30,
		 62 + (h >> 16) % 12);
}

static int visible(const struct tl_lane *l, const struct tl_span *s,
		   const struct frame *f)
{
	return l->offset + s->end > f->t0 ||
	       (s->end == s->start && l->offset + s->end == f->t0);
}

/* The rows lane @l needs in @f: its visible depths, shallowest first. */
static int lane_rows(const struct tl_lane *l, const struct frame *f,
		     int *shallowest)
{
	int lo = INT_MAX, hi = -1;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (!visible(l, &l->span[i], f))
			continue;
		if (l->span[i].depth < lo)
			lo = l->span[i].depth;
		if (l->span[i].depth > hi)
			hi = l->span[i].depth;
	}
	*shallowest = hi < 0 ? 0 : lo;
	return hi < 0 ? 1 : hi - lo + 1;
}

static void svg_box(FILE *out, const struct tl *tl, const struct tl_lane *l,
		    const struct tl_span *s, const struct frame *f, int y)
{
	uint64_t a = l->offset + s->start, b = l->offset + s->end;
	char buf[32], src[160], fill[40];
	const char *name;
	double x, w;
	size_t fit, len;

	if (a < f->t0)
		a = f->t0;
	x = CHART_X0 + (double)(a - f->t0) * f->scale;
	w = (double)(b - a) * f->scale;
	if (w < 1)
		w = 1;
	if (s->gap) {
		snprintf(buf, sizeof(buf), "gap: %s",
			 bt_gap_reason_name(s->reason));
		fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			"height=\"%d\" fill=\"#999\"><title>%s</title></rect>\n",
			x, y, w < 3 ? 3 : w, BOX_H, buf);
		return;
	}
	name = tl_func(tl, s->addr, buf, sizeof(buf));
	fill_of(name, fill, sizeof(fill));
	fputs("<g><title>", out);
	put_xml(out, name, SIZE_MAX);
	if (tl_src(tl, s->addr, src, sizeof(src))[0]) {
		fputs("  ", out);
		put_xml(out, src, SIZE_MAX);
	}
	fprintf(out, "  %" PRIu64 " %s%s</title>", s->end - s->start,
		tl_clock_name(tl->clock),
		s->open ? ", not returned at the stop" : "");
	fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"rx=\"2\" fill=\"%s\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
		x, y, w, BOX_H, fill);
	len = strlen(name);
	fit = w > 8 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= 3) {
		fprintf(out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + 13);
		put_xml(out, name, fit < len ? fit - 2 : len);
		fputs(fit < len ? "..</text>" : "</text>", out);
	}
	fputs("</g>\n", out);
}

static int svg_lane(FILE *out, const struct tl *tl, const struct tl_lane *l,
		    const struct frame *f, int y)
{
	char stop[32];
	int lo, rows = lane_rows(l, f, &lo);
	size_t i;

	fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"head\">thread %d",
		CHART_X0, y + 15, (int)l->tid);
	if (l->tid == tl->tr->stop.tid && tl->tr->stop.reason)
		fprintf(out, " (stopped: %s)",
			tl_stop_label(&tl->tr->stop, stop, sizeof(stop)));
	if (l->err)
		fprintf(out, ": no trace (%s)", bt_errstr(l->err));
	fputs("</text>\n", out);
	y += LANE_HEAD;
	for (i = 0; i < l->n; i++)
		if (visible(l, &l->span[i], f))
			svg_box(out, tl, l, &l->span[i], f,
				y + (l->span[i].depth - lo) * ROW_H);
	return y + rows * ROW_H + LANE_GAP;
}

/* Ticks under the chart: clock units before the stop. */
static void svg_axis(FILE *out, const struct tl *tl, const struct frame *f,
		     int y)
{
	uint64_t span = f->t1 - f->t0;
	int i;

	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"#444\"/>\n", CHART_X0, y, CHART_X1, y);
	for (i = 0; i <= 4; i++) {
		double x = CHART_X0 + (CHART_X1 - CHART_X0) * i / 4.0;
		uint64_t before = span - span * i / 4;

		fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#444\"/><text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"%s\">%s%" PRIu64 " %s</text>\n", x, y, x,
			y + 5, x, y + 18, i == 0 ? "start" : i == 4 ? "end" :
			"middle", before ? "-" : "", before,
			tl_clock_name(tl->clock));
	}
}

static void svg_frame(const struct tl *tl, struct frame *f)
{
	size_t i;

	f->t1 = tl->end;
	f->t0 = tl->end;
	for (i = 0; i < tl->nlanes; i++)
		if (tl->lane[i].n && tl->lane[i].offset + tl->lane[i].recent <
				     f->t0)
			f->t0 = tl->lane[i].offset + tl->lane[i].recent;
	if (f->t1 == f->t0)
		f->t0 = f->t1 ? f->t1 - 1 : 0, f->t1 = f->t0 + 1;
	f->scale = (double)(CHART_X1 - CHART_X0) / (double)(f->t1 - f->t0);
}

static int svg_height(const struct tl *tl, const struct frame *f)
{
	int h = TOP, lo;
	size_t i;

	for (i = 0; i < tl->nlanes; i++)
		h += LANE_HEAD + lane_rows(&tl->lane[i], f, &lo) * ROW_H +
		     LANE_GAP;
	return h + AXIS_H;
}

static void svg_head(FILE *out, const struct tl *tl, int height)
{
	const char *exe = tl->tr->exe ? strrchr(tl->tr->exe, '/') : NULL;

	exe = exe ? exe + 1 : tl->tr->exe ? tl->tr->exe : "process";
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
		"<style>text { font: 11px monospace; fill: #000; } "
		".head { font-weight: bold; } .note { fill: #555; } "
		"g:hover rect { stroke: #000; stroke-width: 1; }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"%d\" y=\"18\" class=\"head\">", SVG_W, height, SVG_W,
		height, CHART_X0);
	put_xml(out, exe, SIZE_MAX);
	fprintf(out, " (pid %d): the last calls of each thread, oldest "
		"left</text>\n<text x=\"%d\" y=\"34\" class=\"note\">time: "
		"%s%s; hover a box for its function, source and length</text>\n",
		(int)tl->tr->pid, CHART_X0, tl_clock_name(tl->clock),
		tl->clock == TL_CLOCK_TIME ? " (the trace's timestamps)" :
		" (no timestamps in this trace); every thread ends at the stop");
}

/* The function thread @tid was in at the stop: its deepest open call. */
static const struct tl_span *stopped_in(const struct tl *tl, pid_t tid)
{
	const struct tl_span *in = NULL;
	size_t i, j;

	for (i = 0; i < tl->nlanes; i++)
		for (j = 0; tl->lane[i].tid == tid && j < tl->lane[i].n; j++)
			if (tl->lane[i].span[j].open && !tl->lane[i].span[j].gap &&
			    (!in || tl->lane[i].span[j].depth > in->depth))
				in = &tl->lane[i].span[j];
	return in;
}

/*
 * The stop: a line at the right edge, its reason and the function the
 * thread was in beside it (its box may be too narrow for a label).
 */
static void svg_stop(FILE *out, const struct tl *tl, int height)
{
	const struct tl_span *in = stopped_in(tl, tl->tr->stop.tid);
	char stop[32], buf[32];

	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"#d00\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>\n"
		"<text x=\"%d\" y=\"%d\" style=\"fill: #d00; font-weight: bold\">"
		"stop: %s</text>\n", CHART_X1, TOP - 6, CHART_X1,
		height - AXIS_H + 5, CHART_X1 + 6, TOP + 15,
		tl->tr->stop.reason ? tl_stop_label(&tl->tr->stop, stop,
						    sizeof(stop)) : "end");
	if (!in || !tl->tr->stop.reason)
		return;
	fprintf(out, "<text x=\"%d\" y=\"%d\" style=\"fill: #d00\">in ",
		CHART_X1 + 6, TOP + 29);
	put_xml(out, tl_func(tl, in->addr, buf, sizeof(buf)), STOP_NAME_MAX);
	fputs("</text>\n", out);
}

void tl_write_svg(FILE *out, const struct tl *tl)
{
	struct frame f;
	int y = TOP, height;
	size_t i;

	svg_frame(tl, &f);
	height = svg_height(tl, &f);
	svg_head(out, tl, height);
	for (i = 0; i < tl->nlanes; i++)
		y = svg_lane(out, tl, &tl->lane[i], &f, y);
	svg_axis(out, tl, &f, y + 2);
	svg_stop(out, tl, height);
	fputs("</svg>\n", out);
}
