// SPDX-License-Identifier: MIT
/*
 * The recorder's translator: blocks are classified as the recorder needs
 * them, and translated code runs here, in this process, with %gs at a
 * control block of its own: it computes what the original computes, keeps
 * the flags, records each outcome in the ring (or carries it on to the
 * successor's variant, and records it with the next record), and finds
 * indirect targets through the lookup tables.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <asm/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "btrace/error.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"
#include "x86/decode.h"

#define BASE 0x400000ull	/* where the "original" code claims to be */

struct code {
	const uint8_t *bytes;
	size_t len;
};

/* A page of code at BASE: @c's bytes, then zeros. */
static int read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct code *c = ctx;
	uint8_t page[4096] = { 0 };

	if (addr < BASE || addr + len > BASE + sizeof(page))
		return -1;
	memcpy(page, c->bytes, c->len);
	memcpy(buf, page + (addr - BASE), len);
	return 0;
}

static void decode(const uint8_t *bytes, size_t len, struct rb *b)
{
	struct code c = { bytes, len };
	struct rx *x;

	assert_int_equal(rx_alloc(&x), 0);
	assert_int_equal(rx_block_decode(x, BASE, read_code, NULL, &c, b), 0);
	rx_free(x);
}

static void block_classify(void **state)
{
	static const struct {
		uint8_t bytes[16];
		size_t len;
		int term;
		uint32_t ninsn;
		uint64_t target;
	} cases[] = {
		/* mov %rcx,%rax; je +5 */
		{ { 0x48, 0x89, 0xc8, 0x74, 0x05 }, 5, RB_COND, 2, BASE + 10 },
		{ { 0xff, 0xe0 }, 2, RB_IJUMP, 1, 0 },			/* jmp *%rax */
		/* jmp *0x10(%rip): rip-relative is not a direct target */
		{ { 0xff, 0x25, 0x10, 0, 0, 0 }, 6, RB_IJUMP, 1, 0 },
		{ { 0xe8, 0x0b, 0, 0, 0 }, 5, RB_CALL, 1, BASE + 16 },
		{ { 0xff, 0x15, 0, 0, 0, 0 }, 6, RB_ICALL, 1, 0 },	/* call *(%rip) */
		{ { 0x90, 0xc3 }, 2, RB_RET, 2, 0 },
		{ { 0xe9, 0, 0, 0, 0 }, 5, RB_JUMP, 1, BASE + 5 },
		{ { 0x0f, 0x05 }, 2, RB_SYSCALL, 1, 0 },
		{ { 0x90, 0xcc }, 2, RB_LEAVE, 1, 0 },			/* int3 */
		/* mov %gs:0,%rax: the recorder's own segment */
		{ { 0x65, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 }, 9, RB_LEAVE, 0, 0 },
		{ { 0x0f, 0x0b }, 2, RB_LEAVE, 0, 0 },			/* ud2 */
		{ { 0xe3, 0x02 }, 2, RB_COND, 1, BASE + 4 },		/* jrcxz */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rb b;

		decode(cases[i].bytes, cases[i].len, &b);
		assert_int_equal(b.term, cases[i].term);
		assert_int_equal(b.ninsn, cases[i].ninsn);
		if (cases[i].target)
			assert_int_equal(b.target, cases[i].target);
		rb_release(&b);
	}
	(void)state;
}

/* ---- running translations here ---------------------------------------- */

#define RING 4096

struct rig {
	uint8_t *mem;		/* executable scratch */
	uint64_t *tcb;
	uint8_t *ring;		/* [ring, ring + RING), tcb right after */
	uint64_t *tables;
	uint64_t land[2];	/* "translations" that return 1 / 2 in eax */
	uint64_t entry[2];	/* their entries, for the lookup */
	uint64_t orig_land[2];	/* original addresses standing for them */
	uint8_t link_pend[2];	/* the variant each was linked as */
	size_t used;
};

static struct rig rig;
static uint64_t rig_icbit;	/* rb.icbit of what rig_translate_pend decodes */

