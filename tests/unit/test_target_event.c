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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(restart_cont),
		cmocka_unit_test(restart_signal),
		cmocka_unit_test(event_read_nothing),
		cmocka_unit_test(event_exit_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
