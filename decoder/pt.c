// SPDX-License-Identifier: MIT
/*
 * Intel PT into branches, through libipt's block decoder.
 *
 * Blocks end at every instruction that needs trace (conditional and
 * indirect branches, returns, far transfers) and, as we configure it, at
 * direct calls and jumps: so the last instruction of a block is the only
 * branch in it.  Whether it was taken shows in where the next block starts.
 * A branch therefore waits ("pending") until the next block or event says
 * where the flow went.
 *
 * The last N: PT only decodes forwards, but every PSB is a place to start.
 * Decode from the last PSB to the end, then the stretch from the PSB before
 * it up to that one, and so on, until N entries are known: the cost follows
 * N and the PSB period, not the size of the buffer.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "brvec.h"
#include "btrace/error.h"
#include "decode_internal.h"
#include "image_internal.h"
#include "internal.h"
#include "pt_internal.h"
#include "pt_time.h"

/* Branch instructions by address: hot code is scanned once per pass. */
#define SCAN_CACHE 1024		/* a power of two, L1-sized */

struct scan_slot {
	uint64_t addr;
	int8_t kind, len;
	int32_t rel;		/* direct jumps and calls (rel32 at most) */
};

/* The state of one decoding pass. */
enum { PT_ON, PT_OFF_SYNC, PT_OFF_ASYNC, PT_OFF };

struct pt_pass {
	struct bt_image *image;
	struct bt_brvec *out;
	struct bt_branch pend;	/* a branch waiting for its target */
	uint64_t pend_fall;	/* a pending conditional's fall-through */
	int have_pend;
	struct bt_branch off;	/* how tracing went off */
	int state;
	uint32_t ninsn;		/* instructions since the last entry */
	uint64_t last_to;	/* the last address known */
	size_t open_gap;	/* index + 1 of a gap waiting for its "to" */
	size_t direct_run;	/* direct jumps and calls in a row */
	size_t keep;		/* entries wanted, 0: all */
	uint64_t first_ip;	/* where the pass started */
	struct scan_slot *scan;	/* SCAN_CACHE entries, or NULL */
	struct pt_timing time;	/* its position and time anchors */
};

/* libipt's time after a block: pt_blk_time's return and ticks. */
struct pt_tick {
	int status;
	uint64_t tsc;
};

/* Direct branches libipt may follow past the end of the trace. */
#define PT_MAX_GUESS 4096

static int is_direct(const struct bt_branch *br)
{
	return br->kind == BT_BR_JUMP || br->kind == BT_BR_CALL;
}

/*
 * Past the end of its trace libipt still follows direct jumps and calls:
 * those are a guess, unless the next stretch of trace (starting at
 * @stop_ip) shows the flow got there.  Keep the entries of this pass
 * (from @start on) up to the one that reaches @stop_ip, or up to the last
 * branch the trace decided.
 */
static void trim_guess(struct bt_brvec *v, size_t start, uint64_t stop_ip)
{
	size_t i = v->n, j;

	while (i > start && is_direct(&v->v[i - 1]))
		i--;
	for (j = i; stop_ip && j < v->n; j++) {
		if (v->v[j].to == stop_ip) {
			v->n = j + 1;
			return;
		}
	}
	v->n = i;
}

/* Append @br; a bounded history drops its older half when full. */
static inline int pass_push(struct pt_pass *ps, const struct bt_branch *br)
{
	struct bt_brvec *v = ps->out;

	ps->direct_run = is_direct(br) ? ps->direct_run + 1 : 0;
	if (__builtin_expect(v->n == v->alloc, 0) &&
	    bt_brvec_reserve(v, 1) < 0)
		return bt_fail(bte_nomem, ENOMEM, "branches");
	v->v[v->n] = *br;
	v->v[v->n++].ts = ps->time.pos;	/* a time once the pass ends */
	return 0;
}

static int pass_gap(struct pt_pass *ps, int reason, uint64_t from,
		    uint64_t to)
{
	struct bt_branch gap = { .from = from, .to = to, .kind = BT_BR_GAP,
				 .gap = reason };

	ps->ninsn = 0;
	ps->have_pend = 0;
	if (to)
		ps->last_to = to;
	return pass_push(ps, &gap);
}

