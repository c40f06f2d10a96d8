// SPDX-License-Identifier: MIT
/*
 * What a debugger needs of a target (target.h, "For debuggers"), on real
 * processes from build/targets under the software backend: stepping one
 * thread through bt_target_resume(), signals a program handles reported
 * and delivered as told, register sets, a moved pc as a gap, memory
 * writes under btrace's breakpoints, and the trace from a position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "btrace/btrace.h"

#define SPIN "build/targets/gdbsrv_spin"

static const struct bt_target_opts rec_opts = {
	.size = sizeof(struct bt_target_opts),
	.backend = BT_BACKEND_SOFT,
};

static const struct bt_target_opts step_opts = {
	.size = sizeof(struct bt_target_opts),
	.backend = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_STEP,
	.buffer_size = 4096,
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

static struct bt_target *spin(const struct bt_target_opts *o, const char *n)
{
	char *argv[] = { SPIN, (char *)n, "2", NULL };
	struct bt_target *t;

	assert_int_equal(bt_target_launch(&t, o, argv), 0);
	return t;
}

static uint64_t pc_of(struct bt_target *t)
{
	uint64_t pc;

	assert_int_equal(bt_target_pc(t, bt_target_pid(t), &pc), 0);
	return pc;
}

static void resume_step(void **state)
{
	struct bt_target *t = spin(&rec_opts, "5");
	struct bt_resume step = { 0, BT_RESUME_STEP, 0 };
	uint64_t round, pc1, pc2;
	struct bt_stop stop;
	int b;

	round = sym(t, "gs_round");
	b = bt_target_break_insert(t, round);
	assert_true(b > 0);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	assert_int_equal(stop.pc, round);
	/* the step at a breakpoint is the instruction under it, once */
	assert_int_equal(bt_target_resume(t, &step, 1, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_STEP);
	pc1 = pc_of(t);
	assert_true(pc1 > round && pc1 <= round + 15);
	assert_int_equal(stop.pc, pc1);
	assert_int_equal(bt_target_resume(t, &step, 1, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_STEP);
	pc2 = pc_of(t);
	assert_true(pc2 > pc1 && pc2 <= pc1 + 15);
	/* the next round comes back to the breakpoint */
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	assert_int_equal(bt_target_break_remove(t, b), 0);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
}

static void resume_none(void **state)
{
	struct bt_target *t = spin(&rec_opts, "5");
	struct bt_resume hold = { 0, BT_RESUME_STOP, 0 };
	struct bt_resume bad = { 0, BT_RESUME_CONT, 999 };
	struct bt_stop stop;

	assert_int_equal(bt_target_resume(t, &hold, 1, &stop), -bte_invalid);
	assert_int_equal(bt_target_resume(t, NULL, 0, &stop), -bte_invalid);
	assert_int_equal(bt_target_resume(t, &bad, 1, &stop), -bte_invalid);
	/* still usable */
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_EXIT);
	bt_target_free(t);
}

static void stop_signals(void **state)
{
	char *argv[] = { "build/targets/sighandler", NULL };
	struct bt_resume pass = { 0, BT_RESUME_CONT, SIGUSR1 };
	struct bt_target *t;
	struct bt_stop stop;

	assert_int_equal(bt_target_launch(&t, &rec_opts, argv), 0);
	bt_target_stop_signals(t, 1ull << (SIGUSR1 - 1));
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_SIGNAL);
	assert_int_equal(stop.signal, SIGUSR1);
	/* delivered as told: the handler runs, then the program faults */
	assert_int_equal(bt_target_resume(t, &pass, 1, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_SIGNAL);
	assert_int_equal(stop.signal, SIGSEGV);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
}

/* Does @cap hold a gap of @reason? */
static int has_gap(const struct bt_capture *cap, int reason)
{
	struct bt_decode_opts o = { sizeof(o), 0, NULL };
	struct bt_history *h;
	size_t i;
	int found = 0;

	assert_int_equal(bt_decode(cap, &o, &h), 0);
	for (i = 0; i < h->count; i++)
		if (h->branch[i].kind == BT_BR_GAP && h->branch[i].gap == reason)
			found = 1;
	bt_history_free(h);
	return found;
}

