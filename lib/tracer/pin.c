// SPDX-License-Identifier: MIT
/*
 * Bursts of stops on one CPU (tracer.h): while the target's stops come
 * close together, its threads and the tracer are bound to one CPU, the
 * tracer's.
 *
 * Each stop wakes the tracer and each restart wakes the thread.  With the
 * two on different CPUs, each wake-up of the idle one is an interrupt
 * sent across CPUs, which on a virtual machine goes through the
 * hypervisor; wait.c's spin saves the tracer's, not the thread's.  On one
 * CPU a stop is a switch from one task to the other.  python3's first
 * run under the recorder (3.1 k stops): 0.6-0.7 s of system time on two
 * CPUs, 0.22-0.30 s on one; node's first run, 2.6-3.9 s against
 * 0.74-0.83 s; the ring's wraps of recursive fib, 15% of its CPU.
 *
 * When: PIN_BURST stops in a row each within PIN_NEAR of the run before
 * it; with more than one thread, also the tracer busier than the target
 * between stops (moving averages), so that threads that compute in
 * parallel, and stop only when their rings wrap, keep their CPUs.
 * At most PIN_THREADS threads.
 * Released when the threads are not those pinned (one made, one gone), a
 * run lasts PIN_QUIET without a stop, or (several threads) the tracer is
 * busy less than half as long as the target runs.
 *
 * The program must not see it.  Only a backend that sees every system
 * call that could allows it (bt_pin_allow(): the recorder, whose
 * translations leave at them), and releases the pin first:
 *   - sched_getaffinity reads the mask it had; sched_setaffinity sets its
 *     own, and the pin is not made again (bt_pin_release(t, 1));
 *   - fork, vfork, clone, execve: a child, a program exec'd would
 *     inherit the pin;
 *   - a thread that leaves the translation for more than a system call
 *     (stepped, untraced code run natively) runs calls unseen.
 * Every letting go releases it.  What stays visible: the mask in
 * /proc/PID/status while pinned.
 *
 * BTRACE_PIN=0 in the environment turns it off (bench/recorder stops
 * compares the two); BTRACE_PIN=1 pins at every stop where it may, burst
 * or not, and keeps it through quiet runs (tests: what the program sees
 * must not depend on when the pin was made).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

#define PIN_NEAR	2000000ull	/* ns: a stop this soon after the run */
#define PIN_BURST	8		/* stops in a row that came that soon */
#define PIN_QUIET	50000000ull	/* ns run without a stop: released */
#define PIN_THREADS	64		/* threads at most (each is asked) */

enum { PIN_AUTO, PIN_OFF, PIN_ALWAYS };

/* BTRACE_PIN: 0 off, 1 at every stop in a burst or not (tests), else auto */
static int pin_mode(void)
{
	const char *s = getenv("BTRACE_PIN");

	if (s && !strcmp(s, "0"))
		return PIN_OFF;
	if (s && !strcmp(s, "1"))
		return PIN_ALWAYS;
	return PIN_AUTO;
}

void bt_pin_allow(struct bt_target *t, int (*ok)(struct bt_target *,
						 struct bt_thread *))
{
	t->pin.ok = ok;
	t->pin.mode = pin_mode();
}

/* May every live thread be pinned (the backend's word)? */
static int all_ok(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i]->state != BT_TH_GONE &&
		    !t->pin.ok(t, t->threads[i]))
			return 0;
	return 1;
}

static void masks_free(struct bt_target *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		free(t->threads[i]->pin_mask);
		t->threads[i]->pin_mask = NULL;
	}
}

/*
 * Bind every live thread and the tracer to the tracer's CPU, where each
 * may run there and one at least could run elsewhere.
 */
static void pin(struct bt_target *t)
{
	struct bt_pin *p = &t->pin;
	int cpu = sched_getcpu(), gain = 0;
	struct bt_thread *first = NULL;
	cpu_set_t one;
	size_t i;

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(p->self), &p->self) < 0)
		return;
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];
		cpu_set_t *m;

		if (th->state == BT_TH_GONE)
			continue;
		m = malloc(sizeof(*m));
		if (!m || sched_getaffinity(th->tid, sizeof(*m), m) < 0 ||
		    !CPU_ISSET(cpu, m)) {
			free(m);
			masks_free(t);
			return;		/* another's CPU */
		}
		gain |= CPU_COUNT(m) > 1;
		th->pin_mask = m;
		if (!first)
			first = th;
	}
	if (!gain) {		/* none could run elsewhere (or none live) */
		masks_free(t);
		return;
	}
	p->orig = *first->pin_mask;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		masks_free(t);
		return;
	}
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		if (!th->pin_mask)
			continue;
		p->n++;
		if (sched_setaffinity(th->tid, sizeof(one), &one) < 0 &&
		    errno != ESRCH) {	/* ESRCH: it is exiting */
			bt_pin_release(t, 0);
			return;
		}
	}
}

void bt_pin_release(struct bt_target *t, int for_good)
{
	struct bt_pin *p = &t->pin;
	size_t i;

	if (for_good)
		p->never = 1;
	p->near = 0;
	if (!p->n)
		return;
	for (i = 0; i < t->nthreads; i++) {
		struct bt_thread *th = t->threads[i];

		/* one made while pinned has the pin too: the first's mask */
		if (th->state != BT_TH_GONE)
			sched_setaffinity(th->tid, sizeof(p->orig),
					  th->pin_mask ? th->pin_mask : &p->orig);
	}
	masks_free(t);
	sched_setaffinity(0, sizeof(p->self), &p->self);
	p->n = 0;
}

void bt_pin_stop(struct bt_target *t, uint64_t start_ns, uint64_t end_ns)
{
	struct bt_pin *p = &t->pin;
	uint64_t ran = end_ns - start_ns;
	uint64_t busy = p->last && start_ns > p->last ? start_ns - p->last : 0;
	int mode = p->mode;
	size_t n;

	p->last = end_ns;
	p->ran = p->ran - p->ran / 8 + ran / 8;
	p->busy = p->busy - p->busy / 8 + busy / 8;
	if (!p->ok || p->never || mode == PIN_OFF)
		return;
	n = bt_target_alive(t);
	if (p->n) {
		if (n != p->n || (mode == PIN_AUTO &&
				  (ran > PIN_QUIET ||
				   (n > 1 && 2 * p->busy < p->ran))))
			bt_pin_release(t, 0);
		return;
	}
	p->near = ran < PIN_NEAR ? p->near + 1 : 0;
	if (n && n <= PIN_THREADS &&
	    (mode == PIN_ALWAYS ||
	     (p->near >= PIN_BURST && (n == 1 || p->busy > p->ran))) &&
	    all_ok(t)) {
		pin(t);
		if (!p->n)
			p->near = 0;	/* not here: the next burst asks again */
	}
}
