// SPDX-License-Identifier: MIT
/*
 * Untraced code for a backend built on the fast mode (fast.h): the
 * recorder runs untraced code natively too, and a thread that does is
 * the fast mode's FT_NATIVE thread (resumed with PTRACE_CONT, its signals
 * delivered natively, its stops at the fast mode's own int3s judged as
 * re-entries), whichever of the two sent it there.
 */
#include "btrace/branch.h"
#include "internal.h"
#include "backend/soft/fast.h"
#include "backend/soft/fast_int.h"

int bt_fast_traced(struct bt_target *t, uint64_t addr)
{
	return fast_addr_traced(t, addr);
}

int bt_fast_armed(struct bt_target *t)
{
	return fast_of(t) && fast_of(t)->armed;
}

uint64_t bt_fast_from_addr(struct bt_target *t)
{
	return fast_of(t) ? fast_of(t)->from_addr : 0;
}

int bt_fast_until_number(struct bt_target *t)
{
	return fast_of(t) ? fast_of(t)->until_number : 0;
}

void bt_fast_until_number_set(struct bt_target *t, int number)
{
	if (fast_of(t))
		fast_of(t)->until_number = number;
}

int bt_fast_hook_at(struct bt_target *t, uint64_t addr)
{
	const struct fast *f = fast_of(t);

	return f && f->loader_hook && f->loader_hook == addr;
}

void bt_fast_native_set(struct bt_thread *th, uint64_t left_to)
{
	struct fast_thread *ft = th->bk;

	ft->state = FT_NATIVE;
	ft->left_to = left_to;
	ft->nchain = 0;
	ft->need_step = 0;
	ft->back_native = 0;
}

int bt_fast_native(const struct bt_thread *th, uint64_t *left_to)
{
	const struct fast_thread *ft = th->bk;

	if (!ft || ft->state != FT_NATIVE)
		return 0;
	if (left_to)
		*left_to = ft->left_to;
	return 1;
}

void bt_fast_native_back(struct bt_target *t, struct bt_thread *th,
			 uint64_t at, int reason)
{
	struct fast_thread *ft = th->bk;

	fast_gap_append(t, th, ft->left_to, at, reason);
	ft->state = FT_RUN;
	ft->nchain = 0;
	ft->need_step = 0;
	ft->back_native = 0;
}

void bt_fast_chain_cut(struct bt_target *t, struct bt_thread *th,
		       uint64_t at)
{
	struct fast_thread *ft = th->bk;

	fast_chain_commit(t, th, at);
	ft->nchain = 0;
	ft->state = FT_RUN;
}