static uint64_t rig_link(void *ctx, uint64_t orig, uint8_t pend,
			 uint64_t from)
{
	int i;

	for (i = 0; i < 2; i++)
		if (orig == rig.orig_land[i]) {
			rig.link_pend[i] = pend;
			return rig.land[i];
		}
	return 0;
}

static int rig_setup(void **state)
{
	static const uint8_t ret1[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
	static const uint8_t ret2[] = { 0xb8, 2, 0, 0, 0, 0xc3 };
	int i;

	/* within reach of BASE: rip-relative operands are re-based */
	rig.mem = mmap((void *)0x20000000, 1 << 20,
		       PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	rig.ring = mmap(NULL, RING + TCB_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rig.tables = mmap(NULL, 2 * RX_TABLE_BYTES, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rig.mem == MAP_FAILED || rig.ring == MAP_FAILED ||
	    rig.tables == MAP_FAILED)
		return -1;
	rig.tcb = (uint64_t *)(rig.ring + RING);
	rig.orig_land[0] = 0x500000;
	rig.orig_land[1] = 0x600000;
	for (i = 0; i < 2; i++) {	/* [entry][mov $n,%eax; ret] */
		struct rx_emit e;

		memset(&e, 0, sizeof(e));
		e.buf = rig.mem + 64 * i;
		e.cap = 64;
		e.base = (uint64_t)e.buf;
		e.entry_orig = rig.orig_land[i];
		if (rx_emit_entry(&e) < 0 || e.len != RX_ENTRY_LEN)
			return -1;
		free(e.pts);
		memcpy(e.buf + e.len, i ? ret2 : ret1, sizeof(ret1));
		rig.entry[i] = e.base;
		rig.land[i] = e.base + e.len;
	}
	rig.used = 128;
	*state = &rig;
	return 0;
}

static int rig_teardown(void **state)
{
	munmap(rig.mem, 1 << 20);
	munmap(rig.ring, RING + TCB_SIZE);
	munmap(rig.tables, 2 * RX_TABLE_BYTES);
	(void)state;
	return 0;
}

static void rig_reset(void)
{
	memset(rig.ring, 0, RING + TCB_SIZE);
	rig.tcb[TCB_HEAD / 8] = (uint64_t)rig.tcb;
	rig.tcb[TCB_TABLE1 / 8] = (uint64_t)rig.tables;
	rig.tcb[TCB_TABLE2 / 8] = (uint64_t)rig.tables + RX_TABLE_BYTES;
	rig.tcb[TCB_HI / 8] = REC_HI_NONE;
}

/* An output buffer at the rig's next free code, direct links to rig_link. */
static void rig_emit_init(struct rx_emit *e)
{
	memset(e, 0, sizeof(*e));
	e->buf = rig.mem + rig.used;
	e->cap = 4096;
	e->base = (uint64_t)e->buf;
	e->link = rig_link;
}

/*
 * Translate @bytes (claiming to be at @orig) into the rig as the variant
 * carrying @pend, with at most @pend_max outcomes carried; its address.
 */
static uint64_t rig_translate_pend(const uint8_t *bytes, size_t len,
				   uint64_t orig, uint8_t pend,
				   unsigned pend_max)
{
	struct code c = { bytes, len };
	struct rx_emit e;
	struct rx *x;
	struct rb b;
	uint64_t at;

	assert_int_equal(rx_alloc(&x), 0);
	rx_set_pend_max(x, pend_max);
	assert_true(orig == BASE);
	assert_int_equal(rx_block_decode(x, BASE, read_code, NULL, &c, &b), 0);
	b.ic_fixed = 1;
	b.icbit = rig_icbit;
	rig_emit_init(&e);
	memset(rig.link_pend, 0, sizeof(rig.link_pend));
	assert_int_equal(rx_translate(x, &b, pend, &e), 0);
	/* called as a direct link would: past the lookup's entry */
	at = e.base + e.lead + (pend == RX_PEND_NONE ? RX_ENTRY_LEN : 0);
	rig.used += (e.len + 15) & ~15ul;
	free(e.pts);
	rb_release(&b);
	rx_free(x);
	return at;
}

/* The same, each outcome recorded where it happens. */
static uint64_t rig_translate(const uint8_t *bytes, size_t len, uint64_t orig)
{
	return rig_translate_pend(bytes, len, orig, RX_PEND_NONE, 0);
}

/*
 * Call translated code at @fn with @arg in rdi, %gs at the rig's control
 * block; the flags it returned with in *@flags, rdx in *@rdx.
 */
static uint64_t rig_call2(uint64_t fn, uint64_t arg, uint64_t *flags,
			  uint64_t *rdx)
{
	uint64_t ret, fl, d = 0;

	syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)rig.tcb);
	__asm__ volatile("call *%[fn]\n\t"
			 "pushfq\n\t"
			 "popq %[fl]"
			 : "=a"(ret), [fl] "=r"(fl), "+D"(arg), "+d"(d)
			 : [fn] "r"(fn)
			 : "rcx", "rsi", "r8", "r9", "r10", "r11", "memory",
			   "cc");
	syscall(SYS_arch_prctl, ARCH_SET_GS, 0ul);
	*flags = fl;
	*rdx = d;
	return ret;
}

static uint64_t rig_call(uint64_t fn, uint64_t arg, uint64_t *flags)
{
	uint64_t rdx;

	return rig_call2(fn, arg, flags, &rdx);
}

static const uint8_t *ring_head(void)
{
	return (const uint8_t *)rig.tcb[TCB_HEAD / 8];
}

/*
 * cmp $5,%rdi; jl <0x600000>; (fall-through to 0x500000 is out of the
 * block: the landing pads stand for both sides).  The landing pads return
 * 1 (fall-through) or 2 (taken) and leave the flags as the cmp set them:
 * the record stub in between must not change them.
 */
#define COND_LEN 10

static void cond_code(uint8_t code[COND_LEN])
{
	static const uint8_t head[] = { 0x48, 0x83, 0xff, 0x05,	/* cmp $5,%rdi */
					0x0f, 0x8c };		/* jl rel32 */
	int32_t rel = (int32_t)(0x600000 - (BASE + COND_LEN));

	memcpy(code, head, sizeof(head));
	memcpy(code + sizeof(head), &rel, 4);
	/* the fall-through must be 0x500000: claim a block that ends there */
	rig.orig_land[0] = BASE + COND_LEN;
}

static void cond_records(void **state)
{
	uint8_t code[COND_LEN];
	uint64_t fn, flags;

	cond_code(code);
	fn = rig_translate(code, COND_LEN, BASE);

	rig_reset();
	assert_int_equal(rig_call(fn, 3, &flags) & 0xff, 2);	/* 3 < 5: taken */
	assert_true(flags & 0x80);			/* SF from cmp */
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 1);
	assert_int_equal(ring_head()[0], REC_TNT | 3);

	assert_int_equal(rig_call(fn, 9, &flags) & 0xff, 1);	/* not taken */
	assert_false(flags & 0x80);
	assert_false(flags & 0x40);			/* ZF clear: 9 != 5 */
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 2);
	assert_int_equal(ring_head()[0], REC_TNT | 2);
	assert_int_equal(ring_head()[1], REC_TNT | 3);	/* older above */
	rig.orig_land[0] = 0x500000;
	(void)state;
}

