// SPDX-License-Identifier: MIT
/*
 * The backend registry: names, probing, and the choice of the ops a target
 * runs with.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"

/* In the order auto tries them: hardware first, then software. */
static const struct bt_backend_ops *const registry[] = {
	&bt_backend_pt,
	&bt_backend_bts,
	&bt_backend_soft_fast,
	&bt_backend_soft_record,
	&bt_backend_soft_step,
};

static const char *const backend_names[BT_BACKEND_MAX] = {
	[BT_BACKEND_AUTO] = "auto",
	[BT_BACKEND_PT] = "pt",
	[BT_BACKEND_BTS] = "bts",
	[BT_BACKEND_SOFT] = "soft",
};

const char *bt_backend_name(int backend)
{
	if (backend < 0 || backend >= BT_BACKEND_MAX)
		return "?";
	return backend_names[backend];
}

int bt_backend_parse(const char *name)
{
	int i;

	if (!name)
		return bt_fail(bte_invalid, 0, "no backend name");
	for (i = 0; i < BT_BACKEND_MAX; i++)
		if (!strcmp(name, backend_names[i]))
			return i;
	return bt_fail(bte_invalid, 0, "unknown backend '%s'", name);
}

/*
 * The ops for @backend; for soft, the one of @soft_mode if registered,
 * else any soft one (single-step stands in for a missing fast mode).
 */
static const struct bt_backend_ops *backend_find(int backend, int soft_mode)
{
	const struct bt_backend_ops *any = NULL;
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(registry); i++) {
		if (registry[i]->id != backend)
			continue;
		if (backend != BT_BACKEND_SOFT ||
		    registry[i]->soft_mode == soft_mode)
			return registry[i];
		if (!any)
			any = registry[i];
	}
	return any;
}

static int backend_probe_ops(const struct bt_backend_ops *ops, char *why,
			     size_t size)
{
	if (!ops->probe)
		return 0;
	return ops->probe(why, size);
}

int bt_backend_probe(int backend, char *why, size_t size)
{
	const struct bt_backend_ops *ops;
	char scratch[8];

	if (!why || !size) {
		why = scratch;
		size = sizeof(scratch);
	}
	why[0] = '\0';
	if (backend == BT_BACKEND_AUTO)
		return 0;
	if (backend < 0 || backend >= BT_BACKEND_MAX) {
		snprintf(why, size, "unknown backend %d", backend);
		return bt_fail(bte_invalid, 0, "%s", why);
	}
	ops = backend_find(backend, BT_SOFT_FAST);
	if (!ops) {
		snprintf(why, size, "the %s backend is not built into btrace",
			 backend_names[backend]);
		return bt_fail(bte_nosys, 0, "%s", why);
	}
	return backend_probe_ops(ops, why, size);
}

static const struct bt_backend_ops *backend_auto(const struct bt_target_opts *o)
{
	static const int order[] = { BT_BACKEND_PT, BT_BACKEND_BTS,
				     BT_BACKEND_SOFT };
	const struct bt_backend_ops *ops;
	char why[256];
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(order); i++) {
		ops = backend_find(order[i], o->soft_mode);
		if (ops && backend_probe_ops(ops, why, sizeof(why)) == 0)
			return ops;
	}
	return NULL;
}

int bt_backend_select(const struct bt_target_opts *o,
		      const struct bt_backend_ops **out)
{
	char why[256];
	int ret;

	if (o->backend == BT_BACKEND_AUTO) {
		*out = backend_auto(o);
		if (!*out)
			return bt_fail(bte_nosys, 0, "no backend can trace here");
		return 0;
	}
	ret = bt_backend_probe(o->backend, why, sizeof(why));
	if (ret < 0)	/* whatever the cause, this backend is unavailable */
		return bt_fail(bte_nosys, 0, "%s", why);
	*out = backend_find(o->backend, o->soft_mode);
	return 0;
}
