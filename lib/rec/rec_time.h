/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_TIME_H
#define BTRACE_REC_TIME_H

/*
 * The recorder's clock (rec_time.c): the TSC values the translated code
 * writes (REC_TIME_SYS, REC_TIME in rec_ring.h) turned into nanoseconds
 * of CLOCK_MONOTONIC, the clock of the rest of the history.
 *
 * The rate is the kernel's (time_mult / 2^time_shift of a perf event's
 * mmap page, where it has cap_user_time), else measured: two (TSC,
 * CLOCK_MONOTONIC) pairs 2 ms apart at the first use, then from the first
 * pair to a newer one as the run goes (every 50 ms of it at most).  A TSC
 * is converted from the newest pair.  The TSC must be constant and the
 * same on every CPU (constant_tsc, nonstop_tsc: every x86-64 of the last
 * decade, and their VMs).
 */

#include <stdint.h>

struct rc_clock {
	int ready;
	int kernel_rate;	/* the rate is the kernel's */
	double ns_per_tick;
	uint64_t tsc0, ns0;	/* the first pair */
	uint64_t tsc1, ns1;	/* the newest */
};

/*
 * BTRACE_REC_TIME=0 in the environment: the recorder writes no time
 * records (bench/recorder.c measures what they cost).
 */
int rc_clock_off(void);

/* @tsc in ns of CLOCK_MONOTONIC (the clock set up at the first call). */
uint64_t rc_clock_ns(struct rc_clock *c, uint64_t tsc);

#endif /* BTRACE_REC_TIME_H */