/* lea 0x100(%rip),%rdx; jmp: a copy elsewhere still yields the original. */
static void rip_relative(void **state)
{
	uint8_t code[12] = { 0x48, 0x8d, 0x15, 0x00, 0x01, 0, 0, 0xe9 };
	int32_t rel = (int32_t)(0x500000 - (BASE + 12));
	uint64_t fn, flags, rdx;

	memcpy(code + 8, &rel, 4);
	fn = rig_translate(code, sizeof(code), BASE);
	rig_reset();
	assert_int_equal(rig_call2(fn, 0, &flags, &rdx) & 0xff, 1);
	assert_int_equal(rdx, BASE + 7 + 0x100);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb);  /* nothing */
	(void)state;
}

/* The same copied out of reach of what it addresses: refused. */
static void rip_out_of_reach(void **state)
{
	static const uint8_t code[] = { 0x48, 0x8d, 0x15, 0x00, 0x01, 0, 0,
					0xc3 };
	struct code c = { code, sizeof(code) };
	uint8_t buf[256];
	struct rx_emit e;
	struct rx *x;
	struct rb b;

	assert_int_equal(rx_alloc(&x), 0);
	assert_int_equal(rx_block_decode(x, BASE, read_code, NULL, &c, &b), 0);
	memset(&e, 0, sizeof(e));
	e.buf = buf;
	e.cap = sizeof(buf);
	e.base = BASE + (3ull << 30);
	assert_int_equal(rx_translate(x, &b, RX_PEND_NONE, &e), -bte_nosys);
	assert_int_equal(e.len, 0);
	free(e.pts);
	rb_release(&b);
	rx_free(x);
	(void)state;
}

