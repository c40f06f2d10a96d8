// SPDX-License-Identifier: MIT
/* Options choosing what is traced, for run and attach (run_trace.h). */
#include <stdio.h>
#include <string.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "run_trace.h"

static int glob_add(const char **globs, size_t *n, const char *opt,
		    const char *arg)
{
	if (!arg[0]) {
		fprintf(stderr, "btrace: %s wants a module glob; see --help\n",
			opt);
		return EXIT_USAGE;
	}
	if (*n == RUN_TRACE_MAX_GLOBS) {
		fprintf(stderr, "btrace: at most %d %s options\n",
			RUN_TRACE_MAX_GLOBS, opt);
		return EXIT_USAGE;
	}
	globs[(*n)++] = arg;
	globs[*n] = NULL;
	return 0;
}

int run_trace_option(struct run_trace *rt, int opt, const char *arg)
{
	switch (opt) {
	case OPT_SOFT_MODE:
		if (!strcmp(arg, "fast")) {
			rt->soft_mode = BT_SOFT_FAST;
		} else if (!strcmp(arg, "step")) {
			rt->soft_mode = BT_SOFT_STEP;
		} else if (!strcmp(arg, "record")) {
			rt->soft_mode = BT_SOFT_RECORD;
		} else {
			fprintf(stderr, "btrace: --soft-mode is record, fast or step, not '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_FOLLOW_FORK:
		rt->follow_fork = 1;
		return 0;
	case OPT_ONLY:
		return glob_add(rt->only, &rt->nonly, "--only", arg);
	case OPT_EXCLUDE:
		return glob_add(rt->exclude, &rt->nexclude, "--exclude", arg);
	case OPT_FROM:
	case OPT_UNTIL:
		if (!arg[0]) {
			fprintf(stderr, "btrace: %s wants a symbol name\n",
				opt == OPT_FROM ? "--from" : "--until");
			return EXIT_USAGE;
		}
		if (opt == OPT_FROM)
			rt->from = arg;
		else
			rt->until = arg;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

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
