// SPDX-License-Identifier: MIT
/*
 * btrace run: launch a program under branch tracing; when it stops (a
 * fatal signal, its exit, Ctrl-C) show the last branches of the thread
 * that stopped, then let it meet the fate it would have had without
 * btrace.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "run_trace.h"
#include "print.h"
#include "save.h"
#include "session.h"

#define RUN_DEFAULT_LAST 32
#define RUN_MIN_BUFFER 4096u
#define RUN_MAX_BUFFER (1u << 30)

struct run_opts {
	size_t last;
	int json;
	int no_color;
	int backend;
	size_t buffer_size;
	struct run_trace trace;
	const char *save;	/* --save FILE */
	const char *save_dir;	/* --save-on-crash DIR */
	int interactive;	/* -i: the session at the stop */
};

static const char run_usage[] =
	"usage: btrace run [--last N] [--json] [--backend auto|pt|bts|soft]\n"
	"                  [--buffer-size SIZE] [--no-color] [--save FILE]\n"
	"                  [--save-on-crash DIR] [--soft-mode record|fast|step]\n"
	"                  [--only GLOB] [--exclude GLOB] [--from SYM] [--until SYM]\n"
	"                  [-i] -- PROGRAM [ARGS...]\n";

static const char run_help[] =
	"Run PROGRAM under branch tracing.  When it stops (a fatal signal, its\n"
	"exit, or Ctrl-C) show the last N taken branches of the thread that\n"
	"stopped, then let it go on to its fate: btrace exits with its status,\n"
	"or 128+signal when a signal killed it.\n\n"
	"  -n, --last N           branches to show (default 32)\n"
	"  -j, --json             one JSON document instead of text\n"
	"  -b, --backend NAME     auto (default), pt, bts or soft\n"
	"  -s, --buffer-size SIZE per-thread trace buffer, a power of two\n"
	"                         (suffixes K, M, G; default 1M)\n"
	"      --no-color         no colours, even on a terminal\n"
	RUN_TRACE_HELP
	"      --save FILE        save the trace to FILE at the stop (btrace show)\n"
	"      --save-on-crash DIR  only if it dies of a signal: save the trace\n"
	"                         to DIR/btrace-PROGRAM-PID.trace\n"
	"  -i, --interactive      at the stop, open the session of btrace attach\n"
	"                         (last, calls, continue, break...; quit kills)\n"
	"  -h, --help             this help\n";

/*
 * For the SIGINT/SIGTERM/SIGHUP handler: the target being traced, or,
 * once it is let go, the pid that a further Ctrl-C is passed on to.
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

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("btrace run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see 'btrace run --help'\n", stderr);
	return EXIT_USAGE;
}

/* "64K", "1M", "4096": a power of two in range, or 0. */
static size_t parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v > RUN_MAX_BUFFER)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v < RUN_MIN_BUFFER || v > RUN_MAX_BUFFER || (v & (v - 1)))
		return 0;
	return v;
}