/*
 * jmp *%rdi to 0x500000: recorded as REC_IND with the target, found in
 * table 1 (bits 0-15) or table 2 (bits 8-23), entered by the entry of its
 * translation, which takes back the registers the lookup borrowed; flags
 * untouched.
 */
static void indirect_lookup(void **state)
{
	static const uint8_t code[] = { 0xff, 0xe7 };	/* jmp *%rdi */
	uint64_t fn, flags, t, rdx, target = 0x500000;
	int w;

	fn = rig_translate(code, sizeof(code), BASE);
	for (w = 0; w < 2; w++) {
		size_t i = rx_table_index(w, target);
		uint64_t *entry = rig.tables + w * (RX_TABLE_BYTES / 8) + i * 2;

		memset(rig.tables, 0, 2 * RX_TABLE_BYTES);
		entry[0] = target;
		entry[1] = rig.entry[0];
		rig_reset();
		assert_int_equal(rig_call2(fn, target, &flags, &rdx) & 0xff, 1);
		assert_int_equal(rdx, 0);	/* the program's, back */
		assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - REC_ADDR_LEN);
		assert_int_equal(ring_head()[0], REC_IND);
		memcpy(&t, ring_head() + 1, 8);
		assert_int_equal(t, target);
		/* the same high half again: the low half only */
		assert_int_equal(rig_call(fn, target, &flags) & 0xff, 1);
		assert_int_equal(ring_head(), (const uint8_t *)rig.tcb -
					      REC_ADDR_LEN - REC_IND32_LEN);
		assert_int_equal(ring_head()[0], REC_IND32);
		t = 0;
		memcpy(&t, ring_head() + 1, 4);
		assert_int_equal(t, target & 0xffffffff);
	}
	(void)state;
}

static uint64_t guess_500000(void *ctx, const struct rb *b)
{
	(void)ctx;
	return b->term == RB_IJUMP ? 0x500000 : 0;
}

/*
 * jmp *%rdi with an inline cache holding 0x500000 (the guess): its point
 * names the target and its rel32; linked to the target's entry past the
 * check, a hit takes no table (they are empty) and gives the registers
 * back; another target falls into the probe; unlinked (rel32 0), the
 * cached target goes through the probe too.  Flags kept throughout.
 */
