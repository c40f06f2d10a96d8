/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PTSYNTH_H
#define BTRACE_PTSYNTH_H

/*
 * Synthesized branch traces for tests and benchmarks: a generated program
 * of real x86-64 instructions, a random walk over its control-flow graph
 * (the ground truth, as struct bt_branch entries), and the hardware streams
 * that walk would leave: Intel PT through libipt's encoder, BTS records and
 * perf BTS samples.  Decoding a stream must give the walk back.
 */

#include <stddef.h>
#include <stdint.h>

#include "btrace/branch.h"

/* Instruction classes of the generated code. */
enum ps_class {
	PS_OTHER, PS_COND, PS_JUMP, PS_CALL, PS_RET, PS_IJUMP, PS_ICALL,
	PS_SYSCALL,
};

struct ps_insn {
	uint64_t addr, target;	/* target: direct branches */
	uint8_t len, cls;
	uint16_t func;
};

struct ps_prog {
	uint64_t base, entry;
	uint8_t *code;
	size_t size;
	struct ps_insn *insn;		/* by address */
	size_t ninsn;
	uint32_t *at;			/* code offset -> insn index + 1 */
	uint64_t *func;			/* function entries */
	size_t nfunc;
	uint64_t **block;		/* block starts of each function */
	size_t *nblock;
};

/* A program of @nfunc functions at @base; function 0 loops forever. */
struct ps_prog *ps_prog_gen(uint64_t seed, size_t nfunc, uint64_t base);
void ps_prog_free(struct ps_prog *prog);
const struct ps_insn *ps_prog_insn(const struct ps_prog *prog, uint64_t addr);

struct ps_walk_opts {
	uint64_t seed;
	size_t nbranch;		/* at least this many entries */
	int loop_end;		/* then go on to function 0's loop head */
	double p_taken;		/* conditional branches */
	double p_intr;		/* per entry: a signal into a function */
	double p_ovf;		/* per entry: an overflow losing some flow */
	double p_dis;		/* per direct jump or call: tracing off for a
				   while (as leaving an address filter) */
};

/*
 * Walk @prog from its entry.  Entries: taken branches, syscalls (from the
 * syscall to the next instruction), interrupts (from the interrupted
 * instruction to the handler), overflow gaps and trace-disabled gaps (from
 * the branch that left traced code to where tracing resumed), ninsn filled.
 */
int ps_walk(const struct ps_prog *prog, const struct ps_walk_opts *opts,
	    struct bt_branch **out, size_t *count);

/* What the encoder needs to know about the instruction at @addr. */
typedef int (*ps_insn_fn)(void *ctx, uint64_t addr, uint8_t *len,
			  uint8_t *cls, uint64_t *target);
int ps_prog_insn_fn(void *prog, uint64_t addr, uint8_t *len, uint8_t *cls,
		    uint64_t *target);

struct ps_pt_opts {
	uint64_t seed;
	size_t psb_period;	/* bytes between PSB+ */
	int retcomp;		/* 0 never, 1 always, 2 at random */
	double p_irq;		/* invisible interrupts (PGD/PGE, same IP) */
	int tnt_mix;		/* vary TNT-8/TNT-64 sizes */
	/*
	 * Time: with tsc_per_insn set, the clock runs at that many ticks an
	 * instruction from tsc0, and a TSC packet tells it in each PSB+ and
	 * before each TNT (the time of its first bit's branch) and TIP.
	 */
	uint64_t tsc0, tsc_per_insn;
};

struct ps_psb {
	size_t off;		/* stream offset of the PSB */
	size_t branch;		/* index of the first entry after it */
};

struct ps_stream {
	uint8_t *buf;
	size_t size, alloc;
	struct ps_psb *psb;
	size_t npsb;
	uint64_t time_pos;	/* instructions before the last TSC's time */
};

/*
 * Encode the walk @br[0..n) starting at @start as Intel PT.  Returns 0, or
 * -1 if the branches do not fit the code (@insn says what is there).
 */
int ps_pt_encode(const struct ps_pt_opts *opts, ps_insn_fn insn, void *ctx,
		 uint64_t start, const struct bt_branch *br, size_t n,
		 struct ps_stream *out);
void ps_stream_release(struct ps_stream *s);

/*
 * How many of @br[0..n) a PT decoder can tell: direct jumps and calls
 * after the last packet are not in the trace.
 */
size_t ps_pt_visible(const struct bt_branch *br, size_t n);

/*
 * The AUX ring of @ring bytes after the kernel wrote @s into it from
 * @start on (zeros never written), copied out as perf leaves it: the
 * @ring bytes ending at the head, oldest first.
 */
uint8_t *ps_aux_ring(const struct ps_stream *s, size_t ring, size_t start);

/*
 * A buffer of @size bytes: the last @size bytes of @tile repeated, ending
 * at a tile's end (malloc'ed; NULL without memory).
 */
uint8_t *ps_repeat(const struct ps_stream *tile, size_t size);

/* The first entry the decoder can see in the last @ring bytes of @s. */
size_t ps_first_visible(const struct ps_stream *s, size_t ring);

/* BTS: intel_bts records, or perf samples (newest batch first if @batch). */
int ps_bts_encode(const struct bt_branch *br, size_t n, int perf,
		  size_t batch, int kernel, uint8_t **out, size_t *size);

#endif /* BTRACE_PTSYNTH_H */
