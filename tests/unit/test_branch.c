// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "btrace/btrace.h"
#include "internal.h"

static void kind_name(void **state)
{
	assert_string_equal(bt_branch_kind_name(BT_BR_CALL), "call");
	assert_string_equal(bt_branch_kind_name(BT_BR_IJUMP), "indirect jump");
	assert_string_equal(bt_branch_kind_name(BT_BR_MAX), "?");
	assert_string_equal(bt_branch_kind_name(-1), "?");
}

static void gap_name(void **state)
{
	assert_string_equal(bt_gap_reason_name(BT_GAP_OVERFLOW), "overflow");
	assert_string_equal(bt_gap_reason_name(BT_GAP_MAX), "?");
}

static void errstr(void **state)
{
	assert_string_equal(bt_errstr(-bte_perm), "permission denied");
	assert_string_equal(bt_errstr(bte_perm), "permission denied");
	assert_string_equal(bt_errstr(-bte_max), "unknown error");
}

static void fail_keeps_cause(void **state)
{
	int ret = bt_fail(bte_ptrace, ESRCH, "ptrace(SEIZE, %d)", 42);

	assert_int_equal(ret, -bte_ptrace);
	assert_int_equal(bt_errno(), ESRCH);
	assert_string_equal(bt_errdetail(), "ptrace(SEIZE, 42)");
	assert_int_equal(bt_errno_to_bte(EPERM), -bte_perm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kind_name),
		cmocka_unit_test(gap_name),
		cmocka_unit_test(errstr),
		cmocka_unit_test(fail_keeps_cause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
