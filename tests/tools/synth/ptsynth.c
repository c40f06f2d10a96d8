// SPDX-License-Identifier: MIT
/*
 * Synthesized traces: generated code, a random walk over it, and the PT
 * stream of that walk (BTS: btssynth.c).  See ptsynth.h.
 */
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "ptsynth.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static double rndf(uint64_t *s)
{
	return (rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

static size_t rndn(uint64_t *s, size_t n)
{
	return n ? rnd(s) % n : 0;
}

/* Straight-line instructions, a mix of lengths, prefixes, REX and VEX. */
static const struct {
	uint8_t len, bytes[10];
} others[] = {
	{ 1, { 0x90 } },				/* nop */
	{ 3, { 0x48, 0x01, 0xd8 } },			/* add rax, rbx */
	{ 3, { 0x48, 0x89, 0xc1 } },			/* mov rcx, rax */
	{ 5, { 0x48, 0x8d, 0x44, 0x24, 0x08 } },	/* lea rax, [rsp+8] */
	{ 7, { 0x48, 0xc7, 0xc0, 0x01, 0, 0, 0 } },	/* mov rax, 1 */
	{ 6, { 0x66, 0x0f, 0x1f, 0x44, 0, 0 } },	/* nopw */
	{ 4, { 0x48, 0x83, 0xc4, 0x08 } },		/* add rsp, 8 */
	{ 3, { 0xc5, 0xf8, 0x77 } },			/* vzeroupper */
	{ 10, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 } },	/* movabs rax */
	{ 3, { 0x4d, 0x31, 0xc0 } },			/* xor r8, r8 */
};

/* Terminator encodings: direct ones end in a rel32. */
static const struct {
	uint8_t cls, len, bytes[6];
} terms[] = {
	{ PS_COND, 6, { 0x0f, 0x84 } },		/* je rel32 */
	{ PS_COND, 6, { 0x0f, 0x8f } },		/* jg rel32 */
	{ PS_JUMP, 5, { 0xe9 } },		/* jmp rel32 */
	{ PS_CALL, 5, { 0xe8 } },		/* call rel32 */
	{ PS_RET, 1, { 0xc3 } },		/* ret */
	{ PS_IJUMP, 2, { 0xff, 0xe0 } },	/* jmp rax */
	{ PS_IJUMP, 3, { 0x41, 0xff, 0xe3 } },	/* jmp r11 */
	{ PS_ICALL, 2, { 0xff, 0xd0 } },	/* call rax */
	{ PS_ICALL, 3, { 0x41, 0xff, 0xd3 } },	/* call r11 */
	{ PS_SYSCALL, 2, { 0x0f, 0x05 } },	/* syscall */
};

#define NOTHERS (sizeof(others) / sizeof(others[0]))
#define NTERMS (sizeof(terms) / sizeof(terms[0]))

static size_t pick_term(uint64_t *s, int cls)
{
	size_t i, n = 0, hit[NTERMS];

	for (i = 0; i < NTERMS; i++)
		if (terms[i].cls == cls)
			hit[n++] = i;
	return hit[rndn(s, n)];
}

struct gen_block {
	size_t func, nother, term;	/* term: index into terms[], or NTERMS */
	size_t target;			/* block (in function) or function */
	uint64_t addr;
	uint8_t other[6];
};

/* The terminator class of block @b of @nb in function @j of @nfunc. */
static int pick_class(uint64_t *s, size_t j, size_t nfunc, size_t b,
		      size_t nb)
{
	static const uint8_t weights[] = {
		[PS_OTHER] = 1, [PS_COND] = 4, [PS_JUMP] = 1, [PS_CALL] = 2,
		[PS_RET] = 1, [PS_IJUMP] = 1, [PS_ICALL] = 1, [PS_SYSCALL] = 1,
	};

	if (b == nb - 1)
		return j ? PS_RET : PS_JUMP;
	for (;;) {
		size_t cls = rndn(s, sizeof(weights));

		if (rndn(s, 4) >= weights[cls])
			continue;
		if ((cls == PS_CALL || cls == PS_ICALL) && j == nfunc - 1)
			continue;
		if (cls == PS_RET && !j)
			continue;
		return cls;
	}
}

static void plan_func(uint64_t *s, struct gen_block *blk, size_t j,
		      size_t nfunc, size_t first, size_t nb)
{
	size_t b, i;

	for (b = 0; b < nb; b++) {
		struct gen_block *g = &blk[first + b];
		int cls = pick_class(s, j, nfunc, b, nb);

		g->func = j;
		g->nother = 1 + rndn(s, 4);
		for (i = 0; i < g->nother; i++)
			g->other[i] = rndn(s, NOTHERS);
		g->term = cls == PS_OTHER ? NTERMS : pick_term(s, cls);
		/* Never to the next block: taken would look like not. */
		if (cls == PS_COND)
			g->target = rndn(s, nb);
		if (cls == PS_COND && g->target == b + 1)
			g->target = b;
		else if (cls == PS_JUMP)
			g->target = b == nb - 1 ? 0 : b + 1 + rndn(s, nb - 1 - b);
		else if (cls == PS_CALL)
			g->target = j + 1 + rndn(s, nfunc - 1 - j);
	}
}

static size_t block_size(const struct gen_block *g)
{
	size_t i, n = 0;

	for (i = 0; i < g->nother; i++)
		n += others[g->other[i]].len;
	return n + (g->term < NTERMS ? terms[g->term].len : 0);
}

static void put_insn(struct ps_prog *p, uint64_t addr, uint8_t len, int cls,
		     uint64_t target, size_t func)
{
	struct ps_insn *in = &p->insn[p->ninsn];

	in->addr = addr;
	in->len = len;
	in->cls = cls;
	in->target = target;
	in->func = func;
	p->at[addr - p->base] = ++p->ninsn;
}

static void emit_block(struct ps_prog *p, const struct gen_block *g,
		       const struct gen_block *fblk, uint64_t target_func)
{
	uint64_t addr = g->addr, target = 0;
	size_t i;

	for (i = 0; i < g->nother; i++) {
		uint8_t len = others[g->other[i]].len;

		memcpy(p->code + (addr - p->base), others[g->other[i]].bytes,
		       len);
		put_insn(p, addr, len, PS_OTHER, 0, g->func);
		addr += len;
	}
	if (g->term == NTERMS)
		return;
	memcpy(p->code + (addr - p->base), terms[g->term].bytes,
	       terms[g->term].len);
	switch (terms[g->term].cls) {
	case PS_COND:
	case PS_JUMP:
		target = fblk[g->target].addr;
		break;
	case PS_CALL:
		target = target_func;
		break;
	}
	if (target) {
		int32_t rel = (int32_t)(target - (addr + terms[g->term].len));

		memcpy(p->code + (addr - p->base) + terms[g->term].len - 4,
		       &rel, 4);
	}
	put_insn(p, addr, terms[g->term].len, terms[g->term].cls, target,
		 g->func);
}

static int prog_alloc(struct ps_prog *p, size_t nfunc, size_t nblk)
{
	p->func = calloc(nfunc, sizeof(*p->func));
	p->block = calloc(nfunc, sizeof(*p->block));
	p->nblock = calloc(nfunc, sizeof(*p->nblock));
	p->code = malloc(p->size);
	p->at = calloc(p->size, sizeof(*p->at));
	p->insn = calloc(nblk * 6, sizeof(*p->insn));
	if (!p->func || !p->block || !p->nblock || !p->code || !p->at ||
	    !p->insn)
		return -1;
	memset(p->code, 0xcc, p->size);	/* int3 between functions */
	p->nfunc = nfunc;
	return 0;
}

struct ps_prog *ps_prog_gen(uint64_t seed, size_t nfunc, uint64_t base)
{
	struct ps_prog *p = calloc(1, sizeof(*p));
	uint64_t s = seed * 2 + 1, addr = base;
	struct gen_block *blk;
	size_t *first, *nb, j, b, nblk = 0;

	first = calloc(nfunc, sizeof(*first));
	nb = calloc(nfunc, sizeof(*nb));
	blk = calloc(nfunc * 8, sizeof(*blk));
	if (!p || !first || !nb || !blk || !nfunc)
		goto fail;
	for (j = 0; j < nfunc; j++) {
		first[j] = nblk;
		nb[j] = 3 + rndn(&s, 6);
		plan_func(&s, blk, j, nfunc, nblk, nb[j]);
		nblk += nb[j];
	}
	for (j = 0; j < nfunc; j++) {
		addr = (addr + 15) & ~15ull;
		for (b = 0; b < nb[j]; b++) {
			blk[first[j] + b].addr = addr;
			addr += block_size(&blk[first[j] + b]);
		}
	}
	p->base = base;
	p->size = addr - base;
	if (prog_alloc(p, nfunc, nblk) < 0)
		goto fail;
	for (j = 0; j < nfunc; j++) {
		p->func[j] = blk[first[j]].addr;
		p->nblock[j] = nb[j];
		p->block[j] = calloc(nb[j], sizeof(uint64_t));
		if (!p->block[j])
			goto fail;
		for (b = 0; b < nb[j]; b++)
			p->block[j][b] = blk[first[j] + b].addr;
	}
	for (j = 0; j < nfunc; j++)
		for (b = 0; b < nb[j]; b++) {
			const struct gen_block *g = &blk[first[j] + b];

			emit_block(p, g, &blk[first[j]],
				   g->target < nfunc ? p->func[g->target] : 0);
		}
	p->entry = p->func[0];
	free(first);
	free(nb);
	free(blk);
	return p;
fail:
	free(first);
	free(nb);
	free(blk);
	ps_prog_free(p);
	return NULL;
}

void ps_prog_free(struct ps_prog *p)
{
	size_t j;

	if (!p)
		return;
	for (j = 0; p->block && j < p->nfunc; j++)
		free(p->block[j]);
	free(p->block);
	free(p->nblock);
	free(p->func);
	free(p->code);
	free(p->at);
	free(p->insn);
	free(p);
}

const struct ps_insn *ps_prog_insn(const struct ps_prog *p, uint64_t addr)
{
	uint32_t i;

	if (addr < p->base || addr - p->base >= p->size)
		return NULL;
	i = p->at[addr - p->base];
	return i ? &p->insn[i - 1] : NULL;
}

int ps_prog_insn_fn(void *ctx, uint64_t addr, uint8_t *len, uint8_t *cls,
		    uint64_t *target)
{
	const struct ps_insn *in = ps_prog_insn(ctx, addr);

	if (!in)
		return -1;
	*len = in->len;
	*cls = in->cls;
	*target = in->target;
	return 0;
}

/* The walk: the program's state and the entries recorded so far. */
struct walk {
	const struct ps_prog *p;
	uint64_t s, ip, *stack;
	size_t depth, maxdepth;
	uint32_t ninsn;
	struct bt_branch *v;
	size_t n, alloc;
	int silent;
};

static int walk_record(struct walk *w, uint64_t from, uint64_t to, int kind,
		       int gap)
{
	struct bt_branch *br;

	if (w->silent)
		return 0;
	if (w->n == w->alloc) {
		size_t n = w->alloc ? 2 * w->alloc : 1024;

		br = realloc(w->v, n * sizeof(*br));
		if (!br)
			return -1;
		w->v = br;
		w->alloc = n;
	}
	br = &w->v[w->n++];
	memset(br, 0, sizeof(*br));
	br->from = from;
	br->to = to;
	br->kind = kind;
	br->gap = gap;
	br->ninsn = w->ninsn;
	w->ninsn = 0;
	return 0;
}

static int walk_push(struct walk *w, uint64_t ret)
{
	if (w->depth == w->maxdepth) {
		size_t n = w->maxdepth ? 2 * w->maxdepth : 64;
		uint64_t *st = realloc(w->stack, n * sizeof(*st));

		if (!st)
			return -1;
		w->stack = st;
		w->maxdepth = n;
	}
	w->stack[w->depth++] = ret;
	return 0;
}

/* A block of @func after @ip, for indirect jumps (forward only). */
static uint64_t later_block(struct walk *w, size_t func)
{
	const struct ps_prog *p = w->p;
	size_t b, n = 0;
	uint64_t cand[8];

	for (b = 0; b < p->nblock[func]; b++)
		if (p->block[func][b] > w->ip)
			cand[n++] = p->block[func][b];
	return n ? cand[rndn(&w->s, n)] : p->block[func][0];
}

/* Execute one instruction; returns 1 after a recorded entry, -1 on error. */
static int walk_step(struct walk *w, double p_taken)
{
	const struct ps_insn *in = ps_prog_insn(w->p, w->ip);
	uint64_t next, to;
	int kind;

	if (!in)
		return -1;
	next = in->addr + in->len;
	w->ninsn++;
	switch (in->cls) {
	case PS_OTHER:
		w->ip = next;
		return 0;
	case PS_COND:
		if (rndf(&w->s) >= p_taken) {
			w->ip = next;
			return 0;
		}
		to = in->target;
		kind = BT_BR_COND;
		break;
	case PS_JUMP:
		to = in->target;
		kind = BT_BR_JUMP;
		break;
	case PS_CALL:
	case PS_ICALL:
		to = in->cls == PS_CALL ? in->target :
			w->p->func[in->func + 1 +
				   rndn(&w->s, w->p->nfunc - 1 - in->func)];
		kind = in->cls == PS_CALL ? BT_BR_CALL : BT_BR_ICALL;
		if (walk_push(w, next) < 0)
			return -1;
		break;
	case PS_RET:
		if (!w->depth)
			return -1;
		to = w->stack[--w->depth];
		kind = BT_BR_RET;
		break;
	case PS_IJUMP:
		to = later_block(w, in->func);
		kind = BT_BR_IJUMP;
		break;
	case PS_SYSCALL:
		to = next;
		kind = BT_BR_SYSCALL;
		break;
	default:
		return -1;
	}
	if (walk_record(w, in->addr, to, kind, 0) < 0)
		return -1;
	w->ip = to;
	return 1;
}

/*
 * libipt reports an overflow as soon as it is the next packet: the flow
 * after the last branch that needed trace (its target included) is not
 * reported.  Lose data where nothing is in flight: right after tracing
 * came back on (syscall return, interrupt).
 */
static int ovf_ok(const struct walk *w)
{
	int kind = w->n ? w->v[w->n - 1].kind : BT_BR_NONE;

	return kind == BT_BR_SYSCALL || kind == BT_BR_INTR;
}

/* Run @k branches without recording them. */
static int walk_silent(struct walk *w, const struct ps_walk_opts *o, size_t k)
{
	w->silent = 1;
	while (k) {
		int r = walk_step(w, o->p_taken);

		if (r < 0)
			return -1;
		k -= r;
	}
	w->silent = 0;
	return 0;
}

/*
 * The direct jump or call just recorded left traced code: it becomes a
 * trace-disabled gap up to where tracing comes back.
 */
static int walk_disable(struct walk *w, const struct ps_walk_opts *o)
{
	struct bt_branch br = w->v[--w->n];

	if (walk_silent(w, o, 1 + rndn(&w->s, 10)) < 0)
		return -1;
	w->ninsn = br.ninsn;
	return walk_record(w, br.from, w->ip, BT_BR_GAP, BT_GAP_DISABLED);
}

/* Between entries: a signal, an overflow, tracing off for a while. */
static int walk_event(struct walk *w, const struct ps_walk_opts *o)
{
	uint64_t from = w->ip;
	int kind = w->n ? w->v[w->n - 1].kind : BT_BR_NONE;

	if (w->p->nfunc > 1 && rndf(&w->s) < o->p_intr) {
		uint64_t h = w->p->func[1 + rndn(&w->s, w->p->nfunc - 1)];

		/* A handler at the interrupted address would look like none. */
		if (h == from)
			return 0;
		if (walk_record(w, from, h, BT_BR_INTR, 0) < 0 ||
		    walk_push(w, from) < 0)
			return -1;
		w->ip = h;
	} else if ((kind == BT_BR_JUMP || kind == BT_BR_CALL) &&
		   rndf(&w->s) < o->p_dis) {
		return walk_disable(w, o);
	} else if (ovf_ok(w) && rndf(&w->s) < o->p_ovf) {
		/* Lose the packets of a few branches. */
		if (walk_silent(w, o, 1 + rndn(&w->s, 20)) < 0)
			return -1;
		w->ninsn = 0;
		if (walk_record(w, from, w->ip, BT_BR_GAP, BT_GAP_OVERFLOW) < 0)
			return -1;
	}
	return 0;
}

int ps_walk(const struct ps_prog *p, const struct ps_walk_opts *o,
	    struct bt_branch **out, size_t *count)
{
	struct walk w = { .p = p, .s = o->seed * 2 + 1, .ip = p->entry };
	int done = 0;

	while (!done) {
		int r = walk_step(&w, o->p_taken);

		if (r < 0)
			goto fail;
		if (!r)
			continue;
		if (w.n >= o->nbranch && (!o->loop_end || w.ip == p->entry))
			done = 1;
		else if (walk_event(&w, o) < 0)
			goto fail;
	}
	free(w.stack);
	*out = w.v;
	*count = w.n;
	return 0;
fail:
	free(w.stack);
	free(w.v);
	return -1;
}

/* The PT encoder's state: what the decoder will have reconstructed. */
struct enc {
	const struct ps_pt_opts *o;
	struct pt_encoder *enc;
	uint8_t scratch[64];
	struct ps_stream *out;
	uint64_t s, last_ip, tnt;
	uint64_t pos, tnt_pos;	/* instructions run; at the TNT's first bit */
	int ntnt, tnt_max;
	uint64_t ret[64];	/* libipt's return stack, mirrored */
	int rtop, rcount;
	size_t psb_at;
};

static int out_grow(struct ps_stream *out, size_t more)
{
	uint8_t *b;
	size_t n;

	if (out->alloc - out->size >= more)
		return 0;
	n = out->alloc ? out->alloc : 4096;
	while (n - out->size < more)
		n *= 2;
	b = realloc(out->buf, n);
	if (!b)
		return -1;
	out->buf = b;
	out->alloc = n;
	return 0;
}

static int emit(struct enc *e, struct pt_packet *pkt)
{
	int n;

	pt_enc_sync_set(e->enc, 0);
	n = pt_enc_next(e->enc, pkt);
	if (n < 0 || out_grow(e->out, n) < 0)
		return -1;
	memcpy(e->out->buf + e->out->size, e->scratch, n);
	e->out->size += n;
	return 0;
}

/* The IP compressions that reconstruct @ip from the last IP; one of them. */
static enum pt_ip_compression pick_ipc(struct enc *e, uint64_t ip)
{
	enum pt_ip_compression ok[5];
	int n = 0;

	if (!((ip ^ e->last_ip) >> 16))
		ok[n++] = pt_ipc_update_16;
	if (!((ip ^ e->last_ip) >> 32))
		ok[n++] = pt_ipc_update_32;
	if (!((ip ^ e->last_ip) >> 48))
		ok[n++] = pt_ipc_update_48;
	if ((uint64_t)((int64_t)(ip << 16) >> 16) == ip)
		ok[n++] = pt_ipc_sext_48;
	ok[n++] = pt_ipc_full;
	/* Mostly the tightest, as the hardware does. */
	return rndn(&e->s, 4) ? ok[0] : ok[rndn(&e->s, n)];
}

static int emit_ip(struct enc *e, enum pt_packet_type type, uint64_t ip,
		   int suppressed)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ipc = suppressed ? pt_ipc_suppressed : pick_ipc(e, ip);
	pkt.payload.ip.ip = ip;
	if (!suppressed)
		e->last_ip = ip;
	return emit(e, &pkt);
}