/* We learnt where the flow is: @ip.  Settle the pending branch. */
static int pass_resolve(struct pt_pass *ps, uint64_t ip)
{
	if (ps->open_gap) {
		ps->out->v[ps->open_gap - 1].to = ip;
		ps->open_gap = 0;
	}
	if (!ps->have_pend)
		return 0;
	ps->have_pend = 0;
	if (ps->pend.kind == BT_BR_COND && ip == ps->pend_fall) {
		ps->ninsn += ps->pend.ninsn;	/* not taken */
		return 0;
	}
	ps->pend.to = ip;
	ps->last_to = ip;
	return pass_push(ps, &ps->pend);
}

/* The kind of branch @blk ends with, from its class and its bytes. */
static void block_scan(struct pt_pass *ps, const struct pt_block *blk,
		       struct pt_scan *s)
{
	uint8_t buf[pt_max_insn_size];
	const uint8_t *p;
	size_t n;
	ssize_t got;

	if (blk->truncated) {
		bt_pt_scan_insn(blk->raw, blk->size, s);
		return;
	}
	p = bt_image_peek(ps->image, blk->end_ip, &n);
	if (!p) {
		got = bt_image_read(ps->image, blk->end_ip, buf, sizeof(buf));
		p = buf;
		n = got > 0 ? got : 0;
	}
	bt_pt_scan_insn(p, n < pt_max_insn_size ? n : pt_max_insn_size, s);
}

static void block_scan_cached(struct pt_pass *ps, const struct pt_block *blk,
			      struct pt_scan *s)
{
	struct scan_slot *slot;

	if (!ps->scan || blk->truncated) {
		block_scan(ps, blk, s);
		return;
	}
	slot = &ps->scan[(blk->end_ip ^ (blk->end_ip >> 11)) &
			 (SCAN_CACHE - 1)];
	if (slot->addr == blk->end_ip) {
		s->kind = slot->kind;
		s->len = slot->len;
		s->rel = slot->rel;
		s->direct = slot->kind == BT_BR_JUMP || slot->kind == BT_BR_CALL ?
			    slot->len != 0 : 0;
		return;
	}
	block_scan(ps, blk, s);
	slot->addr = blk->end_ip;
	slot->kind = s->kind;
	slot->len = s->len;
	slot->rel = s->rel;
	if (s->kind != BT_BR_COND && !s->direct)
		slot->len = 0;
}

/* Does the class say "maybe a branch"?  Then the bytes tell which. */
static int class_branches(enum pt_insn_class iclass)
{
	switch (iclass) {
	case ptic_other:
	case ptic_ptwrite:
		return 0;
	default:
		return 1;
	}
}

/* The flow of @blk; *@decided: it ends with a branch the trace decided. */
static int pass_block_flow(struct pt_pass *ps, const struct pt_block *blk,
			   int *decided)
{
	struct pt_scan s;
	int err;

	/*
	 * Even an empty block starts where the decoder is: past the pending
	 * branch, whose trace it has already consumed.
	 */
	if (ps->state == PT_ON && blk->ip && (ps->have_pend || ps->open_gap)) {
		err = pass_resolve(ps, blk->ip);
		if (err < 0)
			return err;
	}
	if (!blk->ninsn)
		return 0;
	if (!ps->last_to)
		ps->last_to = blk->ip;
	if (!ps->first_ip)
		ps->first_ip = blk->ip;
	ps->ninsn += blk->ninsn;
	if (blk->iclass == ptic_return) {
		s.kind = BT_BR_RET;	/* needs no bytes */
		s.len = 0;
		s.direct = 0;
	} else if (!class_branches(blk->iclass)) {
		return 0;
	} else {
		block_scan_cached(ps, blk, &s);
	}
	if (s.kind == BT_BR_NONE)
		return 0;
	memset(&ps->pend, 0, sizeof(ps->pend));
	ps->pend.from = blk->end_ip;
	ps->pend.kind = s.kind;
	ps->pend.ninsn = ps->ninsn;
	ps->pend_fall = s.len ? blk->end_ip + s.len : 0;
	ps->pend.to = s.direct ? blk->end_ip + s.len + s.rel : 0;
	ps->have_pend = 1;
	ps->ninsn = 0;
	*decided = !s.direct;
	return 0;
}

