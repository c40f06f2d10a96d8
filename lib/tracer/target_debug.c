// SPDX-License-Identifier: MIT
/*
 * What a debugger needs of a target beyond watching it (target.h, "For
 * debuggers"): register sets, memory writes that keep btrace's int3s, and
 * a thread's trace from a position.  bt_target_resume() lives in loop.c
 * with the stop loop it shares.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/ring.h"
#include "btrace/target.h"
#include "backend/backend.h"
#include "internal.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

static int regset_err(pid_t tid, int type, int e)
{
	if (e == EINVAL || e == ENODEV || e == EIO)
		return bt_fail(bte_nosys, e, "ptrace(GETREGSET, %d, %#x)", tid,
			       type);
	return bt_fail(e == ESRCH ? bte_exited : bte_ptrace, e,
		       "ptrace(REGSET, %d, %#x)", tid, type);
}

int bt_target_get_regset(struct bt_target *t, pid_t tid, int type, void *buf,
			 size_t *size)
{
	struct bt_thread *th;
	struct iovec iov;
	int ret;

	if (!buf || !size)
		return bt_fail(bte_invalid, 0, "bt_target_get_regset(NULL)");
	ret = bt_stopped_thread(t, tid, &th);
	if (ret < 0)
		return ret;
	iov.iov_base = buf;
	iov.iov_len = *size;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)type, &iov) < 0)
		return regset_err(tid, type, errno);
	*size = iov.iov_len;
	return 0;
}

int bt_target_set_regset(struct bt_target *t, pid_t tid, int type,
			 const void *buf, size_t size)
{
	struct user_regs_struct old, now;
	struct bt_thread *th;
	struct iovec iov;
	int ret;

	if (!buf)
		return bt_fail(bte_invalid, 0, "bt_target_set_regset(NULL)");
	ret = bt_stopped_thread(t, tid, &th);
	if (ret < 0)
		return ret;
	if (type == NT_PRSTATUS) {
		if (size < sizeof(now))
			return bt_fail(bte_invalid, 0, "short register set");
		ret = bt_thread_regs(th, &old);
		if (ret < 0)
			return ret;
	}
	iov.iov_base = (void *)buf;
	iov.iov_len = size;
	if (ptrace(PTRACE_SETREGSET, tid, (void *)(long)type, &iov) < 0)
		return regset_err(tid, type, errno);
	if (type != NT_PRSTATUS)
		return 0;
	memcpy(&now, buf, sizeof(now));
	if (now.rip == old.rip)
		return 0;
	/* No longer at the breakpoint it stopped at: nothing to step over. */
	if (th->at_break != now.rip)
		th->at_break = 0;
	if (t->ops->moved)
		t->ops->moved(t, th, old.rip, now.rip);
	return 0;
}

int bt_target_siginfo(struct bt_target *t, pid_t tid, siginfo_t *si)
{
	struct bt_thread *th;
	int ret;

	if (!si)
		return bt_fail(bte_invalid, 0, "bt_target_siginfo(NULL)");
	ret = bt_stopped_thread(t, tid, &th);
	if (ret < 0)
		return ret;
	if (!th->sig)
		return bt_fail(bte_noent, 0, "thread %d holds no signal", tid);
	*si = th->si;
	return 0;
}

ssize_t bt_target_write(struct bt_target *t, uint64_t addr, const void *buf,
			size_t len)
{
	struct bt_thread *th;
	struct bt_aspace *as;
	uint8_t *copy;
	ssize_t n;

	if (!t || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_target_write(NULL)");
	if (!len)
		return 0;
	th = bt_thread_stopped(t);
	if (!th || !t->traced || t->gone)
		return bt_fail(bte_exited, 0, "process %d is not stopped", t->pid);
	as = bt_target_aspace(t, th->tgid);
	if (!as)
		return -bte_nomem;
	copy = malloc(len);
	if (!copy)
		return bt_fail(bte_nomem, errno, "write");
	memcpy(copy, buf, len);
	if (t->ops->write)
		t->ops->write(t, addr, copy, len);
	/* btrace's int3s stay in over the new bytes; their originals change. */
	n = bt_aspace_write(as, addr, copy, len);
	free(copy);
	return n;
}

int bt_target_capture_since(struct bt_target *t, pid_t tid, uint64_t *pos,
			    struct bt_capture *cap)
{
	struct bt_ring_view view;
	struct bt_thread *th;
	int ret, lost = 0;

	if (!t || !pos)
		return bt_fail(bte_invalid, 0, "bt_target_capture_since(NULL)");
	if (cap)
		memset(cap, 0, sizeof(*cap));
	th = bt_thread_find_any(t, tid);	/* a thread gone keeps its ring */
	if (!th)
		return bt_fail(bte_noent, 0, "no thread %d", tid);
	if (t->ops->capture && !t->ops->sync)
		return bt_fail(bte_nosys, 0, "the %s backend's trace has no positions",
			       t->ops->name);
	/* one running (non-stop) has its ring as of its last stop */
	if (t->ops->sync && th->state != BT_TH_RUNNING)
		t->ops->sync(t, th);
	bt_thread_settle(t, th);
	bt_ring_view_init(&view, th->ring);
	if (!cap) {
		*pos = view.head;
		return 0;
	}
	if (*pos > view.head)
		return bt_fail(bte_invalid, 0, "position %llu is ahead of the trace",
			       (unsigned long long)*pos);
	if (*pos < view.tail)
		lost = *pos != 0;
	else
		view.tail = *pos;
	ret = bt_thread_ring_capture(th, &view, cap);
	if (ret < 0)
		return ret;
	*pos = view.head;
	return lost;
}

int bt_target_launched(const struct bt_target *t)
{
	return t ? t->launched : 0;
}
