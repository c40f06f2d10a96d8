// SPDX-License-Identifier: MIT
/* Branch times from a capture's time records (timing.h). */
#include <errno.h>
#include <stdlib.h>

#include "btrace/error.h"
#include "internal.h"
#include "timing.h"

int bt_anchors_push(struct bt_anchors *an, uint64_t pos, uint64_t ns)
{
	if (an->n) {
		const struct bt_anchor *last = &an->a[an->n - 1];

		if (pos < last->pos)
			pos = last->pos;
		if (ns < last->ns)
			ns = last->ns;
	}
	if (an->n == an->cap) {
		size_t cap = an->cap ? 2 * an->cap : 64;
		struct bt_anchor *a = realloc(an->a, cap * sizeof(*a));

		if (!a)
			return bt_fail(bte_nomem, ENOMEM, "time anchors");
		an->a = a;
		an->cap = cap;
	}
	an->a[an->n++] = (struct bt_anchor){ pos, ns };
	return 0;
}

void bt_anchors_release(struct bt_anchors *an)
{
	free(an->a);
	an->a = NULL;
	an->n = an->cap = 0;
}

/* The time at position @pos between anchors @a and @b (a->pos <= pos < b->pos). */
static uint64_t interp(const struct bt_anchor *a, const struct bt_anchor *b,
		       uint64_t pos)
{
	unsigned __int128 d = (unsigned __int128)(pos - a->pos) *
			      (b->ns - a->ns);

	return a->ns + (uint64_t)(d / (b->pos - a->pos));
}

void bt_anchors_apply(const struct bt_anchors *an, struct bt_branch *br,
		      size_t n)
{
	size_t i, j = 0;

	for (i = 0; i < n; i++) {
		uint64_t pos = br[i].ts;

		if (!an->n) {
			br[i].ts = 0;
			continue;
		}
		while (j + 1 < an->n && an->a[j + 1].pos <= pos)
			j++;
		if (an->a[j].pos > pos)
			br[i].ts = an->a[0].ns;
		else if (j + 1 == an->n)
			br[i].ts = an->a[j].ns;
		else
			br[i].ts = interp(&an->a[j], &an->a[j + 1], pos);
	}
}