static int pass_block(struct pt_pass *ps, const struct pt_block *blk,
		      const struct pt_tick *tk)
{
	int decided = 0, err = pass_block_flow(ps, blk, &decided);

	if (err < 0)
		return err;
	return pt_timing_block(&ps->time, blk->ninsn, decided, tk->status,
			       tk->tsc);
}

/* libipt's time now, where the capture can use it. */
static void pass_tick(const struct pt_pass *ps, struct pt_block_decoder *dec,
		      struct pt_tick *tk)
{
	tk->status = ps->time.conv ? pt_blk_time(dec, &tk->tsc, NULL, NULL)
				   : -pte_no_time;
}

/* Tracing came back on at @ip. */
static int pass_enabled(struct pt_pass *ps, uint64_t ip)
{
	int state = ps->state;

	ps->state = PT_ON;
	if (state == PT_OFF_SYNC) {
		ps->off.to = ip;
		ps->last_to = ip;
		ps->ninsn = 0;
		return pass_push(ps, &ps->off);
	}
	if (state == PT_OFF_ASYNC) {
		/* Back where it stopped: the kernel ran, the thread did not. */
		if (ip == ps->off.from) {
			ps->ninsn = ps->off.ninsn;
			return 0;
		}
		ps->off.to = ip;
		ps->off.kind = BT_BR_INTR;
		ps->last_to = ip;
		ps->ninsn = 0;
		return pass_push(ps, &ps->off);
	}
	if (ps->open_gap)
		return pass_resolve(ps, ip);
	ps->last_to = ip;
	return 0;
}

/* A synchronous disable binds to the branch that left traced code. */
static void pass_disabled(struct pt_pass *ps)
{
	if (ps->have_pend) {
		ps->off = ps->pend;
		ps->have_pend = 0;
		if (ps->off.kind != BT_BR_SYSCALL) {
			ps->off.kind = BT_BR_GAP;
			ps->off.gap = BT_GAP_DISABLED;
		}
	} else {
		memset(&ps->off, 0, sizeof(ps->off));
		ps->off.kind = BT_BR_GAP;
		ps->off.gap = BT_GAP_DISABLED;
		ps->off.from = ps->last_to;
		ps->off.ninsn = ps->ninsn;
	}
	ps->ninsn = 0;
	ps->state = PT_OFF_SYNC;
}

static int pass_async_disabled(struct pt_pass *ps, uint64_t at)
{
	int err = pass_resolve(ps, at);

	memset(&ps->off, 0, sizeof(ps->off));
	ps->off.from = at;
	ps->off.ninsn = ps->ninsn;
	ps->ninsn = 0;
	ps->state = PT_OFF_ASYNC;
	return err;
}

static int pass_overflow(struct pt_pass *ps, const struct pt_event *ev)
{
	uint64_t to = ev->ip_suppressed ? 0 : ev->variant.overflow.ip;

	/*
	 * libipt reports the overflow before the block after the pending
	 * branch: only a direct branch still says where it went.
	 */
	if (ps->have_pend && ps->pend.to && ps->pend.kind != BT_BR_COND) {
		ps->have_pend = 0;
		ps->last_to = ps->pend.to;
		if (pass_push(ps, &ps->pend) < 0)
			return -bte_nomem;
	}
	ps->have_pend = 0;
	ps->state = to ? PT_ON : PT_OFF;
	return pass_gap(ps, BT_GAP_OVERFLOW, ps->last_to, to);
}

static int pass_async_branch(struct pt_pass *ps, const struct pt_event *ev)
{
	struct bt_branch br = { .from = ev->variant.async_branch.from,
				.kind = BT_BR_INTR };
	int err = pass_resolve(ps, br.from);

	if (err < 0)
		return err;
	br.to = ev->ip_suppressed ? 0 : ev->variant.async_branch.to;
	br.ninsn = ps->ninsn;
	ps->ninsn = 0;
	ps->last_to = br.to;
	return pass_push(ps, &br);
}

