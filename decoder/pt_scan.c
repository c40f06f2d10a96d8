// SPDX-License-Identifier: MIT
/*
 * The branch an instruction is, from its bytes alone (pt_internal.h): what
 * the PT decoder (pt.c) asks of the last instruction of a block whose
 * class says it may be a branch: its kind, its length (a conditional's
 * fall-through) and a direct branch's displacement.  pt.c keeps the
 * answers by address, so hot code is scanned once per pass.
 */
#include <string.h>

#include "btrace/branch.h"
#include "pt_internal.h"

static int64_t rel32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int prefix(uint8_t b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return 1;
	}
	return (b & 0xf0) == 0x40;	/* REX */
}

static int scan_0f(uint8_t op2, size_t i, struct pt_scan *s)
{
	if (op2 >= 0x80 && op2 <= 0x8f) {
		s->len = i + 6;
		return BT_BR_COND;
	}
	if (op2 == 0x05 || op2 == 0x34)
		return BT_BR_SYSCALL;
	if (op2 == 0x07 || op2 == 0x35)
		return BT_BR_SYSRET;
	return BT_BR_NONE;
}

static int scan_ff(uint8_t modrm)
{
	switch ((modrm >> 3) & 7) {
	case 2: case 3:
		return BT_BR_ICALL;
	case 4: case 5:
		return BT_BR_IJUMP;
	}
	return BT_BR_NONE;
}

/* Classify the instruction in @p[0..n) on its own. */
void bt_pt_scan_insn(const uint8_t *p, size_t n, struct pt_scan *s)
{
	size_t i = 0;
	uint8_t op;

	memset(s, 0, sizeof(*s));
	while (i < n && i < 14 && prefix(p[i]))
		i++;
	if (i >= n)
		return;
	op = p[i];
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
		s->kind = BT_BR_COND;
		s->len = i + 2;
	} else if (op == 0x0f && i + 1 < n) {
		s->kind = scan_0f(p[i + 1], i, s);
	} else if (op == 0xff && i + 1 < n) {
		s->kind = scan_ff(p[i + 1]);
	} else if ((op == 0xe8 || op == 0xe9) && i + 5 <= n) {
		s->kind = op == 0xe8 ? BT_BR_CALL : BT_BR_JUMP;
		s->len = i + 5;
		s->rel = rel32(p + i + 1);
		s->direct = 1;
	} else if (op == 0xeb && i + 2 <= n) {
		s->kind = BT_BR_JUMP;
		s->len = i + 2;
		s->rel = (int8_t)p[i + 1];
		s->direct = 1;
	} else if (op == 0xea || op == 0xe8 || op == 0xe9) {
		s->kind = BT_BR_JUMP;
	} else if (op == 0xc3 || op == 0xc2) {
		s->kind = BT_BR_RET;
	} else if (op == 0xca || op == 0xcb || op == 0xcf) {
		s->kind = BT_BR_SYSRET;
	} else if (op == 0xcd || op == 0xce || op == 0x9a) {
		s->kind = BT_BR_SYSCALL;
	} else if (op == 0xcc) {
		s->kind = BT_BR_INTR;
	}
}
