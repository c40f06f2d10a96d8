// SPDX-License-Identifier: MIT
/*
 * Process control: launch errors before anything runs, the stop at the
 * first instruction, kill, exit statuses and the lifecycle, on real
 * processes (build/targets, built by `make`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/btrace.h"

static const struct bt_target_opts step_opts = {
	.size = sizeof(struct bt_target_opts),
	.backend = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_STEP,
};

/* No child of ours may be left: every launch is reaped. */
static void assert_no_children(void)
{
	assert_int_equal(waitpid(-1, NULL, WNOHANG | __WALL), -1);
	assert_int_equal(errno, ECHILD);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static void launch_errors(void **state)
{
	char dir[] = "/tmp/bt_target_XXXXXX", path[64];
	char *argv[2] = { path, NULL };
	struct bt_target *t = (void *)1;

	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(bt_target_launch(&t, &step_opts, argv), -bte_noent);
	assert_null(t);

	snprintf(path, sizeof(path), "%s/noexec", dir);
	write_file(path, "\177ELF", 0644);
	assert_int_equal(bt_target_launch(&t, &step_opts, argv), -bte_perm);
	assert_non_null(strstr(bt_errdetail(), "not executable"));
	unlink(path);

	snprintf(path, sizeof(path), "%s/script", dir);
	write_file(path, "#!/bin/sh\nexit 0\n", 0755);
	assert_int_equal(bt_target_launch(&t, &step_opts, argv), -bte_format);
	assert_non_null(strstr(bt_errdetail(), "not an ELF"));
	unlink(path);

	assert_int_equal(bt_target_launch(&t, &step_opts, (char *[]){ dir, NULL }),
			 -bte_perm);
	rmdir(dir);

	assert_int_equal(bt_target_launch(&t, &step_opts,
					  (char *[]){ "no-such-program-xyz", NULL }),
			 -bte_noent);
	assert_non_null(strstr(bt_errdetail(), "not found"));
	assert_no_children();
}

static void launch_null(void **state)
{
	struct bt_target *t;
	struct bt_target_opts bad = step_opts;
	char *argv[] = { "/bin/true", NULL };

	assert_int_equal(bt_target_launch(NULL, &step_opts, argv), -bte_invalid);
	assert_int_equal(bt_target_launch(&t, &step_opts, NULL), -bte_invalid);
	bad.buffer_size = 1000;
	assert_int_equal(bt_target_launch(&t, &bad, argv), -bte_invalid);
	bt_target_free(NULL);
	assert_int_equal(bt_target_cont(NULL, NULL), -bte_invalid);
	assert_no_children();
}

/* PATH search finds the program; it is stopped at its first instruction. */
static void launch_kill(void **state)
{
	char *argv[] = { "true", NULL };
	struct bt_target *t;
	pid_t tids[4];
	uint64_t pc;
	uint8_t byte;

	assert_int_equal(bt_target_launch(&t, &step_opts, argv), 0);
	assert_true(bt_target_pid(t) > 0);
	assert_int_equal(bt_target_threads(t, tids, 4), 1);
	assert_int_equal(tids[0], bt_target_pid(t));
	assert_int_equal(bt_target_pc(t, tids[0], &pc), 0);
	assert_int_equal(bt_target_read(t, pc, &byte, 1), 1);
	assert_string_equal(bt_target_backend_name(t), "soft");
	assert_int_equal(bt_target_backend(t), BT_BACKEND_SOFT);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
	assert_no_children();
}

/* bt_target_free of a target never run kills it: nothing left behind. */
static void launch_free(void **state)
{
	char *argv[] = { "/bin/sleep", "100", NULL };
	struct bt_target *t;

	assert_int_equal(bt_target_launch(&t, &step_opts, argv), 0);
	bt_target_free(t);
	assert_no_children();
}

static void backend_names(void **state)
{
	char why[128];

	assert_string_equal(bt_backend_name(BT_BACKEND_SOFT), "soft");
	assert_string_equal(bt_backend_name(BT_BACKEND_AUTO), "auto");
	assert_string_equal(bt_backend_name(99), "?");
	assert_int_equal(bt_backend_parse("pt"), BT_BACKEND_PT);
	assert_int_equal(bt_backend_parse("soft"), BT_BACKEND_SOFT);
	assert_int_equal(bt_backend_parse("nope"), -bte_invalid);
	assert_int_equal(bt_backend_parse(NULL), -bte_invalid);
	assert_int_equal(bt_backend_probe(BT_BACKEND_SOFT, why, sizeof(why)), 0);
	assert_int_equal(bt_backend_probe(99, why, sizeof(why)), -bte_invalid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(launch_errors),
		cmocka_unit_test(launch_null),
		cmocka_unit_test(launch_kill),
		cmocka_unit_test(launch_free),
		cmocka_unit_test(backend_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