static int pass_event(struct pt_pass *ps, const struct pt_event *ev)
{
	if (pt_timing_event(&ps->time, ev) < 0)
		return -bte_nomem;
	if (ev->status_update)
		return 0;
	switch (ev->type) {
	case ptev_enabled:
		return pass_enabled(ps, ev->variant.enabled.ip);
	case ptev_disabled:
		pass_disabled(ps);
		return 0;
	case ptev_async_disabled:
		return pass_async_disabled(ps, ev->variant.async_disabled.at);
	case ptev_async_branch:
		return pass_async_branch(ps, ev);
	case ptev_overflow:
		return pass_overflow(ps, ev);
	default:
		return 0;
	}
}

static int pass_events(struct pt_pass *ps, struct pt_block_decoder *dec,
		       int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;
		int err;

		status = pt_blk_event(dec, &ev, sizeof(ev));
		if (status < 0)
			return status;
		err = pass_event(ps, &ev);
		if (err < 0)
			return err;
	}
	return status;
}

/* An error inside the stream: a gap, then the next PSB. */
static int pass_error(struct pt_pass *ps, int status)
{
	int reason = status == -pte_nomap ? BT_GAP_NOCODE : BT_GAP_DECODE;
	uint64_t from = ps->have_pend ? ps->pend.from : ps->last_to;
	int err;

	if (ps->open_gap)
		return 0;	/* one gap per stretch of trouble */
	err = pass_gap(ps, reason, from, 0);
	ps->open_gap = ps->out->n;
	ps->state = PT_OFF;
	return err;
}

/* The next PSB whose PSB+ reads well. */
static int pt_resync(struct pt_block_decoder *dec)
{
	uint64_t last = UINT64_MAX, off;
	int status;

	for (;;) {
		status = pt_blk_sync_forward(dec);
		if (status >= 0 || status == -pte_eos || status == -pte_nosync)
			return status;
		/* A damaged PSB+: try the one after, if we moved. */
		if (pt_blk_get_sync_offset(dec, &off) < 0 || off == last)
			return status;
		last = off;
	}
}

/*
 * Decode from where @dec is synchronized to its end.  With @resync,
 * errors skip to the next PSB; without, they end the pass (a stretch
 * between two PSBs has nothing further to sync to).
 */
static int pass_run(struct pt_pass *ps, struct pt_block_decoder *dec,
		    int status, int resync)
{
	int eos = 0;

	for (;;) {
		struct pt_block blk;
		int err;

		if (status & pts_event_pending)
			status = pass_events(ps, dec, status);
		/*
		 * Past the last packet libipt follows code that needs no
		 * trace: the block that settles the last branch, then direct
		 * branches (a guess, see trim_guess).  Code it cannot find
		 * there is not a gap in the trace.
		 */
		if (status >= 0 && (status & pts_eos))
			eos = 1;
		if (status >= 0) {
			struct pt_tick tk;

			status = pt_blk_next(dec, &blk, sizeof(blk));
			pass_tick(ps, dec, &tk);
			err = pass_block(ps, &blk, &tk);
			/* A loop of direct jumps past the end of the trace. */
			if (ps->direct_run > PT_MAX_GUESS)
				return 0;
			if (err < 0)
				return err;
			continue;
		}
		if (status == -pte_eos || (eos && status != -pte_nomem))
			return 0;
		if (status == -pte_nomem)
			return bt_fail(bte_nomem, ENOMEM, "libipt");
		err = pass_error(ps, status);
		if (err < 0 || !resync)
			return err;
		status = pt_resync(dec);
		if (status < 0)
			return 0;
		ps->state = PT_ON;
	}
}

void bt_pt_setup(struct pt_config *cfg, const struct bt_capture *cap,
		 uint8_t *end)
{
	pt_config_init(cfg);
	cfg->begin = cap->data;
	cfg->end = end;
	if (cap->cpu.vendor == BT_CPU_INTEL) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = cap->cpu.family;
		cfg->cpu.model = cap->cpu.model;
		cfg->cpu.stepping = cap->cpu.stepping;
		pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	cfg->cpuid_0x15_eax = cap->pt_cpuid_15_eax;
	cfg->cpuid_0x15_ebx = cap->pt_cpuid_15_ebx;
	cfg->mtc_freq = cap->pt_mtc_freq;
	cfg->nom_freq = cap->pt_nom_freq;
	cfg->flags.variant.block.end_on_call = 1;
	cfg->flags.variant.block.end_on_jump = 1;
}

