// SPDX-License-Identifier: MIT
/*
 * The address space (lib/tracer/aspace.c) on real child processes: each
 * test forks a child that stops itself under ptrace, and works on the
 * child's copy of page[] below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/error.h"
#include "tracer/aspace.h"

#define NPAGE 4096

/* The same address in the children: their copy is what is written. */
static uint8_t page[NPAGE] __attribute__((aligned(4096)));

static pid_t child_start(void)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status));
	return pid;
}

static void child_end(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* Put an int3 of @kind at @p (in the child's copy of page[]). */
static int ins(struct bt_aspace *as, const uint8_t *p, int kind)
{
	return bt_aspace_insert(as, (uint64_t)p, kind);
}

static uint8_t raw_at(struct bt_aspace *as, const uint8_t *p)
{
	uint8_t b = 0;

	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)p, &b, 1), 1);
	return b;
}

static int setup(void **state)
{
	size_t i;

	for (i = 0; i < NPAGE; i++)
		page[i] = (uint8_t)(i * 7 + 1);
	return 0;
}

/* Two kinds at one address: one int3, the original kept once. */
static void insert_remove_kinds(void **state)
{
	pid_t pid = child_start();
	uint64_t at = (uint64_t)&page[3];
	struct bt_aspace *as;
	uint8_t orig;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_USER), 0);
	assert_int_equal(raw_at(as, &page[3]), 0xcc);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_BACKEND), 0);
	assert_int_equal(bt_aspace_kinds(as, at),
			 BT_BP_MASK(BT_BP_USER) | BT_BP_MASK(BT_BP_BACKEND));
	assert_int_equal(bt_aspace_orig(as, at, &orig), 0);
	assert_int_equal(orig, page[3]);
	assert_int_equal(bt_aspace_count(as), 1);

	assert_int_equal(bt_aspace_remove(as, at, BT_BP_USER), 0);
	assert_int_equal(raw_at(as, &page[3]), 0xcc);	/* the backend's */
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_USER), -bte_noent);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_BACKEND), 0);
	assert_int_equal(raw_at(as, &page[3]), page[3]);
	assert_int_equal(bt_aspace_kinds(as, at), 0);
	assert_int_equal(bt_aspace_orig(as, at, &orig), -bte_noent);
	assert_int_equal(bt_aspace_count(as), 0);

	assert_int_equal(bt_aspace_insert(as, at, BT_BP_NKINDS), -bte_invalid);
	assert_int_equal(bt_aspace_insert(as, 0, BT_BP_USER), -bte_invalid);
	bt_aspace_free(as);
	bt_aspace_free(NULL);
	child_end(pid);
}

/* A kind counts its references: the int3 stays until the last goes. */
static void insert_counted(void **state)
{
	pid_t pid = child_start();
	uint64_t at = (uint64_t)&page[10];
	struct bt_aspace *as;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_RECORDER), 0);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_RECORDER), 0);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_RECORDER), 0);
	assert_int_equal(raw_at(as, &page[10]), 0xcc);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_RECORDER), 0);
	assert_int_equal(raw_at(as, &page[10]), page[10]);
	bt_aspace_free(as);
	child_end(pid);
}

/* Reads as the program sees it: no int3 of btrace's shows. */
static void read_hidden(void **state)
{
	pid_t pid = child_start();
	struct bt_aspace *as;
	uint8_t buf[64];

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(ins(as, &page[1], BT_BP_USER), 0);
	assert_int_equal(ins(as, &page[5], BT_BP_BACKEND), 0);
	assert_int_equal(ins(as, &page[40], BT_BP_USER), 0);

	/* short reads look each byte up, long ones walk the table */
	assert_int_equal(bt_aspace_read(as, (uint64_t)&page[0], buf, 2), 2);
	assert_memory_equal(buf, page, 2);
	assert_int_equal(bt_aspace_read(as, (uint64_t)page, buf, sizeof(buf)),
			 sizeof(buf));
	assert_memory_equal(buf, page, sizeof(buf));
	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)page, buf, 8), 8);
	assert_int_equal(buf[1], 0xcc);
	assert_int_equal(buf[5], 0xcc);

	/* nothing mapped at 0: an error, not a short read */
	assert_int_equal(bt_aspace_read(as, 0, buf, 8), -bte_io);
	bt_aspace_free(as);
	child_end(pid);
}

