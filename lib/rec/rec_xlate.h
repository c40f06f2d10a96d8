/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_XLATE_H
#define BTRACE_REC_XLATE_H

/*
 * The recorder's translator: blocks of the program's code decoded
 * (x86/decode.h: Zydis, which knows every instruction glibc uses) and
 * their translations emitted into a buffer that the caller then writes
 * into the process; instructions are copied by the relocator
 * (x86/reloc.h).
 * Pure: no process, no ptrace; unit-testable in-process.
 *
 * A block runs from its start to its terminator.  What a translation does
 * with each terminator, and what the thread's ring gets (rec_ring.h):
 *   copied instruction  the same bytes, a rip-relative displacement re-based
 *   jmp rel / call rel  chained; a call pushes the original return address
 *   jcc, jrcxz, loop    the outcome carried on in the successor's
 *                       variant (below), or one byte of outcomes
 *                       (REC_TNT), then chained
 *   ret, jmp/call r/m   the target (REC_IND) and a lookup in the process's
 *                       tables of translations (inline, one per site),
 *                       which enters the translation by its entry; a
 *                       jmp/call r/m compares its inline cache's one
 *                       target first (rx_emit_ic)
 *   syscall             run in place, except the few that change the
 *                       thread's state in ways the tracer must see
 *                       (sigreturn, exec, clone, fork, exit, arch_prctl):
 *                       those leave the translation
 *   anything else that  leave the translation before it (RB_LEAVE): int3,
 *   cannot run moved    int n, far transfers, ud2, hlt, xbegin, xabort,
 *                       a gs segment (the recorder's own), undecodable
 *                       bytes (BT_X86_TRAP in x86/decode.h), and an
 *                       address the caller wants to stop at
 * Outcomes of conditionals are carried, not stored, where they can be:
 * a translation is made for a block and a "pending" set of up to
 * rx's pend_max outcomes not yet recorded (its variant), so that a
 * conditional passes its outcome on to the variant of its successor, and
 * the next record takes them along: a REC_TNT byte holds up to
 * pend_max + 1 outcomes, a target record's tag up to pend_max.  Direct
 * jumps and calls carry them on; blocks that end otherwise (a system
 * call, a cut, a leave) record them first.  The tracer writes them for a
 * thread it takes out of a variant (rx_point's pend).
 * Flags are never touched between the program's instructions: the
 * generated code uses mov, lea, not, bswap, movzx, push/pop and jrcxz.
 *
 * Per thread, %gs points at its control block (TCB_*): ring head, scratch
 * slots for the registers the generated code borrows, the tables.  The
 * lookup probes two direct-mapped tables, indexed by bits 0-15 and 8-23
 * of the target (16-bit loads need no shift, which would touch flags).
 */

#include <stddef.h>
#include <stdint.h>

/* The thread control block, at the thread's gs base. */
#define TCB_HEAD	0x00	/* newest record's first byte (ring grows down) */
#define TCB_RAX		0x08
#define TCB_RCX		0x10
#define TCB_RDX		0x18
/* 0x20: free */
#define TCB_TABLE1	0x28	/* lookup tables: 65536 x {orig, trans} */
#define TCB_TABLE2	0x30
#define TCB_T		0x38	/* the probe's target, for its bits 16-31 */
#define TCB_HI		0x40	/* the last REC_IND's target, low half 0 */
#define TCB_SIGACT	0x800	/* the tracer's: a sigaction read or set */
#define TCB_SIZE	4096

#define RX_TABLE_ENTRIES 65536
#define RX_TABLE_BYTES	(RX_TABLE_ENTRIES * 16)

/*
 * @a's entry in lookup table @which (0 or 1): table 1 by bits 0-15, table
 * 2 by bits 0-15 plus 8 times bits 16-31, mod 65536, as the probe
 * computes them without touching the flags (movzwl and lea:
 * rec_xlate_ibl.c's lookup_probe).  Two targets with the same low 16
 * bits (table 1's collisions, 64 KiB apart) then differ in table 2, and
 * the targets of one stretch of code spread over it (indexed by bits
 * 8-23 before, a whole 256-byte stretch had one entry: node filled a
 * tenth of table 2 and nine tenths of table 1).
 */
static inline size_t rx_table_index(int which, uint64_t a)
{
	if (which == 0)
		return a & 0xffff;
	return ((a & 0xffff) + 8 * ((a >> 16) & 0xffff)) & 0xffff;
}

enum rb_term {
	RB_CUT = 0,	/* the length limit: falls through to next */
	RB_COND,
	RB_JUMP,
	RB_CALL,
	RB_RET,
	RB_IJUMP,
	RB_ICALL,
	RB_SYSCALL,	/* syscall: falls through to next */
	RB_LEAVE,	/* leaves the translation at end, which does not run */
};

