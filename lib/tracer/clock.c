// SPDX-License-Identifier: MIT
/*
 * The tracer's clock in a thread's history (tracer.h): CLOCK_MONOTONIC
 * read when a stop is seen (event.c), written into the thread's ring as
 * BT_REC_TIME records by the backends that stop the thread along its way
 * (the fast mode and step mode), so that the decoder can give every
 * branch a time.
 *
 * A record at every stop would take as much ring as the branches: a
 * stop's time is written only where the thread ran (or was blocked) for
 * at least CLOCK_GRAIN since the last record; a stop skipped is kept
 * owed, and written at the next stop (before its branches) if the thread
 * then ran that long since it, so that time blocked between two stops
 * shows between them, not spread over the stops before.
 */
#include <time.h>
#include <x86intrin.h>

#include "btrace/ring.h"
#include "tracer/tracer.h"

#define CLOCK_GRAIN	20000		/* ns */

uint64_t bt_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bt_thread_time_put(struct bt_thread *th, uint64_t ns, uint32_t ninsn,
		       uint32_t flags)
{
	struct bt_rec_time rec = { .ns = ns, .ninsn = ninsn, .flags = flags };

	if (!th->ring)
		return 0;
	return bt_thread_put(th, BT_REC_TIME, &rec.ns,
			     sizeof(rec) - sizeof(rec.hdr));
}

void bt_thread_time_seen(struct bt_thread *th, uint64_t ns)
{
	th->time_ns = ns;
	th->owed_ns = 0;
}

int bt_thread_time(struct bt_thread *th, uint64_t ns, uint32_t ninsn,
		   uint32_t flags)
{
	if (!th->ring)
		return 0;
	bt_thread_time_seen(th, ns);
	return bt_thread_time_put(th, ns, ninsn, flags);
}

void bt_thread_time_owed(struct bt_thread *th, uint32_t ninsn)
{
	bt_thread_time_owed_every(th, ninsn, CLOCK_GRAIN);
}

void bt_thread_time_stop(struct bt_thread *th, uint32_t ninsn)
{
	bt_thread_time_stop_every(th, ninsn, CLOCK_GRAIN);
}

void bt_thread_time_owed_every(struct bt_thread *th, uint32_t ninsn,
			       uint64_t grain)
{
	if (th->owed_ns && th->stop_ns >= th->owed_ns + grain)
		bt_thread_time(th, th->owed_ns, ninsn, 0);
}

void bt_thread_time_stop_every(struct bt_thread *th, uint32_t ninsn,
			       uint64_t grain)
{
	if (!th->stop_ns || th->stop_ns <= th->time_ns ||
	    th->stop_ns == th->owed_ns)
		return;
	if (th->stop_ns >= th->time_ns + grain)
		bt_thread_time(th, th->stop_ns, ninsn, 0);
	else
		th->owed_ns = th->stop_ns;
}

void bt_clock_tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = ~0ull;
	int i;

	/* The read with the least TSC time around it pins CLOCK_MONOTONIC. */
	for (i = 0; i < 5; i++) {
		uint64_t a = __rdtsc(), m = bt_clock_ns(), b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = m;
		}
	}
}