static struct pt_block_decoder *pt_decoder(const struct bt_capture *cap,
					   struct bt_image *image, size_t end)
{
	struct pt_block_decoder *dec;
	struct pt_config cfg;

	bt_pt_setup(&cfg, cap, cap->data + end);
	dec = pt_blk_alloc_decoder(&cfg);
	if (dec && pt_blk_set_image(dec, bt_image_pt(image)) < 0) {
		pt_blk_free_decoder(dec);
		dec = NULL;
	}
	return dec;
}

static void pass_init(struct pt_pass *ps, const struct bt_capture *cap,
		      struct bt_image *image, struct bt_brvec *out)
{
	memset(ps, 0, sizeof(*ps));
	ps->image = image;
	ps->out = out;
	pt_timing_init(&ps->time, cap);
	/* Without it every block is scanned: slower, still right. */
	ps->scan = calloc(SCAN_CACHE, sizeof(*ps->scan));
}

/* The pass's branches get their times. */
static int pass_finish(struct pt_pass *ps, uint64_t *end_ts)
{
	if (pt_timing_apply(&ps->time, ps->out->v, ps->out->n, end_ts) < 0)
		return bt_fail(bte_nomem, ENOMEM, "time anchors");
	return 0;
}

static void pass_release(struct pt_pass *ps)
{
	free(ps->scan);
	pt_timing_release(&ps->time);
}

/*
 * Decoding everything to keep only the last N: record what libipt says
 * (blocks, events, errors) on a tape that keeps the newest records only,
 * and make branches of those at the end.  The decode loop then does little
 * more than libipt's own.
 */
enum { REC_BLOCK, REC_EVENT, REC_ERROR };

struct pt_rec {
	uint64_t ip, end_ip;
	struct pt_tick tick;	/* blocks */
	uint32_t ninsn;		/* blocks; the status for errors */
	uint8_t type, iclass;
};

struct pt_tape {
	struct pt_rec *rec;
	struct pt_event *ev;	/* by record index */
	size_t size;		/* a power of two */
	uint64_t head;		/* records written */
};

static inline struct pt_rec *tape_next(struct pt_tape *t)
{
	return &t->rec[t->head++ & (t->size - 1)];
}

static int tape_events(struct pt_tape *t, struct pt_block_decoder *dec,
		       int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_rec *r;

		r = &t->rec[t->head & (t->size - 1)];
		status = pt_blk_event(dec, &t->ev[t->head & (t->size - 1)],
				      sizeof(*t->ev));
		if (status < 0)
			break;
		r->type = REC_EVENT;
		t->head++;
	}
	return status;
}

static void tape_error(struct pt_tape *t, int status)
{
	struct pt_rec *r = tape_next(t);

	r->type = REC_ERROR;
	r->ninsn = (uint32_t)status;
}

static void tape_run(struct pt_tape *t, const struct pt_pass *ps,
		     struct pt_block_decoder *dec, int status)
{
	uint64_t off = 0, last_off = UINT64_MAX;
	int eos = 0;

	for (;;) {
		struct pt_block blk;
		struct pt_rec *r;

		if (status & pts_event_pending)
			status = tape_events(t, dec, status);
		if (status >= 0 && (status & pts_eos))
			eos = 1;	/* as in pass_run */
		if (status >= 0) {
			status = pt_blk_next(dec, &blk, sizeof(blk));
			r = tape_next(t);
			r->type = REC_BLOCK;
			r->ip = blk.ip;
			r->end_ip = blk.end_ip;
			r->ninsn = blk.ninsn;
			r->iclass = blk.iclass;
			pass_tick(ps, dec, &r->tick);
			/* No trace used in a long while: past the end. */
			if (!(t->head & 4095)) {
				pt_blk_get_offset(dec, &off);
				if (off == last_off)
					return;
				last_off = off;
			}
			continue;
		}
		if (status == -pte_eos || status == -pte_nomem || eos)
			return;
		tape_error(t, status);
		status = pt_resync(dec);
		if (status < 0)
			return;
	}
}

