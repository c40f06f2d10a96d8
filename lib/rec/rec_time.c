// SPDX-License-Identifier: MIT
/* The recorder's clock: TSC to CLOCK_MONOTONIC (rec_time.h). */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec/rec_ring.h"
#include "rec/rec_time.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define CALIBRATE_NS	2000000ull	/* the first measured rate's span */
#define REFINE_NS	50000000ull	/* a newer pair at most this often */

/* The kernel's TSC rate from a perf event's page; 0 where it has none. */
static double kernel_rate(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	double rate = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		if (pg->cap_user_time && pg->time_mult)
			rate = (double)pg->time_mult /
			       (double)(1ull << pg->time_shift);
		munmap(pg, 4096);
	}
	close(fd);
	return rate;
}

static void clock_init(struct rc_clock *c)
{
	uint64_t t, n;

	bt_clock_tsc_pair(&c->tsc0, &c->ns0);
	c->ns_per_tick = kernel_rate();
	c->kernel_rate = c->ns_per_tick > 0;
	c->tsc1 = c->tsc0;
	c->ns1 = c->ns0;
	if (!c->kernel_rate) {
		do
			bt_clock_tsc_pair(&t, &n);
		while (n - c->ns0 < CALIBRATE_NS);
		c->ns_per_tick = t > c->tsc0 ? (double)(n - c->ns0) /
						       (double)(t - c->tsc0)
					     : 1.0;
		c->tsc1 = t;
		c->ns1 = n;
	}
	c->ready = 1;
}

int rc_clock_off(void)
{
	static int off = -1;	/* asked at every stop and translation */

	if (off < 0) {
		const char *v = getenv("BTRACE_REC_TIME");

		off = v && !strcmp(v, "0");
	}
	return off;
}

uint64_t rc_clock_ns(struct rc_clock *c, uint64_t tsc)
{
	double d;

	if (!c->ready)
		clock_init(c);
	if (bt_clock_ns() - c->ns1 >= REFINE_NS) {
		bt_clock_tsc_pair(&c->tsc1, &c->ns1);
		if (!c->kernel_rate && c->tsc1 > c->tsc0)
			c->ns_per_tick = (double)(c->ns1 - c->ns0) /
					 (double)(c->tsc1 - c->tsc0);
	}
	d = ((double)tsc - (double)c->tsc1) * c->ns_per_tick;
	if (d < 0 && (uint64_t)-d > c->ns1)
		return 0;
	return c->ns1 + (int64_t)d;
}

/*
 * A thread the tracer held at a translation's exit (a miss): the time it
 * stopped and now, into its ring, so that the tracer's work shows where
 * it happened instead of being spread over the system calls around it.
 */
void rc_time_stall(struct bt_recorder *r, struct rthread *rt)
{
	uint8_t rec[2 * REC_ADDR_LEN];
	uint64_t now = bt_clock_ns();

	if (!rt->th->stop_ns || now < rt->th->stop_ns || rc_clock_off())
		return;
	rec[REC_ADDR_LEN] = REC_TIME_NS;	/* the older one above */
	memcpy(rec + REC_ADDR_LEN + 1, &rt->th->stop_ns, 8);
	rec[0] = REC_TIME_NS;
	memcpy(rec + 1, &now, 8);
	rc_ring_put(r, rt, rec, sizeof(rec));
}
