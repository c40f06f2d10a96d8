// SPDX-License-Identifier: MIT
/*
 * captrace: the capture layer alone, for tests.  Launches PROGRAM with the
 * single-step software backend, runs it to its first stop, prints the stop
 * and every branch record of every thread, then finishes it.
 *
 *	captrace [-f] [-b BREAK_ADDR] [-c COUNT] -- PROGRAM [ARGS...]
 *
 * Output, one item per line:
 *	stop REASON tid=T sig=S status=X pc=0x.. addr=0x..
 *	thread T lost=N
 *	0xFROM 0xTO KIND NINSN FLAGS		(oldest first)
 *	stats instructions=I branches=B stops=S
 *	wstatus 0xW
 * -b sets a breakpoint before running; -c runs through COUNT stops (the
 * records are printed after the last); -f follows forks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/btrace.h"

static const char *const reasons[] = { "none", "signal", "exit", "interrupt",
				       "break", "killed" };

static void print_records(const struct bt_capture *cap)
{
	const struct bt_rec_hdr *rec;
	size_t off = 0;

	while (bt_rec_next(cap->data, cap->size, &off, &rec) == 0) {
		const struct bt_rec_branch *br = (const void *)rec;

		if (rec->type != BT_REC_BRANCH)
			continue;
		printf("0x%" PRIx64 " 0x%" PRIx64 " %s %u %u\n", br->from,
		       br->to, bt_branch_kind_name(br->kind), br->ninsn,
		       br->flags);
	}
}

static void print_stop(const struct bt_stop *s)
{
	printf("stop %s tid=%d sig=%d status=%d pc=0x%" PRIx64 " addr=0x%" PRIx64
	       "\n", reasons[s->reason], s->tid, s->signal, s->status, s->pc,
	       s->addr);
}

int main(int argc, char **argv)
{
	struct bt_target_opts o = { .size = sizeof(o),
				    .backend = BT_BACKEND_SOFT,
				    .soft_mode = BT_SOFT_STEP };
	struct bt_target *t;
	struct bt_stats stats;
	struct bt_stop stop;
	uint64_t brk = 0;
	int opt, ret, ws, count = 1, i;
	pid_t tids[256];
	size_t n, k;

	while ((opt = getopt(argc, argv, "+b:c:f")) != -1) {
		if (opt == 'f')
			o.follow_fork = 1;
		else if (opt == 'b')
			brk = strtoull(optarg, NULL, 0);
		else if (opt == 'c')
			count = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc)
		return 2;
	ret = bt_target_launch(&t, &o, argv + optind);
	if (ret < 0) {
		fprintf(stderr, "captrace: %s (%s)\n", bt_errstr(ret),
			bt_errdetail());
		return 1;
	}
	if (brk && bt_target_break_insert(t, brk) < 0)
		fprintf(stderr, "captrace: break: %s\n", bt_errdetail());
	for (i = 0; i < count; i++) {
		ret = bt_target_cont(t, &stop);
		if (ret < 0) {
			fprintf(stderr, "captrace: cont: %s (%s)\n",
				bt_errstr(ret), bt_errdetail());
			bt_target_free(t);
			return 1;
		}
		print_stop(&stop);
		if (stop.reason == BT_STOP_EXIT || stop.reason == BT_STOP_KILLED)
			break;
	}
	n = bt_target_threads(t, tids, 256);
	if (!n) {
		tids[0] = stop.tid;
		n = 1;
	}
	for (k = 0; k < n; k++) {
		struct bt_capture cap;

		if (bt_target_capture(t, tids[k], &cap) < 0)
			continue;
		printf("thread %d lost=%" PRIu64 "\n", tids[k], cap.lost);
		print_records(&cap);
		bt_capture_release(&cap);
	}
	bt_target_stats(t, &stats);
	printf("stats instructions=%" PRIu64 " branches=%" PRIu64
	       " stops=%" PRIu64 "\n", stats.instructions, stats.branches,
	       stats.stops);
	ret = bt_target_finish(t, &ws);
	if (ret < 0)
		fprintf(stderr, "captrace: finish: %s (%s)\n", bt_errstr(ret),
			bt_errdetail());
	printf("wstatus 0x%x\n", ws);
	bt_target_free(t);
	return 0;
}
