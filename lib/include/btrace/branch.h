/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BRANCH_H
#define BTRACE_BRANCH_H

#include <stdint.h>

/*
 * A branch: one taken control transfer of one thread.
 *
 * A thread's history is an array of branches, oldest first; the last entry
 * is the most recent branch.  Instructions between two branches run
 * straight through: the block of branch i is [branches[i-1].to,
 * branches[i].from], ending with the branch instruction at from.
 *
 * Time: where the capture carries timestamps (the software backends, the
 * recorder, Intel PT with TSC/MTC), each branch has one, interpolated
 * over instruction counts between the capture's own time records.
 *
 * A gap is an entry of its own (kind BT_BR_GAP) with a reason: the history
 * is never silently joined across lost or untraced code.  For a gap, from is
 * the last address known before it (0 if none) and to the first address
 * known after it (0 if none).
 */

enum bt_branch_kind {
	BT_BR_NONE = 0,
	BT_BR_COND,	/* conditional jump, taken (jcc, loop, jrcxz) */
	BT_BR_JUMP,	/* direct unconditional jump */
	BT_BR_CALL,	/* direct call */
	BT_BR_RET,	/* return */
	BT_BR_IJUMP,	/* indirect jump (jump tables, tail calls via register) */
	BT_BR_ICALL,	/* indirect call (function pointers, PLT targets) */
	BT_BR_SYSCALL,	/* syscall/sysenter/int 0x80: into the kernel and back */
	BT_BR_SYSRET,	/* return from the kernel to somewhere else */
	BT_BR_INTR,	/* asynchronous transfer: signal delivery, interrupt */
	BT_BR_GAP,	/* see enum bt_gap_reason */
	BT_BR_MAX
};

enum bt_gap_reason {
	BT_GAP_NONE = 0,
	BT_GAP_OVERFLOW,	/* the hardware or ring lost data (OVF, overwrite) */
	BT_GAP_DISABLED,	/* tracing was off (TIP.PGD ... TIP.PGE) */
	BT_GAP_DECODE,		/* the decoder could not follow the stream */
	BT_GAP_UNTRACED,	/* code excluded by a filter ran natively */
	BT_GAP_NOCODE,		/* no code image for an address */
	BT_GAP_START,		/* the start of the captured trace */
	BT_GAP_MOVED,		/* a debugger moved the pc (a jump, a call) */
	BT_GAP_MAX
};

enum bt_branch_flags {
	BT_BRF_ABORTED = 1 << 0,	/* a transaction aborted here */
	BT_BRF_SPECULATIVE = 1 << 1,	/* executed speculatively */
	BT_BRF_SIGRETURN = 1 << 2,	/* rt_sigreturn back to the interrupted code */
	BT_BRF_COMPRESSED = 1 << 3,	/* a return compressed to a TNT bit */
};

struct bt_branch {
	uint64_t from;	/* address of the branch instruction */
	uint64_t to;	/* address of the next instruction executed */
	uint32_t ninsn;	/* instructions in the block ending here, 0 if unknown */
	uint8_t kind;	/* enum bt_branch_kind */
	uint8_t flags;	/* enum bt_branch_flags */
	uint16_t gap;	/* enum bt_gap_reason, for BT_BR_GAP */
	uint64_t ts;	/* when it was taken, ns of CLOCK_MONOTONIC; 0 if the
			   capture carries no time (BTS) */
};

/*
 * The name of branch kind @kind (enum bt_branch_kind): "conditional",
 * "jump", "call", "return", ...  Never fails: "?" for out of range.
 */
const char *bt_branch_kind_name(int kind);

/*
 * The name of gap reason @reason (enum bt_gap_reason): "overflow",
 * "disabled", "decode error", ...  Never fails: "?" for out of range.
 */
const char *bt_gap_reason_name(int reason);

#endif /* BTRACE_BRANCH_H */
