/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BRVEC_H
#define BTRACE_BRVEC_H

/* A growing array of branches, for the hardware-format decoders. */

#include <stdlib.h>
#include <string.h>

#include "btrace/decode.h"

struct bt_brvec {
	struct bt_branch *v;
	size_t n, alloc;
};

static inline int bt_brvec_reserve(struct bt_brvec *vec, size_t more)
{
	struct bt_branch *v;
	size_t alloc;

	if (vec->alloc - vec->n >= more)
		return 0;
	alloc = vec->alloc ? vec->alloc : 64;
	while (alloc - vec->n < more)
		alloc *= 2;
	v = realloc(vec->v, alloc * sizeof(*v));
	if (!v)
		return -1;
	vec->v = v;
	vec->alloc = alloc;
	return 0;
}

static inline int bt_brvec_push(struct bt_brvec *vec,
				const struct bt_branch *br)
{
	if (vec->n == vec->alloc && bt_brvec_reserve(vec, 1) < 0)
		return -1;
	vec->v[vec->n++] = *br;
	return 0;
}

static inline void bt_brvec_release(struct bt_brvec *vec)
{
	free(vec->v);
	memset(vec, 0, sizeof(*vec));
}

/* Move the last @last entries of @vec (all if 0) into @hist. */
static inline void bt_brvec_to_history(struct bt_brvec *vec, size_t last,
				       struct bt_history *hist)
{
	size_t skip = 0, i;

	if (last && vec->n > last) {
		skip = vec->n - last;
		memmove(vec->v, vec->v + skip, last * sizeof(*vec->v));
		vec->n = last;
	}
	hist->branch = vec->v;
	hist->count = vec->n;
	hist->ninsn = 0;
	for (i = 0; i < vec->n; i++)
		hist->ninsn += vec->v[i].ninsn;
	memset(vec, 0, sizeof(*vec));
}

#endif /* BTRACE_BRVEC_H */
