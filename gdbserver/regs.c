// SPDX-License-Identifier: MIT
/*
 * GDB's amd64 GNU/Linux register numbering over the kernel's register sets
 * (regs.h), and the target description that announces it.
 */
#include <stddef.h>
#include <string.h>

#include "regs.h"

#define GP(f) offsetof(struct user_regs_struct, f)

/* Registers 0-23 and 57-59: where each lives in user_regs_struct. */
static const size_t gp_off[24] = {
	GP(rax), GP(rbx), GP(rcx), GP(rdx), GP(rsi), GP(rdi), GP(rbp), GP(rsp),
	GP(r8),	 GP(r9),  GP(r10), GP(r11), GP(r12), GP(r13), GP(r14), GP(r15),
	GP(rip), GP(eflags), GP(cs), GP(ss), GP(ds), GP(es), GP(fs), GP(gs),
};

enum {
	R_RIP = 16, R_EFLAGS = 17, R_GS = 23, R_ST0 = 24, R_FCTRL = 32,
	R_FSTAT, R_FTAG, R_FISEG, R_FIOFF, R_FOSEG, R_FOOFF, R_FOP,
	R_XMM0 = 40, R_MXCSR = 56, R_ORIG_RAX, R_FS_BASE, R_GS_BASE,
	R_YMM0H = 60,
};

int gs_regs_count(int avx)
{
	return avx ? GS_NREGS : GS_NREGS_NOAVX;
}

size_t gs_reg_size(int regno)
{
	if (regno < 0 || regno >= GS_NREGS)
		return 0;
	if (regno < R_RIP + 1)
		return 8;
	if (regno <= R_GS)
		return 4;
	if (regno < R_FCTRL)
		return 10;
	if (regno < R_XMM0)
		return 4;
	if (regno < R_MXCSR)
		return 16;
	if (regno == R_MXCSR)
		return 4;
	if (regno <= R_GS_BASE)
		return 8;
	return 16;
}

/* The FXSAVE area as bytes: the offsets GDB's i387 code uses. */
static const uint8_t *fx(const struct gs_regs *r)
{
	return (const uint8_t *)&r->fp;
}

/*
 * FXSAVE keeps an abridged tag (one bit per register: empty or not); GDB
 * shows the full two-bit tag, which the value of each register decides:
 * 0 valid, 1 zero, 2 special, 3 empty.
 */
static unsigned full_tag(const struct gs_regs *r)
{
	unsigned top = (r->fp.swd >> 11) & 7, tag = 0, phys;

	for (phys = 0; phys < 8; phys++) {
		const uint8_t *v = fx(r) + 32 + 16 * ((phys - top) & 7);
		unsigned exp = (v[9] & 0x7f) << 8 | v[8], t;
		int integer = v[7] & 0x80, frac0 = 1, i;

		for (i = 0; i < 8; i++)
			if (v[i] && !(i == 7 && v[i] == 0x80))
				frac0 = 0;
		if (!(r->fp.ftw & (1u << phys)))
			t = 3;
		else if (exp == 0x7fff)
			t = 2;
		else if (exp == 0)
			t = (frac0 && !integer) ? 1 : 2;
		else
			t = integer ? 0 : 2;
		tag |= t << (2 * phys);
	}
	return tag;
}

static unsigned abridged_tag(unsigned full)
{
	unsigned phys, ftw = 0;

	for (phys = 0; phys < 8; phys++)
		if (((full >> (2 * phys)) & 3) != 3)
			ftw |= 1u << phys;
	return ftw;
}

static uint32_t fp_ctl(const struct gs_regs *r, int regno)
{
	uint32_t v = 0;

	switch (regno) {
	case R_FCTRL: return r->fp.cwd;
	case R_FSTAT: return r->fp.swd;
	case R_FTAG: return full_tag(r);
	case R_FISEG: memcpy(&v, fx(r) + 12, 4); return v;
	case R_FIOFF: memcpy(&v, fx(r) + 8, 4); return v;
	case R_FOSEG: memcpy(&v, fx(r) + 20, 4); return v;
	case R_FOOFF: memcpy(&v, fx(r) + 16, 4); return v;
	default: return r->fp.fop & 0x7ff;
	}
}

static void fp_ctl_set(struct gs_regs *r, int regno, uint32_t v)
{
	uint8_t *p = (uint8_t *)&r->fp;

	switch (regno) {
	case R_FCTRL: r->fp.cwd = (uint16_t)v; break;
	case R_FSTAT: r->fp.swd = (uint16_t)v; break;
	case R_FTAG: r->fp.ftw = (uint16_t)abridged_tag(v); break;
	case R_FISEG: memcpy(p + 12, &v, 4); break;
	case R_FIOFF: memcpy(p + 8, &v, 4); break;
	case R_FOSEG: memcpy(p + 20, &v, 4); break;
	case R_FOOFF: memcpy(p + 16, &v, 4); break;
	default: r->fp.fop = (uint16_t)(v & 0x7ff); break;
	}
}

