// SPDX-License-Identifier: MIT
/*
 * Waiting for the next stop: waitpid, after a short spin.
 *
 * A ptrace stop wakes the tracer, and the tracer's restart wakes the
 * thread.  On a virtual machine each wake-up of an idle CPU is an
 * interrupt sent through the hypervisor, and the CPU it wakes may have
 * been given away meanwhile: a single step measured 30 us with tracer and
 * thread on one CPU and 130 to 430 us with them on two, most of it in
 * those wake-ups.  A tracer that polls waitpid(WNOHANG) is awake when the
 * stop comes, which halves the wake-ups (48 us the step).  Stops come in
 * bursts (the recorder's first run through code, stepping, the fast
 * mode's breakpoints), and between bursts the program may run for long:
 * so the spin is bounded and adapts, like an adaptive mutex.  A stop
 * caught while spinning doubles the next spin's bound (up to SPIN_MAX),
 * one missed halves it (down to SPIN_MIN, a few polls): a program running
 * free costs the tracer at most a few us at each of its stops.  The spin
 * yields the CPU at each poll, so that on a loaded machine the thread it
 * waits for runs first.
 *
 * BTRACE_WAIT_SPIN=0 in the environment turns the spin off (benchmarks
 * compare the two: bench/recorder stops); another number sets SPIN_MAX in us.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "btrace/error.h"
#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

#define SPIN_MAX	200000		/* ns */
#define SPIN_MIN	4000

static uint64_t spin_max(void)
{
	static long max = -1;
	const char *s;

	if (max < 0) {
		s = getenv("BTRACE_WAIT_SPIN");
		max = s && *s ? atol(s) * 1000 : SPIN_MAX;
		if (max < 0)
			max = 0;
	}
	return (uint64_t)max;
}

/*
 * Poll for @tid's stop for up to @t's spin bound: the waitpid result, or
 * 0 where nothing came (or an interrupt is asked for).
 */
static pid_t spin(struct bt_target *t, pid_t tid, int *status)
{
	uint64_t max = spin_max(), end;
	pid_t r;

	if (!max)
		return 0;
	if (!t->spin_ns || t->spin_ns > max)
		t->spin_ns = max;
	end = bt_clock_ns() + t->spin_ns;
	do {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r != 0) {
			if (r > 0 && t->spin_ns < max)
				t->spin_ns *= 2;
			return r;
		}
		if (t->interrupt)
			return 0;
		sched_yield();
	} while (bt_clock_ns() < end);
	t->spin_ns = t->spin_ns / 2 < SPIN_MIN ? SPIN_MIN : t->spin_ns / 2;
	return 0;
}

int bt_target_wait(struct bt_target *t, pid_t tid, pid_t *who, int *status)
{
	uint64_t start = bt_clock_ns();
	int pending;
	pid_t r;

	/*
	 * An interrupt asked for while polling returns 0 (the stop loop
	 * looks at it); a wait entered with one pending blocks, as without
	 * the poll (bringing every thread to a stop, one thread's step).
	 */
	pending = t->interrupt;
	r = pending ? 0 : spin(t, tid, status);
	if (r == 0 && !pending && t->interrupt)
		return 0;
	if (r == 0)
		r = waitpid(tid, status, __WALL);
	if (r < 0) {
		if (errno == EINTR)
			return 0;
		return bt_fail(errno == ECHILD ? bte_exited : bte_io, errno,
			       "waitpid(%d)", tid);
	}
	*who = r;
	bt_pin_stop(t, start, bt_clock_ns());
	return 1;
}