/* The program's writes: the int3 stays, its original is the new byte. */
static void write_keeps(void **state)
{
	pid_t pid = child_start();
	uint8_t data[4] = { 0x11, 0x22, 0x33, 0x44 }, buf[4], orig;
	struct bt_aspace *as;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(ins(as, &page[101], BT_BP_USER), 0);
	assert_int_equal(bt_aspace_write(as, (uint64_t)&page[100], data, 4), 4);
	assert_int_equal(raw_at(as, &page[101]), 0xcc);
	assert_int_equal(bt_aspace_orig(as, (uint64_t)&page[101], &orig), 0);
	assert_int_equal(orig, 0x22);
	assert_int_equal(bt_aspace_read(as, (uint64_t)&page[100], buf, 4), 4);
	assert_memory_equal(buf, data, 4);
	assert_int_equal(bt_aspace_remove(as, (uint64_t)&page[101],
					  BT_BP_USER), 0);
	assert_int_equal(raw_at(as, &page[101]), 0x22);
	bt_aspace_free(as);
	child_end(pid);
}

/* The version moves with the set of (address, kind), and only then. */
static void version_changes(void **state)
{
	pid_t pid = child_start();
	uint64_t at = (uint64_t)&page[200], v;
	struct bt_aspace *as;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	v = bt_aspace_version(as);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version(as) != v);
	v = bt_aspace_version(as);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version(as) == v);	/* one more reference */
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_RECORDER), 0);
	assert_true(bt_aspace_version(as) != v);
	v = bt_aspace_version(as);
	assert_int_equal(bt_aspace_lift(as, at), 0);
	assert_int_equal(bt_aspace_unlift(as, at), 0);
	assert_true(bt_aspace_version(as) == v);	/* no change */
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version(as) == v);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version(as) != v);
	v = bt_aspace_version(as);
	bt_aspace_exec(as);
	assert_true(bt_aspace_version(as) != v);
	assert_int_equal(bt_aspace_count(as), 0);
	bt_aspace_free(as);
	child_end(pid);
}

/* The version of some kinds moves with theirs alone. */
static void version_of_kinds(void **state)
{
	pid_t pid = child_start();
	uint64_t at = (uint64_t)&page[220], v, all;
	const unsigned user = BT_BP_MASK(BT_BP_USER);
	struct bt_aspace *as;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	v = bt_aspace_version_of(as, user);
	all = bt_aspace_version(as);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_RECORDER), 0);
	assert_int_equal(bt_aspace_insert(as, at + 1, BT_BP_BACKEND), 0);
	assert_true(bt_aspace_version_of(as, user) == v);
	assert_true(bt_aspace_version(as) != all);
	assert_true(bt_aspace_version_of(as, BT_BP_MASK(BT_BP_RECORDER)) != 0);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version_of(as, user) != v);
	v = bt_aspace_version_of(as, user);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_RECORDER), 0);
	bt_aspace_remove_kind(as, BT_BP_BACKEND);
	assert_true(bt_aspace_version_of(as, user) == v);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_USER), 0);
	assert_true(bt_aspace_version_of(as, user) != v);
	v = bt_aspace_version_of(as, user);
	bt_aspace_exec(as);
	assert_true(bt_aspace_version_of(as, user) != v);
	bt_aspace_free(as);
	child_end(pid);
}

