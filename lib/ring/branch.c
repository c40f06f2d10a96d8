// SPDX-License-Identifier: MIT
#include "btrace/branch.h"

static const char *const kind_names[BT_BR_MAX] = {
	[BT_BR_NONE] = "none",	       [BT_BR_COND] = "conditional",
	[BT_BR_JUMP] = "jump",	       [BT_BR_CALL] = "call",
	[BT_BR_RET] = "return",	       [BT_BR_IJUMP] = "indirect jump",
	[BT_BR_ICALL] = "indirect call", [BT_BR_SYSCALL] = "syscall",
	[BT_BR_SYSRET] = "sysret",      [BT_BR_INTR] = "interrupt",
	[BT_BR_GAP] = "gap",
};

static const char *const gap_names[BT_GAP_MAX] = {
	[BT_GAP_NONE] = "none",		 [BT_GAP_OVERFLOW] = "overflow",
	[BT_GAP_DISABLED] = "trace disabled", [BT_GAP_DECODE] = "decode error",
	[BT_GAP_UNTRACED] = "untraced code", [BT_GAP_NOCODE] = "no code image",
	[BT_GAP_START] = "trace start",	 [BT_GAP_MOVED] = "pc moved",
};

const char *bt_branch_kind_name(int kind)
{
	if (kind < 0 || kind >= BT_BR_MAX)
		return "?";
	return kind_names[kind];
}

const char *bt_gap_reason_name(int reason)
{
	if (reason < 0 || reason >= BT_GAP_MAX)
		return "?";
	return gap_names[reason];
}
