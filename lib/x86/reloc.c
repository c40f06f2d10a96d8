// SPDX-License-Identifier: MIT
/*
 * The relocator: instructions copied to run elsewhere.  See x86/reloc.h.
 */
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "x86/reloc.h"

int bt_x86_in_reach(uint64_t next, uint64_t target)
{
	int64_t d = (int64_t)(target - next);

	return d >= INT32_MIN && d <= INT32_MAX;
}

/*
 * Point the disp32 at @disp of an instruction that ends at @next to
 * @target.  0, or -bte_nosys out of reach.
 */
static int rel32_set(uint8_t *disp, uint64_t next, uint64_t target)
{
	int32_t d = (int32_t)(target - next);

	if (!bt_x86_in_reach(next, target))
		return -bte_nosys;
	memcpy(disp, &d, 4);
	return 0;
}

int bt_x86_reloc(const struct bt_x86_insn *in, const uint8_t *code,
		 uint64_t to, uint8_t *out)
{
	int ret;

	memcpy(out, code, in->len);
	if (in->rip_off) {
		ret = rel32_set(out + in->rip_off, to + in->len,
				in->rip_target);
		if (ret < 0)
			return ret;
	}
	return in->len;
}

int bt_x86_reloc_load(const struct bt_x86_insn *in, const uint8_t *code,
		      unsigned int reg, uint64_t to, uint8_t *out)
{
	size_t m = in->modrm_off, n = 0, i, start, tail;
	uint8_t rex = 0x48;
	int ret;

	if (m < 1 || code[m - 1] != 0xff || reg > 7)
		return -bte_nosys;
	start = m - 1;
	if (start && (code[start - 1] & 0xf0) == 0x40) {
		start--;
		rex |= code[start] & 0x03;	/* X, B */
	}
	/* fs: and addr32 change the operand; the rest (bnd, notrack) not */
	for (i = 0; i < start; i++)
		if (code[i] == 0x64 || code[i] == 0x67)
			out[n++] = code[i];
	out[n++] = rex;
	out[n++] = 0x8b;
	out[n++] = (uint8_t)((code[m] & 0xc7) | (reg << 3));
	tail = in->len - m - 1;		/* SIB, displacement */
	memcpy(out + n, code + m + 1, tail);
	n += tail;
	if (in->rip_off) {	/* the disp32 ends the instruction: no imm */
		ret = rel32_set(out + n - (in->len - in->rip_off), to + n,
				in->rip_target);
		if (ret < 0)
			return ret;
	}
	return (int)n;
}