static void regsets(void **state)
{
	struct bt_target *t = spin(&rec_opts, "5");
	pid_t tid = bt_target_pid(t);
	struct user_regs_struct r, r2;
	struct user_fpregs_struct fp;
	struct bt_capture cap;
	uint64_t pos = 0, mark, old;
	size_t size = sizeof(r);
	struct bt_stop stop;

	mark = sym(t, "gs_mark");
	assert_true(bt_target_break_insert(t, mark) > 0);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(bt_target_get_regset(t, tid, NT_PRSTATUS, &r, &size), 0);
	assert_int_equal(size, sizeof(r));
	assert_int_equal(r.rip, mark);
	size = sizeof(fp);
	assert_int_equal(bt_target_get_regset(t, tid, NT_PRFPREG, &fp, &size), 0);
	assert_int_equal(bt_target_get_regset(t, tid + 100000, NT_PRSTATUS, &r,
					      &size), -bte_noent);
	/* a value written is read back; the pc unchanged is no gap */
	assert_int_equal(bt_target_capture_since(t, tid, &pos, NULL), 0);
	old = r.rbx;
	r.rbx = 0x1234567;
	assert_int_equal(bt_target_set_regset(t, tid, NT_PRSTATUS, &r, sizeof(r)), 0);
	size = sizeof(r2);
	assert_int_equal(bt_target_get_regset(t, tid, NT_PRSTATUS, &r2, &size), 0);
	assert_int_equal(r2.rbx, 0x1234567);
	/* a new pc is a gap in the history, and back again */
	r.rip = mark + 1;
	assert_int_equal(bt_target_set_regset(t, tid, NT_PRSTATUS, &r, sizeof(r)), 0);
	r.rip = mark;
	r.rbx = old;
	assert_int_equal(bt_target_set_regset(t, tid, NT_PRSTATUS, &r, sizeof(r)), 0);
	assert_int_equal(bt_target_capture_since(t, tid, &pos, &cap), 0);
	assert_true(has_gap(&cap, BT_GAP_MOVED));
	bt_capture_release(&cap);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	bt_target_free(t);
}

static void write_under_break(void **state)
{
	struct bt_target *t = spin(&rec_opts, "5");
	uint8_t orig[4], now[4];
	struct bt_stop stop;
	uint64_t mark;

	mark = sym(t, "gs_mark");
	assert_int_equal(bt_target_read(t, mark, orig, 4), 4);
	assert_true(bt_target_break_insert(t, mark) > 0);
	/* the program's bytes written over btrace's int3: it stays */
	assert_int_equal(bt_target_write(t, mark, orig, 4), 4);
	assert_int_equal(bt_target_read(t, mark, now, 4), 4);
	assert_memory_equal(now, orig, 4);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	assert_int_equal(stop.pc, mark);
	assert_int_equal(bt_target_write(t, 0, orig, 4), -bte_io);
	assert_int_equal(bt_target_write(t, mark, NULL, 0), 0);
	bt_target_free(t);
}

static void capture_since(void **state)
{
	struct bt_target *t = spin(&step_opts, "200");
	pid_t tid = bt_target_pid(t);
	struct bt_capture cap;
	uint64_t pos = 0, now = 0, mark;
	struct bt_stop stop;

	mark = sym(t, "gs_mark");
	assert_true(bt_target_break_insert(t, mark) > 0);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(bt_target_capture_since(t, tid, &now, NULL), 0);
	assert_true(now > 0);
	/* nothing new */
	pos = now;
	assert_int_equal(bt_target_capture_since(t, tid, &pos, &cap), 0);
	assert_int_equal(cap.size, 0);
	assert_int_equal(pos, now);
	bt_capture_release(&cap);
	/* 600 branches later the 4 KiB ring has wrapped past @now */
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_BREAK);
	pos = now;
	assert_int_equal(bt_target_capture_since(t, tid, &pos, &cap), 1);
	assert_true(cap.size > 0 && cap.size <= 4096);
	assert_true(pos > now);
	bt_capture_release(&cap);
	assert_int_equal(bt_target_capture_since(t, tid + 100000, &pos, &cap),
			 -bte_noent);
	assert_int_equal(bt_target_launched(t), 1);
	bt_target_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resume_step),
		cmocka_unit_test(resume_none),
		cmocka_unit_test(stop_signals),
		cmocka_unit_test(regsets),
		cmocka_unit_test(write_under_break),
		cmocka_unit_test(capture_since),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