/*
 * Pending outcomes, coded as in REC_TNT: a leading 1, then the outcomes,
 * oldest first (1 taken); RX_PEND_NONE: none.  RX_PENDS bounds them.
 */
#define RX_PEND_NONE	1
#define RX_PEND_MAX	4		/* the most a variant carries: hot code */
#define RX_PENDS	(2 << RX_PEND_MAX)
#define RX_PEND_COLD	1		/* the most until a block is found hot */
#define RX_PENDS_COLD	(2 << RX_PEND_COLD)

#define RB_MAX_INSN 256
#define RB_MAX_BYTES 4096

/* What a block's profile says (rec_profile.c): it ran, the lookup found
 * it (an indirect branch's target), it was translated from a profile;
 * and which of its variants ran (by pending outcomes, RB_PROF_VAR: those
 * of cold code only, 0 for the others). */
#define RB_PROF_RAN	1
#define RB_PROF_IBL	2
#define RB_PROF_HINT	4
#define RB_PROF_VAR(pend)					\
	((pend) >= RX_PEND_NONE && (pend) < RX_PENDS_COLD ?		\
		 (uint8_t)(8u << ((pend) - 1)) : 0)
#define RB_PROF_VARS	0x38

/* A decoded block.  For RB_LEAVE, end == next: the instruction at end
 * is not part of it; ninsn counts what runs translated. */
struct rb {
	uint64_t start;
	uint64_t end;		/* the terminator */
	uint64_t next;		/* after the terminator */
	uint64_t target;	/* direct target, 0 if none */
	uint32_t ninsn;
	uint8_t term;		/* enum rb_term */
	uint8_t prof;		/* RB_PROF_*: what the profile learns of it */
	uint16_t nbytes;
	uint8_t *bytes;		/* [start, next) as decoded */
	uint16_t *off;		/* instruction offsets, ninsn of them */
	uint8_t *rip;		/* each one's rip-relative disp32 offset, 0:
				   none (off, rip and bytes: one allocation,
				   off's) */
	/* its translation by pending outcomes, 0: none yet (rb_trans):
	 * those a block has before it is hot here, the others in xtrans */
	uint64_t trans[RX_PENDS_COLD];
	uint64_t *xtrans;	/* [RX_PENDS - RX_PENDS_COLD], or NULL */
	/* hot code (rec_hot.c): its runs in the sample numbered hit_sample,
	 * the samples it was hot in, translated again */
	uint16_t hits, hit_sample;
	uint8_t hot_samples;
	uint8_t hot;
	/*
	 * A jmp/call r/m through a word of memory (a PLT's GOT slot): the
	 * target it held when the block was first translated (ic_fixed),
	 * the same for all its variants and for as long as the block lives,
	 * so that a drain knows it: reaching it is a taken outcome, carried
	 * as a conditional's is; any other target is recorded after an
	 * outcome not taken (rec_xlate.c's emit_icbit).  0: none.
	 */
	uint8_t ic_fixed;
	uint64_t icbit;
	uint8_t dead;		/* its code went away (rec_link.c's invalidation) */
	/* the variants (by pending outcomes, bit pend) whose translation
	 * has no mark; the samples it ran MARK_HITS times in, and the times
	 * rc_profile_marked looked at it (rec_hot.c) */
	uint8_t unmarked, mark_samples, mark_checks;
	uint32_t died;		/* the generation it died in (rec_grave.c) */
	struct rb *hnext;
	/* The cache's: the blocks at next and target as last found, valid
	 * while succ_epoch is the cache's epoch (rc_block_get) */
	struct rb *succ[2];
	uint64_t succ_epoch;
};

/* @b's translation carrying @pend, 0 if none. */
static inline uint64_t rb_trans(const struct rb *b, unsigned pend)
{
	if (pend < RX_PENDS_COLD)
		return b->trans[pend];
	return b->xtrans && pend < RX_PENDS ? b->xtrans[pend - RX_PENDS_COLD] :
					       0;
}

/* Set it: 0, or -bte_nomem. */
int rb_set_trans(struct rb *b, unsigned pend, uint64_t trans);

/* Is @b's variant carrying @pend known to have run (rc_profile_ran)? */
static inline int rb_ran(const struct rb *b, unsigned pend)
{
	uint8_t how = RB_PROF_RAN | RB_PROF_VAR(pend);

	return (b->prof & how) == how;
}

/*
 * The outcomes @b's variant carrying @pend carries on at most: more in
 * hot code (rec_hot.c), and in the variants only hot code leads to.
 */
