// SPDX-License-Identifier: MIT
/*
 * The readers on the real kernel's rings.  No hardware PMU is needed:
 * page-fault samples with sample_type IP|ADDR are 24-byte
 * PERF_RECORD_SAMPLEs laid out exactly like BTS samples, and a fault's
 * ADDR is the address we touched, which gives ground truth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "backend/perf/perf.h"

static int open_faults(struct bt_perf_event *ev, int backward)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR |
			   (backward ? PERF_SAMPLE_TIME : 0);
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.disabled = 1;
	attr.write_backward = backward;
	bt_perf_event_init(ev);
	return bt_perf_event_open(ev, &attr, gettid());
}

/* Touch @n fresh pages in order; their addresses go to @addr. */
static void fault_pages(uint64_t *addr, size_t n)
{
	size_t page = bt_page_size(), i;
	volatile uint8_t *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	/* one fault per page: no transparent huge page for the region */
	madvise((void *)p, n * page, MADV_NOHUGEPAGE);
	/* fill @addr first: its own first touch would fault in between */
	for (i = 0; i < n; i++)
		addr[i] = (uint64_t)(uintptr_t)(p + i * page + 8);
	for (i = 0; i < n; i++)
		p[i * page + 8] = 1;
	munmap((void *)p, n * page);
}

/*
 * The faults on the touched pages (@addr) found in the result are
 * consecutive and end with the last page: the newest records, in order.
 * Faults elsewhere (libc, sanitizer shadow memory) may sit in between.
 * Returns how many of the touched pages are there.
 */
static size_t assert_tail(const struct bt_perf_read *r, const uint64_t *addr,
			  size_t n)
{
	size_t got = r->size / BT_PERF_BTS_REC_SIZE, i, j = 0, seen = 0;
	struct bt_perf_bts_rec rec;
	uint64_t lo = addr[0], hi = addr[n - 1];

	for (i = 0; i < got; i++) {
		memcpy(&rec, r->data + i * sizeof(rec), sizeof(rec));
		assert_int_equal(rec.hdr.type, PERF_RECORD_SAMPLE);
		assert_int_equal(rec.hdr.size, BT_PERF_BTS_REC_SIZE);
		if (rec.to < lo || rec.to > hi)
			continue;
		if (!seen)	/* the oldest one kept: find its page */
			while (j < n && addr[j] != rec.to)
				j++;
		if (j >= n || rec.to != addr[j])
			fail_msg("fault on %#llx out of order",
				 (unsigned long long)rec.to);
		j++;
		seen++;
	}
	assert_int_equal(j, n);
	return seen;
}

static void event_read(void **state)
{
	struct bt_perf_event ev;
	struct bt_perf_read r;
	uint64_t addr[64];

	if (open_faults(&ev, 0))
		skip();
	assert_int_equal(bt_perf_event_map(&ev, 64 * 1024, 0, 1), 0);
	assert_int_equal(bt_perf_event_enable(&ev, 1), 0);
	fault_pages(addr, 64);
	assert_int_equal(bt_perf_event_enable(&ev, 0), 0);
	assert_true(bt_perf_bts_read(&ev.layout, &r) >= 64);
	assert_int_equal(r.status, 0);
	assert_int_equal(assert_tail(&r, addr, 64), 64);
	bt_perf_read_release(&r);
	bt_perf_event_release(&ev);
	assert_int_equal(ev.fd, -1);
}

/* A one-page ring overwritten many times keeps the newest records whole. */
static void event_read_wrap(void **state)
{
	size_t n = 1000, keep = bt_page_size() / BT_PERF_BTS_REC_SIZE - 1;
	struct bt_perf_event ev;
	struct bt_perf_read r;
	static uint64_t addr[1000];

	if (open_faults(&ev, 0))
		skip();
	assert_int_equal(bt_perf_event_map(&ev, bt_page_size(), 0, 1), 0);
	assert_int_equal(bt_perf_event_enable(&ev, 1), 0);
	fault_pages(addr, n);
	assert_int_equal(bt_perf_event_enable(&ev, 0), 0);
	assert_true(bt_perf_bts_read(&ev.layout, &r) >= (int)keep);
	assert_int_equal(r.status, 0);
	assert_true(r.lost >= n - keep - 1);
	/* a full ring of records, the newest of our faults among them */
	assert_true(r.size >= keep * BT_PERF_BTS_REC_SIZE);
	assert_true(assert_tail(&r, addr, n) >= keep / 4);
	bt_perf_read_release(&r);
	bt_perf_event_release(&ev);
}

/* write_backward with the sample time: the backward reader, for real. */
static void event_read_backward(void **state)
{
	size_t n = 500, keep = 60;
	struct bt_perf_event ev;
	struct bt_perf_read r;
	static uint64_t addr[500];

	if (open_faults(&ev, 1))
		skip();
	assert_int_equal(bt_perf_event_map(&ev, bt_page_size(), 0, 1), 0);
	assert_int_equal(bt_perf_event_enable(&ev, 1), 0);
	fault_pages(addr, n);
	assert_int_equal(bt_perf_event_enable(&ev, 0), 0);
	assert_true(bt_perf_bts_read_backward(&ev.layout, &r) >= (int)keep);
	assert_true(assert_tail(&r, addr, n) >= keep / 4);
	bt_perf_read_release(&r);
	bt_perf_event_release(&ev);
}

static void event_map_null(void **state)
{
	struct bt_perf_event ev;

	bt_perf_event_release(NULL);
	if (open_faults(&ev, 0))
		skip();
	assert_int_equal(bt_perf_event_map(&ev, 3 * 4096, 0, 1), -bte_invalid);
	assert_int_equal(bt_perf_event_map(&ev, bt_page_size(), 0, 0), 0);
	/* a software event has no AUX area */
	assert_true(bt_perf_event_map_aux(&ev, bt_page_size(), 0) < 0);
	bt_perf_event_release(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_read),
		cmocka_unit_test(event_read_wrap),
		cmocka_unit_test(event_read_backward),
		cmocka_unit_test(event_map_null),
	};
	struct bt_perf_event ev;

	if (open_faults(&ev, 0)) {
		printf("perf_event_open of a software event failed: %s (%s); "
		       "see btrace doctor\n", bt_errstr(-bte_perm),
		       strerror(bt_errno()));
		return 77;
	}
	bt_perf_event_release(&ev);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
