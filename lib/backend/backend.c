// SPDX-License-Identifier: MIT
/*
 * The backend registry: one table of the backends, their modes, the order
 * auto tries them in and what each can honour; names, probing, and the
 * choice of the ops a target runs with.  doctor, the command line and
 * --backend auto all read this table.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "btrace/error.h"
#include "btrace/target.h"
#include "internal.h"
#include "tracer/tracer.h"

struct backend_row {
	struct bt_backend_info info;
	const struct bt_backend_ops *ops;
};

/*
 * What the soft modes that run the program from decoded blocks keep:
 * untraced code runs natively and the triggers are int3s of the block
 * cache (soft/soft_fast.c; the record mode runs the fast one for them).
 * The hardware backends record whatever the CPU runs, and single-stepping
 * stops at every instruction: neither has filters nor triggers.  pt and
 * bts read the hardware's ring, which has no positions to read from.
 */
#define CAPS_BLOCKS (BT_CAP_FILTER | BT_CAP_FROM | BT_CAP_UNTIL | \
		     BT_CAP_POSITIONS)

/*
 * In the order auto tries them: hardware first, then software; of the soft
 * modes the default (BT_SOFT_RECORD, 0) first, for bt_backend_probe(soft).
 */
static const struct backend_row registry[] = {
	{ { BT_BACKEND_PT, -1, "pt", NULL, "Intel PT through perf", 0 },
	  &bt_backend_pt },
	{ { BT_BACKEND_BTS, -1, "bts", NULL, "Intel BTS through perf", 0 },
	  &bt_backend_bts },
	{ { BT_BACKEND_SOFT, BT_SOFT_RECORD, "soft", "record",
	    "translated code records its own branches", CAPS_BLOCKS },
	  &bt_backend_soft_record },
	{ { BT_BACKEND_SOFT, BT_SOFT_FAST, "soft", "fast",
	    "stops only where the path is decided at run time", CAPS_BLOCKS },
	  &bt_backend_soft_fast },
	{ { BT_BACKEND_SOFT, BT_SOFT_STEP, "soft", "step",
	    "single-steps every instruction (the reference)",
	    BT_CAP_POSITIONS },
	  &bt_backend_soft_step },
};

const struct bt_backend_info *bt_backend_info(size_t i)
{
	return i < BT_ARRAY_SIZE(registry) ? &registry[i].info : NULL;
}

/* The row of @backend; for soft, the one of @soft_mode.  NULL: none. */
static const struct backend_row *backend_find(int backend, int soft_mode)
{
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(registry); i++)
		if (registry[i].info.backend == backend &&
		    (backend != BT_BACKEND_SOFT ||
		     registry[i].info.soft_mode == soft_mode))
			return &registry[i];
	return NULL;
}

const char *bt_backend_name(int backend)
{
	const struct backend_row *r;

	if (backend == BT_BACKEND_AUTO)
		return "auto";
	r = backend_find(backend, BT_SOFT_RECORD);
	return r ? r->info.name : "?";
}

int bt_backend_parse(const char *name)
{
	size_t i;

	if (!name)
		return bt_fail(bte_invalid, 0, "no backend name");
	if (!strcmp(name, "auto"))
		return BT_BACKEND_AUTO;
	for (i = 0; i < BT_ARRAY_SIZE(registry); i++)
		if (!strcmp(name, registry[i].info.name))
			return registry[i].info.backend;
	return bt_fail(bte_invalid, 0, "unknown backend '%s'", name);
}

const char *bt_soft_mode_name(int soft_mode)
{
	const struct backend_row *r = backend_find(BT_BACKEND_SOFT, soft_mode);

	return r ? r->info.mode : "?";
}

int bt_soft_mode_parse(const char *name)
{
	size_t i;

	if (!name)
		return bt_fail(bte_invalid, 0, "no soft mode name");
	for (i = 0; i < BT_ARRAY_SIZE(registry); i++)
		if (registry[i].info.mode && !strcmp(name, registry[i].info.mode))
			return registry[i].info.soft_mode;
	return bt_fail(bte_invalid, 0, "unknown soft mode '%s'", name);
}

size_t bt_backend_auto_order(int *ids, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < BT_ARRAY_SIZE(registry); i++) {
		if (i && registry[i].info.backend == registry[i - 1].info.backend)
			continue;	/* the modes of one backend are together */
		if (n < max)
			ids[n] = registry[i].info.backend;
		n++;
	}
	return n;
}

/* A candidate of auto with @soft_mode: any hardware row, the soft mode's. */
static int auto_takes(const struct backend_row *r, int soft_mode)
{
	return r->info.backend != BT_BACKEND_SOFT ||
	       r->info.soft_mode == soft_mode;
}

