// SPDX-License-Identifier: MIT
/* The function-call history of a branch history (calls.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/calls.h"
#include "btrace/error.h"
#include "internal.h"

struct calls_build {
	const struct bt_history *hist;
	struct bt_calls *calls;
	size_t cap;
	struct bt_symtab *symtab;
	struct bt_call cur;	/* the segment being built */
	int depth;
	int min_depth;
};

static int push(struct calls_build *b, const struct bt_call *c)
{
	struct bt_calls *calls = b->calls;
	struct bt_call *p;

	if (calls->count == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		p = realloc(calls->call, b->cap * sizeof(*p));
		if (!p)
			return bt_fail(bte_nomem, ENOMEM, "%zu calls", b->cap);
		calls->call = p;
	}
	calls->call[calls->count++] = *c;
	return 0;
}

static const char *func_of(struct bt_symtab *st, uint64_t addr)
{
	struct bt_sym sym;

	if (st && bt_symtab_lookup(st, addr, &sym) == 0)
		return sym.name;
	return NULL;
}

/* Does a jump from the current segment to @to stay in its function? */
static int same_func(struct calls_build *b, uint64_t to)
{
	const char *f1 = func_of(b->symtab, b->cur.start);
	const char *f2 = func_of(b->symtab, to);

	return f1 == f2 || (f1 && f2 && !strcmp(f1, f2));
}

/* The segment's time from its start to @end (ns; 0 without time). */
static void seg_end(struct bt_call *c, uint64_t end)
{
	c->duration = end > c->ts ? end - c->ts : 0;
}

/* A segment starts after branch @i - 1 was taken (at the first, where
 * the history starts). */
static void next_segment(struct calls_build *b, uint64_t start, size_t i)
{
	const struct bt_history *h = b->hist;

	b->cur = (struct bt_call){ .depth = b->depth, .start = start,
				   .first = i, .last = i };
	if (h->count)
		b->cur.ts = h->branch[i ? i - 1 : 0].ts;
}

static int add_gap(struct calls_build *b, const struct bt_branch *br,
		   size_t i)
{
	struct bt_call g = { .depth = b->depth, .gap = 1, .reason = br->gap,
			     .first = i, .last = i, .ts = br->ts };
	int ret;

	seg_end(&b->cur, br->ts);
	/* An empty segment before a gap says nothing: drop it. */
	if (b->cur.nbranches && (ret = push(b, &b->cur)))
		return ret;
	if ((ret = push(b, &g)))
		return ret;
	next_segment(b, br->to, i + 1);
	return 0;
}

static int add_branch(struct calls_build *b, const struct bt_branch *br,
		      size_t i)
{
	int next = b->depth, ret;

	b->cur.last = i;
	b->cur.nbranches++;
	b->cur.ninsn += br->ninsn;
	seg_end(&b->cur, br->ts);
	if (br->kind == BT_BR_CALL || br->kind == BT_BR_ICALL ||
	    br->kind == BT_BR_INTR)
		next++;
	else if (br->kind == BT_BR_RET || br->flags & BT_BRF_SIGRETURN)
		next--;
	if (next == b->depth && same_func(b, br->to))
		return 0;
	if ((ret = push(b, &b->cur)))
		return ret;
	b->depth = next;
	if (next < b->min_depth)
		b->min_depth = next;
	next_segment(b, br->to, i + 1);
	return 0;
}

int bt_calls_build(const struct bt_history *hist, struct bt_symtab *symtab,
		   struct bt_calls **out)
{
	struct calls_build b = { .hist = hist, .symtab = symtab };
	size_t i;
	int ret = 0;

	if (!hist || !out)
		return bt_fail(bte_invalid, 0, "bt_calls_build(NULL)");
	*out = NULL;
	b.calls = calloc(1, sizeof(*b.calls));
	if (!b.calls)
		return bt_fail(bte_nomem, ENOMEM, "calls");
	next_segment(&b, hist->count ? hist->branch[0].from : 0, 0);
	for (i = 0; i < hist->count && !ret; i++) {
		if (hist->branch[i].kind == BT_BR_GAP)
			ret = add_gap(&b, &hist->branch[i], i);
		else
			ret = add_branch(&b, &hist->branch[i], i);
	}
	/* Where the thread is now, even with no branch since. */
	if (!ret && hist->count) {
		if (hist->end_ts > b.cur.ts)
			seg_end(&b.cur, hist->end_ts);
		ret = push(&b, &b.cur);
	}
	if (ret) {
		bt_calls_free(b.calls);
		return ret;
	}
	for (i = 0; i < b.calls->count; i++)
		b.calls->call[i].depth -= b.min_depth;
	*out = b.calls;
	return 0;
}

void bt_calls_free(struct bt_calls *calls)
{
	if (!calls)
		return;
	free(calls->call);
	free(calls);
}