size_t gs_reg_get(const struct gs_regs *r, int regno, uint8_t *out)
{
	size_t size = gs_reg_size(regno);
	const uint8_t *gp = (const uint8_t *)&r->gp;
	uint32_t v32;

	if (!size)
		return 0;
	if (regno <= R_GS)
		memcpy(out, gp + gp_off[regno], size);	/* low bytes first */
	else if (regno < R_FCTRL)
		memcpy(out, fx(r) + 32 + 16 * (regno - R_ST0), 10);
	else if (regno < R_XMM0) {
		v32 = fp_ctl(r, regno);
		memcpy(out, &v32, 4);
	} else if (regno < R_MXCSR)
		memcpy(out, fx(r) + 160 + 16 * (regno - R_XMM0), 16);
	else if (regno == R_MXCSR)
		memcpy(out, &r->fp.mxcsr, 4);
	else if (regno == R_ORIG_RAX)
		memcpy(out, &r->gp.orig_rax, 8);
	else if (regno == R_FS_BASE)
		memcpy(out, &r->gp.fs_base, 8);
	else if (regno == R_GS_BASE)
		memcpy(out, &r->gp.gs_base, 8);
	else
		memcpy(out, r->ymmh[regno - R_YMM0H], 16);
	return size;
}

int gs_reg_set(struct gs_regs *r, int regno, const uint8_t *in, size_t len)
{
	size_t size = gs_reg_size(regno);
	uint8_t *gp = (uint8_t *)&r->gp, *fp = (uint8_t *)&r->fp;
	uint32_t v32;

	if (!size || len != size)
		return -1;
	if (regno <= R_GS) {
		/* 32-bit registers of a 64-bit slot: the rest is zero */
		memset(gp + gp_off[regno], 0, 8);
		memcpy(gp + gp_off[regno], in, size);
	} else if (regno < R_FCTRL)
		memcpy(fp + 32 + 16 * (regno - R_ST0), in, 10);
	else if (regno < R_XMM0) {
		memcpy(&v32, in, 4);
		fp_ctl_set(r, regno, v32);
	} else if (regno < R_MXCSR)
		memcpy(fp + 160 + 16 * (regno - R_XMM0), in, 16);
	else if (regno == R_MXCSR)
		memcpy(&r->fp.mxcsr, in, 4);
	else if (regno == R_ORIG_RAX)
		memcpy(&r->gp.orig_rax, in, 8);
	else if (regno == R_FS_BASE)
		memcpy(&r->gp.fs_base, in, 8);
	else if (regno == R_GS_BASE)
		memcpy(&r->gp.gs_base, in, 8);
	else
		memcpy(r->ymmh[regno - R_YMM0H], in, 16);
	return 0;
}

/*
 * GDB's feature documents (gdb/features/i386/64bit-*.xml), inlined: the
 * names, types and order are what GDB checks against its own amd64 Linux
 * layout.
 */
#define TDESC_HEAD \
"<?xml version=\"1.0\"?>\n" \
"<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n" \
"<target version=\"1.0\">\n" \
"<architecture>i386:x86-64</architecture>\n" \
"<osabi>GNU/Linux</osabi>\n"

#define TDESC_CORE \
"<feature name=\"org.gnu.gdb.i386.core\">\n" \
"<flags id=\"i386_eflags\" size=\"4\">\n" \
"<field name=\"CF\" start=\"0\" end=\"0\"/><field name=\"\" start=\"1\" end=\"1\"/>\n" \
"<field name=\"PF\" start=\"2\" end=\"2\"/><field name=\"AF\" start=\"4\" end=\"4\"/>\n" \
"<field name=\"ZF\" start=\"6\" end=\"6\"/><field name=\"SF\" start=\"7\" end=\"7\"/>\n" \
"<field name=\"TF\" start=\"8\" end=\"8\"/><field name=\"IF\" start=\"9\" end=\"9\"/>\n" \
"<field name=\"DF\" start=\"10\" end=\"10\"/><field name=\"OF\" start=\"11\" end=\"11\"/>\n" \
"<field name=\"NT\" start=\"14\" end=\"14\"/><field name=\"RF\" start=\"16\" end=\"16\"/>\n" \
"<field name=\"VM\" start=\"17\" end=\"17\"/><field name=\"AC\" start=\"18\" end=\"18\"/>\n" \
"<field name=\"VIF\" start=\"19\" end=\"19\"/><field name=\"VIP\" start=\"20\" end=\"20\"/>\n" \
"<field name=\"ID\" start=\"21\" end=\"21\"/>\n" \
"</flags>\n" \
"<reg name=\"rax\" bitsize=\"64\" type=\"int64\" regnum=\"0\"/>\n" \
"<reg name=\"rbx\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rcx\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rdx\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rsi\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rdi\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rbp\" bitsize=\"64\" type=\"data_ptr\"/>\n" \
"<reg name=\"rsp\" bitsize=\"64\" type=\"data_ptr\"/>\n" \
"<reg name=\"r8\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r9\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r10\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r11\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r12\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r13\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r14\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"r15\" bitsize=\"64\" type=\"int64\"/>\n" \
"<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>\n" \
"<reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\"/>\n" \
"<reg name=\"cs\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"ss\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"ds\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"es\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"fs\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"gs\" bitsize=\"32\" type=\"int32\"/>\n" \
"<reg name=\"st0\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st1\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st2\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st3\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st4\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st5\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st6\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"st7\" bitsize=\"80\" type=\"i387_ext\"/>\n" \
"<reg name=\"fctrl\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"fstat\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"ftag\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"fiseg\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"fioff\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"foseg\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"fooff\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"<reg name=\"fop\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n" \
"</feature>\n"

