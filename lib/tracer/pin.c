// SPDX-License-Identifier: MIT
/*
 * Bursts of stops on one CPU (tracer.h): while the target is a single
 * thread and its stops come close together, it and the tracer are bound
 * to one CPU, the tracer's.
 *
 * Each stop wakes the tracer and each restart wakes the thread.  With the
 * two on different CPUs, each wake-up of the idle one is an interrupt
 * sent across CPUs, which on a virtual machine goes through the
 * hypervisor; wait.c's spin saves the tracer's, not the thread's.  On one
 * CPU a stop is a switch from one task to the other.  python3's first
 * run under the recorder (3.1 k stops): 0.6-0.7 s of system time on two
 * CPUs, 0.22-0.30 s on one; the ring's wraps of recursive fib, 15% of its
 * CPU.
 *
 * The program must not see it.  Only a backend that sees every system
 * call that could allows it (bt_pin_allow(): the recorder, whose
 * translations leave at them), and releases the pin first:
 *   - sched_getaffinity reads the mask it had; sched_setaffinity sets its
 *     own, and the pin is not made again (bt_pin_release(t, 1));
 *   - fork, vfork, clone: a child would inherit the pin, a second thread
 *     wants a CPU of its own;
 *   - a thread that leaves the translation for more than a system call
 *     (stepped, untraced code run natively) runs calls unseen.
 * A target with more than one thread (a fork child followed, a thread
 * made unseen) is released at its next stop, each thread's mask set back;
 * so is a thread that ran for PIN_QUIET without a stop, so that a program
 * past its bursts is free to move; and every letting go releases it.  What
 * stays visible: the mask in /proc/PID/status while pinned.
 *
 * BTRACE_PIN=0 in the environment turns it off (bench/recorder stops
 * compares the two); BTRACE_PIN=1 pins at every stop where it may, burst
 * or not, and keeps it through quiet runs (tests: what the program sees
 * must not depend on when the pin was made).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

#define PIN_NEAR	2000000ull	/* ns: a stop this soon after the run */
#define PIN_BURST	8		/* stops in a row that came that soon */
#define PIN_QUIET	50000000ull	/* ns run without a stop: released */

enum { PIN_OFF, PIN_ALWAYS, PIN_AUTO };

/* BTRACE_PIN: 0 off, 1 at every stop in a burst or not (tests), else auto */
static int pin_mode(void)
{
	static int mode = -1;
	const char *s;

	if (mode < 0) {
		s = getenv("BTRACE_PIN");
		if (s && !strcmp(s, "0"))
			mode = PIN_OFF;
		else if (s && !strcmp(s, "1"))
			mode = PIN_ALWAYS;
		else
			mode = PIN_AUTO;
	}
	return mode;
}

void bt_pin_allow(struct bt_target *t, int (*ok)(struct bt_target *,
						 struct bt_thread *))
{
	t->pin.ok = ok;
}

/* The one thread not gone, or NULL where there are none or several. */
static struct bt_thread *only_thread(const struct bt_target *t)
{
	struct bt_thread *one = NULL;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i]->state == BT_TH_GONE)
			continue;
		if (one)
			return NULL;
		one = t->threads[i];
	}
	return one;
}

/* Bind @th and the tracer to the tracer's CPU, if the thread may run there. */
static void pin(struct bt_target *t, struct bt_thread *th)
{
	struct bt_pin *p = &t->pin;
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(th->tid, sizeof(p->orig), &p->orig) < 0 ||
	    !CPU_ISSET(cpu, &p->orig) || CPU_COUNT(&p->orig) < 2 ||
	    sched_getaffinity(0, sizeof(p->self), &p->self) < 0)
		return;		/* nothing to gain, or another's CPU */
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return;
	if (sched_setaffinity(th->tid, sizeof(one), &one) < 0) {
		sched_setaffinity(0, sizeof(p->self), &p->self);
		return;
	}
	p->tid = th->tid;
}

void bt_pin_release(struct bt_target *t, int for_good)
{
	struct bt_pin *p = &t->pin;
	size_t i;

	if (for_good)
		p->never = 1;
	p->near = 0;
	if (!p->tid)
		return;
	/* every thread: one made while pinned has the pin too */
	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE)
			sched_setaffinity(t->threads[i]->tid,
					  sizeof(p->orig), &p->orig);
	sched_setaffinity(0, sizeof(p->self), &p->self);
	p->tid = 0;
}

void bt_pin_stop(struct bt_target *t, pid_t tid, uint64_t ran_ns)
{
	struct bt_pin *p = &t->pin;
	struct bt_thread *th;

	int mode = pin_mode();

	if (!p->ok || p->never || mode == PIN_OFF)
		return;
	th = only_thread(t);
	if (p->tid) {
		if (!th || th->tid != p->tid ||
		    (ran_ns > PIN_QUIET && mode == PIN_AUTO))
			bt_pin_release(t, 0);
		return;
	}
	p->near = ran_ns < PIN_NEAR ? p->near + 1 : 0;
	if ((p->near >= PIN_BURST || mode == PIN_ALWAYS) && th &&
	    th->tid == tid && p->ok(t, th))
		pin(t, th);
}
