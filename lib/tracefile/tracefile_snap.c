// SPDX-License-Identifier: MIT
/*
 * Snapshot a stopped target into a struct bt_trace: captures, mappings,
 * executable memory and function symbols, so the file decodes and names
 * code on a machine that has none of the process's binaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/target.h"
#include "btrace/tracefile.h"
#include "internal.h"
#include "tracefile/tracefile_internal.h"

/* Larger executable mappings are not saved (huge JIT arenas). */
#define CODE_MAX_MAPPING (256u << 20)

/* The faults the program's handlers took, a thread's at most each. */
static int snap_faults(struct bt_trace *t, struct bt_target *target,
		       const pid_t *tids, size_t n)
{
	size_t i;
	int ret;

	t->fault = calloc(n ? n : 1, sizeof(*t->fault));
	if (!t->fault)
		return bt_fail(bte_nomem, ENOMEM, "saving a trace");
	for (i = 0; i < n; i++) {
		ret = bt_target_fault(target, tids[i], &t->fault[t->nfaults]);
		if (ret == -bte_nomem)
			return ret;
		if (ret == 1)
			t->nfaults++;
	}
	return 0;
}

static int snap_threads(struct bt_trace *t, struct bt_target *target)
{
	pid_t tids[1024];
	size_t i, n;
	int ret;

	n = bt_target_threads(target, tids, BT_ARRAY_SIZE(tids));
	if (n > BT_ARRAY_SIZE(tids))
		n = BT_ARRAY_SIZE(tids);
	t->thread = calloc(n ? n : 1, sizeof(*t->thread));
	if (!t->thread)
		return bt_fail(bte_nomem, ENOMEM, "saving a trace");
	for (i = 0; i < n; i++) {
		ret = bt_target_capture(target, tids[i],
					&t->thread[t->nthreads]);
		if (ret == -bte_noent || ret == -bte_notrace)
			continue;	/* a thread that just left */
		if (ret < 0)
			return ret;
		t->nthreads++;
	}
	return snap_faults(t, target, tids, n);
}

/* Read one executable mapping; unreadable ones ([vsyscall]) are skipped. */
static int snap_code_map(struct bt_trace *t, struct bt_target *target,
			 const struct bt_map *m)
{
	struct bt_trace_code *c = &t->code[t->ncode];
	uint64_t size = m->end - m->start;
	ssize_t n;

	if (!size || size > CODE_MAX_MAPPING)
		return 0;
	c->bytes = malloc(size);
	if (!c->bytes)
		return bt_fail(bte_nomem, ENOMEM, "saving %llu bytes of code",
			       (unsigned long long)size);
	c->vaddr = m->start;
	for (c->size = 0; c->size < size; c->size += n) {
		n = bt_target_read(target, m->start + c->size,
				   c->bytes + c->size, size - c->size);
		if (n <= 0)
			break;
	}
	if (!c->size) {
		free(c->bytes);
		c->bytes = NULL;
		return 0;
	}
	t->ncode++;
	return 0;
}

static int snap_code(struct bt_trace *t, struct bt_target *target)
{
	size_t i;
	int ret;

	t->code = calloc(t->maps.count ? t->maps.count : 1, sizeof(*t->code));
	if (!t->code)
		return bt_fail(bte_nomem, ENOMEM, "saving a trace");
	for (i = 0; i < t->maps.count; i++) {
		if (!(t->maps.map[i].prot & BT_MAP_X))
			continue;
		ret = snap_code_map(t, target, &t->maps.map[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static void snap_meta(struct bt_trace *t, struct bt_target *target,
		      const struct bt_stop *stop)
{
	char link[64], exe[PATH_MAX];
	const char *name;
	ssize_t n;

	t->pid = bt_target_pid(target);
	t->created = time(NULL);
	if (stop)
		t->stop = *stop;
	bt_target_stats(target, &t->stats);
	t->buffer_size = bt_target_buffer_size(target);
	name = bt_target_backend_name(target);
	t->backend = name ? strdup(name) : NULL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)t->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		t->exe = strdup(exe);
	}
}

int bt_trace_from_target(struct bt_trace **trace, struct bt_target *target,
			 const struct bt_stop *stop)
{
	struct bt_trace *t;
	int ret;

	if (!trace || !target)
		return bt_fail(bte_invalid, 0, "bt_trace_from_target(NULL)");
	*trace = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return bt_fail(bte_nomem, ENOMEM, "saving a trace");
	snap_meta(t, target, stop);
	ret = bt_maps_read(t->pid, &t->maps);
	if (ret < 0)
		goto err;
	ret = snap_threads(t, target);
	if (ret < 0)
		goto err;
	ret = snap_code(t, target);
	if (ret < 0)
		goto err;
	ret = bt_trace_collect_syms(t);
	if (ret < 0)
		goto err;
	*trace = t;
	return 0;
err:
	bt_trace_free(t);
	return ret;
}

int bt_trace_save(struct bt_target *target, const struct bt_stop *stop,
		  const char *path)
{
	struct bt_trace *t;
	int ret;

	ret = bt_trace_from_target(&t, target, stop);
	if (ret < 0)
		return ret;
	ret = bt_trace_write(t, path);
	bt_trace_free(t);
	return ret;
}
