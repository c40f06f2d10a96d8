/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GS_REGS_H
#define BTRACE_GS_REGS_H

/*
 * The amd64 GNU/Linux register file as GDB numbers it, and the target
 * description that says so: GDB's own features org.gnu.gdb.i386.core,
 * .sse, .linux (orig_rax, regnum 57), .segments (fs_base, gs_base) and
 * .avx (ymm0h..ymm15h), in the order gdbserver's amd64 Linux description
 * has them:
 *
 *	0-15 rax..r15, 16 rip, 17 eflags, 18-23 cs ss ds es fs gs,
 *	24-31 st0-7, 32-39 fctrl fstat ftag fiseg fioff foseg fooff fop,
 *	40-55 xmm0-15, 56 mxcsr, 57 orig_rax, 58 fs_base, 59 gs_base,
 *	60-75 ymm0h-15h
 *
 * Values come from the kernel's register sets (ptrace's or a core file's
 * notes): struct user_regs_struct, the FXSAVE area and the XSAVE area's
 * upper halves of ymm.  Internal to btrace gdbserver.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define GS_NREGS_NOAVX 60
#define GS_NREGS 76
#define GS_REG_MAX_SIZE 16

/* XSAVE area: the header's XSTATE_BV and the AVX component (standard form). */
#define GS_XSAVE_BV_OFFSET 512
#define GS_XSAVE_YMM_OFFSET 576
#define GS_XSAVE_AVX_BIT 4u

struct gs_regs {
	struct user_regs_struct gp;
	struct user_fpregs_struct fp;
	uint8_t ymmh[16][16];
	int have_fp;		/* fp is real (else zeros are shown) */
	int have_ymm;		/* the target has AVX (ymmh meaningful) */
};

/* Registers there are: GS_NREGS with AVX, GS_NREGS_NOAVX without. */
int gs_regs_count(int avx);

/* Size in bytes of register @regno, 0 if out of range. */
size_t gs_reg_size(int regno);

/* Register @regno of @r into @out (its size); returns the size or 0. */
size_t gs_reg_get(const struct gs_regs *r, int regno, uint8_t *out);

/* Set register @regno of @r from @in (exactly its size); 0 or -1. */
int gs_reg_set(struct gs_regs *r, int regno, const uint8_t *in, size_t len);

/* The target description document (target.xml). */
const char *gs_tdesc(int avx);

#endif /* BTRACE_GS_REGS_H */
