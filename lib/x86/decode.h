/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_X86_DECODE_H
#define BTRACE_X86_DECODE_H

/*
 * The instruction layer: what an x86-64 instruction that the tracer runs
 * does, decoded by Zydis, which knows every instruction glibc uses
 * (capstone 4 cannot decode many AVX-512 ones; it stays the disassembler
 * users read, btrace/insn.h).  The fast mode's displaced stepping
 * (soft_displace.c), its branch emulation (soft_emu.c) and the recorder's
 * translator (rec_xlate.c) decode here, and copy what they decoded to
 * another address with the relocator (x86/reloc.h).
 *
 * Pure: no process, no state; safe from any thread.  Internal to the
 * library.
 */

#include <stddef.h>
#include <stdint.h>

/* What an instruction does to the flow of control. */
enum bt_x86_flow {
	BT_X86_SEQ = 0,		/* falls through; runs the same anywhere once
				   a rip-relative operand is re-based */
	BT_X86_COND,		/* jcc, loop*, jrcxz: target, cond */
	BT_X86_JUMP,		/* jmp rel: target */
	BT_X86_CALL,		/* call rel: target */
	BT_X86_RET,		/* ret, ret imm16: imm */
	BT_X86_IJUMP,		/* jmp r/m: rm */
	BT_X86_ICALL,		/* call r/m: rm */
	BT_X86_SYSCALL,		/* syscall */
	BT_X86_TRAP,		/* cannot run anywhere but where it is: int n,
				   int3, far transfers, iret, sysenter, ud*,
				   hlt, transactions, the gs base's own
				   instructions, near branches of 16-bit
				   operand size, conditionals with no
				   immediate target */
};

/* What a BT_X86_TRAP does, for the tracer's classification (btrace/insn.h). */
enum bt_x86_trap {
	BT_X86_TRAP_OTHER = 0,	/* falls through or faults where it is:
				   transactions, the gs base's own, ud0/1 */
	BT_X86_TRAP_SYSTEM,	/* enters the kernel: int n, into, sysenter */
	BT_X86_TRAP_INT3,
	BT_X86_TRAP_FAR,	/* far transfers, iret, sysret, sysexit, ud2,
				   int1, hlt, near branches of 16-bit
				   operand size, and other oddities */
};

/* A register of an operand: the order of user_regs_struct's names. */
enum bt_x86_reg {
	BT_X86_R_NONE = 0,
	BT_X86_R_RAX, BT_X86_R_RCX, BT_X86_R_RDX, BT_X86_R_RBX,
	BT_X86_R_RSP, BT_X86_R_RBP, BT_X86_R_RSI, BT_X86_R_RDI,
	BT_X86_R_R8, BT_X86_R_R9, BT_X86_R_R10, BT_X86_R_R11,
	BT_X86_R_R12, BT_X86_R_R13, BT_X86_R_R14, BT_X86_R_R15,
	BT_X86_R_RIP,
	BT_X86_R_OTHER,		/* a segment, vector or 8/16-bit register */
};

/* BT_X86_COND's conditions: 0-15 are jcc's tttn (Intel's order). */
enum bt_x86_cond {
	BT_X86_CC_LOOP = 16,	/* --rcx != 0 */
	BT_X86_CC_LOOPE,	/* --rcx != 0 && ZF */
	BT_X86_CC_LOOPNE,	/* --rcx != 0 && !ZF */
	BT_X86_CC_RCXZ,		/* rcx (ecx with addr32) == 0 */
};

/* The r/m operand of jmp/call r/m. */
struct bt_x86_rm {
	uint8_t mem;		/* memory (else the register base) */
	uint8_t base;		/* enum bt_x86_reg; NONE, RIP */
	uint8_t base32;		/* base is a 32-bit register (eax, r8d) */
	uint8_t index;		/* enum bt_x86_reg, NONE if none */
	uint8_t scale;		/* 1, 2, 4, 8 */
	uint8_t seg;		/* 0, or 'f' / 'g' for an fs: / gs: override */
	uint8_t size;		/* operand size in bytes */
	int64_t disp;
};

struct bt_x86_insn {
	uint64_t addr;
	uint64_t target;	/* COND, JUMP, CALL: the direct target */
	uint64_t rip_target;	/* what a rip-relative operand points at */
	uint8_t len;
	uint8_t flow;		/* enum bt_x86_flow */
	uint8_t cond;		/* COND: enum bt_x86_cond */
	uint8_t rip_off;	/* offset of a rip-relative disp32, 0: none */
	uint8_t modrm_off;	/* offset of the ModRM byte, 0: none */
	uint8_t addr32;		/* 32-bit address size (a 67 prefix) */
	uint8_t osize16;	/* a 66 prefix: operand size 16 where it
				   applies (AMD honours it on branches) */
	uint8_t gs;		/* a gs: segment override */
	uint8_t trap;		/* TRAP: enum bt_x86_trap */
	uint8_t rep;		/* a string instruction with rep/repe/repne */
	uint8_t late_trap;	/* cpuid: see btrace/insn.h */
	uint16_t imm;		/* RET: bytes popped after the address */
	struct bt_x86_rm rm;	/* IJUMP, ICALL */
};

/*
 * Decode the instruction at @addr from @len bytes at @code into @in.
 * Returns 0; -bte_invalid for NULL arguments; -bte_decode for bytes that
 * are not an instruction (or are cut short by @len).
 */
int bt_x86_decode(const uint8_t *code, size_t len, uint64_t addr,
		  struct bt_x86_insn *in);

#endif /* BTRACE_X86_DECODE_H */