/* An IP that does not depend on the last one (after PSB, OVF). */
static int emit_full_ip(struct enc *e, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ipc = rndn(&e->s, 2) ? pt_ipc_sext_48 : pt_ipc_full;
	pkt.payload.ip.ip = ip;
	e->last_ip = ip;
	return emit(e, &pkt);
}

/* A TSC with the time of instruction @pos, when the stream has time. */
static int emit_time(struct enc *e, uint64_t pos)
{
	struct pt_packet pkt;

	if (!e->o->tsc_per_insn)
		return 0;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = e->o->tsc0 + pos * e->o->tsc_per_insn;
	e->out->time_pos = pos;
	return emit(e, &pkt);
}

static int flush_tnt(struct enc *e)
{
	struct pt_packet pkt;

	if (!e->ntnt)
		return 0;
	if (emit_time(e, e->tnt_pos) < 0)
		return -1;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = e->ntnt <= 6 && rndn(&e->s, 4) ? ppt_tnt_8 : ppt_tnt_64;
	pkt.payload.tnt.bit_size = e->ntnt;
	pkt.payload.tnt.payload = e->tnt;
	e->ntnt = 0;
	e->tnt = 0;
	if (e->o->tnt_mix)
		e->tnt_max = rndn(&e->s, 2) ? 1 + rndn(&e->s, 6) : 47;
	return emit(e, &pkt);
}