unsigned bt_backend_caps(int backend, int soft_mode)
{
	const struct backend_row *r;
	unsigned caps = 0;
	size_t i;

	if (backend != BT_BACKEND_AUTO) {
		r = backend_find(backend, soft_mode);
		return r ? r->info.caps : 0;
	}
	for (i = 0; i < BT_ARRAY_SIZE(registry); i++)
		if (auto_takes(&registry[i], soft_mode))
			caps |= registry[i].info.caps;
	return caps;
}

unsigned bt_target_opts_caps(const struct bt_target_opts *o)
{
	unsigned caps = 0;

	if ((o->only && o->only[0]) || (o->exclude && o->exclude[0]))
		caps |= BT_CAP_FILTER;
	if (o->from_sym)
		caps |= BT_CAP_FROM;
	if (o->until_sym)
		caps |= BT_CAP_UNTIL;
	return caps;
}

const char *bt_backend_cap_name(unsigned cap)
{
	switch (cap) {
	case BT_CAP_FILTER:
		return "filters";
	case BT_CAP_FROM:
		return "from";
	case BT_CAP_UNTIL:
		return "until";
	case BT_CAP_POSITIONS:
		return "positions";
	}
	return "?";
}

/* The field of struct bt_target_opts behind the lowest bit of @caps. */
static const char *cap_field(unsigned caps)
{
	if (caps & BT_CAP_FILTER)
		return "only/exclude";
	if (caps & BT_CAP_FROM)
		return "from_sym";
	if (caps & BT_CAP_UNTIL)
		return "until_sym";
	return "capture positions";
}

/* @o asks for @missing, which @backend (auto: every candidate) lacks. */
static int backend_refuse(const struct bt_target_opts *o, unsigned missing)
{
	if (o->backend == BT_BACKEND_AUTO)
		return bt_fail(bte_invalid, 0,
			       "no backend can honour %s in soft mode %s",
			       cap_field(missing),
			       bt_soft_mode_name(o->soft_mode));
	if (o->backend == BT_BACKEND_SOFT)
		return bt_fail(bte_invalid, 0,
			       "the soft backend's %s mode cannot honour %s",
			       bt_soft_mode_name(o->soft_mode),
			       cap_field(missing));
	return bt_fail(bte_invalid, 0, "the %s backend cannot honour %s",
		       bt_backend_name(o->backend), cap_field(missing));
}

static int backend_probe_row(const struct backend_row *r, char *why,
			     size_t size)
{
	if (!r->ops->probe)
		return 0;
	return r->ops->probe(why, size);
}

int bt_backend_probe(int backend, char *why, size_t size)
{
	const struct backend_row *r;
	char scratch[8];

	if (!why || !size) {
		why = scratch;
		size = sizeof(scratch);
	}
	why[0] = '\0';
	if (backend == BT_BACKEND_AUTO)
		return 0;
	/* the soft modes share one probe: that of the default mode */
	r = backend_find(backend, BT_SOFT_RECORD);
	if (!r) {
		snprintf(why, size, "unknown backend %d", backend);
		return bt_fail(bte_invalid, 0, "%s", why);
	}
	return backend_probe_row(r, why, size);
}

/*
 * The first row in auto's order that takes @o's soft mode, honours what
 * @o asks for (@need) and is usable here.
 */
static const struct bt_backend_ops *backend_auto(const struct bt_target_opts *o,
						 unsigned need)
{
	const struct backend_row *r;
	char why[256];
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(registry); i++) {
		r = &registry[i];
		if (!auto_takes(r, o->soft_mode) || (need & ~r->info.caps))
			continue;
		if (backend_probe_row(r, why, sizeof(why)) == 0)
			return r->ops;
	}
	return NULL;
}

int bt_backend_select(const struct bt_target_opts *o,
		      const struct bt_backend_ops **out)
{
	unsigned need = bt_target_opts_caps(o);
	unsigned missing = need & ~bt_backend_caps(o->backend, o->soft_mode);
	const struct backend_row *r;
	char why[256];

	if (o->backend != BT_BACKEND_AUTO &&
	    !backend_find(o->backend, o->soft_mode))
		return bt_fail(bte_invalid, 0, "unknown backend %d, soft mode %d",
			       o->backend, o->soft_mode);
	/* before any probe: the options are wrong on every machine */
	if (missing)
		return backend_refuse(o, missing);
	if (o->backend == BT_BACKEND_AUTO) {
		*out = backend_auto(o, need);
		if (!*out)
			return bt_fail(bte_nosys, 0, "no backend can trace here");
		return 0;
	}
	r = backend_find(o->backend, o->soft_mode);
	if (backend_probe_row(r, why, sizeof(why)) < 0)
		/* whatever the cause, this backend is unavailable */
		return bt_fail(bte_nosys, 0, "%s", why);
	*out = r->ops;
	return 0;
}
