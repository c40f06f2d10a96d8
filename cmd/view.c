// SPDX-License-Identifier: MIT
/* One thread's trace made ready for the printer, in any view (view.h). */
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "view.h"

/* The straight-line code after the last branch is bounded by this. */
#define TAIL_MAX 100000

/* Show the last @last of @n entries (0: all). */
static void window_last(struct print_thread *pt, size_t n, size_t last)
{
	pt->window = 1;
	pt->first = last && n > last ? n - last : 0;
	pt->end = n;
}

/* Instructions as they go to the printer, the last one remembered. */
struct insn_pass {
	bt_insn_fn fn;
	void *ctx;
	uint64_t last;
};

static int pass_insn(uint64_t addr, int gap, void *ctx)
{
	struct insn_pass *p = ctx;

	p->last = addr;
	return p->fn(addr, gap, p->ctx);
}

/*
 * What ran after the last branch, up to where the thread stopped (not
 * that instruction: it has not completed): straight-line code by
 * definition, walked through the image; a conditional branch on the way
 * was not taken (a taken one would be in the history).  Only where the decoder ended at
 * that branch; PT may have told more already.
 */
static int insns_tail(const struct view_thread *v, struct insn_pass *p)
{
	const struct bt_history *h = v->pt.hist;
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_disasm *dis;
	struct bt_insn insn;
	uint64_t pc;
	ssize_t n;
	int guard, ret = 0;

	if (!h || !h->count || !v->src.stop_pc ||
	    h->branch[h->count - 1].kind == BT_BR_GAP ||
	    p->last != h->branch[h->count - 1].from)
		return 0;
	if (bt_disasm_alloc(&dis) < 0)
		return 0;
	pc = h->branch[h->count - 1].to;
	for (guard = 0; !ret && pc != v->src.stop_pc && guard < TAIL_MAX;
	     guard++) {
		n = bt_image_read(v->src.image, pc, code, sizeof(code));
		if (n <= 0 || bt_insn_decode(dis, code, n, pc, &insn) < 0 ||
		    (insn.iclass != BT_INSN_OTHER && insn.iclass != BT_INSN_COND))
			break;
		ret = pass_insn(pc, 0, p);
		pc += insn.len;
	}
	bt_disasm_free(dis);
	return ret;
}

static int view_insns(void *ctx, bt_insn_fn fn, void *fn_ctx)
{
	struct view_thread *v = ctx;
	struct bt_decode_opts dopts = { .size = sizeof(dopts),
					.last = v->last,
					.image = v->src.image };
	struct insn_pass p = { fn, fn_ctx, 0 };
	int ret;

	ret = bt_decode_insns(v->src.cap, &dopts, pass_insn, &p);
	if (ret == 0)
		ret = insns_tail(v, &p);
	return ret < 0 ? ret : 0;
}

int view_thread_init(struct view_thread *v, int view, pid_t tid,
		     const struct view_src *src, size_t last)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts),
					.image = src->image };
	const struct bt_history *h = src->full;
	int ret;

	v->src = *src;
	v->last = last;
	v->pt.tid = tid;
	if (!h) {
		/* A call's depth depends on everything before it. */
		dopts.last = view == PRINT_CALLS ? 0 : last;
		ret = bt_decode(src->cap, &dopts, &v->hist);
		if (ret < 0) {
			v->pt.err = ret;
			return ret == -bte_nomem ? ret : 0;
		}
		h = v->hist;
	}
	v->pt.hist = h;
	if (view == PRINT_CALLS) {
		ret = bt_calls_build(h, src->symtab, &v->calls);
		if (ret < 0)
			return ret;
		v->pt.calls = v->calls;
		window_last(&v->pt, v->calls->count, last);
	} else if (view == PRINT_INSNS) {
		v->pt.insns = view_insns;
		v->pt.insns_ctx = v;
	} else if (src->full) {
		window_last(&v->pt, h->count, last);
	}
	return 0;
}

void view_thread_release(struct view_thread *v)
{
	bt_calls_free(v->calls);
	bt_history_free(v->hist);
	memset(v, 0, sizeof(*v));
}

/*
 * Anonymous executable memory (a JIT's code, btrace's own translations,
 * tens of MiB) is not copied: live memory is read where a view needs it.
 */
static void anon_leave_live(struct bt_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->count; i++) {
		const char *p = maps->map[i].path;

		if (!p || !p[0] || !strncmp(p, "[anon:", 6))
			maps->map[i].prot &= ~(uint32_t)BT_MAP_X;
	}
}

struct bt_image *view_image(pid_t pid, bt_image_read_fn read, void *ctx)
{
	struct bt_maps maps = { 0 };
	struct bt_image *image = bt_image_alloc();

	if (!image)
		return NULL;
	if (bt_maps_read(pid, &maps) == 0) {
		anon_leave_live(&maps);
		bt_image_add_maps(image, &maps, read, ctx);
		bt_maps_release(&maps);
	}
	bt_image_set_fallback(image, read, ctx);
	return image;
}

int view_fault_init(struct view_fault *vf, int view, const struct bt_fault *f,
		    const struct view_src *src, size_t last)
{
	struct view_src fsrc = *src;
	int ret;

	memset(vf, 0, sizeof(*vf));
	vf->stop = f->stop;
	fsrc.cap = &f->cap;
	fsrc.full = NULL;
	fsrc.stop_pc = f->stop.pc;
	ret = view_thread_init(&vf->v, view, f->stop.tid, &fsrc, last);
	vf->v.pt.tid = f->stop.tid;
	vf->v.pt.at_fault = 1;
	if (ret < 0)
		vf->v.pt.err = ret;
	vf->pf.stop = &vf->stop;
	vf->pf.thread = &vf->v.pt;
	vf->pf.after = f->after;
	vf->pf.after_lost = f->after_lost;
	vf->pf.count = f->count;
	return 0;
}

void view_fault_release(struct view_fault *vf)
{
	view_thread_release(&vf->v);
}
