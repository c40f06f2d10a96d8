// SPDX-License-Identifier: MIT
/*
 * fasttrace: run a program under the fast software backend with module
 * filters and triggers, and print how it stopped and its branch history.
 *
 *	fasttrace [-o GLOB]... [-x GLOB]... [-F SYMBOL] [-U SYMBOL] [-l N]
 *		  -- PROGRAM [ARGS...]
 *
 * -o/-x: only/exclude modules; -F/-U: from/until symbol; -l: print only
 * the last N branches of each thread.  Output, one line per branch, oldest
 * first, addresses as module+offset (module basenames from the process's
 * mappings at the stop):
 *	stop REASON SIGNAL
 *	thread N
 *	KIND FROM TO [gap REASON]
 * Exit status 0, or 2 on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "btrace/btrace.h"

static void where(const struct bt_maps *maps, uint64_t addr, char *buf,
		  size_t size)
{
	const struct bt_map *m = addr ? bt_maps_find(maps, addr) : NULL;
	const char *base;

	if (!m || !m->path) {
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
		return;
	}
	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	snprintf(buf, size, "%s+0x%llx", base,
		 (unsigned long long)(addr - m->start + m->offset));
}

static void print_thread(const struct bt_capture *cap,
			 const struct bt_maps *maps, size_t last)
{
	const struct bt_rec_hdr *rec;
	size_t off = 0, n = 0, i = 0;

	while (bt_rec_next(cap->data, cap->size, &off, &rec) == 0)
		n += rec->type == BT_REC_BRANCH;
	off = 0;
	while (bt_rec_next(cap->data, cap->size, &off, &rec) == 0) {
		const struct bt_rec_branch *b = (const void *)rec;
		char from[128], to[128];

		if (rec->type != BT_REC_BRANCH || (last && i++ < n - last))
			continue;
		where(maps, b->from, from, sizeof(from));
		where(maps, b->to, to, sizeof(to));
		printf("%s %s %s", bt_branch_kind_name(b->kind), from, to);
		if (b->kind == BT_BR_GAP)
			printf(" gap %s", bt_gap_reason_name(b->gap));
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	const char *only[16] = { 0 }, *exclude[16] = { 0 };
	size_t nonly = 0, nexclude = 0, last = 0, i, n;
	struct bt_target_opts o;
	struct bt_target *t;
	struct bt_stop stop;
	struct bt_maps maps;
	pid_t tids[64];
	int opt, ret, ws;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = BT_BACKEND_SOFT;
	o.soft_mode = BT_SOFT_FAST;
	o.buffer_size = 16u << 20;
	while ((opt = getopt(argc, argv, "+o:x:F:U:l:")) != -1) {
		switch (opt) {
		case 'o': if (nonly < 15) only[nonly++] = optarg; break;
		case 'x': if (nexclude < 15) exclude[nexclude++] = optarg; break;
		case 'F': o.from_sym = optarg; break;
		case 'U': o.until_sym = optarg; break;
		case 'l': last = strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	o.only = nonly ? only : NULL;
	o.exclude = nexclude ? exclude : NULL;
	personality(ADDR_NO_RANDOMIZE);
	ret = bt_target_launch(&t, &o, argv + optind);
	if (ret < 0) {
		fprintf(stderr, "fasttrace: %s (%s)\n", bt_errstr(ret),
			bt_errdetail());
		return 2;
	}
	do {
		ret = bt_target_cont(t, &stop);
	} while (ret == 0 && stop.reason != BT_STOP_SIGNAL &&
		 stop.reason != BT_STOP_EXIT && stop.reason != BT_STOP_KILLED &&
		 stop.reason != BT_STOP_BREAK);
	if (ret < 0) {
		fprintf(stderr, "fasttrace: %s (%s)\n", bt_errstr(ret),
			bt_errdetail());
		bt_target_free(t);
		return 2;
	}
	printf("stop %d %d\n", stop.reason, stop.signal);
	memset(&maps, 0, sizeof(maps));
	bt_maps_read(bt_target_pid(t), &maps);
	n = bt_target_threads(t, tids, 64);
	for (i = 0; i < n && i < 64; i++) {
		struct bt_capture cap;

		if (bt_target_capture(t, tids[i], &cap) < 0)
			continue;
		printf("thread %zu\n", i);
		print_thread(&cap, &maps, last);
		bt_capture_release(&cap);
	}
	bt_maps_release(&maps);
	fflush(stdout);
	if (stop.reason == BT_STOP_BREAK)
		bt_target_detach(t);
	else
		bt_target_finish(t, &ws);
	bt_target_free(t);
	return 0;
usage:
	fprintf(stderr, "usage: fasttrace [-o GLOB] [-x GLOB] [-F SYM] [-U SYM] [-l N] -- PROGRAM [ARGS...]\n");
	return 2;
}
