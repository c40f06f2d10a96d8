/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_FAST_INT_H
#define BTRACE_FAST_INT_H

/*
 * What the fast mode's files share (soft_fast.h has the design): its
 * per-target state (struct fast, at t->bk), a thread's (struct
 * fast_thread, at th->bk), and the fast_ functions one file calls in
 * another.  Internal to lib/backend/soft/.
 */

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/user.h>

#include "btrace/insn.h"
#include "backend/soft/fast.h"
#include "backend/soft/soft_block.h"
#include "backend/soft/soft_displace.h"
#include "backend/soft/soft_emu.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

#define CHAIN_MAX 64
#define EXIT_MAX 16
#define RET_STACK_MAX 64
#define FAST_ABSENT 16	/* pages remembered as in no mapping */

enum fast_bp_kind {
	BP_DECIDE = 1,	/* a decision branch: evaluate it */
	BP_STEP,	/* step the instruction with the int3 lifted */
	BP_DIRECT,	/* a direct jmp/call ending a chain early */
	BP_TARGET,	/* a side of a conditional: run it displaced */
};

struct fast_bp {
	uint64_t addr;
	uint8_t kind;		/* enum fast_bp_kind */
	uint8_t iclass;		/* enum bt_insn_class of the instruction */
	uint8_t emu_ok;
	uint8_t can_displace;	/* bt_displace_can() */
	uint8_t pinned;		/* never taken out as a stray (loader hook) */
	struct bt_emu_insn emu;
	uint64_t slot;		/* where the instruction runs displaced, 0: none */
	struct fast_bp *next;
};

/* One block of a thread's predicted path (a copy: blocks may be dropped). */
struct fast_link {
	uint64_t start, end, next;
	uint32_t ninsn;
	int16_t prev;		/* the link before on its path, -1: first */
	uint8_t taken;		/* entered by prev's conditional, taken */
	uint8_t how;		/* enum bt_block_end */
	uint8_t term_class;
	uint8_t stop_end;	/* ends a taken side: its int3 is relied on */
};

/*
 * A conditional of the chain with an int3 (BP_TARGET) on the side the
 * chain does not follow, usually its taken target (else its fall-through,
 * the chain going on at the taken one): the conditional itself goes
 * unwatched, and a thread stopping at the target went that way.  Targets
 * lie outside every link of the chain.
 */
struct fast_exit {
	uint64_t target;
	int16_t link;		/* the link the conditional ends */
	uint8_t taken;		/* target is the taken side (else fall-through) */
};

/* The function entries of traced code, for callbacks from untraced code. */
struct fast_entry {
	uint64_t stop;		/* the stop point of the entry's chain */
	uint64_t entry;
};

enum fast_state {
	FT_RUN = 0,	/* running natively along its chain */
	FT_SIGSTEP,	/* stepping into a signal handler */
	FT_STEPOVER,	/* stepping an instruction under a lifted int3 */
	FT_STEP,	/* stepping code that may change (no int3 there) */
	FT_NATIVE,	/* in untraced code: runs free until re-entry */
	FT_SYSCALL,	/* in a system call, displaced (fast_sys_enter) */
};

struct fast_thread {
	struct fast_link chain[CHAIN_MAX];
	size_t nchain;
	struct fast_exit exits[EXIT_MAX];
	size_t nexits;
	uint64_t displaced;	/* the chain begins with this one, displaced */
	int may_restart;	/* chain_build may ask for a displaced start */
	int next_taken;		/* the next main link is a conditional's target */
	uint32_t acc;		/* instructions since the last branch */
	int state;		/* enum fast_state */
	int need_step;		/* trap left it at an int3 to step over */
	int need_sys;		/* ... at a system call's, to run displaced */
	int back_native;	/* that step is not traced: FT_NATIVE after */
	int foreign;		/* a followed fork child: another memory */
	struct user_regs_struct pre;	/* registers before a step */
	uint64_t lifted;	/* FT_STEPOVER: the int3 put back after */
	uint64_t stop;		/* where the chain ends (its int3), or 0 */
	int last;		/* the main path's last link, -1: none */
	/* untraced code (filters, from_sym) */
	uint64_t left_to;	/* first untraced address */
	struct fast_entry ret_stack[RET_STACK_MAX];	/* return addresses */
	size_t nret;
};

/* A module mapping and whether it is traced. */
struct fast_region {
	uint64_t start, end;
	int traced;
	int volatile_code;	/* writable or anonymous: step it */
	int prot;		/* BT_MAP_* as the maps said */
};