/* Lifts are counted: the int3 is back after the last one. */
static void lift_counted(void **state)
{
	pid_t pid = child_start();
	uint64_t at = (uint64_t)&page[300];
	struct bt_aspace *as;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(bt_aspace_lift(as, at), -bte_noent);
	assert_int_equal(bt_aspace_insert(as, at, BT_BP_BACKEND), 0);
	assert_int_equal(bt_aspace_lift(as, at), 0);
	assert_int_equal(bt_aspace_lift(as, at), 0);
	assert_int_equal(raw_at(as, &page[300]), page[300]);
	assert_int_equal(bt_aspace_unlift(as, at), 0);
	assert_int_equal(raw_at(as, &page[300]), page[300]);
	assert_int_equal(bt_aspace_unlift(as, at), 0);
	assert_int_equal(raw_at(as, &page[300]), 0xcc);

	/* removed while lifted: nothing to put back afterwards */
	assert_int_equal(bt_aspace_lift(as, at), 0);
	assert_int_equal(bt_aspace_remove(as, at, BT_BP_BACKEND), 0);
	assert_int_equal(bt_aspace_unlift(as, at), -bte_noent);
	assert_int_equal(raw_at(as, &page[300]), page[300]);

	assert_int_equal(bt_aspace_insert(as, at, BT_BP_BACKEND), 0);
	bt_aspace_lift_all(as);
	assert_int_equal(raw_at(as, &page[300]), page[300]);
	assert_int_equal(bt_aspace_insert(as, at + 1, BT_BP_USER), 0);
	assert_int_equal(raw_at(as, &page[301]), page[301]);
	bt_aspace_unlift_all(as);
	assert_int_equal(raw_at(as, &page[300]), 0xcc);
	assert_int_equal(raw_at(as, &page[301]), 0xcc);
	bt_aspace_free(as);
	child_end(pid);
}

/*
 * @parent's address space with the debugger's int3 at @at and one of
 * @kind at @at + 8, and @child's memory as fork copied it: both int3s in.
 */
static void fork_pair(pid_t parent, pid_t child, uint64_t at, int kind,
		      struct bt_aspace **as, struct bt_aspace **cas)
{
	uint8_t cc = 0xcc;

	assert_int_equal(bt_aspace_alloc(parent, as), 0);
	assert_int_equal(bt_aspace_insert(*as, at, BT_BP_USER), 0);
	assert_int_equal(bt_aspace_insert(*as, at + 8, kind), 0);
	assert_int_equal(bt_aspace_alloc(child, cas), 0);
	assert_int_equal(bt_aspace_write_raw(*cas, at, &cc, 1), 1);
	assert_int_equal(bt_aspace_write_raw(*cas, at + 8, &cc, 1), 1);
}

/*
 * A fork child's copy holds the parent's int3s: cleaned, it has the
 * original bytes; followed, its table is the parent's.
 */
static void fork_clean(void **state)
{
	pid_t parent = child_start(), child = child_start();
	uint64_t at = (uint64_t)&page[500];
	struct bt_aspace *as, *cas, *fas;

	fork_pair(parent, child, at, BT_BP_BACKEND, &as, &cas);

	/* the backend's only: the debugger's stays in the child */
	assert_int_equal(bt_aspace_fork_clean(as, child,
					      BT_BP_MASK(BT_BP_BACKEND)), 0);
	assert_int_equal(raw_at(cas, &page[500]), 0xcc);
	assert_int_equal(raw_at(cas, &page[508]), page[508]);
	assert_int_equal(bt_aspace_fork_clean(as, child, BT_BP_ALL), 0);
	assert_int_equal(raw_at(cas, &page[500]), page[500]);
	assert_int_equal(raw_at(cas, &page[508]), page[508]);
	assert_int_equal(raw_at(as, &page[500]), 0xcc);	/* the parent's stay */

	assert_int_equal(bt_aspace_fork(as, child, BT_BP_ALL, &fas), 0);
	assert_int_equal(bt_aspace_pid(fas), child);
	assert_int_equal(bt_aspace_kinds(fas, at), BT_BP_MASK(BT_BP_USER));
	assert_int_equal(bt_aspace_kinds(fas, at + 8),
			 BT_BP_MASK(BT_BP_BACKEND));
	bt_aspace_free(fas);
	/* the debugger's alone: the backend's are not the child's */
	assert_int_equal(bt_aspace_fork(as, child, BT_BP_MASK(BT_BP_USER),
					&fas), 0);
	assert_int_equal(bt_aspace_kinds(fas, at), BT_BP_MASK(BT_BP_USER));
	assert_int_equal(bt_aspace_kinds(fas, at + 8), 0);
	assert_int_equal(bt_aspace_count(fas), 1);
	bt_aspace_release(as);
	assert_int_equal(raw_at(as, &page[500]), page[500]);
	assert_int_equal(raw_at(as, &page[508]), page[508]);
	assert_int_equal(bt_aspace_count(as), 0);
	bt_aspace_free(fas);
	bt_aspace_free(cas);
	bt_aspace_free(as);
	child_end(child);
	child_end(parent);
}

