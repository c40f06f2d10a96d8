// SPDX-License-Identifier: MIT
/*
 * The live target: a process under bt_target (target.h), launched or
 * attached, traced by whichever backend it got.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "gdbserver.h"

#define XSAVE_MAX 16384

struct gs_live {
	struct bt_target *t;
	struct {
		uint64_t addr;
		int number;
	} *breaks;
	size_t nbreaks;
	uint8_t *xsave;		/* XSAVE_MAX bytes of scratch */
};

int gs_live_alloc(struct gs_live **out, struct bt_target *t)
{
	struct gs_live *l = calloc(1, sizeof(*l));

	if (!l)
		return -bte_nomem;
	l->xsave = malloc(XSAVE_MAX);
	if (!l->xsave) {
		free(l);
		return -bte_nomem;
	}
	l->t = t;
	*out = l;
	return 0;
}

void gs_live_free(struct gs_live *l)
{
	if (!l)
		return;
	free(l->breaks);
	free(l->xsave);
	free(l);
}

struct bt_target *gs_live_target(const struct gs_live *l)
{
	return l->t;
}

static pid_t live_pid(void *ctx)
{
	return bt_target_pid(((struct gs_live *)ctx)->t);
}

static int live_launched(void *ctx)
{
	return bt_target_launched(((struct gs_live *)ctx)->t);
}

/*
 * The threads GDB can look at: a thread past its exit, still running to
 * its end when the others stopped, has no registers to show.
 */
static size_t live_threads(void *ctx, pid_t *tids, size_t max)
{
	struct bt_target *t = ((struct gs_live *)ctx)->t;
	size_t n = bt_target_threads(t, tids, max), i, k = 0;
	uint64_t pc;

	if (n > max)
		return n;	/* the caller asks again with room */
	for (i = 0; i < n; i++)
		if (bt_target_thread_state(t, tids[i]) == BT_THREAD_RUNNING ||
		    bt_target_pc(t, tids[i], &pc) == 0)
			tids[k++] = tids[i];
	return k;
}

/* The upper halves of ymm from the XSAVE area; zero in their init state. */
static void ymm_get(struct gs_live *l, pid_t tid, struct gs_regs *r)
{
	size_t size = XSAVE_MAX;
	uint64_t bv;

	if (bt_target_get_regset(l->t, tid, NT_X86_XSTATE, l->xsave, &size) < 0 ||
	    size < GS_XSAVE_YMM_OFFSET + 256)
		return;
	r->have_ymm = 1;
	memcpy(&bv, l->xsave + GS_XSAVE_BV_OFFSET, 8);
	if (bv & GS_XSAVE_AVX_BIT)
		memcpy(r->ymmh, l->xsave + GS_XSAVE_YMM_OFFSET, 256);
}

static int live_get_regs(void *ctx, pid_t tid, struct gs_regs *r)
{
	struct gs_live *l = ctx;
	size_t size = sizeof(r->gp);
	int ret;

	memset(r, 0, sizeof(*r));
	ret = bt_target_get_regset(l->t, tid, NT_PRSTATUS, &r->gp, &size);
	if (ret < 0)
		return ret;
	size = sizeof(r->fp);
	r->have_fp = bt_target_get_regset(l->t, tid, NT_PRFPREG, &r->fp,
					  &size) == 0;
	ymm_get(l, tid, r);
	return 0;
}

static int ymm_set(struct gs_live *l, pid_t tid, const struct gs_regs *r)
{
	size_t size = XSAVE_MAX;
	uint64_t bv;
	int ret;

	ret = bt_target_get_regset(l->t, tid, NT_X86_XSTATE, l->xsave, &size);
	if (ret < 0)
		return ret;
	if (size < GS_XSAVE_YMM_OFFSET + 256)
		return -bte_nosys;
	memcpy(l->xsave + GS_XSAVE_YMM_OFFSET, r->ymmh, 256);
	memcpy(&bv, l->xsave + GS_XSAVE_BV_OFFSET, 8);
	bv |= GS_XSAVE_AVX_BIT;
	memcpy(l->xsave + GS_XSAVE_BV_OFFSET, &bv, 8);
	return bt_target_set_regset(l->t, tid, NT_X86_XSTATE, l->xsave, size);
}