static int add_tnt(struct enc *e, int taken)
{
	if (!e->ntnt)
		e->tnt_pos = e->pos;
	e->tnt = e->tnt << 1 | !!taken;	/* oldest in the top bit */
	if (++e->ntnt == e->tnt_max)
		return flush_tnt(e);
	return 0;
}

/* Packets that carry an IP or a sync point flush the pending TNT first. */
static int emit_ip_flush(struct enc *e, enum pt_packet_type type, uint64_t ip,
			 int suppressed)
{
	if (flush_tnt(e) < 0)
		return -1;
	if (type == ppt_tip && emit_time(e, e->pos) < 0)
		return -1;
	return emit_ip(e, type, ip, suppressed);
}

static void ret_clear(struct enc *e)
{
	e->rcount = 0;
}

static void ret_push(struct enc *e, uint64_t addr)
{
	e->rtop = (e->rtop + 1) % 64;
	e->ret[e->rtop] = addr;
	if (e->rcount < 64)
		e->rcount++;
}

static int psb(struct enc *e, uint64_t ip, size_t next_branch)
{
	struct ps_psb *v;
	struct pt_packet pkt;

	if (flush_tnt(e) < 0)
		return -1;
	v = realloc(e->out->psb, (e->out->npsb + 1) * sizeof(*v));
	if (!v)
		return -1;
	e->out->psb = v;
	v[e->out->npsb].off = e->out->size;
	v[e->out->npsb++].branch = next_branch;
	e->psb_at = e->out->size;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_psb;
	if (emit(e, &pkt) < 0 || emit_time(e, e->pos) < 0)
		return -1;
	ret_clear(e);
	if (emit_full_ip(e, ppt_fup, ip) < 0)
		return -1;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1;
	if (emit(e, &pkt) < 0)
		return -1;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_psbend;
	return emit(e, &pkt);
}