static void indirect_inline_cache(void **state)
{
	static const uint8_t code[] = { 0xff, 0xe7 };	/* jmp *%rdi */
	struct code c = { code, sizeof(code) };
	uint64_t fn, flags, rdx, rel32 = 0, t;
	struct rx_emit e;
	struct rx *x;
	struct rb b;
	int32_t rel;
	size_t i;

	assert_int_equal(rx_alloc(&x), 0);
	assert_int_equal(rx_block_decode(x, BASE, read_code, NULL, &c, &b), 0);
	rig_emit_init(&e);
	e.guess = guess_500000;
	assert_int_equal(rx_translate(x, &b, RX_PEND_NONE, &e), 0);
	for (i = 0; i < e.npts; i++)
		if (e.pts[i].kind == RX_POINT_IC) {
			assert_int_equal(e.pts[i].orig, 0x500000);
			rel32 = e.pts[i].aux;
		}
	assert_true(rel32 && (rel32 & 3) == 0);
	memcpy(&t, (void *)RX_IC_IMM(rel32), 8);
	assert_int_equal(t, 0x500000);
	fn = e.base + e.lead + RX_ENTRY_LEN;
	rig.used += (e.len + 15) & ~15ul;
	free(e.pts);
	rb_release(&b);
	rx_free(x);

	memset(rig.tables, 0, 2 * RX_TABLE_BYTES);
	rel = (int32_t)(rig.entry[0] + RX_ENTRY_LEN - RX_ENTRY_RESTORE -
			(rel32 + 4));
	memcpy((void *)rel32, &rel, 4);
	rig_reset();
	assert_int_equal(rig_call2(fn, 0x500000, &flags, &rdx) & 0xff, 1);
	assert_int_equal(rdx, 0);
	assert_int_equal(ring_head()[0], REC_IND);	/* recorded all the same */
	/* a miss: the probe finds 0x600000 in table 1 */
	rig.tables[rx_table_index(0, 0x600000) * 2] = 0x600000;
	rig.tables[rx_table_index(0, 0x600000) * 2 + 1] = rig.entry[1];
	assert_int_equal(rig_call2(fn, 0x600000, &flags, &rdx) & 0xff, 2);
	assert_int_equal(rdx, 0);
	/* unlinked: 0x500000 through the probe (found in table 2) */
	memset((void *)rel32, 0, 4);
	rig.tables[RX_TABLE_BYTES / 8 + rx_table_index(1, 0x500000) * 2] =
		0x500000;
	rig.tables[RX_TABLE_BYTES / 8 + rx_table_index(1, 0x500000) * 2 + 1] =
		rig.entry[0];
	assert_int_equal(rig_call2(fn, 0x500000, &flags, &rdx) & 0xff, 1);
	assert_int_equal(rdx, 0);
	(void)state;
}

static sigjmp_buf trap_jmp;

static void on_trap(int sig)
{
	(void)sig;
	siglongjmp(trap_jmp, 1);
}

/*
 * A table entry replaced while another thread probes it: the probe
 * matched the old orig (0x500000) and loaded the new trans (the entry of
 * 0x600000's translation).  That entry must not run 0x600000's code for
 * 0x500000: it exits to the tracer (int3) as a miss of rdx.
 */
static void entry_checks_orig(void **state)
{
	static const uint8_t code[] = { 0xff, 0xe7 };	/* jmp *%rdi */
	uint64_t fn, flags, target = 0x500000;
	uint64_t *entry = rig.tables + (target & 0xffff) * 2;
	struct sigaction sa = { .sa_handler = on_trap }, old;
	volatile int trapped = 0;

	fn = rig_translate(code, sizeof(code), BASE);
	memset(rig.tables, 0, 2 * RX_TABLE_BYTES);
	entry[0] = target;
	entry[1] = rig.entry[1];
	rig_reset();
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGTRAP, &sa, &old);
	if (sigsetjmp(trap_jmp, 1) == 0)
		rig_call(fn, target, &flags);
	else
		trapped = 1;
	syscall(SYS_arch_prctl, ARCH_SET_GS, 0ul);
	sigaction(SIGTRAP, &old, NULL);
	assert_true(trapped);
	/* the matching pair enters */
	entry[1] = rig.entry[0];
	rig_reset();
	assert_int_equal(rig_call(fn, target, &flags) & 0xff, 1);
	(void)state;
}

/*
 * The same conditional carrying outcomes: with none pending, each side
 * goes on to its successor's variant with its outcome, recording nothing;
 * with one pending (taken), it records both in one REC_TNT, oldest first.
 */