struct fast {
	struct bt_block_cache *blocks;
	struct bt_disasm *dis;
	struct bt_emu *emu;
	struct bt_displace *dsp;
	struct fast_bp **bp;
	size_t nbp_bucket, nbp;
	uint64_t *gone;		/* addresses of int3s taken out (a set) */
	size_t ngone, gone_cap;	/* gone_cap: 0 or a power of two */
	uint64_t restorers[16];
	size_t nrestorers;
	struct fast_region *region;
	size_t nregion;
	int maps_stale;
	unsigned long long maps_size;	/* statm size when regions loaded */
	uint64_t absent[FAST_ABSENT];	/* pages in no region since then */
	size_t nabsent;
	int filtered;		/* only/exclude given */
	int armed;		/* tracing (from_sym reached, or none) */
	uint64_t from_addr, until_addr;
	int until_number;	/* --until's breakpoint, in every process */
	struct fast_entry *entries;
	size_t nentries;
	int entries_done;
	int setup_done;
	int no_taken_sides;	/* chains for entries: main path only */
	uint64_t loader_hook;	/* _dl_debug_state, while a trigger waits */
	struct fast_thread scratch;	/* chains built for entries */
	void *above;		/* a backend built on this one (fast.h) */
};

static inline struct fast *fast_of(struct bt_target *t)
{
	return t->bk;
}

/*
 * The target's memory and every int3 in it (tracer/aspace.h): the fast
 * mode's are BT_BP_BACKEND there; its table below keeps what it knows of
 * each (kind, decoded instruction, slot).
 */
static inline struct bt_aspace *fast_as(struct bt_target *t)
{
	return bt_target_aspace(t, t->pid);
}

static inline int ft_foreign(const struct bt_thread *th)
{
	return ((const struct fast_thread *)th->bk)->foreign;
}

/* fast_bp.c: int3s and the process's memory */
struct fast_bp *fast_bp_find(const struct fast *f, uint64_t addr);
int fast_bp_insert(struct bt_target *t, uint64_t addr, int kind,
		   struct fast_bp **out);
void fast_bp_remove(struct bt_target *t, uint64_t addr);
void fast_bp_forget_all(struct fast *f);
void fast_bp_release(struct bt_target *t);
int fast_bp_lift(struct bt_target *t, struct bt_thread *th, uint64_t addr);
void fast_bp_unlift(struct bt_target *t, struct bt_thread *th);
int fast_code_read(struct bt_target *t, uint64_t addr,
		   uint8_t code[BT_INSN_MAX_LEN]);
void fast_fork(struct bt_target *t, pid_t child, int shared);
void fast_fork_followed(struct bt_target *t, pid_t child);
int fast_gone_has(const struct fast *f, uint64_t addr);
int fast_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* fast_filter.c: the map of code, untraced code, --from/--until */
int fast_addr_chained(struct bt_target *t, uint64_t addr);
int fast_addr_traced(struct bt_target *t, uint64_t addr);
void fast_native_enter(struct bt_target *t, struct bt_thread *th,
		       uint64_t to, uint64_t ret);
void fast_native_leave(struct bt_target *t, struct bt_thread *th,
		       uint64_t stop);
int fast_triggers(struct bt_target *t, struct fast *f);
int fast_triggers_resolve(struct bt_target *t, struct fast *f);

/* fast_chain.c: the history a chain commits, the path ahead */
void fast_acc_add(struct bt_target *t, struct bt_thread *th, uint32_t n);
void fast_branch_append(struct bt_target *t, struct bt_thread *th,
			uint64_t from, uint64_t to, int kind, int flags);
int fast_chain_build(struct bt_target *t, struct bt_thread *th, uint64_t pc);
void fast_chain_commit(struct bt_target *t, struct bt_thread *th,
		       uint64_t pc);
void fast_gap_append(struct bt_target *t, struct bt_thread *th,
		     uint64_t from, uint64_t to, int reason);
int fast_is_restorer(const struct fast *f, uint64_t start);

/* fast_stop.c: stops, steps, displaced slots */
int fast_slot_enter(struct bt_target *t, struct bt_thread *th,
		    struct user_regs_struct *regs);
int fast_slot_restart(struct bt_target *t, struct bt_thread *th,
		      struct user_regs_struct *regs);
int fast_sys_enter(struct bt_target *t, struct bt_thread *th,
		   struct user_regs_struct *regs);
int fast_step_start(struct bt_thread *th, int state,
		    const struct user_regs_struct *regs, int sig);
void fast_thread_unslot(struct bt_target *t, struct bt_thread *th,
			struct user_regs_struct *regs, int keep_start);
void fast_thread_unslot_stopped(struct bt_target *t, struct bt_thread *th);
int fast_trap(struct bt_target *t, struct bt_thread *th, const siginfo_t *si);

#endif /* BTRACE_FAST_INT_H */