/* Tracing off and on again at @ip: the kernel ran in between. */
static int pgd_pge(struct enc *e, uint64_t fup, uint64_t ip)
{
	if (fup && emit_ip_flush(e, ppt_fup, fup, 0) < 0)
		return -1;
	if (emit_ip_flush(e, ppt_tip_pgd, 0, 1) < 0)
		return -1;
	ret_clear(e);
	return emit_ip(e, ppt_tip_pge, ip, 0);
}

/*
 * Run straight from @ip to @end (exclusive): conditional branches on the
 * way were not taken.  Anything else that branches means the walk does not
 * fit the code.
 */
static int run_to(struct enc *e, ps_insn_fn insn, void *ctx, uint64_t ip,
		  uint64_t end)
{
	size_t steps = 0;

	while (ip != end) {
		uint8_t len, cls;
		uint64_t target;

		if (insn(ctx, ip, &len, &cls, &target) < 0 || ++steps > 1000000)
			return -1;
		e->pos++;
		if (cls == PS_COND) {
			if (add_tnt(e, 0) < 0)
				return -1;
		} else if (cls != PS_OTHER) {
			return -1;
		}
		ip += len;
	}
	return 0;
}

static int encode_ret(struct enc *e, uint64_t to)
{
	int compress = e->o->retcomp == 1 ||
		       (e->o->retcomp == 2 && rndn(&e->s, 2));

	if (compress && e->rcount && e->ret[e->rtop] == to) {
		e->rtop = (e->rtop + 63) % 64;
		e->rcount--;
		return add_tnt(e, 1);
	}
	return emit_ip_flush(e, ppt_tip, to, 0);
}

