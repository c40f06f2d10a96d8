/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_VIEW_H
#define BTRACE_CMD_VIEW_H

/*
 * One thread's trace made ready for print.c in the view asked for, the
 * same way in run, show, decode and the session: decoded (the last N
 * branches), cut into the call history (the last N segments of the whole
 * history), or listed instruction by instruction (those of the last N
 * branches, then the straight-line code up to where the thread stopped).
 */

#include "btrace/btrace.h"
#include "print.h"

struct view_src {
	const struct bt_capture *cap;
	struct bt_image *image;		/* code; required for PT */
	struct bt_symtab *symtab;	/* tells functions apart (calls) */
	const struct bt_history *full;	/* the whole history decoded already
					   (the session's), or NULL */
	uint64_t stop_pc;		/* where the thread is, 0: unknown */
};

struct view_thread {
	struct print_thread pt;		/* what print.c gets */
	struct bt_history *hist;	/* decoded here, or NULL */
	struct bt_calls *calls;
	struct view_src src;
	size_t last;
};

/*
 * Prepare @v (zeroed by the caller) for @view of the last @last (0: all)
 * of thread @tid from @src, which must outlive @v.  A failure to decode
 * is kept in v->pt.err, to be printed as such.
 * Returns 0, or -bte_nomem.
 */
int view_thread_init(struct view_thread *v, int view, pid_t tid,
		     const struct view_src *src, size_t last);
void view_thread_release(struct view_thread *v);

/*
 * A fault of the program's code its handler took (bt_target_fault(), or
 * a trace file's), made ready for print.c as print_report.fault: its
 * history from @f->cap in @view, the last @last, code and symbols as
 * @src has them.  @f must outlive @vf.  Returns 0 (a failure to decode
 * is kept in the thread's err).
 */
struct view_fault {
	struct view_thread v;
	struct print_fault pf;
	struct bt_stop stop;
};
int view_fault_init(struct view_fault *vf, int view, const struct bt_fault *f,
		    const struct view_src *src, size_t last);
void view_fault_release(struct view_fault *vf);

/*
 * The code image of live process @pid: its mappings now, and @read (the
 * process's memory) for what they do not cover.  NULL if out of memory.
 */
struct bt_image *view_image(pid_t pid, bt_image_read_fn read, void *ctx);

#endif /* BTRACE_CMD_VIEW_H */