static int tape_replay(struct pt_tape *t, struct pt_pass *ps)
{
	uint64_t i = t->head > t->size ? t->head - t->size : 0;
	int err = 0;

	for (; !err && i < t->head; i++) {
		const struct pt_rec *r = &t->rec[i & (t->size - 1)];
		struct pt_block blk;

		switch (r->type) {
		case REC_BLOCK:
			memset(&blk, 0, sizeof(blk));
			blk.ip = r->ip;
			blk.end_ip = r->end_ip;
			blk.ninsn = r->ninsn;
			blk.iclass = r->iclass;
			err = pass_block(ps, &blk, &r->tick);
			break;
		case REC_EVENT:
			err = pass_event(ps, &t->ev[i & (t->size - 1)]);
			break;
		case REC_ERROR:
			err = pass_error(ps, (int)r->ninsn);
			ps->state = PT_ON;
			break;
		}
	}
	return err;
}

static int pt_decode_tape(struct pt_block_decoder *dec, int status,
			  struct pt_pass *ps)
{
	struct pt_tape t = { 0 };
	int err;

	/* A few blocks per branch, and room for the events among them. */
	t.size = 4096;
	while (t.size < 8 * ps->keep)
		t.size *= 2;
	t.rec = malloc(t.size * sizeof(*t.rec));
	t.ev = malloc(t.size * sizeof(*t.ev));
	if (!t.rec || !t.ev) {
		free(t.rec);
		free(t.ev);
		return bt_fail(bte_nomem, ENOMEM, "pt tape");
	}
	tape_run(&t, ps, dec, status);
	err = tape_replay(&t, ps);
	free(t.rec);
	free(t.ev);
	return err;
}

/* Everything, from the first PSB on; only the last @keep kept (0: all). */
static int pt_decode_all(const struct bt_capture *cap, struct bt_image *image,
			 size_t keep, struct bt_brvec *out, uint64_t *end_ts)
{
	struct pt_block_decoder *dec = pt_decoder(cap, image, cap->size);
	struct pt_pass ps;
	int status, err = 0;

	if (!dec)
		return bt_fail(bte_nomem, ENOMEM, "pt decoder");
	pass_init(&ps, cap, image, out);
	ps.keep = keep;
	status = pt_blk_sync_forward(dec);
	if (status >= 0)
		err = keep ? pt_decode_tape(dec, status, &ps)
			   : pass_run(&ps, dec, status, 1);
	if (pass_finish(&ps, end_ts) < 0 && !err)
		err = -bte_nomem;
	trim_guess(out, 0, 0);
	pass_release(&ps);
	pt_blk_free_decoder(dec);
	return err;
}

/* The entries of the stretch [@begin, @end) of the trace. */
static int pt_decode_stretch(const struct bt_capture *cap,
			     struct bt_image *image, uint64_t begin,
			     uint64_t end, struct bt_brvec *out,
			     uint64_t *first_ip, uint64_t *end_ts)
{
	struct pt_block_decoder *dec =
		pt_decoder(cap, image, pt_timing_stretch_end(cap, end));
	struct pt_pass ps;
	int status, err;

	if (!dec)
		return bt_fail(bte_nomem, ENOMEM, "pt decoder");
	pass_init(&ps, cap, image, out);
	status = pt_blk_sync_set(dec, begin);
	err = status < 0 ? pass_error(&ps, status)
			 : pass_run(&ps, dec, status, 0);
	if (pass_finish(&ps, end_ts) < 0 && !err)
		err = -bte_nomem;
	trim_guess(out, 0, *first_ip);
	*first_ip = ps.first_ip;
	pass_release(&ps);
	pt_blk_free_decoder(dec);
	return err;
}