static int live_set_regs(void *ctx, pid_t tid, const struct gs_regs *r,
			 const struct gs_regs *old)
{
	struct gs_live *l = ctx;
	int ret = 0;

	if (memcmp(&r->gp, &old->gp, sizeof(r->gp)))
		ret = bt_target_set_regset(l->t, tid, NT_PRSTATUS, &r->gp,
					   sizeof(r->gp));
	if (ret == 0 && memcmp(&r->fp, &old->fp, sizeof(r->fp)))
		ret = bt_target_set_regset(l->t, tid, NT_PRFPREG, &r->fp,
					   sizeof(r->fp));
	if (ret == 0 && r->have_ymm &&
	    memcmp(r->ymmh, old->ymmh, sizeof(r->ymmh)))
		ret = ymm_set(l, tid, r);
	return ret;
}

static ssize_t live_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return bt_target_read(((struct gs_live *)ctx)->t, addr, buf, len);
}

/*
 * Code and data change only while no thread runs (non-stop: the running
 * ones are paused around it, as gdbserver does).
 */
static ssize_t live_write(void *ctx, uint64_t addr, const void *buf,
			  size_t len)
{
	struct bt_target *t = ((struct gs_live *)ctx)->t;
	ssize_t n = bt_target_ns_pause(t);

	if (n == 0)
		n = bt_target_write(t, addr, buf, len);
	bt_target_ns_unpause(t);
	return n;
}

static int live_break_insert(void *ctx, uint64_t addr)
{
	struct gs_live *l = ctx;
	size_t i;
	int number;
	void *grown;

	for (i = 0; i < l->nbreaks; i++)
		if (l->breaks[i].addr == addr)
			return 0;
	grown = realloc(l->breaks, (l->nbreaks + 1) * sizeof(*l->breaks));
	if (!grown)
		return -bte_nomem;
	l->breaks = grown;
	number = bt_target_ns_pause(l->t);
	if (number == 0)
		number = bt_target_break_insert(l->t, addr);
	bt_target_ns_unpause(l->t);
	if (number < 0)
		return number;
	l->breaks[l->nbreaks].addr = addr;
	l->breaks[l->nbreaks].number = number;
	l->nbreaks++;
	return 0;
}

static int live_break_remove(void *ctx, uint64_t addr)
{
	struct gs_live *l = ctx;
	size_t i;
	int number, ret;

	for (i = 0; i < l->nbreaks; i++) {
		if (l->breaks[i].addr != addr)
			continue;
		number = l->breaks[i].number;
		l->breaks[i] = l->breaks[--l->nbreaks];
		ret = bt_target_ns_pause(l->t);
		if (ret == 0)
			ret = bt_target_break_remove(l->t, number);
		bt_target_ns_unpause(l->t);
		return ret;
	}
	return -bte_noent;
}

static int live_resume(void *ctx, const struct bt_resume *r, size_t n,
		       struct bt_stop *stop)
{
	return bt_target_resume(((struct gs_live *)ctx)->t, r, n, stop);
}

static void live_interrupt(void *ctx)
{
	bt_target_interrupt(((struct gs_live *)ctx)->t);
}

static void live_stop_signals(void *ctx, uint64_t mask)
{
	bt_target_stop_signals(((struct gs_live *)ctx)->t, mask);
}

static int live_kill(void *ctx)
{
	return bt_target_kill(((struct gs_live *)ctx)->t);
}

static int live_detach(void *ctx)
{
	struct gs_live *l = ctx;

	l->nbreaks = 0;		/* detach takes every int3 out */
	return bt_target_detach(l->t);
}

static int live_finish(void *ctx, int *wstatus)
{
	return bt_target_finish(((struct gs_live *)ctx)->t, wstatus);
}

