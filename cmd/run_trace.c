// SPDX-License-Identifier: MIT
/* What is traced, for run and attach (run_trace.h). */
#include <stdio.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "run_trace.h"

void run_trace_apply(const struct run_trace *rt, struct bt_target_opts *o)
{
	o->soft_mode = rt->soft_mode;
	o->only = rt->nonly ? rt->only : NULL;
	o->exclude = rt->nexclude ? rt->exclude : NULL;
	o->from_sym = rt->from;
	o->until_sym = rt->until;
	o->follow_fork = rt->follow_fork;
}

/*
 * The fact part of a probe's reason: what comes before its remedy (after
 * the first "; ").  The remedies are for btrace doctor.
 */
static int reason_len(const char *why)
{
	const char *end = strstr(why, "; ");

	return end ? (int)(end - why) : (int)strlen(why);
}

void run_trace_say_backend(const struct bt_target *t)
{
	static const int better[] = { BT_BACKEND_PT, BT_BACKEND_BTS };
	int chosen = bt_target_backend(t);
	char why[512], reasons[600] = "";
	size_t i, len = 0;

	for (i = 0; i < BT_ARRAY_SIZE(better) && better[i] != chosen; i++) {
		why[0] = '\0';
		if (bt_backend_probe(better[i], why, sizeof(why)) < 0 &&
		    len < sizeof(reasons))
			len += snprintf(reasons + len, sizeof(reasons) - len,
					"%s: %.*s; ", bt_backend_name(better[i]),
					reason_len(why), why);
	}
	if (!len)
		return;
	fprintf(stderr, "btrace: using the %s backend (%ssee btrace doctor)\n",
		bt_target_backend_name(t), reasons);
}