/* The packets of entry @br, the flow having reached its block. */
static int encode_one(struct enc *e, ps_insn_fn insn, void *ctx,
		      const struct bt_branch *br)
{
	uint8_t len, cls;
	uint64_t target;

	if (br->kind == BT_BR_INTR)
		return pgd_pge(e, br->from, br->to);
	if (insn(ctx, br->from, &len, &cls, &target) < 0)
		return -1;
	e->pos++;	/* the branch itself */
	switch (br->kind) {
	case BT_BR_COND:
		return add_tnt(e, 1);
	case BT_BR_JUMP:
		return 0;
	case BT_BR_CALL:
		if (target != br->from + len)
			ret_push(e, br->from + len);
		return 0;
	case BT_BR_ICALL:
		ret_push(e, br->from + len);
		/* fall through */
	case BT_BR_IJUMP:
		return emit_ip_flush(e, ppt_tip, br->to, 0);
	case BT_BR_RET:
		return encode_ret(e, br->to);
	case BT_BR_SYSCALL:
		return pgd_pge(e, 0, br->to);
	}
	return -1;
}

/* A direct branch out of traced code: TIP.PGD with its target. */
static int encode_disabled(struct enc *e, ps_insn_fn insn, void *ctx,
			   uint64_t cur, const struct bt_branch *br)
{
	uint8_t len, cls;
	uint64_t target;

	if (run_to(e, insn, ctx, cur, br->from) < 0 ||
	    insn(ctx, br->from, &len, &cls, &target) < 0 || !target)
		return -1;
	if (emit_ip_flush(e, ppt_tip_pgd, target, 0) < 0)
		return -1;
	ret_clear(e);
	return emit_ip(e, ppt_tip_pge, br->to, 0);
}

