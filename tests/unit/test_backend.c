// SPDX-License-Identifier: MIT
/*
 * The backend registry (lib/backend/backend.c): its rows, names and soft
 * modes, the auto order, the capabilities, and the refusal of options a
 * backend cannot honour before anything runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "btrace/btrace.h"

static void rows(void **state)
{
	const struct bt_backend_info *b;
	size_t i, soft = 0;

	for (i = 0; (b = bt_backend_info(i)); i++) {
		assert_string_equal(bt_backend_name(b->backend), b->name);
		assert_int_equal(bt_backend_parse(b->name), b->backend);
		assert_non_null(b->about);
		if (b->backend != BT_BACKEND_SOFT) {
			assert_null(b->mode);
			continue;
		}
		soft++;
		assert_string_equal(bt_soft_mode_name(b->soft_mode), b->mode);
		assert_int_equal(bt_soft_mode_parse(b->mode), b->soft_mode);
	}
	assert_int_equal(soft, 3);
	assert_null(bt_backend_info(i + 1));
}

static void names_null(void **state)
{
	assert_string_equal(bt_soft_mode_name(-1), "?");
	assert_int_equal(bt_soft_mode_parse(NULL), -bte_invalid);
	assert_int_equal(bt_soft_mode_parse("nope"), -bte_invalid);
	assert_int_equal(bt_backend_parse("auto"), BT_BACKEND_AUTO);
}

static void auto_order(void **state)
{
	int ids[BT_BACKEND_MAX];

	assert_int_equal(bt_backend_auto_order(ids, BT_BACKEND_MAX), 3);
	assert_int_equal(ids[0], BT_BACKEND_PT);
	assert_int_equal(ids[1], BT_BACKEND_BTS);
	assert_int_equal(ids[2], BT_BACKEND_SOFT);
	/* too small: how many there are all the same */
	assert_int_equal(bt_backend_auto_order(ids, 1), 3);
	assert_int_equal(ids[0], BT_BACKEND_PT);
}

static void caps(void **state)
{
	const unsigned trig = BT_CAP_FILTER | BT_CAP_FROM | BT_CAP_UNTIL;

	assert_int_equal(bt_backend_caps(BT_BACKEND_PT, 0) & trig, 0);
	assert_int_equal(bt_backend_caps(BT_BACKEND_BTS, 0) & trig, 0);
	assert_int_equal(bt_backend_caps(BT_BACKEND_SOFT, BT_SOFT_STEP) & trig, 0);
	assert_int_equal(bt_backend_caps(BT_BACKEND_SOFT, BT_SOFT_FAST) & trig,
			 trig);
	assert_int_equal(bt_backend_caps(BT_BACKEND_SOFT, BT_SOFT_RECORD) & trig,
			 trig);
	assert_int_equal(bt_backend_caps(BT_BACKEND_AUTO, BT_SOFT_STEP) & trig, 0);
	assert_int_equal(bt_backend_caps(BT_BACKEND_AUTO, BT_SOFT_FAST) & trig,
			 trig);
	assert_int_equal(bt_backend_caps(99, 0), 0);
	/* the hardware's ring has no positions */
	assert_int_equal(bt_backend_caps(BT_BACKEND_PT, 0) & BT_CAP_POSITIONS, 0);
	assert_int_not_equal(bt_backend_caps(BT_BACKEND_SOFT, BT_SOFT_STEP) &
			     BT_CAP_POSITIONS, 0);
}

static void cap_names(void **state)
{
	assert_string_equal(bt_backend_cap_name(BT_CAP_FILTER), "filters");
	assert_string_equal(bt_backend_cap_name(BT_CAP_UNTIL), "until");
	assert_string_equal(bt_backend_cap_name(BT_CAP_POSITIONS), "positions");
	assert_string_equal(bt_backend_cap_name(0), "?");
	assert_string_equal(bt_backend_cap_name(BT_CAP_FROM | BT_CAP_UNTIL), "?");
}

static void opts_caps(void **state)
{
	const char *none[] = { NULL }, *libc[] = { "libc*", NULL };
	struct bt_target_opts o = { .size = sizeof(o) };

	assert_int_equal(bt_target_opts_caps(&o), 0);
	o.only = none;
	o.exclude = none;
	assert_int_equal(bt_target_opts_caps(&o), 0);
	o.exclude = libc;
	assert_int_equal(bt_target_opts_caps(&o), BT_CAP_FILTER);
	o.from_sym = "main";
	o.until_sym = "exit";
	assert_int_equal(bt_target_opts_caps(&o),
			 BT_CAP_FILTER | BT_CAP_FROM | BT_CAP_UNTIL);
}

/* --until with single-stepping: refused, nothing started. */
static void refuse(void **state)
{
	struct bt_target_opts o = {
		.size = sizeof(o), .backend = BT_BACKEND_SOFT,
		.soft_mode = BT_SOFT_STEP, .until_sym = "main",
	};
	char *argv[] = { "/bin/true", NULL };
	struct bt_target *t = NULL;

	assert_int_equal(bt_target_launch(&t, &o, argv), -bte_invalid);
	assert_null(t);
	assert_non_null(strstr(bt_errdetail(), "until_sym"));
	o.backend = BT_BACKEND_AUTO;
	assert_int_equal(bt_target_launch(&t, &o, argv), -bte_invalid);
	o.backend = BT_BACKEND_PT;
	o.until_sym = NULL;
	o.from_sym = "main";
	assert_int_equal(bt_target_launch(&t, &o, argv), -bte_invalid);
	assert_non_null(strstr(bt_errdetail(), "pt"));
	assert_int_equal(waitpid(-1, NULL, WNOHANG | __WALL), -1);
	assert_int_equal(errno, ECHILD);
}

/* The same options in a mode that honours them: launched. */
static void honour(void **state)
{
	struct bt_target_opts o = {
		.size = sizeof(o), .backend = BT_BACKEND_SOFT,
		.soft_mode = BT_SOFT_FAST, .until_sym = "main",
	};
	char *argv[] = { "/bin/true", NULL };
	struct bt_target *t = NULL;

	assert_int_equal(bt_target_launch(&t, &o, argv), 0);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
	o.backend = BT_BACKEND_AUTO;
	assert_int_equal(bt_target_launch(&t, &o, argv), 0);
	assert_int_equal(bt_target_backend(t), BT_BACKEND_SOFT);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows),
		cmocka_unit_test(names_null),
		cmocka_unit_test(auto_order),
		cmocka_unit_test(caps),
		cmocka_unit_test(cap_names),
		cmocka_unit_test(opts_caps),
		cmocka_unit_test(refuse),
		cmocka_unit_test(honour),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
