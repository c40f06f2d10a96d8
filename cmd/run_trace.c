// SPDX-License-Identifier: MIT
/* What is traced, for run, attach and gdbserver (run_trace.h). */
#include <stdio.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "opts.h"
#include "run_trace.h"

void run_trace_apply(const struct run_trace *rt, struct bt_target_opts *o)
{
	o->soft_mode = rt->soft_mode;
	o->only = rt->nonly ? rt->only : NULL;
	o->exclude = rt->nexclude ? rt->exclude : NULL;
	o->from_sym = rt->from;
	o->until_sym = rt->until;
	o->follow_fork = rt->follow_fork;
	o->stop_at_fault = rt->stop_at_fault;
	o->code_cache = rt->code_cache;
}

/* The option that asked for the lowest bit of @caps. */
static const char *cap_option(const struct run_trace *rt, unsigned caps)
{
	if (caps & BT_CAP_FILTER)
		return rt->nonly ? "--only" : "--exclude";
	if (caps & BT_CAP_FROM)
		return "--from";
	return "--until";
}

/* "record or fast": the soft modes that have @cap, in the registry. */
static void modes_with(unsigned cap, char *buf, size_t size)
{
	const struct bt_backend_info *b;
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; (b = bt_backend_info(i)) && len < size; i++)
		if (b->mode && (b->caps & cap))
			len += snprintf(buf + len, size - len, "%s%s",
					len ? " or " : "", b->mode);
}

int run_trace_check(const struct cmd_opts *o)
{
	const struct run_trace *rt = &o->trace;
	struct bt_target_opts topts = { .size = sizeof(topts) };
	unsigned missing;
	char modes[64];
	const char *opt;

	if (rt->soft_mode_given && o->backend != BT_BACKEND_AUTO &&
	    o->backend != BT_BACKEND_SOFT)
		return cmd_usage_error(o, "--soft-mode is for --backend soft, not %s",
				       bt_backend_name(o->backend));
	run_trace_apply(rt, &topts);
	missing = bt_target_opts_caps(&topts) &
		  ~bt_backend_caps(o->backend, rt->soft_mode);
	if (!missing)
		return 0;
	opt = cap_option(rt, missing);
	modes_with(missing & -missing, modes, sizeof(modes));
	if (!modes[0])
		return cmd_usage_error(o, "no backend can honour %s", opt);
	if (o->backend == BT_BACKEND_PT || o->backend == BT_BACKEND_BTS)
		return cmd_usage_error(o, "--backend %s cannot honour %s (--backend soft can, with --soft-mode %s)",
				       bt_backend_name(o->backend), opt, modes);
	return cmd_usage_error(o, "--soft-mode %s cannot honour %s (%s can)",
			       bt_soft_mode_name(rt->soft_mode), opt, modes);
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

/* Why auto passed over @backend for @rt: "" if it did not. */
static void passed_over(int backend, const struct run_trace *rt, char *why,
			size_t size)
{
	struct bt_target_opts topts = { .size = sizeof(topts) };
	unsigned missing;

	why[0] = '\0';
	if (bt_backend_probe(backend, why, size) < 0)
		return;
	why[0] = '\0';
	run_trace_apply(rt, &topts);
	missing = bt_target_opts_caps(&topts) &
		  ~bt_backend_caps(backend, rt->soft_mode);
	if (missing)
		snprintf(why, size, "cannot honour %s", cap_option(rt, missing));
}

void run_trace_say_backend(const struct bt_target *t,
			   const struct run_trace *rt)
{
	int chosen = bt_target_backend(t), order[BT_BACKEND_MAX];
	char why[512], reasons[600] = "";
	size_t i, n, len = 0;

	n = bt_backend_auto_order(order, BT_ARRAY_SIZE(order));
	for (i = 0; i < n && i < BT_ARRAY_SIZE(order) && order[i] != chosen;
	     i++) {
		passed_over(order[i], rt, why, sizeof(why));
		if (why[0] && len < sizeof(reasons))
			len += snprintf(reasons + len, sizeof(reasons) - len,
					"%s: %.*s; ", bt_backend_name(order[i]),
					reason_len(why), why);
	}
	if (!len)
		return;
	fprintf(stderr, "btrace: using the %s backend (%ssee btrace doctor)\n",
		bt_target_backend_name(t), reasons);
}