/* A /proc file of the process, whole, appended to @out. */
static int proc_file(struct gs_live *l, const char *name, struct gs_buf *out)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)bt_target_pid(l->t),
		 name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -bte_noent;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		gs_buf_add(out, buf, (size_t)n);
	close(fd);
	return n < 0 ? -bte_io : 0;
}

static int live_siginfo(void *ctx, pid_t tid, struct gs_buf *out)
{
	siginfo_t si;

	if (bt_target_siginfo(((struct gs_live *)ctx)->t, tid, &si) < 0)
		return -1;
	gs_buf_add(out, &si, sizeof(si));
	return 0;
}

static int live_auxv(void *ctx, struct gs_buf *out)
{
	return proc_file(ctx, "auxv", out);
}

static int live_exe(void *ctx, struct gs_buf *out)
{
	struct gs_live *l = ctx;
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)bt_target_pid(l->t));
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -bte_noent;
	gs_buf_add(out, exe, (size_t)n);
	return 0;
}

static int live_thread_name(void *ctx, pid_t tid, struct gs_buf *out)
{
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "task/%d/comm", (int)tid);
	ret = proc_file(ctx, name, out);
	if (ret == 0 && out->len && out->data[out->len - 1] == '\n')
		out->data[--out->len] = '\0';
	return ret;
}

static int live_trace_formats(void *ctx)
{
	switch (bt_target_backend(((struct gs_live *)ctx)->t)) {
	case BT_BACKEND_PT:
		return GS_BT_PT;
	default:
		return GS_BT_BTS;
	}
}

static int live_trace_read(void *ctx, pid_t tid, uint64_t *pos,
			   struct bt_capture *cap)
{
	struct gs_live *l = ctx;

	if (pos)
		return bt_target_capture_since(l->t, tid, pos, cap);
	return bt_target_capture(l->t, tid, cap);
}

static size_t live_trace_size(void *ctx)
{
	return bt_target_buffer_size(((struct gs_live *)ctx)->t);
}

static int live_save(void *ctx, const struct bt_stop *stop, const char *path)
{
	return bt_trace_save(((struct gs_live *)ctx)->t, stop, path);
}

static int live_ns_resume(void *ctx, const struct bt_resume *r, size_t n)
{
	return bt_target_ns_resume(((struct gs_live *)ctx)->t, r, n);
}

static int live_ns_stop(void *ctx, pid_t tid)
{
	return bt_target_ns_stop(((struct gs_live *)ctx)->t, tid);
}

static int live_ns_poll(void *ctx, struct bt_stop *stop)
{
	return bt_target_ns_poll(((struct gs_live *)ctx)->t, stop);
}

static int live_ns_pause(void *ctx)
{
	return bt_target_ns_pause(((struct gs_live *)ctx)->t);
}

static int live_ns_unpause(void *ctx)
{
	return bt_target_ns_unpause(((struct gs_live *)ctx)->t);
}

static int live_thread_state(void *ctx, pid_t tid)
{
	return bt_target_thread_state(((struct gs_live *)ctx)->t, tid);
}

const struct gs_target_ops gs_live_ops = {
	.pid = live_pid,
	.launched = live_launched,
	.threads = live_threads,
	.get_regs = live_get_regs,
	.set_regs = live_set_regs,
	.read = live_read,
	.write = live_write,
	.break_insert = live_break_insert,
	.break_remove = live_break_remove,
	.resume = live_resume,
	.interrupt = live_interrupt,
	.stop_signals = live_stop_signals,
	.kill = live_kill,
	.detach = live_detach,
	.finish = live_finish,
	.auxv = live_auxv,
	.siginfo = live_siginfo,
	.exe = live_exe,
	.thread_name = live_thread_name,
	.trace_formats = live_trace_formats,
	.trace_read = live_trace_read,
	.trace_size = live_trace_size,
	.save = live_save,
	.ns_resume = live_ns_resume,
	.ns_stop = live_ns_stop,
	.ns_poll = live_ns_poll,
	.ns_pause = live_ns_pause,
	.ns_unpause = live_ns_unpause,
	.thread_state = live_thread_state,
};
