// SPDX-License-Identifier: MIT
/*
 * Non-stop (target.h, bt_target_ns_*) on a real process under the
 * recorder: build/targets/gdbsrv_threads, whose two workers nap until a
 * flag nobody sets here.  One thread stops at a breakpoint while the
 * others run; a running thread is stopped alone and resumed alone; a
 * step over a breakpoint while others run; memory written while threads
 * run (paused around it); every thread stopped at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btrace/btrace.h"

#define PROG "build/targets/gdbsrv_threads"

static const struct bt_target_opts rec_opts = {
	.size = sizeof(struct bt_target_opts),
	.backend = BT_BACKEND_SOFT,
};

struct sym_find {
	const char *name;
	uint64_t addr;
};

static int sym_cb(const char *name, uint64_t addr, void *ctx)
{
	struct sym_find *f = ctx;

	if (strcmp(name, f->name))
		return 0;
	f->addr = addr;
	return 1;
}

static uint64_t sym(struct bt_target *t, const char *name)
{
	struct bt_symtab *st;
	struct sym_find f = { name, 0 };

	assert_int_equal(bt_symtab_from_pid(&st, bt_target_pid(t)), 0);
	bt_symtab_foreach(st, sym_cb, &f);
	bt_symtab_free(st);
	assert_true(f.addr != 0);
	return f.addr;
}

/* The next stop, polled (a bound for a hung test, not a timing check). */
static void next_stop(struct bt_target *t, struct bt_stop *stop)
{
	struct timespec ms = { 0, 1000000 };
	int i, ret;

	for (i = 0; i < 120000; i++) {
		ret = bt_target_ns_poll(t, stop);
		assert_true(ret >= 0);
		if (ret == 1)
			return;
		nanosleep(&ms, NULL);
	}
	fail_msg("no stop");
}

static void nonstop_threads(void **state)
{
	char *argv[] = { PROG, NULL };
	struct bt_resume cont = { .tid = 0, .action = BT_RESUME_CONT };
	struct bt_resume one;
	struct bt_target *t;
	struct bt_stop stop;
	uint64_t spawned, pc;
	pid_t tids[8], main_tid, worker;
	uint8_t code[4];
	size_t n;

	assert_int_equal(bt_target_launch(&t, &rec_opts, argv), 0);
	main_tid = bt_target_pid(t);
	spawned = sym(t, "spawned");
	assert_true(bt_target_break_insert(t, spawned) > 0);
	/* nothing runs: nothing to poll */
	assert_int_equal(bt_target_ns_poll(t, &stop), 0);
	assert_int_equal(bt_target_ns_stop(t, 999999), -bte_noent);

	/* main stops at spawned(), the workers nap on */
	assert_int_equal(bt_target_ns_resume(t, &cont, 1), 0);
	assert_int_equal(bt_target_thread_state(t, main_tid), BT_THREAD_RUNNING);
	next_stop(t, &stop);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	assert_int_equal(stop.tid, main_tid);
	assert_int_equal(stop.pc, spawned);
	n = bt_target_threads(t, tids, 8);
	assert_int_equal(n, 3);
	worker = tids[0] == main_tid ? tids[1] : tids[0];
	assert_int_equal(bt_target_thread_state(t, main_tid), BT_THREAD_STOPPED);
	assert_int_equal(bt_target_thread_state(t, worker), BT_THREAD_RUNNING);

	/* one worker stopped alone: signal 0, the other runs on */
	assert_int_equal(bt_target_ns_stop(t, worker), 0);
	next_stop(t, &stop);
	assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
	assert_int_equal(stop.signal, 0);
	assert_int_equal(stop.tid, worker);
	assert_int_equal(bt_target_pc(t, worker, &pc), 0);
	assert_int_equal(stop.pc, pc);
	assert_int_equal(bt_target_ns_poll(t, &stop), 0);

	/* resumed alone; then code rewritten as it was while two run */
	one.tid = worker;
	one.action = BT_RESUME_CONT;
	one.signal = 0;
	assert_int_equal(bt_target_ns_resume(t, &one, 1), 0);
	assert_int_equal(bt_target_thread_state(t, worker), BT_THREAD_RUNNING);
	assert_int_equal(bt_target_ns_pause(t), 0);
	assert_int_equal(bt_target_read(t, spawned, code, 4), 4);
	assert_int_equal(bt_target_write(t, spawned, code, 4), 4);
	assert_int_equal(bt_target_ns_unpause(t), 0);
	assert_int_equal(bt_target_thread_state(t, worker), BT_THREAD_RUNNING);

	/* main steps off its breakpoint while the workers run */
	one.tid = main_tid;
	one.action = BT_RESUME_STEP;
	assert_int_equal(bt_target_ns_resume(t, &one, 1), 0);
	next_stop(t, &stop);
	assert_int_equal(stop.reason, BT_STOP_STEP);
	assert_int_equal(stop.tid, main_tid);
	assert_true(stop.pc != spawned);

	/* every running thread stopped: the two workers */
	assert_int_equal(bt_target_ns_stop(t, 0), 0);
	next_stop(t, &stop);
	assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
	next_stop(t, &stop);
	assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
	assert_int_equal(bt_target_ns_poll(t, &stop), 0);
	for (n = 0; n < 3; n++)
		assert_int_equal(bt_target_thread_state(t, tids[n]),
				 BT_THREAD_STOPPED);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nonstop_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