static void cond_carries(void **state)
{
	uint8_t code[COND_LEN];
	uint64_t fn, flags;

	cond_code(code);
	fn = rig_translate_pend(code, COND_LEN, BASE, RX_PEND_NONE, 1);
	assert_int_equal(rig.link_pend[0], 2);		/* carries "not taken" */
	assert_int_equal(rig.link_pend[1], 3);		/* carries "taken" */
	rig_reset();
	assert_int_equal(rig_call(fn, 3, &flags) & 0xff, 2);
	assert_true(flags & 0x80);
	assert_int_equal(rig_call(fn, 9, &flags) & 0xff, 1);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb);  /* nothing */

	fn = rig_translate_pend(code, COND_LEN, BASE, 3, 1);	/* "taken" pending */
	assert_int_equal(rig.link_pend[0], RX_PEND_NONE);
	assert_int_equal(rig.link_pend[1], RX_PEND_NONE);
	rig_reset();
	assert_int_equal(rig_call(fn, 3, &flags) & 0xff, 2);
	assert_true(flags & 0x80);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 1);
	assert_int_equal(ring_head()[0], REC_TNT | 7);	/* 1, taken, taken */
	assert_int_equal(rig_call(fn, 9, &flags) & 0xff, 1);
	assert_int_equal(ring_head()[0], REC_TNT | 6);	/* 1, taken, not */
	rig.orig_land[0] = 0x500000;
	(void)state;
}

/* An indirect jump carrying "not taken": its target record's tag holds it. */
static void indirect_carries(void **state)
{
	static const uint8_t code[] = { 0xff, 0xe7 };	/* jmp *%rdi */
	uint64_t fn, flags, t, target = 0x500000;
	uint64_t *entry = rig.tables + (target & 0xffff) * 2;

	fn = rig_translate_pend(code, sizeof(code), BASE, 2, 1);
	memset(rig.tables, 0, 2 * RX_TABLE_BYTES);
	entry[0] = target;
	entry[1] = rig.entry[0];
	rig_reset();
	assert_int_equal(rig_call(fn, target, &flags) & 0xff, 1);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - REC_ADDR_LEN);
	assert_int_equal(ring_head()[0], REC_IND_O | 2);
	memcpy(&t, ring_head() + 1, 8);
	assert_int_equal(t, target);
	assert_int_equal(rig_call(fn, target, &flags) & 0xff, 1);
	assert_int_equal(ring_head()[0], REC_IND32_O | 2);
	(void)state;
}

/*
 * jmp *%rdi whose block holds 0x500000 for good (rb.icbit): a hit is a
 * taken outcome carried on into 0x500000's variant (beyond what cold code
 * carries, up to RX_PEND_MAX), nothing recorded and the registers given
 * back; another target is recorded with an outcome not taken last in its
 * tag.  Where the outcomes are full, a hit records them all in a REC_TNT
 * and goes to the variant without, a miss records those before it first.
 */
static void indirect_icbit(void **state)
{
	static const uint8_t code[] = { 0xff, 0xe7 };	/* jmp *%rdi */
	uint64_t fn, flags, rdx, t, *entry;

	memset(rig.tables, 0, 2 * RX_TABLE_BYTES);
	entry = rig.tables + rx_table_index(0, 0x600000) * 2;
	entry[0] = 0x600000;
	entry[1] = rig.entry[1];
	rig_icbit = 0x500000;
	fn = rig_translate_pend(code, sizeof(code), BASE, 2, 1);
	assert_int_equal(rig.link_pend[0], 5);	/* "not taken, taken" */
	rig_reset();
	assert_int_equal(rig_call2(fn, 0x500000, &flags, &rdx) & 0xff, 1);
	assert_int_equal(rdx, 0);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb);
	assert_int_equal(rig_call2(fn, 0x600000, &flags, &rdx) & 0xff, 2);
	assert_int_equal(rdx, 0);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - REC_ADDR_LEN);
	assert_int_equal(ring_head()[0], REC_IND_O | 4);   /* "not, not" */
	memcpy(&t, ring_head() + 1, 8);
	assert_int_equal(t, 0x600000);

	fn = rig_translate_pend(code, sizeof(code), BASE, 0x1f, 4);
	assert_int_equal(rig.link_pend[0], RX_PEND_NONE);
	rig_reset();
	assert_int_equal(rig_call(fn, 0x500000, &flags) & 0xff, 1);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 1);
	assert_int_equal(ring_head()[0], REC_TNT | 0x3f);
	assert_int_equal(rig_call(fn, 0x600000, &flags) & 0xff, 2);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 2 - REC_ADDR_LEN);
	assert_int_equal(ring_head()[0], REC_IND_O | 2);
	assert_int_equal(ring_head()[REC_ADDR_LEN], REC_TNT | 0x1f);
	rig_icbit = 0;
	(void)state;
}

