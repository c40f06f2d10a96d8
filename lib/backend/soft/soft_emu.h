/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SOFT_EMU_H
#define BTRACE_SOFT_EMU_H

/*
 * Where does a decision branch go?  The fast software backend stops at
 * conditional branches, returns and indirect jumps and calls (an int3 on
 * the instruction) and decides the outcome from the thread's registers,
 * flags and memory instead of stepping the instruction.  Whatever this
 * cannot decide for certain (odd prefixes, 16-bit forms, an unreadable
 * operand) returns -bte_nosys: the caller then steps the instruction once,
 * which is always right.
 *
 * Internal to the library.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

enum bt_emu_op {
	BT_EMU_NONE = 0,	/* not a decision branch we emulate */
	BT_EMU_JCC,		/* jcc rel: cc in bt_emu_insn.cc */
	BT_EMU_LOOP,		/* loop: --rcx != 0 */
	BT_EMU_LOOPE,		/* loope: --rcx != 0 && ZF */
	BT_EMU_LOOPNE,		/* loopne: --rcx != 0 && !ZF */
	BT_EMU_JRCXZ,		/* jrcxz (jecxz with an address-size prefix) */
	BT_EMU_RET,		/* ret, ret imm16 */
	BT_EMU_JMP_RM,		/* jmp r/m64 */
	BT_EMU_CALL_RM,		/* call r/m64 */
	BT_EMU_JMP,		/* jmp rel: target known */
	BT_EMU_CALL,		/* call rel: target known */
};

/* An operand register: an index into user_regs_struct (bt_emu_reg_get). */
enum bt_emu_reg {
	BT_EMU_R_NONE = 0,
	BT_EMU_R_RAX, BT_EMU_R_RCX, BT_EMU_R_RDX, BT_EMU_R_RBX,
	BT_EMU_R_RSP, BT_EMU_R_RBP, BT_EMU_R_RSI, BT_EMU_R_RDI,
	BT_EMU_R_R8, BT_EMU_R_R9, BT_EMU_R_R10, BT_EMU_R_R11,
	BT_EMU_R_R12, BT_EMU_R_R13, BT_EMU_R_R14, BT_EMU_R_R15,
	BT_EMU_R_RIP,
	BT_EMU_R_MAX
};

/* A decoded decision branch, ready to evaluate many times. */
struct bt_emu_insn {
	uint64_t addr;
	uint64_t target;	/* direct target (jcc, loop, jrcxz, jmp/call rel) */
	int64_t disp;		/* memory operand displacement */
	uint16_t imm;		/* ret imm16 */
	uint8_t len;
	uint8_t op;		/* enum bt_emu_op */
	uint8_t cc;		/* jcc condition, the tttn of opcode 0x7? */
	uint8_t mem;		/* r/m is memory (else register reg) */
	uint8_t reg;		/* register operand, or base (enum bt_emu_reg) */
	uint8_t index;		/* index register, BT_EMU_R_NONE if none */
	uint8_t scale;		/* 1, 2, 4, 8 */
	uint8_t seg;		/* 0, or 'f' / 'g' for an fs: / gs: override */
	uint8_t addr32;		/* 32-bit address size (0x67 prefix) */
};

struct bt_emu;

/*
 * A handle for bt_emu_decode, which decodes with x86/decode.h (Zydis).
 * Returns 0 or -bte_nomem; free accepts NULL.
 */
int bt_emu_alloc(struct bt_emu **emu);
void bt_emu_free(struct bt_emu *emu);

/*
 * Decode the instruction at @addr from @len bytes at @code into @ei.
 * Returns 0 for a decision branch this module evaluates, -bte_nosys for
 * one it does not (step it instead), -bte_decode for invalid bytes.
 */
int bt_emu_decode(struct bt_emu *emu, const uint8_t *code, size_t len,
		  uint64_t addr, struct bt_emu_insn *ei);

/* Read @len bytes of the thread's memory at @addr; 0 or a negative bt_error. */
typedef int (*bt_emu_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The outcome of one decision branch. */
struct bt_emu_result {
	uint64_t next;		/* the next pc */
	int taken;		/* the branch was taken (always for ret/jmp/call) */
	int push;		/* a call: write push_value at new rsp */
	uint64_t push_value;	/* the return address pushed */
};

/*
 * Evaluate @ei on @regs (the state before the instruction executes) and
 * update @regs to the state after it (rip, rsp, rcx).  Memory is read
 * through @read; a call's push is not written but described in @res: the
 * caller writes res->push_value at regs->rsp.
 * Returns 0; -bte_nosys if it cannot be decided here (step instead; @regs
 * is then unchanged); -bte_io if an operand cannot be read (stepping the
 * instruction makes the same fault happen for real).
 */
int bt_emu_eval(const struct bt_emu_insn *ei, struct user_regs_struct *regs,
		bt_emu_read_fn read, void *ctx, struct bt_emu_result *res);

/* Is condition @cc (0..15, Intel tttn) true under @eflags? */
int bt_emu_cond(unsigned int cc, uint64_t eflags);

/* The value of register @reg in @regs (rip: @regs->rip). */
uint64_t bt_emu_reg_get(const struct user_regs_struct *regs, int reg);

#endif /* BTRACE_SOFT_EMU_H */
