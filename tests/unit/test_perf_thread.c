// SPDX-License-Identifier: MIT
/*
 * A traced thread's event through its life, on the real kernel: opened on
 * another process's stopped thread, captured at stops (event disabled),
 * re-enabled before it runs, a final capture kept after it exits, and the
 * ring shrunk to what the mlock limit allows.  The event is a page-fault
 * sampler: its samples have the BTS layout and known addresses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "backend/perf/perf.h"

#define AREA ((uintptr_t)0x5a5a00000000ull)
#define NPAGE 40

static void fault_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_PAGE_FAULTS;
	attr->sample_period = 1;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/* The child: stop, touch pages 0..NPAGE-1, stop, touch the rest, exit. */
static void child(void)
{
	size_t page = bt_page_size(), i;
	volatile uint8_t *p = mmap((void *)AREA, 2 * NPAGE * page,
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS |
				   MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	madvise((void *)p, 2 * NPAGE * page, MADV_NOHUGEPAGE);
	raise(SIGSTOP);
	for (i = 0; i < NPAGE; i++)
		p[i * page] = 1;
	raise(SIGSTOP);
	for (i = NPAGE; i < 2 * NPAGE; i++)
		p[i * page] = 1;
	_exit(0);
}

/* The capture holds faults on pages [first, last) of the area, in order,
 * followed by none on the area (faults elsewhere may follow: libc code). */
static void assert_faults(const struct bt_capture *cap, size_t first,
			  size_t last)
{
	size_t n = cap->size / BT_PERF_BTS_REC_SIZE, i, j = first;
	struct bt_perf_bts_rec r;

	assert_int_equal(cap->format, BT_FMT_PERF_BTS);
	for (i = 0; i < n; i++) {
		memcpy(&r, cap->data + i * sizeof(r), sizeof(r));
		if (r.to < AREA || r.to >= AREA + 2 * NPAGE * bt_page_size())
			continue;
		if (j < last && r.to == AREA + j * bt_page_size())
			j++;
		else
			fail_msg("fault on %#llx after page %zu",
				 (unsigned long long)r.to, j);
	}
	assert_int_equal(j, last);
}

static void wait_stop(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
}

static void thread_capture(void **state)
{
	struct perf_event_attr attr;
	struct bt_perf_thread pt;
	struct bt_capture cap;
	size_t granted;
	pid_t pid;
	int st;

	pid = fork();
	if (!pid)
		child();
	wait_stop(pid);
	fault_attr(&attr);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr, pid,
					     64 * 1024, &granted), 0);
	assert_int_equal(granted, 64 * 1024);
	kill(pid, SIGCONT);
	wait_stop(pid);

	assert_int_equal(bt_perf_thread_capture(&pt, &cap), 0);
	assert_int_equal(cap.tid, pid);
	assert_int_equal(cap.status, 0);
	assert_true(pt.disabled);
	assert_faults(&cap, 0, NPAGE);
	bt_capture_release(&cap);

	assert_int_equal(bt_perf_thread_ready(&pt), 0);
	assert_false(pt.disabled);
	kill(pid, SIGCONT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* gone: the last capture outlives the event */
	bt_perf_thread_close(&pt);
	assert_int_equal(pt.ev.fd, -1);
	assert_int_equal(bt_perf_thread_capture(&pt, &cap), 0);
	assert_faults(&cap, 0, 2 * NPAGE);
	bt_capture_release(&cap);
	bt_perf_thread_release(&pt);
}

/* A disabled event records nothing: what the capture's disable means. */
static void thread_capture_disabled(void **state)
{
	struct perf_event_attr attr;
	struct bt_perf_thread pt;
	struct bt_capture cap;
	size_t granted, before;
	pid_t pid;
	int st;

	pid = fork();
	if (!pid)
		child();
	wait_stop(pid);
	fault_attr(&attr);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr, pid,
					     64 * 1024, &granted), 0);
	assert_int_equal(bt_perf_thread_capture(&pt, &cap), 0);
	before = cap.size;
	bt_capture_release(&cap);
	/* not made ready: the run to the next stop goes unrecorded */
	kill(pid, SIGCONT);
	wait_stop(pid);
	assert_int_equal(bt_perf_thread_capture(&pt, &cap), 0);
	assert_int_equal(cap.size, before);
	bt_capture_release(&cap);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	bt_perf_thread_release(&pt);
}

static void thread_open_null(void **state)
{
	struct perf_event_attr attr;
	struct bt_perf_thread pt;
	size_t granted;

	fault_attr(&attr);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr,
					     getpid(), 5000, &granted),
			 -bte_invalid);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr,
					     getpid(), bt_page_size() / 2,
					     &granted), -bte_invalid);
	/* one page is enough to open */
	fault_attr(&attr);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr,
					     getpid(), bt_page_size(), &granted), 0);
	assert_int_equal(granted, bt_page_size());
	bt_perf_thread_release(&pt);
	fault_attr(&attr);
	assert_int_equal(bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr,
					     999999999, 65536, &granted),
			 -bte_noent);
	bt_perf_thread_release(NULL);
}

/* Without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 0 only the per-user perf
 * allowance is left: a big ring is refused, a smaller one granted. */
static int shrink_child(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	struct rlimit rl = { 0, 0 };
	struct perf_event_attr attr;
	struct bt_perf_thread pt;
	size_t granted, want = 64ul << 20;

	if (syscall(SYS_capget, &hdr, data))
		return 10;
	data[0].effective &= ~(1u << CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, data) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 11;
	fault_attr(&attr);
	if (bt_perf_thread_open(&pt, BT_PERF_SAMPLES, &attr, getpid(), want,
				&granted))
		return 12;
	printf("granted %zu of %zu\n", granted, want);
	fflush(stdout);
	if (granted >= want || !bt_is_pow2(granted) ||
	    granted < 4 * bt_page_size())
		return 13;
	bt_perf_thread_release(&pt);
	return 0;
}

static void thread_open_shrink(void **state)
{
	pid_t pid = fork();
	int st;

	if (!pid)
		_exit(shrink_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_capture),
		cmocka_unit_test(thread_capture_disabled),
		cmocka_unit_test(thread_open_null),
		cmocka_unit_test(thread_open_shrink),
	};
	struct perf_event_attr attr;
	long fd;

	fault_attr(&attr);
	attr.size = sizeof(attr);
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("perf_event_open of a software event failed: %s; "
		       "see btrace doctor\n", strerror(errno));
		return 77;
	}
	close((int)fd);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