/* Returns -1 to go on, or the exit status (0 for --help). */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_NO_COLOR = 256, OPT_SAVE, OPT_SAVE_CRASH };	/* run_trace: 512 up */
	static const struct option longopts[] = {
		{ "last", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "backend", required_argument, NULL, 'b' },
		{ "buffer-size", required_argument, NULL, 's' },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "save-on-crash", required_argument, NULL, OPT_SAVE_CRASH },
		{ "no-color", no_argument, NULL, OPT_NO_COLOR },
		{ "no-colour", no_argument, NULL, OPT_NO_COLOR },
		{ "interactive", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		RUN_TRACE_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	memset(o, 0, sizeof(*o));
	o->last = RUN_DEFAULT_LAST;
	o->backend = BT_BACKEND_AUTO;
	opterr = 0;
	optind = 1;
	/* "+": stop at PROGRAM, its own options are its own. */
	while ((c = getopt_long(argc, argv, "+n:jb:s:hi", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->last = cmd_parse_count(optarg, CMD_MAX_LAST);
			if (!o->last)
				return usage_error("--last wants a number from 1 to 10000000, not '%s'",
						   optarg);
			break;
		case 'j':
			o->json = 1;
			break;
		case 'b':
			o->backend = bt_backend_parse(optarg);
			if (o->backend < 0)
				return usage_error("unknown backend '%s' (auto, pt, bts or soft)",
						   optarg);
			break;
		case 's':
			o->buffer_size = parse_size(optarg);
			if (!o->buffer_size)
				return usage_error("--buffer-size wants a power of two from 4K to 1G, not '%s'",
						   optarg);
			break;
		case OPT_SAVE:
			o->save = optarg;
			break;
		case OPT_SAVE_CRASH:
			o->save_dir = optarg;
			break;
		case OPT_NO_COLOR:
			o->no_color = 1;
			break;
		case 'i':
			o->interactive = 1;
			break;
		case OPT_TRACE_FIRST ... OPT_TRACE_LAST:
			r = run_trace_option(&o->trace, c, optarg);
			if (r)
				return r;
			break;
		case 'h':
			fputs(run_usage, stdout);
			fputs("\n", stdout);
			fputs(run_help, stdout);
			return 0;
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no program to run");
	return -1;
}

int cmd_launch_error(const char *prog, int backend, int err)
{
	char why[512];

	switch (-err) {
	case bte_noent:
		fprintf(stderr, "btrace: cannot run '%s': program not found\n",
			prog);
		break;
	case bte_perm:
		fprintf(stderr, "btrace: cannot run '%s': not executable (permission denied)\n",
			prog);
		break;
	case bte_format:
		fprintf(stderr, "btrace: cannot run '%s': not an ELF executable\n",
			prog);
		break;
	case bte_nosys:
		why[0] = '\0';
		bt_backend_probe(backend, why, sizeof(why));
		fprintf(stderr, "btrace: backend '%s' is not available here%s%s\n",
			bt_backend_name(backend), why[0] ? ": " : "", why);
		break;
	default:
		fprintf(stderr, "btrace: cannot run '%s': %s%s%s\n", prog,
			bt_errstr(err), bt_errdetail()[0] ? " in " : "",
			bt_errdetail());
	}
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

static ssize_t read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return bt_target_read(ctx, addr, buf, len);
}

/*
 * Capture, decode and print the stopped thread's last branches.  Runs
 * while the process still exists: symbols, the vDSO and code bytes are
 * read from it.
 */
static int report(struct bt_target *t, const struct bt_stop *stop,
		  const struct run_opts *o)
{
	struct bt_decode_opts dopts = { .size = sizeof(dopts),
					.last = o->last };
	struct print_ctx pc = { .read = read_target, .read_ctx = t };
	struct bt_capture cap = { 0 };
	struct bt_history *hist = NULL;
	struct print_thread th = { .tid = stop->tid };
	struct print_report r = { .backend = bt_target_backend_name(t),
				  .pid = bt_target_pid(t), .stop = stop,
				  .threads = &th, .nthreads = 1 };
	struct bt_stats stats;
	int ret;

	ret = bt_target_capture(t, stop->tid, &cap);
	if (ret == 0)
		ret = bt_decode(&cap, &dopts, &hist);
	if (ret < 0)
		fprintf(stderr, "btrace: no trace of thread %d: %s\n",
			stop->tid, bt_errstr(ret));
	th.hist = hist;
	if (bt_symtab_from_pid(&pc.symtab, r.pid) < 0)
		pc.symtab = NULL;	/* gone already: addresses only */
	if (bt_disasm_alloc(&pc.dis) < 0)
		pc.dis = NULL;
	bt_target_stats(t, &stats);
	r.stats = &stats;
	pc.color = !o->json && print_want_color(stdout, o->no_color);
	if (o->json)
		print_report_json(stdout, &r, &pc);
	else
		print_report_text(stdout, &r, &pc);
	fflush(stdout);
	bt_disasm_free(pc.dis);
	bt_symtab_free(pc.symtab);
	bt_history_free(hist);
	bt_capture_release(&cap);
	return ret;
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

static int run_traced(struct bt_target *t, const struct run_opts *o)
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
	report(t, &stop, o);
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
	struct sigaction sa = { .sa_handler = on_interrupt };
	struct bt_target *t = NULL;
	struct run_opts o;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	topts.backend = o.backend;
	topts.buffer_size = o.buffer_size;
	run_trace_apply(&o.trace, &topts);
	until = topts.until_sym;
	if (o.interactive)
		bt_session_signals();
	ret = bt_target_launch(&t, &topts, argv + optind);
	if (ret < 0)
		return cmd_launch_error(argv[optind], o.backend, ret);
	if (o.interactive) {
		struct bt_session_opts so = { .cont_first = 1, .last = o.last };

		return bt_session_main(t, &so);
	}

	if (o.backend == BT_BACKEND_AUTO)
		run_trace_say_backend(t);
	say_buffer(t, o.buffer_size);
	running = t;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = run_traced(t, &o);
	running = NULL;
	bt_target_free(t);
	return ret;
}
