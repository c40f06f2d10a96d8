// SPDX-License-Identifier: MIT
/*
 * One traced thread's perf event through its life: open and map when the
 * thread joins, disable + read on each stop, enable before it runs, and a
 * last capture kept when it leaves.
 */
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"

#define MIN_PAGES 4

int bt_perf_thread_open(struct bt_perf_thread *pth, int mode,
			struct perf_event_attr *attr, pid_t tid, size_t size,
			size_t *granted)
{
	size_t page = bt_page_size();
	size_t floor = size < MIN_PAGES * page ? size : MIN_PAGES * page;
	int ret;

	memset(pth, 0, sizeof(*pth));
	bt_perf_event_init(&pth->ev);
	pth->mode = mode;
	pth->tid = tid;
	pth->config = attr->config;

	if (!bt_is_pow2(size) || size < page)
		return bt_fail(bte_invalid, 0,
			       "buffer size %zu: a power of two of at least %zu",
			       size, page);
	attr->inherit = 0;
	ret = bt_perf_event_open(&pth->ev, attr, tid);
	if (ret)
		return ret;
	if (mode == BT_PERF_AUX) {
		/* The data area only collects the kernel's AUX notes. */
		ret = bt_perf_event_map(&pth->ev, page, page, 0);
		if (!ret)
			ret = bt_perf_event_map_aux(&pth->ev, size, floor);
		*granted = pth->ev.layout.aux_size;
	} else {
		ret = bt_perf_event_map(&pth->ev, size, floor, 1);
		*granted = pth->ev.layout.data_size;
	}
	if (ret)
		bt_perf_event_release(&pth->ev);
	return ret;
}

static int copy_capture(const struct bt_capture *from, struct bt_capture *to)
{
	*to = *from;
	to->data = malloc(from->size ? from->size : 1);
	if (!to->data)
		return bt_fail(bte_nomem, 0, "capture copy");
	memcpy(to->data, from->data, from->size);
	return 0;
}

void bt_perf_pt_params(struct bt_capture *cap, uint64_t config)
{
	unsigned int a, b, c, d;
	uint64_t ratio;

	bt_cpu_read(&cap->cpu);
	cap->pt_config = config;
	cap->pt_mtc_freq = bt_pt_mtc_freq(BT_PT_PMU_DIR, config);
	if (!bt_pmu_read_u64(BT_PT_PMU_DIR, "max_nonturbo_ratio", &ratio))
		cap->pt_nom_freq = (uint32_t)ratio;
	if (__get_cpuid_max(0, NULL) >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		cap->pt_cpuid_15_eax = a;
		cap->pt_cpuid_15_ebx = b;
	}
}

int bt_perf_thread_capture(struct bt_perf_thread *pth, struct bt_capture *cap)
{
	struct bt_perf_read r;
	int ret;

	if (pth->closed)
		return copy_capture(&pth->saved, cap);
	memset(cap, 0, sizeof(*cap));
	/* Errors are ignored: a gone thread's event is stopped already. */
	if (!bt_perf_event_enable(&pth->ev, 0))
		pth->disabled = 1;
	if (pth->mode == BT_PERF_AUX)
		ret = bt_perf_aux_read(&pth->ev.layout, &r);
	else
		ret = bt_perf_bts_read(&pth->ev.layout, &r);
	if (ret < 0)
		return ret;
	cap->format = pth->mode == BT_PERF_AUX ? BT_FMT_PT : BT_FMT_PERF_BTS;
	cap->tid = pth->tid;
	cap->data = r.data;
	cap->size = r.size;
	cap->lost = r.lost;
	cap->status = r.status;
	if (pth->mode == BT_PERF_AUX) {
		bt_perf_pt_params(cap, pth->config);
		bt_perf_tsc_conv(pth->ev.layout.page, &cap->pt_time);
	} else {
		bt_cpu_read(&cap->cpu);	/* BTS carries no time */
	}
	return 0;
}

int bt_perf_thread_ready(struct bt_perf_thread *pth)
{
	int ret;

	if (pth->closed || !pth->disabled)
		return 0;
	ret = bt_perf_event_enable(&pth->ev, 1);
	if (!ret)
		pth->disabled = 0;
	return ret;
}

void bt_perf_thread_close(struct bt_perf_thread *pth)
{
	if (pth->closed)
		return;
	if (bt_perf_thread_capture(pth, &pth->saved))
		memset(&pth->saved, 0, sizeof(pth->saved));
	bt_perf_event_release(&pth->ev);
	pth->closed = 1;
}

void bt_perf_thread_release(struct bt_perf_thread *pth)
{
	if (!pth)
		return;
	if (!pth->closed)
		bt_perf_event_release(&pth->ev);
	bt_capture_release(&pth->saved);
	pth->closed = 1;
}
