// SPDX-License-Identifier: MIT
/* The function-call history of a branch history (calls.h). */
#include <stdlib.h>
#include <string.h>

#include "calls.h"

static int seg_push(struct call_seg **segs, size_t *n, size_t *cap,
		    const struct call_seg *seg)
{
	struct call_seg *p;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		p = realloc(*segs, *cap * sizeof(*p));
		if (!p)
			return -1;
		*segs = p;
	}
	(*segs)[(*n)++] = *seg;
	return 0;
}

int calls_build(const struct bt_history *h, calls_func_fn func, void *ctx,
		struct call_seg **out, size_t *nout)
{
	struct call_seg cur = { 0 }, *segs = NULL;
	size_t i, n = 0, cap = 0;
	int depth = 0, mind = 0;

	cur.start = h->count ? h->branch[0].from : 0;
	for (i = 0; i < h->count; i++) {
		const struct bt_branch *b = &h->branch[i];
		const char *f1, *f2;
		int next;

		if (b->kind == BT_BR_GAP) {
			struct call_seg g = { .depth = depth, .first = i,
					       .last = i, .gap = b->gap + 1 };

			if (cur.nbr && seg_push(&segs, &n, &cap, &cur))
				goto nomem;
			if (seg_push(&segs, &n, &cap, &g))
				goto nomem;
			cur = (struct call_seg){ .depth = depth, .start = b->to,
						 .first = i + 1, .last = i + 1 };
			continue;
		}
		cur.last = i;
		cur.nbr++;
		cur.ninsn += b->ninsn;
		next = depth;
		if (b->kind == BT_BR_CALL || b->kind == BT_BR_ICALL ||
		    b->kind == BT_BR_INTR)
			next = depth + 1;
		else if (b->kind == BT_BR_RET || b->flags & BT_BRF_SIGRETURN)
			next = depth - 1;
		if (next == depth) {
			f1 = func(ctx, cur.start);
			f2 = func(ctx, b->to);
			if (f1 == f2 || (f1 && f2 && !strcmp(f1, f2)))
				continue;
		}
		if (seg_push(&segs, &n, &cap, &cur))
			goto nomem;
		depth = next;
		mind = depth < mind ? depth : mind;
		cur = (struct call_seg){ .depth = depth, .start = b->to,
					 .first = i + 1, .last = i + 1 };
	}
	/* Where the thread is now, even with no branch since. */
	if (h->count && seg_push(&segs, &n, &cap, &cur))
		goto nomem;
	for (i = 0; i < n; i++)
		segs[i].depth -= mind;
	*out = segs;
	*nout = n;
	return 0;
nomem:
	free(segs);
	return -1;
}

