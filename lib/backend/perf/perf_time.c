// SPDX-License-Identifier: MIT
/*
 * Time in Intel PT through perf: the timing packets an event asks for,
 * and what a decoder needs to turn them into ns of CLOCK_MONOTONIC.
 *
 * TSC packets (in every PSB+, and where tracing resumes) give the full
 * time; MTC packets between them give it every 2^mtc_period ticks of the
 * crystal clock (a 2-byte packet), which libipt scales to TSC ticks with
 * CPUID.15H.  CYC is left off: it puts a cycle count before most packets
 * (about as many bytes again as the branches, by Intel's and perf's
 * figures), so a snapshot ring holds half the history, for a precision
 * below the MTC period that instruction counts already interpolate.
 */
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"
#include "tracer/tracer.h"

#define MTC_PERIOD 3		/* perf's default */

/* The MTC period the caps offer nearest MTC_PERIOD; -1 without MTC. */
static int pt_mtc_period(const char *pmu_dir)
{
	uint64_t mtc, periods;
	int d;

	if (bt_pmu_cap(pmu_dir, "mtc", &mtc) || !mtc ||
	    bt_pmu_cap(pmu_dir, "mtc_periods", &periods))
		return -1;
	for (d = 0; d < 16; d++) {
		if (periods & (1ull << (MTC_PERIOD + d)))
			return MTC_PERIOD + d;
		if (d <= MTC_PERIOD && (periods & (1ull << (MTC_PERIOD - d))))
			return MTC_PERIOD - d;
	}
	return -1;
}

void bt_pt_attr_time(struct perf_event_attr *attr, const char *pmu_dir)
{
	int period = pt_mtc_period(pmu_dir);

	/* Terms a PMU lacks stay as the hardware's default: off. */
	bt_pmu_term_set(pmu_dir, "tsc", 1, attr);
	bt_pmu_term_set(pmu_dir, "cyc", 0, attr);
	if (period < 0 ||
	    bt_pmu_term_set(pmu_dir, "mtc_period", (uint64_t)period, attr)) {
		bt_pmu_term_set(pmu_dir, "mtc", 0, attr);
		return;
	}
	bt_pmu_term_set(pmu_dir, "mtc", 1, attr);
}

uint8_t bt_pt_mtc_freq(const char *pmu_dir, uint64_t config)
{
	struct perf_event_attr attr = { .config = config };
	uint64_t on, period;

	if (bt_pmu_term_get(pmu_dir, "mtc", &attr, &on) || !on ||
	    bt_pmu_term_get(pmu_dir, "mtc_period", &attr, &period))
		return 0;
	return (uint8_t)period;
}

/* The page's conversion, consistent: the kernel may update it meanwhile. */
static int page_conv(const struct perf_event_mmap_page *pg,
		     struct bt_tsc_conv *conv)
{
	const volatile struct perf_event_mmap_page *v = pg;
	uint32_t seq;
	int ok;

	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		ok = v->cap_user_time_zero;
		conv->time_zero = v->time_zero;
		conv->time_mult = v->time_mult;
		conv->time_shift = v->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq);
	return ok && conv->time_mult ? 0 : -1;
}

void bt_perf_tsc_conv(const struct perf_event_mmap_page *pg,
		      struct bt_tsc_conv *conv)
{
	uint64_t tsc, ns;

	memset(conv, 0, sizeof(*conv));
	if (!pg || page_conv(pg, conv)) {
		memset(conv, 0, sizeof(*conv));
		return;
	}
	/* perf's clock and CLOCK_MONOTONIC differ by a constant: measure it. */
	bt_clock_tsc_pair(&tsc, &ns);
	conv->mono_offset = (int64_t)(ns - bt_tsc_conv_ns(conv, tsc));
}