/*
 * A block that cannot carry outcomes (it ends in a system call) records
 * them first, then goes on as its translation without any.
 */
static void stub_records(void **state)
{
	static const uint8_t code[] = { 0x0f, 0x05 };	/* syscall */
	uint64_t fn, flags;

	rig.orig_land[0] = BASE;	/* "the translation without" */
	fn = rig_translate_pend(code, sizeof(code), BASE, 3, 1);
	assert_int_equal(rig.link_pend[0], RX_PEND_NONE);
	rig_reset();
	assert_int_equal(rig_call(fn, 0, &flags) & 0xff, 1);
	assert_int_equal(ring_head(), (const uint8_t *)rig.tcb - 1);
	assert_int_equal(ring_head()[0], REC_TNT | 3);
	rig.orig_land[0] = 0x500000;
	(void)state;
}

/*
 * A block's body is copied instruction for instruction, each as long as
 * its original, so one point (a run) stands for all of them: every
 * instruction start in the copy maps back to its original's, and the
 * copy decodes to the same lengths.
 */
static void body_run(void **state)
{
	static const uint8_t code[] = {
		0x48, 0x89, 0xf8,			/* mov %rdi,%rax */
		0x48, 0x83, 0xc0, 0x01,			/* add $1,%rax */
		0x48, 0x8d, 0x0d, 0x10, 0x00, 0x00, 0x00, /* lea 16(%rip),%rcx */
		0x90,					/* nop */
		0xc3,					/* ret */
	};
	static const uint8_t starts[] = { 0, 3, 7, 14 };
	struct code c = { code, sizeof(code) };
	struct rx_point run = { 0 }, at;
	struct rx_emit e;
	struct rx *x;
	struct rb b;
	size_t i, runs = 0;

	(void)state;
	assert_int_equal(rx_alloc(&x), 0);
	assert_int_equal(rx_block_decode(x, BASE, read_code, NULL, &c, &b), 0);
	rig_emit_init(&e);
	assert_int_equal(rx_translate(x, &b, RX_PEND_NONE, &e), 0);
	for (i = 0; i < e.npts; i++)
		if (e.pts[i].kind == RX_POINT_SAFE && e.pts[i].aux) {
			run = e.pts[i];
			runs++;
		}
	assert_int_equal(runs, 1);
	assert_int_equal(run.orig, BASE);
	assert_int_equal(run.aux, 15);		/* all but the ret */
	for (i = 0; i < sizeof(starts); i++) {
		uint64_t pc = run.trans + starts[i];
		struct bt_x86_insn in, orig;

		assert_true(rx_point_in_run(&run, pc, &at));
		assert_int_equal(at.orig, BASE + starts[i]);
		assert_int_equal(at.mask, 0);
		assert_int_equal(bt_x86_decode((const uint8_t *)pc, 15, pc, &in),
				 0);
		assert_int_equal(bt_x86_decode(code + starts[i], 15,
					       BASE + starts[i], &orig), 0);
		assert_int_equal(in.len, orig.len);
	}
	assert_false(rx_point_in_run(&run, run.trans + run.aux, &at));
	assert_false(rx_point_in_run(&run, run.trans - 1, &at));
	free(e.pts);
	rb_release(&b);
	rx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(block_classify),
		cmocka_unit_test(cond_records),
		cmocka_unit_test(rip_relative),
		cmocka_unit_test(rip_out_of_reach),
		cmocka_unit_test(indirect_lookup),
		cmocka_unit_test(entry_checks_orig),
		cmocka_unit_test(indirect_inline_cache),
		cmocka_unit_test(cond_carries),
		cmocka_unit_test(indirect_carries),
		cmocka_unit_test(indirect_icbit),
		cmocka_unit_test(stub_records),
		cmocka_unit_test(body_run),
	};

	return cmocka_run_group_tests(tests, rig_setup, rig_teardown);
}