/*
 * A fork child whose first stop came before its parent's fork event: its
 * address space, made then, has the backend's int3s it put in; the event
 * adds the debugger's of the parent (already in the copied memory) and
 * keeps those, the original bytes its own.  Taking the kinds out then
 * leaves the child's memory as the program's.
 */
static void fork_into(void **state)
{
	pid_t parent = child_start(), child = child_start();
	uint64_t at = (uint64_t)&page[600];
	struct bt_aspace *as, *cas;
	uint64_t v, vu;
	uint8_t seen;

	/* the debugger's int3s in the parent and the child's copy */
	fork_pair(parent, child, at, BT_BP_USER, &as, &cas);
	/* the backend's own, put in at its first stop: one on a clean
	 * byte, one where the debugger's int3 is (the original cleaned
	 * back first, as bt_aspace_fork_clean() does) */
	assert_int_equal(bt_aspace_insert(cas, at + 16, BT_BP_RECORDER), 0);
	assert_int_equal(bt_aspace_write_raw(cas, at + 8, &page[608], 1), 1);
	assert_int_equal(bt_aspace_insert(cas, at + 8, BT_BP_RECORDER), 0);
	v = bt_aspace_version(cas);
	vu = bt_aspace_version_of(cas, BT_BP_MASK(BT_BP_USER));

	assert_int_equal(bt_aspace_fork_into(as, cas,
					     BT_BP_MASK(BT_BP_USER)), 0);
	assert_int_equal(bt_aspace_count(cas), 3);
	assert_int_equal(bt_aspace_kinds(cas, at), BT_BP_MASK(BT_BP_USER));
	assert_int_equal(bt_aspace_kinds(cas, at + 8),
			 BT_BP_MASK(BT_BP_USER) | BT_BP_MASK(BT_BP_RECORDER));
	assert_int_equal(bt_aspace_kinds(cas, at + 16),
			 BT_BP_MASK(BT_BP_RECORDER));
	assert_true(bt_aspace_version(cas) != v);
	assert_true(bt_aspace_version_of(cas, BT_BP_MASK(BT_BP_USER)) != vu);
	/* the program sees its own bytes through it */
	assert_int_equal(bt_aspace_read(cas, at + 8, &seen, 1), 1);
	assert_int_equal(seen, page[608]);
	/* detach: each kind out, the child's memory the program's */
	assert_int_equal(bt_aspace_remove(cas, at, BT_BP_USER), 0);
	assert_int_equal(bt_aspace_remove(cas, at + 8, BT_BP_USER), 0);
	assert_int_equal(raw_at(cas, &page[608]), 0xcc);	/* held still */
	bt_aspace_remove_kind(cas, BT_BP_RECORDER);
	assert_int_equal(bt_aspace_count(cas), 0);
	assert_int_equal(raw_at(cas, &page[600]), page[600]);
	assert_int_equal(raw_at(cas, &page[608]), page[608]);
	assert_int_equal(raw_at(cas, &page[616]), page[616]);
	bt_aspace_free(cas);
	bt_aspace_free(as);
	child_end(child);
	child_end(parent);
}

/*
 * A backend's end: every int3 of its kind goes, those another kind holds
 * stay, and one the program wrote over keeps the program's byte.
 */
static void remove_kind(void **state)
{
	pid_t pid = child_start();
	struct bt_aspace *as;
	uint64_t v;
	uint8_t mine = 0x90;
	int i;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	for (i = 0; i < 200; i++)
		assert_int_equal(ins(as, &page[i * 3], BT_BP_BACKEND), 0);
	assert_int_equal(ins(as, &page[30], BT_BP_USER), 0);
	assert_int_equal(ins(as, &page[1000], BT_BP_USER), 0);
	assert_int_equal(bt_aspace_write_raw(as, (uint64_t)&page[60], &mine, 1),
			 1);
	v = bt_aspace_version(as);
	bt_aspace_remove_kind(as, BT_BP_BACKEND);
	assert_true(bt_aspace_version(as) != v);
	assert_int_equal(bt_aspace_count(as), 2);
	for (i = 0; i < 200; i++) {
		uint8_t want = i == 10 ? 0xcc : i == 20 ? mine : page[i * 3];

		assert_int_equal(raw_at(as, &page[i * 3]), want);
		assert_int_equal(bt_aspace_kinds(as, (uint64_t)&page[i * 3]),
				 i == 10 ? BT_BP_MASK(BT_BP_USER) : 0);
	}
	assert_int_equal(raw_at(as, &page[1000]), 0xcc);
	bt_aspace_free(as);
	child_end(pid);
}

