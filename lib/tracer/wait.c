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
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

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

/*
 * @tid is the first thread of a process that has others: the kernel
 * reports a process's first thread's end only once every other thread
 * of it is reaped.  Killed in the middle of a step of its first thread
 * (a SIGKILL, another thread's exit_group), a process whose other thread
 * had ended and waited to be reaped by us left a wait for the first
 * thread alone waiting for ever (3 runs in 1,700 here, 19 in 122 on a
 * 16-CPU machine, of tests/e2e/rec_killed_inside's kill).
 */
/* @th is another live thread of the process whose first thread is @tid. */
static int sibling(const struct bt_target *t, const struct bt_thread *th,
		   pid_t tid)
{
	return th->tid != tid && th->state != BT_TH_GONE &&
	       bt_thread_tgid(t, th) == tid;
}

static int first_of_many(const struct bt_target *t, pid_t tid)
{
	size_t i;

	if (tid <= 0)
		return 0;
	for (i = 0; i < t->nthreads; i++)
		if (sibling(t, t->threads[i], tid))
			return 1;
	return 0;
}

/* Reap the other threads of @tid's process that ended; 1 if one was. */
static int reap_others(struct bt_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		siginfo_t si;
		int st;

		if (!sibling(t, th, tid))
			continue;
		/* a tracee's ptrace-stops are reported even without
		 * WSTOPPED: only an end is taken, a stop stays for later */
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)th->tid, &si,
			   WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 ||
		    si.si_pid != th->tid ||
		    (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED &&
		     si.si_code != CLD_DUMPED))
			continue;
		if (waitpid(th->tid, &st, __WALL | WNOHANG) == th->tid) {
			bt_event_collect(t, th->tid, st);
			return 1;	/* the table may have changed */
		}
	}
	return 0;
}

/*
 * Wait for @tid, the first thread of a process with others, reaping the
 * others as they end (their stops are left for later): polled, from
 * 10 us between polls up to 1 ms.
 */
static pid_t wait_first(struct bt_target *t, pid_t tid, int *status)
{
	struct timespec nap = { 0, 10000 };
	pid_t r;

	for (;;) {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r != 0)
			return r;
		if (reap_others(t, tid))
			continue;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 1000000)
			nap.tv_nsec *= 2;
	}
}

pid_t bt_wait_thread(struct bt_target *t, pid_t tid, int *status)
{
	return first_of_many(t, tid) ? wait_first(t, tid, status) :
				       waitpid(tid, status, __WALL);
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
		r = tid > 0 ? bt_wait_thread(t, tid, status) :
			      waitpid(tid, status, __WALL);
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