static int encode_entry(struct enc *e, ps_insn_fn insn, void *ctx,
			uint64_t cur, const struct bt_branch *br)
{
	struct pt_packet pkt;

	if (br->kind == BT_BR_GAP && br->gap == BT_GAP_DISABLED)
		return encode_disabled(e, insn, ctx, cur, br);
	if (br->kind == BT_BR_GAP) {
		if (br->gap != BT_GAP_OVERFLOW || flush_tnt(e) < 0)
			return -1;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_ovf;
		if (emit(e, &pkt) < 0)
			return -1;
		ret_clear(e);
		return emit_full_ip(e, ppt_fup, br->to);
	}
	if (run_to(e, insn, ctx, cur, br->from) < 0)
		return -1;
	return encode_one(e, insn, ctx, br);
}

int ps_pt_encode(const struct ps_pt_opts *o, ps_insn_fn insn, void *ctx,
		 uint64_t start, const struct bt_branch *br, size_t n,
		 struct ps_stream *out)
{
	struct enc e = { .o = o, .out = out, .s = o->seed * 2 + 1,
			 .tnt_max = 47 };
	struct pt_config cfg;
	uint64_t cur = start;
	size_t i;
	int err = -1;

	memset(out, 0, sizeof(*out));
	pt_config_init(&cfg);
	cfg.begin = e.scratch;
	cfg.end = e.scratch + sizeof(e.scratch);
	e.enc = pt_alloc_encoder(&cfg);
	if (!e.enc || psb(&e, cur, 0) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (encode_entry(&e, insn, ctx, cur, &br[i]) < 0)
			goto out;
		cur = br[i].to;
		if (o->p_irq && rndf(&e.s) < o->p_irq &&
		    pgd_pge(&e, cur, cur) < 0)
			goto out;
		if (out->size - e.psb_at >= o->psb_period &&
		    psb(&e, cur, i + 1) < 0)
			goto out;
	}
	err = flush_tnt(&e);
out:
	pt_free_encoder(e.enc);
	if (err < 0)
		ps_stream_release(out);
	return err;
}