#define TDESC_SSE \
"<feature name=\"org.gnu.gdb.i386.sse\">\n" \
"<vector id=\"v8h\" type=\"ieee_half\" count=\"8\"/>\n" \
"<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>\n" \
"<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>\n" \
"<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>\n" \
"<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>\n" \
"<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>\n" \
"<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>\n" \
"<union id=\"vec128\">\n" \
"<field name=\"v4_float\" type=\"v4f\"/>\n" \
"<field name=\"v2_double\" type=\"v2d\"/>\n" \
"<field name=\"v16_int8\" type=\"v16i8\"/>\n" \
"<field name=\"v8_int16\" type=\"v8i16\"/>\n" \
"<field name=\"v4_int32\" type=\"v4i32\"/>\n" \
"<field name=\"v2_int64\" type=\"v2i64\"/>\n" \
"<field name=\"uint128\" type=\"uint128\"/>\n" \
"</union>\n" \
"<flags id=\"i386_mxcsr\" size=\"4\">\n" \
"<field name=\"IE\" start=\"0\" end=\"0\"/><field name=\"DE\" start=\"1\" end=\"1\"/>\n" \
"<field name=\"ZE\" start=\"2\" end=\"2\"/><field name=\"OE\" start=\"3\" end=\"3\"/>\n" \
"<field name=\"UE\" start=\"4\" end=\"4\"/><field name=\"PE\" start=\"5\" end=\"5\"/>\n" \
"<field name=\"DAZ\" start=\"6\" end=\"6\"/><field name=\"IM\" start=\"7\" end=\"7\"/>\n" \
"<field name=\"DM\" start=\"8\" end=\"8\"/><field name=\"ZM\" start=\"9\" end=\"9\"/>\n" \
"<field name=\"OM\" start=\"10\" end=\"10\"/><field name=\"UM\" start=\"11\" end=\"11\"/>\n" \
"<field name=\"PM\" start=\"12\" end=\"12\"/><field name=\"FZ\" start=\"15\" end=\"15\"/>\n" \
"</flags>\n" \
"<reg name=\"xmm0\" bitsize=\"128\" type=\"vec128\" regnum=\"40\"/>\n" \
"<reg name=\"xmm1\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm2\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm3\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm4\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm5\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm6\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm7\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm8\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm9\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm10\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm11\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm12\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm13\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm14\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"xmm15\" bitsize=\"128\" type=\"vec128\"/>\n" \
"<reg name=\"mxcsr\" bitsize=\"32\" type=\"i386_mxcsr\" group=\"vector\"/>\n" \
"</feature>\n"

#define TDESC_LINUX \
"<feature name=\"org.gnu.gdb.i386.linux\">\n" \
"<reg name=\"orig_rax\" bitsize=\"64\" type=\"int\" regnum=\"57\"/>\n" \
"</feature>\n" \
"<feature name=\"org.gnu.gdb.i386.segments\">\n" \
"<reg name=\"fs_base\" bitsize=\"64\" type=\"int\"/>\n" \
"<reg name=\"gs_base\" bitsize=\"64\" type=\"int\"/>\n" \
"</feature>\n"

#define TDESC_AVX \
"<feature name=\"org.gnu.gdb.i386.avx\">\n" \
"<reg name=\"ymm0h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm1h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm2h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm3h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm4h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm5h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm6h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm7h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm8h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm9h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm10h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm11h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm12h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm13h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm14h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"<reg name=\"ymm15h\" bitsize=\"128\" type=\"uint128\"/>\n" \
"</feature>\n"

const char *gs_tdesc(int avx)
{
	static const char with_avx[] = TDESC_HEAD TDESC_CORE TDESC_SSE
		TDESC_LINUX TDESC_AVX "</target>\n";
	static const char without[] = TDESC_HEAD TDESC_CORE TDESC_SSE
		TDESC_LINUX "</target>\n";

	return avx ? with_avx : without;
}