static inline unsigned rb_pend_max(const struct rb *b, unsigned pend)
{
	return b->hot || pend >= RX_PENDS_COLD ? RX_PEND_MAX : RX_PEND_COLD;
}

/* Original code: 0, or < 0 if @len bytes at @addr cannot be read. */
typedef int (*rx_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* Must the translation leave before running @addr (a breakpoint)? */
typedef int (*rx_stop_fn)(void *ctx, uint64_t addr);

struct rx;

/* Returns 0 or -bte_nomem; rx_free accepts NULL. */
int rx_alloc(struct rx **x);
void rx_free(struct rx *x);

/*
 * Decode the block at @addr into @b (its arrays malloc'ed: rb_release).
 * Never fails for code that cannot be read or decoded: that is an
 * RB_LEAVE there.  Returns 0 or -bte_nomem.
 */
int rx_block_decode(struct rx *x, uint64_t addr, rx_read_fn read,
		    rx_stop_fn stop, void *ctx, struct rb *b);
void rb_release(struct rb *b);

/* @b's arrays copied into @c, a copy of @b otherwise.  0 or -bte_nomem. */
int rb_dup_arrays(struct rb *c, const struct rb *b);

/* Instructions of @b before @pc (an instruction boundary in it). */
uint32_t rb_insns_before(const struct rb *b, uint64_t pc);

/* Outcomes a variant may carry: 0 (each conditional records its own) to
 * RX_PEND_MAX; RX_PEND_COLD by default. */
void rx_set_pend_max(struct rx *x, unsigned max);

/* Does @b's translation carry pending outcomes on (else it records them
 * first and goes on as the translation without)? */
int rb_carries(const struct rb *b);

/*
 * What the successor of a conditional gets when it went @taken with
 * @pend pending: the outcomes carried on, or RX_PEND_NONE where the
 * conditional records them.
 */
uint8_t rx_cond_pend(const struct rx *x, uint8_t pend, int taken);

/* How many outcomes @pend holds. */
static inline unsigned rx_pend_count(unsigned pend)
{
	return 31u - (unsigned)__builtin_clz(pend);
}

/* An icbit hit's outcome carried on after @pend: as far as hot code
 * carries (RX_PEND_MAX), cold or not; RX_PEND_NONE: recorded there. */
static inline uint8_t rx_icbit_pend(uint8_t pend)
{
	unsigned p = (unsigned)pend << 1 | 1u;

	return rx_pend_count(p) <= RX_PEND_MAX ? (uint8_t)p : RX_PEND_NONE;
}

/*
 * Translator points: where generated code stands for the program, and
 * where it exits to the tracer (an int3).  Nothing to do with Intel PT.
 */
enum rx_point_kind {
	RX_POINT_SAFE = 0,	/* the program's state at orig (after mask
				   restore); aux > 0: a run of aux bytes of
				   copied instructions, trans + k standing
				   for orig + k at each of their starts */
	RX_POINT_STORE,		/* a ring store; orig: its branch, 0 for a
				   target */
	RX_POINT_EXIT_DIRECT,	/* int3: orig not translated; aux: the rel32
				   to patch */
	RX_POINT_EXIT_IBL,	/* int3: lookup missed, target in rdx; aux:
				   probe, 0 for an entry's check */
	RX_POINT_EXIT_LEAVE,	/* int3: leave the translation at orig */
	RX_POINT_IC,		/* an indirect jump or call's inline cache
				   (rec_xlate_ibl.c), at its lookup's probe;
				   orig: the target it holds, aux: its rel32 */
};

/* RX_POINT_EXIT_DIRECT's mask: its jump goes to the translation now. */
#define RX_LINKED	0x80
/* RX_POINT_EXIT_DIRECT's mask too: its jump became a nop, the target's
 * translation right after it (rec_link.c's thread_point): for good. */
#define RX_THREADED	0x08

/* Registers the generated code borrowed at a point (restore from TCB). */
#define RM_RAX		1
#define RM_RCX		2
#define RM_RDX		4
#define RM_FIXRCX	8	/* rcx after a syscall: the original next */

struct rx_point {
	uint64_t trans;
	uint64_t orig;
	uint64_t aux;
	uint8_t kind;		/* enum rx_point_kind */
	uint8_t mask;		/* RM_* */
	uint8_t pend;		/* outcomes not yet recorded there */
};

/*
 * The point that stands at @pc inside the run @run (an RX_POINT_SAFE with
 * aux > 0) into *@out; 0 if @pc is not in it.  @pc must be where an
 * instruction of the copy starts.
 */
static inline int rx_point_in_run(const struct rx_point *run, uint64_t pc,
				  struct rx_point *out)
{
	if (run->kind != RX_POINT_SAFE || !run->aux || pc < run->trans ||
	    pc >= run->trans + run->aux)
		return 0;
	*out = *run;
	out->trans = pc;
	out->orig = run->orig + (pc - run->trans);
	out->aux = 0;
	return 1;
}

/*
 * The translation of @orig carrying @pend if it exists and a rel32 at
 * @from can reach it, else 0 (the link site then exits to the tracer the
 * first time).
 */
typedef uint64_t (*rx_link_fn)(void *ctx, uint64_t orig, uint8_t pend,
			       uint64_t from);

/*
 * Where the indirect jump or call @b (jmp/call r/m) is likely to go: the
 * word its rip-relative operand holds now (a PLT or GOT slot), else 0.
 */
typedef uint64_t (*rx_guess_fn)(void *ctx, const struct rb *b);

/* An output buffer standing for target memory from @base on. */
struct rx_emit {
	uint8_t *buf;
	size_t len, cap;
	uint64_t base;
	rx_link_fn link;
	void *ctx;
	struct rx_point *pts;
	size_t npts, ptcap;
	uint8_t pend;		/* outcomes pending where emitting stands */
	uint64_t entry_orig;	/* for rx_emit_entry's points */
	rx_guess_fn guess;	/* NULL: inline caches start empty */
	int no_time;		/* no TSC records around system calls */
	uint64_t mark;		/* a byte the translation sets to 1 when it
				   runs (movb, flags kept), 0: none */
	size_t lit_at;		/* a push's disp32 to its literal, 0: none */
	uint64_t lit;		/* the literal, put after the translation */
	size_t lead;		/* bytes before the translation's entry: a
				   conditional's taken side (rx_translate) */
	size_t taken_at;	/* where in buf that side is, its exit's point
				   (direct) at taken_pt; 0: none */
	size_t taken_pt;
	uint64_t taken_dest;	/* the direct side's target translation */
};

/* Emit the translation of @b carrying @pend at e->base + e->len.  0,
 * -bte_nomem, or -bte_nosys if a rip-relative operand is out of reach
 * from here. */
int rx_translate(struct rx *x, const struct rb *b, uint8_t pend,
		 struct rx_emit *e);

/*
 * A translation without pending outcomes starts with its entry: the
 * lookup jumps there with rax, rcx and rdx still borrowed, and the entry
 * checks that rdx is e->entry_orig (else an RX_POINT_EXIT_IBL with aux 0:
 * a table entry changed under the probe), then takes them back from the
 * control block; direct links go past it.  rx_emit_entry emits one.
 */
#define RX_ENTRY_LEN	48
int rx_emit_entry(struct rx_emit *e);

/* An entry's part after its check: the loads that take rax, rcx and rdx
 * back (RX_ENTRY_LEN - RX_ENTRY_RESTORE bytes before the translation). */
#define RX_ENTRY_RESTORE 27
/* The check's own length: where an entry that skips it goes in. */
#define RX_ENTRY_CHECK	(RX_ENTRY_LEN - RX_ENTRY_RESTORE)

/* A point of kind @kind at the end of @e (rx_point). 0 or -bte_nomem. */
int rx_emit_point(struct rx_emit *e, int kind, uint64_t orig, uint64_t aux,
		  int mask);

/*
 * The inline cache of the indirect jump or call @b (in rx_emit_lookup),
 * between its record and its lookup's probe, rax, rcx and rdx borrowed,
 * the target in rdx: compared with the one target it holds, a hit jumps
 * to that target's entry past its check (a link the tracer makes and
 * undoes as a direct one's), anything else goes on to the probe.
 */
#define RX_IC_LEN	30	/* bytes at most, its alignment included */
int rx_emit_ic(struct rx_emit *e, const struct rb *b);

/* The imm64 of the inline cache whose rel32 is at @rel32. */
#define RX_IC_IMM(rel32) ((rel32) - 21)

/*
 * The lookup of the target in rdx of the ret or jmp/call r/m @b
 * (rec_xlate_ibl.c), the program's rdx in its slot: the target recorded
 * (the outcomes pending, in its tag), the inline cache of a jmp or call,
 * both tables probed, a jump to the translation's entry or an exit to the
 * tracer.  One copy per site, so that each indirect branch of the program
 * has its own indirect jump here, predicted as the program's own would be.
 */
int rx_emit_lookup(struct rx_emit *e, const struct rb *b);

/* Emit jmp *0(%rip); .quad @dest (reaches anywhere). */
int rx_emit_far_jump(struct rx_emit *e, uint64_t dest);

#endif /* BTRACE_REC_XLATE_H */