void ps_stream_release(struct ps_stream *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s->psb);
	memset(s, 0, sizeof(*s));
}

uint8_t *ps_repeat(const struct ps_stream *tile, size_t size)
{
	uint8_t *buf = malloc(size);
	size_t off = size, n;

	if (!buf)
		return NULL;
	while (off) {
		n = off < tile->size ? off : tile->size;
		memcpy(buf + off - n, tile->buf + tile->size - n, n);
		off -= n;
	}
	return buf;
}

uint8_t *ps_aux_ring(const struct ps_stream *s, size_t ring, size_t start)
{
	uint8_t *buf = calloc(1, ring ? ring : 1), *out;
	size_t i, head = start % (ring ? ring : 1);

	if (!buf || !ring)
		return buf;
	for (i = 0; i < s->size; i++) {
		buf[head] = s->buf[i];
		head = (head + 1) % ring;
	}
	out = malloc(ring);
	if (out) {
		memcpy(out, buf + head, ring - head);
		memcpy(out + ring - head, buf, head);
	}
	free(buf);
	return out;
}

size_t ps_first_visible(const struct ps_stream *s, size_t ring)
{
	size_t cut = s->size > ring ? s->size - ring : 0, i;

	for (i = 0; i < s->npsb; i++)
		if (s->psb[i].off >= cut)
			return s->psb[i].branch;
	return (size_t)-1;
}

size_t ps_pt_visible(const struct bt_branch *br, size_t n)
{
	while (n && (br[n - 1].kind == BT_BR_JUMP ||
		     br[n - 1].kind == BT_BR_CALL))
		n--;
	return n;
}
