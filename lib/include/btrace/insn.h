/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_INSN_H
#define BTRACE_INSN_H

#include <stddef.h>
#include <stdint.h>

/*
 * x86-64 instruction classification for branch tracing, and the text of
 * an instruction for users.  Shared by the software backend (what did
 * this step do?) and the decoders (what kind of branch is at this BTS
 * "from"?).  Classification decodes with Zydis (the library's one
 * instruction layer, which knows every instruction glibc uses); the text
 * is capstone's.
 */

#define BT_INSN_MAX_LEN 15

enum bt_insn_class {
	BT_INSN_OTHER = 0,	/* falls through */
	BT_INSN_COND,		/* jcc, loop*, jrcxz: direct target */
	BT_INSN_JUMP,		/* jmp rel: direct target */
	BT_INSN_CALL,		/* call rel: direct target */
	BT_INSN_RET,		/* ret, ret imm */
	BT_INSN_IJUMP,		/* jmp r/m */
	BT_INSN_ICALL,		/* call r/m */
	BT_INSN_SYSCALL,	/* syscall, sysenter, int imm8 */
	BT_INSN_INT3,		/* int3 */
	BT_INSN_FAR,		/* far transfers, iret, ud2 and other oddities */
};

struct bt_insn {
	uint64_t addr;
	uint64_t target;	/* direct target, 0 if none */
	uint8_t len;
	uint8_t iclass;		/* enum bt_insn_class */
	uint8_t rep;		/* has a rep/repne prefix (string op) */
	uint8_t late_trap;	/* a step may trap after the next one too */
};

/*
 * late_trap: cpuid.  Hypervisors emulate it, and some (seen on AMD EPYC
 * VMs) skip the trap flag's debug trap for the emulated instruction: a
 * single step of cpuid stops after the instruction that follows it.
 * Steppers then account for that instruction too (backend/soft/soft.c,
 * backend/soft/soft_fast.c).
 */

struct bt_disasm;

/*
 * A disassembler handle (capstone, for bt_insn_format) into *@dis; free it
 * with bt_disasm_free(), which accepts NULL.  A handle serves one thread at
 * a time.
 * Returns 0; -bte_invalid if @dis is NULL; -bte_nomem; -bte_internal if
 * capstone cannot open a handle.
 */
int bt_disasm_alloc(struct bt_disasm **dis);
void bt_disasm_free(struct bt_disasm *dis);

/*
 * Decode the instruction at @addr from @len bytes at @code into @insn.
 * Returns 0; -bte_invalid if @dis, @code or @insn is NULL; -bte_decode if
 * the bytes are not an instruction (or are cut short by @len).
 */
int bt_insn_decode(struct bt_disasm *dis, const uint8_t *code, size_t len,
		   uint64_t addr, struct bt_insn *insn);

/*
 * Format the instruction at @addr as "mnemonic operands" into @buf of
 * @size bytes (truncated to fit, always NUL-ended if @size > 0).
 * Returns the instruction's length in bytes; -bte_invalid if @dis, @code
 * or @buf is NULL; -bte_decode if the bytes are not an instruction.
 */
int bt_insn_format(struct bt_disasm *dis, const uint8_t *code, size_t len,
		   uint64_t addr, char *buf, size_t size);

/*
 * The branch kind (enum bt_branch_kind) of a taken transfer by an
 * instruction of class @iclass (enum bt_insn_class).  Never fails:
 * BT_BR_NONE for a class that does not branch or is out of range.
 */
int bt_insn_branch_kind(int iclass);

#endif /* BTRACE_INSN_H */