/* Many int3s, half removed: the table finds every one left. */
static void many(void **state)
{
	pid_t pid = child_start();
	struct bt_aspace *as;
	uint8_t buf[NPAGE];
	size_t i;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	for (i = 0; i < NPAGE; i += 3)
		assert_int_equal(bt_aspace_insert(as, (uint64_t)&page[i],
						  BT_BP_BACKEND), 0);
	for (i = 0; i < NPAGE; i += 6)
		assert_int_equal(bt_aspace_remove(as, (uint64_t)&page[i],
						  BT_BP_BACKEND), 0);
	for (i = 0; i < NPAGE; i++)
		assert_int_equal(bt_aspace_kinds(as, (uint64_t)&page[i]) != 0,
				 i % 3 == 0 && i % 6 != 0);
	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)page, buf, NPAGE),
			 NPAGE);
	for (i = 0; i < NPAGE; i++)
		assert_int_equal(buf[i], i % 3 == 0 && i % 6 != 0 ?
				 0xcc : page[i]);
	assert_int_equal(bt_aspace_read(as, (uint64_t)page, buf, NPAGE), NPAGE);
	assert_memory_equal(buf, page, NPAGE);
	bt_aspace_release(as);
	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)page, buf, NPAGE),
			 NPAGE);
	assert_memory_equal(buf, page, NPAGE);
	bt_aspace_free(as);
	child_end(pid);
}

/* The process gone: its memory is, too. */
static void read_gone(void **state)
{
	pid_t pid = child_start();
	struct bt_aspace *as;
	uint8_t b;

	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(raw_at(as, &page[0]), page[0]);
	assert_true(bt_aspace_fd(as) >= 0);
	child_end(pid);
	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)page, &b, 1),
			 -bte_exited);
	bt_aspace_free(as);
}

static void *spin(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* Is the leader of @pid a zombie (State: Z)? */
static int leader_zombie(pid_t pid)
{
	char path[64], line[128];
	int z = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "State:", 6))
			z = strchr(line, 'Z') != NULL;
	if (f)
		fclose(f);
	return z;
}

/* The leader exited before its thread: the memory is still there. */
static void read_leader_gone(void **state)
{
	struct bt_aspace *as;
	pthread_t thr;
	int status, i;
	uint8_t b = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (pthread_create(&thr, NULL, spin, NULL) == 0)
			syscall(SYS_exit, 0);
		_exit(1);
	}
	for (i = 0; i < 2000 && !leader_zombie(pid); i++)
		usleep(1000);
	assert_true(leader_zombie(pid));
	assert_int_equal(bt_aspace_alloc(pid, &as), 0);
	assert_int_equal(bt_aspace_read_raw(as, (uint64_t)&page[7], &b, 1), 1);
	assert_int_equal(b, page[7]);
	bt_aspace_free(as);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(insert_remove_kinds, setup),
		cmocka_unit_test_setup(insert_counted, setup),
		cmocka_unit_test_setup(read_hidden, setup),
		cmocka_unit_test_setup(write_keeps, setup),
		cmocka_unit_test_setup(version_changes, setup),
		cmocka_unit_test_setup(version_of_kinds, setup),
		cmocka_unit_test_setup(lift_counted, setup),
		cmocka_unit_test_setup(fork_clean, setup),
		cmocka_unit_test_setup(fork_into, setup),
		cmocka_unit_test_setup(remove_kind, setup),
		cmocka_unit_test_setup(many, setup),
		cmocka_unit_test_setup(read_gone, setup),
		cmocka_unit_test_setup(read_leader_gone, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
