// SPDX-License-Identifier: MIT
/*
 * Backend selection with the pt and bts backends registered: probes give
 * doctor's verdicts, an unavailable backend fails before anything runs,
 * auto picks what doctor says; where the hardware exists, a real capture.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "btrace/doctor.h"

static void assert_no_children(void)
{
	assert_int_equal(waitpid(-1, NULL, WNOHANG | __WALL), -1);
	assert_int_equal(errno, ECHILD);
}

static const char *target_path(const char *name)
{
	static char path[512];
	const char *dir = getenv("TARGETS");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/targets",
		 name);
	return path;
}

static void probe(void **state)
{
	char why[512], dwhy[512];
	int b;

	for (b = BT_BACKEND_PT; b <= BT_BACKEND_BTS; b++) {
		int ret = bt_backend_probe(b, why, sizeof(why));

		assert_int_equal(ret, bt_doctor_probe(b, dwhy, sizeof(dwhy)));
		assert_string_equal(why, dwhy);
		if (ret)
			assert_true(why[0]);	/* a reason with its remedy */
		assert_true(ret == 0 || ret == -bte_nosys || ret == -bte_perm);
	}
	assert_int_equal(bt_backend_probe(BT_BACKEND_SOFT, why, sizeof(why)), 0);
	assert_int_equal(bt_backend_parse("pt"), BT_BACKEND_PT);
	assert_int_equal(bt_backend_parse("bts"), BT_BACKEND_BTS);
}

/*
 * An explicit backend this host cannot use: -bte_nosys with doctor's
 * reason, and the program never ran (it would have made a file).
 */
static void launch_unavailable(void **state)
{
	char dir[] = "/tmp/bt_backend_XXXXXX", mark[64], cmd[128], why[512];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct bt_target_opts o = { .size = sizeof(o) };
	struct bt_target *t;
	struct stat st;
	int b, tried = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(mark, sizeof(mark), "%s/ran", dir);
	snprintf(cmd, sizeof(cmd), "touch %s", mark);
	for (b = BT_BACKEND_PT; b <= BT_BACKEND_BTS; b++) {
		if (bt_backend_probe(b, why, sizeof(why)) == 0)
			continue;
		tried++;
		o.backend = b;
		t = (void *)1;
		assert_int_equal(bt_target_launch(&t, &o, argv), -bte_nosys);
		assert_null(t);
		assert_string_equal(bt_errdetail(), why);
		assert_int_equal(stat(mark, &st), -1);
		assert_no_children();
	}
	rmdir(dir);
	if (!tried)
		skip();
}

/* auto takes the backend doctor names, stopped at the first instruction. */
static void launch_auto(void **state)
{
	struct bt_target_opts o = { .size = sizeof(o) };
	char *argv[] = { (char *)target_path("exit_status"), "3", NULL };
	struct bt_target *t;
	char why[512];
	int want = bt_doctor_auto(why, sizeof(why));

	assert_true(want > 0);
	assert_int_equal(bt_target_launch(&t, &o, argv), 0);
	assert_int_equal(bt_target_backend(t), want);
	assert_string_equal(bt_target_backend_name(t), bt_backend_name(want));
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
	assert_no_children();
}

/* Where PT or BTS works: a real run to the crash, then a capture. */
static void launch_hw(void **state)
{
	struct bt_target_opts o = { .size = sizeof(o) };
	char *argv[] = { (char *)target_path("crash_null"), NULL };
	struct bt_target *t;
	struct bt_capture cap;
	struct bt_stop stop;
	int b, tried = 0, ws;

	for (b = BT_BACKEND_PT; b <= BT_BACKEND_BTS; b++) {
		if (bt_backend_probe(b, NULL, 0))
			continue;
		tried++;
		o.backend = b;
		assert_int_equal(bt_target_launch(&t, &o, argv), 0);
		assert_int_equal(bt_target_cont(t, &stop), 0);
		assert_int_equal(stop.reason, BT_STOP_SIGNAL);
		assert_int_equal(bt_target_capture(t, stop.tid, &cap), 0);
		assert_int_equal(cap.format, b == BT_BACKEND_PT ? BT_FMT_PT :
								  BT_FMT_PERF_BTS);
		assert_true(cap.size > 0);
		bt_capture_release(&cap);
		assert_int_equal(bt_target_finish(t, &ws), 0);
		assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV);
		bt_target_free(t);
		assert_no_children();
	}
	if (!tried)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe),
		cmocka_unit_test(launch_unavailable),
		cmocka_unit_test(launch_auto),
		cmocka_unit_test(launch_hw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
