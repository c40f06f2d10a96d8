// SPDX-License-Identifier: MIT
/*
 * The stop loop's pieces (lib/tracer/event.c, resume.c) on real child
 * processes: the one restart of a stopped thread, and wait statuses
 * turned into events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* A child stopped under ptrace; once resumed it exits with status 3. */
static pid_t child_start(void)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status));
	return pid;
}

static void restart_cont(void **state)
{
	struct bt_thread th = { .tid = child_start() };
	int status;

	assert_int_equal(bt_thread_restart(&th, PTRACE_CONT, 0), 0);
	assert_int_equal(waitpid(th.tid, &status, 0), th.tid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);

	/* gone: ESRCH, the thread's end was waitpid's to report */
	assert_int_equal(bt_thread_restart(&th, PTRACE_CONT, 0), -bte_exited);
	assert_int_equal(bt_errno(), ESRCH);
}

/* The signal given is delivered as the thread goes on. */
static void restart_signal(void **state)
{
	struct bt_thread th = { .tid = child_start() };
	int status;

	assert_int_equal(bt_thread_restart(&th, PTRACE_CONT, SIGTERM), 0);
	assert_int_equal(waitpid(th.tid, &status, 0), th.tid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
}

/* Statuses that stop nothing: a reaped stranger, a continued thread. */
static void event_read_nothing(void **state)
{
	static const struct bt_target_opts opts = {
		.size = sizeof(struct bt_target_opts),
		.backend = BT_BACKEND_SOFT,
		.soft_mode = BT_SOFT_STEP,
	};
	char *argv[] = { "/bin/true", NULL };
	struct bt_target *t;
	struct bt_stop stop;
	struct bt_event ev;
	uint64_t stops;

	assert_int_equal(bt_target_launch(&t, &opts, argv), 0);
	stops = t->stats.stops;
	memset(&stop, 0, sizeof(stop));

	assert_int_equal(bt_event_read(t, 999999, 3 << 8, &ev), 0);
	assert_int_equal(ev.kind, BT_EV_REAPED);
	assert_null(ev.th);
	assert_int_equal(bt_event_dispatch(t, &ev, &stop), BT_OUT_HOLD);

	assert_int_equal(bt_event_read(t, bt_target_pid(t), 0xffff, &ev), 0);
	assert_int_equal(ev.kind, BT_EV_NONE);
	assert_int_equal(bt_event_dispatch(t, &ev, &stop), BT_OUT_HOLD);
	assert_int_equal(stop.reason, 0);
	assert_true(t->stats.stops == stops);	/* no stop counted */

	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
}

/* The target's own run: its exit is one event reported, with status. */
static void event_exit_reported(void **state)
{
	static const struct bt_target_opts opts = {
		.size = sizeof(struct bt_target_opts),
		.backend = BT_BACKEND_SOFT,
		.soft_mode = BT_SOFT_STEP,
	};
	char *argv[] = { "build/targets/exit_status", NULL };
	struct bt_target *t;
	struct bt_stop stop;

	assert_int_equal(bt_target_launch(&t, &opts, argv), 0);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_EXIT);
	assert_int_equal(stop.status, 3);
	bt_target_free(t);
}

/*
 * Signals btrace took while it stepped a thread, sent again: a standard
 * one once however often it came, a real-time one as often as it came,
 * each with its value, in order (a child that blocks them counts what it
 * finds pending).
 */
static void resend_realtime_each(void **state)
{
	int ready[2], sent[2], status;
	const int rt = SIGRTMIN + 1;
	struct bt_resend r;
	siginfo_t si;
	sigset_t set;
	pid_t pid;
	char c;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(sent), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, rt);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const struct timespec none = { 0, 0 };
		int want[][2] = { { SIGUSR1, -1 }, { rt, 1 }, { rt, 2 } };
		int n = 0;

		sigprocmask(SIG_BLOCK, &set, NULL);
		if (write(ready[1], "r", 1) != 1 || read(sent[0], &c, 1) != 1)
			_exit(10);
		while (sigtimedwait(&set, &si, &none) > 0) {
			if (n == 3 || si.si_signo != want[n][0] ||
			    (want[n][1] >= 0 &&
			     si.si_value.sival_int != want[n][1]))
				_exit(20 + n);
			n++;
		}
		_exit(n == 3 ? 0 : 30 + n);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	bt_resend_init(&r);
	memset(&si, 0, sizeof(si));
	si.si_signo = rt;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = 1;
	bt_resend_add(&r, rt, &si);
	si.si_value.sival_int = 2;
	bt_resend_add(&r, rt, &si);
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_USER;
	bt_resend_add(&r, SIGUSR1, &si);
	bt_resend_add(&r, SIGUSR1, &si);
	bt_resend_flush(&r, pid, pid);
	assert_int_equal(write(sent[1], "s", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(restart_cont),
		cmocka_unit_test(restart_signal),
		cmocka_unit_test(event_read_nothing),
		cmocka_unit_test(event_exit_reported),
		cmocka_unit_test(resend_realtime_each),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
