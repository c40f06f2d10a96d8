// SPDX-License-Identifier: MIT
/*
 * The hardware backends behind backend.h: Intel PT (AUX snapshot) and BTS
 * (sample ring), one perf event per thread.  The program runs at full
 * speed under PTRACE_CONT; the CPU records its branches; at a stop each
 * thread's event is disabled and its ring copied out (perf_thread.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "backend/backend.h"
#include "btrace/doctor.h"
#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"
#include "tracer/tracer.h"

/*
 * Per target, for pt and bts alike: the event template and every thread's
 * state ever made.
 */
struct perf_target {
	int mode;			/* enum bt_perf_mode */
	struct perf_event_attr attr;
	size_t size;			/* bytes asked per thread */
	struct bt_perf_thread **threads;	/* freed at fini */
	size_t nthreads, cap;
	size_t untraced;		/* threads refused a ring */
};

static int pt_probe(char *why, size_t size)
{
	return bt_doctor_probe(BT_BACKEND_PT, why, size);
}

static int bts_probe(char *why, size_t size)
{
	return bt_doctor_probe(BT_BACKEND_BTS, why, size);
}

static int perf_init(struct bt_target *t, int mode)
{
	struct perf_target *perf = calloc(1, sizeof(*perf));
	int ret = 0;

	if (!perf)
		return bt_fail(bte_nomem, errno, "perf backend");
	perf->mode = mode;
	perf->size = t->opts.buffer_size ? t->opts.buffer_size :
					 BT_DEFAULT_BUFFER_SIZE;
	if (mode == BT_PERF_AUX)
		ret = bt_pt_attr_init(&perf->attr, BT_PT_PMU_DIR);
	else
		bt_bts_attr_init(&perf->attr);
	if (ret < 0) {
		free(perf);
		return ret;
	}
	t->bk = perf;
	return 0;
}

static int pt_init(struct bt_target *t)
{
	return perf_init(t, BT_PERF_AUX);
}

static int bts_init(struct bt_target *t)
{
	return perf_init(t, BT_PERF_SAMPLES);
}

static void perf_fini(struct bt_target *t)
{
	struct perf_target *perf = t->bk;
	size_t i;

	if (!perf)
		return;
	for (i = 0; i < perf->nthreads; i++) {
		bt_perf_thread_release(perf->threads[i]);
		free(perf->threads[i]);
	}
	free(perf->threads);
	free(perf);
	t->bk = NULL;
}

static int keep_thread(struct perf_target *perf, struct bt_perf_thread *p)
{
	struct bt_perf_thread **grown;

	if (perf->nthreads == perf->cap) {
		size_t cap = perf->cap ? 2 * perf->cap : 8;

		grown = realloc(perf->threads, cap * sizeof(*grown));
		if (!grown)
			return bt_fail(bte_nomem, errno, "perf threads");
		perf->threads = grown;
		perf->cap = cap;
	}
	perf->threads[perf->nthreads++] = p;
	return 0;
}

/*
 * Open the thread's event.  When the mlock limit shrinks its ring, the
 * target's buffer size drops to what was granted, for the front end to
 * report (bt_target_buffer_size()).
 */
static int perf_thread_start(struct bt_target *t, struct bt_thread *th)
{
	struct perf_target *perf = t->bk;
	struct perf_event_attr attr = perf->attr;
	struct bt_perf_thread *p = calloc(1, sizeof(*p));
	size_t granted = 0;
	int ret;

	if (!p)
		return bt_fail(bte_nomem, errno, "perf thread %d", th->tid);
	ret = bt_perf_thread_open(p, perf->mode, &attr, th->tid, perf->size,
				  &granted);
	if (ret == 0)
		ret = keep_thread(perf, p);
	if (ret < 0) {
		bt_perf_thread_release(p);
		free(p);
		/*
		 * The first thread decides whether tracing works at all; a
		 * later one refused a ring (the mlock allowance is shared by
		 * all threads) runs untraced rather than stopping the rest.
		 */
		if (perf->nthreads == 0 || (ret != -bte_perm && ret != -bte_nomem))
			return ret;
		perf->untraced++;
		return 0;
	}
	th->bk = p;
	if (granted < t->opts.buffer_size)
		t->opts.buffer_size = granted;
	return 0;
}

/* Gone or detached: keep its last trace, stop tracing it. */
static void perf_thread_end(struct bt_target *t, struct bt_thread *th)
{
	if (th->bk)
		bt_perf_thread_close(th->bk);
}

/* Enable the thread's event (after a capture), then let it go. */
static int perf_go(struct bt_thread *th, int request, const char *what,
		   int sig)
{
	int ret = 0;

	if (th->bk)
		ret = bt_perf_thread_ready(th->bk);
	if (ret < 0)
		return ret;
	if (ptrace(request, th->tid, 0, (long)sig) < 0)
		return bt_fail(errno == ESRCH ? bte_exited : bte_ptrace, errno,
			       "ptrace(%s, %d)", what, th->tid);
	return 0;
}

static int perf_resume(struct bt_target *t, struct bt_thread *th, int sig)
{
	return perf_go(th, PTRACE_CONT, "CONT", sig);
}

/* One instruction (stepping over a btrace breakpoint), traced too. */
static int perf_step(struct bt_target *t, struct bt_thread *th, int sig)
{
	return perf_go(th, PTRACE_SINGLESTEP, "SINGLESTEP", sig);
}

static int perf_capture(struct bt_target *t, struct bt_thread *th,
			struct bt_capture *cap)
{
	if (!th->bk)
		return bt_fail(bte_notrace, 0,
			       "thread %d: the kernel refused its perf ring "
			       "(mlock limit; see btrace doctor)", th->tid);
	return bt_perf_thread_capture(th->bk, cap);
}

const struct bt_backend_ops bt_backend_pt = {
	.name = "pt",
	.id = BT_BACKEND_PT,
	.probe = pt_probe,
	.init = pt_init,
	.fini = perf_fini,
	.thread_start = perf_thread_start,
	.thread_end = perf_thread_end,
	.resume = perf_resume,
	.step = perf_step,
	.capture = perf_capture,
};

const struct bt_backend_ops bt_backend_bts = {
	.name = "bts",
	.id = BT_BACKEND_BTS,
	.probe = bts_probe,
	.init = bts_init,
	.fini = perf_fini,
	.thread_start = perf_thread_start,
	.thread_end = perf_thread_end,
	.resume = perf_resume,
	.step = perf_step,
	.capture = perf_capture,
};
