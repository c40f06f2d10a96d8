// SPDX-License-Identifier: MIT
/*
 * One perf event per thread (pid = tid, cpu = -1) and its mapped ring:
 * the control page with the data area, and the AUX area apart.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"

size_t bt_page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

void bt_perf_event_init(struct bt_perf_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
}

int bt_perf_event_open(struct bt_perf_event *ev, struct perf_event_attr *attr,
		       pid_t tid)
{
	long fd;

	attr->size = sizeof(*attr);
	fd = syscall(SYS_perf_event_open, attr, tid, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return bt_fail(bt_errno_to_bte(errno), errno,
			       "perf_event_open(type %u, thread %d)",
			       attr->type, (int)tid);
	ev->fd = (int)fd;
	return 0;
}

/* The kernel refuses a mapping over the mlock limit with EPERM (ENOMEM
 * when allocation fails): worth retrying smaller. */
static int mlock_refusal(int e)
{
	return e == EPERM || e == ENOMEM;
}

int bt_perf_event_map(struct bt_perf_event *ev, size_t data_size,
		      size_t min_size, int overwrite)
{
	size_t page = bt_page_size();
	int prot = PROT_READ | (overwrite ? 0 : PROT_WRITE);
	void *p;

	if (!bt_is_pow2(data_size) || data_size < page || min_size > data_size)
		return bt_fail(bte_invalid, 0, "buffer size %zu", data_size);
	if (min_size < page)
		min_size = page;
	for (;;) {
		p = mmap(NULL, page + data_size, prot, MAP_SHARED, ev->fd, 0);
		if (p != MAP_FAILED)
			break;
		if (!mlock_refusal(errno) || data_size / 2 < min_size)
			return bt_fail(bt_errno_to_bte(errno), errno,
				       "mmap perf ring of %zu bytes", data_size);
		data_size /= 2;
	}
	ev->base = p;
	ev->base_len = page + data_size;
	ev->layout.page = p;
	ev->layout.data = (const uint8_t *)p + page;
	ev->layout.data_size = data_size;
	return 0;
}

int bt_perf_event_map_aux(struct bt_perf_event *ev, size_t aux_size,
			  size_t min_size)
{
	struct perf_event_mmap_page *pg = ev->layout.page;
	size_t page = bt_page_size();
	void *p;

	if (!pg || !bt_is_pow2(aux_size) || aux_size < page)
		return bt_fail(bte_invalid, 0, "aux size %zu", aux_size);
	if (min_size < page)
		min_size = page;
	for (;;) {
		pg->aux_offset = ev->base_len;
		pg->aux_size = aux_size;
		/* Read-only: the kernel makes the AUX ring overwrite. */
		p = mmap(NULL, aux_size, PROT_READ, MAP_SHARED, ev->fd,
			 (off_t)pg->aux_offset);
		if (p != MAP_FAILED)
			break;
		if (!mlock_refusal(errno) || aux_size / 2 < min_size)
			return bt_fail(bt_errno_to_bte(errno), errno,
				       "mmap perf aux area of %zu bytes", aux_size);
		aux_size /= 2;
	}
	ev->aux = p;
	ev->aux_len = aux_size;
	ev->layout.aux = p;
	ev->layout.aux_size = aux_size;
	return 0;
}

int bt_perf_event_enable(struct bt_perf_event *ev, int on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;

	if (ioctl(ev->fd, req, 0) < 0)
		return bt_fail(bt_errno_to_bte(errno), errno, "perf %s",
			       on ? "enable" : "disable");
	return 0;
}

void bt_perf_event_release(struct bt_perf_event *ev)
{
	if (!ev)
		return;
	if (ev->aux)
		munmap(ev->aux, ev->aux_len);
	if (ev->base)
		munmap(ev->base, ev->base_len);
	if (ev->fd >= 0)
		close(ev->fd);
	bt_perf_event_init(ev);
}

/* The densest PSB period up to 4 KiB (2^(n+11) bytes) the caps offer. */
static int pt_psb_period(const char *pmu_dir, uint64_t *period)
{
	uint64_t cyc, periods;

	if (bt_pmu_cap(pmu_dir, "psb_cyc", &cyc) || !cyc ||
	    bt_pmu_cap(pmu_dir, "psb_periods", &periods) || !periods)
		return -1;
	*period = (periods & 2) ? 1 : (uint64_t)__builtin_ctzll(periods);
	return 0;
}

int bt_pt_attr_init(struct perf_event_attr *attr, const char *pmu_dir)
{
	uint64_t period;
	int type, ret;

	memset(attr, 0, sizeof(*attr));
	type = bt_pmu_type(pmu_dir);
	if (type < 0)
		return type;
	attr->type = (uint32_t)type;
	attr->size = sizeof(*attr);
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	ret = bt_pmu_term_set(pmu_dir, "pt", 1, attr);
	if (ret && ret != -bte_noent)	/* older kernels set it implicitly */
		return ret;
	/* Branch tracing is the point; without the term it is always on. */
	ret = bt_pmu_term_set(pmu_dir, "branch", 1, attr);
	if (ret && ret != -bte_noent)
		return ret;
	/* Optional terms: compressed returns keep the stream small. */
	bt_pmu_term_set(pmu_dir, "noretcomp", 0, attr);
	bt_pt_attr_time(attr, pmu_dir);
	if (!pt_psb_period(pmu_dir, &period))
		bt_pmu_term_set(pmu_dir, "psb_period", period, attr);
	return 0;
}

void bt_bts_attr_init(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_HARDWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
	attr->sample_period = 1;	/* with period 1 the kernel uses BTS */
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}
