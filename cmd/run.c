// SPDX-License-Identifier: MIT
/*
 * btrace run: launch a program under branch tracing; when it stops (a
 * fatal signal, its exit, Ctrl-C) show the last branches of the thread
 * that stopped, then let it meet the fate it would have had without
 * btrace.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "opts.h"
#include "print.h"
#include "run_trace.h"
#include "save.h"
#include "session.h"
#include "signals.h"
#include "timeline.h"
#include "view.h"

static const char run_about[] =
	"Run PROGRAM under branch tracing.  When it stops (a fatal signal, its\n"
	"exit, or Ctrl-C) show the last N taken branches of the thread that\n"
	"stopped (or, with --calls, its call history; with --insn, its\n"
	"instructions), then let it go on to its fate: btrace exits with its\n"
	"status, or 128+signal when a signal killed it.  With -o FILE the\n"
	"report goes there and the program keeps standard output.  With -i\n"
	"(or -ex, --batch, --break) the session of btrace attach opens at\n"
	"the stop.";

static const struct cmd_desc run_desc = {
	.name = "run",
	.id = CMD_RUN,
	.usage = "run [options] [--] PROGRAM [ARGS...]",
	.about = run_about,
	.in_order = 1,
	.min_args = 1,
	.max_args = -1,
	.missing = "no program to run",
};

/*
 * For the handler of the signals that would end btrace (signals.h): the
 * target being traced, or, once it is let go, the pid that a further
 * Ctrl-C is passed on to.
 */
static struct bt_target *volatile running;
static volatile pid_t let_go;
static volatile sig_atomic_t terminated;

static void on_interrupt(int sig)
{
	struct bt_target *t = running;

	if (sig != SIGINT)
		terminated = sig;
	if (t)
		bt_target_interrupt(t);
	else if (let_go > 0 && sig == SIGINT)
		kill(let_go, SIGINT);
}

void cmd_launch_why(const char *prog, int backend, int err, char *why,
		    size_t len)
{
	char probe[512];

	switch (-err) {
	case bte_noent:
		snprintf(why, len, "cannot run '%s': program not found", prog);
		break;
	case bte_perm:
		snprintf(why, len, "cannot run '%s': not executable (permission "
			 "denied)", prog);
		break;
	case bte_format:
		snprintf(why, len, "cannot run '%s': not an ELF executable", prog);
		break;
	case bte_nosys:
		probe[0] = '\0';
		bt_backend_probe(backend, probe, sizeof(probe));
		snprintf(why, len, "backend '%s' is not available here%s%s",
			 bt_backend_name(backend), probe[0] ? ": " : "", probe);
		break;
	default:
		snprintf(why, len, "cannot run '%s': %s%s%s", prog,
			 bt_errstr(err), bt_errdetail()[0] ? " in " : "",
			 bt_errdetail());
	}
}

int cmd_launch_error(const char *prog, int backend, int err)
{
	char why[1024];

	cmd_launch_why(prog, backend, err, why, sizeof(why));
	fprintf(stderr, "btrace: %s\n", why);
	return EXIT_FAIL;
}

/* perf rings count against the mlock limit: say when the kernel gave less. */
static void say_buffer(const struct bt_target *t, size_t asked)
{
	size_t got = bt_target_buffer_size(t);

	if (!asked)
		asked = BT_DEFAULT_BUFFER_SIZE;
	if (got && got < asked)
		fprintf(stderr, "btrace: the kernel granted %zu KiB of trace "
			"buffer per thread, not %zu KiB (mlock limit; see btrace "
			"doctor)\n", got >> 10, asked >> 10);
}

/* Memory of the stopped thread's process: a followed child's is its own. */
struct read_ctx {
	struct bt_target *t;
	pid_t tid;
};

static ssize_t read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct read_ctx *c = ctx;

	return bt_target_read_thread(c->t, c->tid, addr, buf, len);
}

/*
 * Capture, decode and print the stopped thread's trace.  Runs while the
 * process still exists: symbols, the vDSO and code bytes are read from it.
 */
