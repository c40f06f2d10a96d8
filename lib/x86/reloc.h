/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_X86_RELOC_H
#define BTRACE_X86_RELOC_H

/*
 * The relocator: an instruction decoded by x86/decode.h copied to another
 * address so that it does there what it did where it was.  Only a
 * rip-relative operand depends on where an instruction runs; its disp32
 * is re-encoded for the new place, which must lie within a rel32's reach
 * of what the operand points at.  Control transfers are not relocated
 * here: their callers decide where they go (the fast mode steps or
 * emulates them, the recorder's translator links them).
 *
 * Used by displaced stepping (soft_displace.c) and the recorder's
 * translator (rec_xlate.c).  Pure; internal to the library.
 */

#include <stddef.h>
#include <stdint.h>

#include "x86/decode.h"

/* Can a rel32 in an instruction that ends at @next reach @target? */
int bt_x86_in_reach(uint64_t next, uint64_t target);

/*
 * Copy @in (its bytes @code) into @out (in->len bytes) for it to run at
 * @to, a rip-relative disp32 re-encoded.
 * Returns in->len; -bte_nosys if @in's rip-relative operand is out of
 * reach from @to.
 */
int bt_x86_reloc(const struct bt_x86_insn *in, const uint8_t *code,
		 uint64_t to, uint8_t *out);

#define BT_X86_LOAD_MAX 16	/* bt_x86_reloc_load's longest output */

/*
 * For the jmp/call r/m @in (bytes @code): mov of the same operand into
 * the 64-bit register @reg (0-7: rax-rdi), to run at @to: its ModRM
 * operand under opcode 8B with REX.W, the fs: and addr32 prefixes kept,
 * a rip-relative disp32 re-encoded.  The translator loads an indirect
 * branch's target with it.
 * Returns the length written to @out (at most BT_X86_LOAD_MAX);
 * -bte_nosys if @in is not an ff /2, /4 form with a ModRM operand, or its
 * rip-relative operand is out of reach from @to.
 */
int bt_x86_reloc_load(const struct bt_x86_insn *in, const uint8_t *code,
		      unsigned int reg, uint64_t to, uint8_t *out);

#endif /* BTRACE_X86_RELOC_H */