/* Put @older in front of @vec. */
static int brvec_prepend(struct bt_brvec *vec, struct bt_brvec *older)
{
	if (!older->n)
		return 0;
	if (bt_brvec_reserve(vec, older->n) < 0)
		return bt_fail(bte_nomem, ENOMEM, "branches");
	memmove(vec->v + older->n, vec->v, vec->n * sizeof(*vec->v));
	memcpy(vec->v, older->v, older->n * sizeof(*vec->v));
	vec->n += older->n;
	return 0;
}

/*
 * The offset of the last PSB starting before @end, or -1.  (libipt's
 * sync_backward can loop forever on overlapping PSB patterns in corrupt
 * data; a plain search cannot.)  In a run of the pattern the PSB is the
 * earliest full one.
 */
static int64_t psb_before(const uint8_t *data, uint64_t end)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82 };
	int64_t p;

	for (p = (int64_t)end - 16; p >= 0; p--) {
		if (data[p] != 0x02 || memcmp(data + p, psb, sizeof(psb)))
			continue;
		while (p >= 2 && !memcmp(data + p - 2, psb, sizeof(psb)))
			p -= 2;
		return p;
	}
	return -1;
}

/* The last @last entries: stretches between PSBs, newest first. */
int bt_pt_decode_last(const struct bt_capture *cap, struct bt_image *image,
		      size_t last, struct bt_brvec *out, uint64_t *start,
		      uint64_t *end_ts)
{
	uint64_t end = cap->size, first_ip = 0;
	int64_t begin;
	int err = 0;

	*start = end;
	*end_ts = 0;
	while (out->n < last && (begin = psb_before(cap->data, end)) >= 0) {
		struct bt_brvec older = { 0 };
		uint64_t ts;

		err = pt_decode_stretch(cap, image, begin, end, &older,
					&first_ip, &ts);
		if (!*end_ts)
			*end_ts = ts;	/* the newest stretch's last time */
		if (!err)
			err = brvec_prepend(out, &older);
		bt_brvec_release(&older);
		if (err < 0)
			break;
		*start = end = begin;
	}
	return err;
}

int bt_decode_pt(const struct bt_capture *cap,
		 const struct bt_decode_opts *opts, struct bt_history *hist)
{
	struct bt_brvec vec = { 0 };
	uint64_t start = 0;
	int err;

	if (!cap || !opts || !hist)
		return bt_fail(bte_invalid, 0, "bt_decode_pt(NULL)");
	if (!opts->image)
		return bt_fail(bte_invalid, 0, "pt decoding needs an image");
	hist->lost = cap->lost;
	if (!cap->size)
		return 0;
	if (opts->last)
		err = bt_pt_decode_last(cap, opts->image, opts->last, &vec,
				     &start, &hist->end_ts);
	else
		err = pt_decode_all(cap, opts->image, 0, &vec, &hist->end_ts);
	/* A capture cut short says so at its end. */
	if (!err && cap->status < 0) {
		struct bt_branch gap = { .kind = BT_BR_GAP,
					 .gap = BT_GAP_DECODE };

		gap.from = vec.n ? vec.v[vec.n - 1].to : 0;
		gap.ts = vec.n ? vec.v[vec.n - 1].ts : 0;
		if (bt_brvec_push(&vec, &gap) < 0)
			err = bt_fail(bte_nomem, ENOMEM, "branches");
	}
	if (err < 0) {
		bt_brvec_release(&vec);
		return err;
	}
	/* Short of N entries, every PSB back to the first was looked for. */
	hist->data_begin = opts->last && vec.n >= opts->last ? start : 0;
	bt_brvec_to_history(&vec, opts->last, hist);
	return 0;
}

int bt_decode_pt_full(const struct bt_capture *cap,
		      const struct bt_decode_opts *opts, struct bt_history *hist)
{
	struct bt_brvec vec = { 0 };
	int err;

	if (!cap || !opts || !hist || !opts->image)
		return bt_fail(bte_invalid, 0, "bt_decode_pt_full");
	err = pt_decode_all(cap, opts->image, opts->last, &vec,
			    &hist->end_ts);
	if (err < 0) {
		bt_brvec_release(&vec);
		return err;
	}
	bt_brvec_to_history(&vec, opts->last, hist);
	return 0;
}