static void report(struct bt_target *t, const struct bt_stop *stop,
		   const struct cmd_opts *o, FILE *out)
{
	struct read_ctx rc = { .t = t, .tid = stop->tid };
	struct print_ctx pc = { .read = read_target, .read_ctx = &rc };
	struct print_report r = { .view = o->view,
				  .backend = bt_target_backend_name(t),
				  .pid = bt_target_thread_pid(t, stop->tid),
				  .root = bt_target_pid(t), .stop = stop,
				  .nthreads = 1 };
	struct bt_capture cap = { 0 };
	struct view_thread v = { 0 };
	struct view_src src = { .cap = &cap, .stop_pc = stop->pc };
	struct view_fault vf;
	struct bt_fault f;
	struct bt_stats stats;
	int ret, fault;

	if (!r.pid)
		r.pid = r.root;
	if (bt_symtab_from_pid_opts(&pc.symtab, r.pid, debuginfo_opts()) < 0)
		pc.symtab = NULL;	/* gone already: addresses only */
	if (bt_disasm_alloc(&pc.dis) < 0)
		pc.dis = NULL;
	src.image = view_image(r.pid, read_target, &rc);
	src.symtab = pc.symtab;
	ret = bt_target_capture(t, stop->tid, &cap);
	if (ret == 0)
		ret = view_thread_init(&v, o->view, stop->tid, &src, o->last);
	v.pt.tid = stop->tid;
	if (ret < 0)
		v.pt.err = ret;
	r.threads = &v.pt;
	/* a fault its handler took before: where the crash began */
	fault = bt_target_fault(t, stop->tid, &f) == 1;
	if (fault) {
		view_fault_init(&vf, o->view, &f, &src, o->last);
		r.fault = &vf.pf;
	}
	bt_target_stats(t, &stats);
	r.stats = &stats;
	pc.color = !o->json && print_want_color(out, o->no_color);
	pc.time = o->time;
	print_report(out, &r, &pc, o->json);
	fflush(out);
	if (fault) {
		view_fault_release(&vf);
		bt_fault_release(&f);
	}
	view_thread_release(&v);
	bt_image_free(src.image);
	bt_disasm_free(pc.dis);
	bt_symtab_free(pc.symtab);
	bt_capture_release(&cap);
}

/* The status a shell would report for @wstatus. */
static int shell_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	return EXIT_FAIL;
}

/* --until: its breakpoint is the stop to show. */
static const char *until;

static int wait_for_stop(struct bt_target *t, struct bt_stop *stop)
{
	int ret;

	do {
		memset(stop, 0, sizeof(*stop));
		ret = bt_target_cont(t, stop);
	} while (ret == 0 && stop->reason == BT_STOP_BREAK && !until);
	return ret;
}

static int run_traced(struct bt_target *t, const struct cmd_opts *o,
		      FILE *out)
{
	struct bt_stop stop;
	int ret, wstatus = 0;

	ret = wait_for_stop(t, &stop);
	if (ret < 0) {
		fprintf(stderr, "btrace: tracing %d failed: %s%s%s\n",
			bt_target_pid(t), bt_errstr(ret),
			bt_errdetail()[0] ? " in " : "", bt_errdetail());
		bt_target_kill(t);
		return EXIT_FAIL;
	}
	if (o->save)
		save_trace(t, &stop, o->save);
	if (o->save_dir)
		save_on_crash(t, &stop, o->save_dir);
	timeline_write_target(t, &stop, NULL,
			      &(struct timeline_out){ o->timeline, o->svg,
						      o->last,
						      o->timeline_counts });
	report(t, &stop, o, out);
	if (terminated) {
		bt_target_kill(t);
		return 128 + terminated;
	}
	/*
	 * Ctrl-C reached btrace but not the program (not in the terminal's
	 * foreground group, or btrace got the SIGINT alone): the program
	 * gets it now, as it would have without btrace.
	 */
	if (stop.reason == BT_STOP_INTERRUPT && !stop.signal)
		kill(bt_target_pid(t), SIGINT);
	let_go = bt_target_pid(t);
	running = NULL;
	ret = bt_target_finish(t, &wstatus);
	if (ret < 0) {
		fprintf(stderr, "btrace: cannot let %d go on: %s\n",
			bt_target_pid(t), bt_errstr(ret));
		bt_target_kill(t);
		return EXIT_FAIL;
	}
	return shell_status(wstatus);
}

int cmd_run(int argc, char **argv)
{
	struct bt_target_opts topts = { .size = sizeof(topts) };
	struct bt_target *t = NULL;
	struct cmd_opts o = { 0 };
	FILE *out;
	int ret;

	ret = cmd_opts_parse(&run_desc, argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (o.nex || o.batch || o.nbreaks)
		o.interactive = 1;
	topts.backend = o.backend;
	topts.buffer_size = o.buffer_size;
	run_trace_apply(&o.trace, &topts);
	until = topts.until_sym;
	/* Before the program runs: a report with nowhere to go is no run. */
	out = cmd_opts_open(&o);
	if (!out)
		return EXIT_FAIL;
	ret = bt_target_launch(&t, &topts, o.args);
	if (ret < 0) {
		cmd_opts_close(&o, out);
		return cmd_launch_error(o.args[0], o.backend, ret);
	}
	if (o.backend == BT_BACKEND_AUTO)
		run_trace_say_backend(t, &o.trace);
	say_buffer(t, o.buffer_size);
	/*
	 * Signals caught from here on: ignored or caught before the launch,
	 * the program would have inherited them (a launch's EXITKILL ends it
	 * if btrace dies meanwhile).
	 */
	if (o.interactive) {
		struct bt_session_opts so = { .o = &o, .out = out,
					      .cont_first = 1 };

		bt_session_signals();
		ret = bt_session_main(t, &so);
	} else {
		running = t;
		cmd_catch_signals(on_interrupt);
		ret = run_traced(t, &o, out);
		running = NULL;
		bt_target_free(t);
	}
	if (cmd_opts_close(&o, out) < 0 && !ret)
		ret = EXIT_FAIL;
	return ret;
}
