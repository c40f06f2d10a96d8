/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CAPTURE_H
#define BTRACE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What a backend hands to the decoder for one thread: raw trace bytes in
 * the backend's native format, copied out of its ring when the target
 * stopped.  The same bytes go into trace files unchanged.
 */

enum bt_format {
	BT_FMT_NONE = 0,
	BT_FMT_SOFT,	 /* bt_ring records (ring.h), oldest first */
	BT_FMT_BTS,	 /* 24-byte {from, to, flags} records (intel_bts), oldest first */
	BT_FMT_PERF_BTS, /* PERF_RECORD_SAMPLE {header, ip, addr}, 24 bytes each, oldest first */
	BT_FMT_PT,	 /* Intel PT packets */
	BT_FMT_MAX
};

enum bt_cpu_vendor { BT_CPU_UNKNOWN = 0, BT_CPU_INTEL, BT_CPU_AMD };

/* CPU identity, for libipt's errata workarounds. */
struct bt_cpu {
	uint8_t vendor;	/* enum bt_cpu_vendor */
	uint8_t model;
	uint8_t stepping;
	uint16_t family;
};

/*
 * A TSC value into ns of CLOCK_MONOTONIC: perf's conversion into its own
 * clock, as a perf mmap's control page gives it (time_zero, time_mult,
 * time_shift, valid where cap_user_time_zero is set: perf_event_open(2)),
 * plus how far CLOCK_MONOTONIC was ahead of perf's clock when the capture
 * was taken (the two run at one rate but from different origins).
 * time_mult 0: no conversion (no PT timing, older trace files).
 */
struct bt_tsc_conv {
	uint64_t time_zero;
	uint32_t time_mult;
	uint16_t time_shift;
	int64_t mono_offset;
};

struct bt_capture {
	int format;		/* enum bt_format */
	pid_t tid;
	uint8_t *data;		/* malloc'ed, owned by the capture */
	size_t size;
	uint64_t lost;		/* records (soft, bts) or bytes (pt) overwritten */
	int status;		/* 0, or -bte_torn/-bte_corrupt: data ends early */
	struct bt_cpu cpu;
	/* PT only: the perf attr config used, for the decoder's setup. */
	uint64_t pt_config;
	uint32_t pt_mtc_freq, pt_nom_freq, pt_cpuid_15_eax, pt_cpuid_15_ebx;
	/* PT only: its TSC and MTC packets' time in ns (trace format 1.3). */
	struct bt_tsc_conv pt_time;
};

/*
 * Release the data of @cap (not @cap itself) and leave it empty; accepts
 * NULL.  Never fails.
 */
void bt_capture_release(struct bt_capture *cap);

/*
 * The name of capture format @format (enum bt_format): "soft", "bts",
 * "perf-bts", "pt", "none".  Never fails: "?" for out of range.
 */
const char *bt_format_name(int format);

/*
 * @tsc in ns of CLOCK_MONOTONIC through @conv, perf's formula (quotient
 * and remainder by 2^time_shift, so that no product overflows); 0 if
 * @conv has no conversion.  Never fails.
 */
uint64_t bt_tsc_conv_ns(const struct bt_tsc_conv *conv, uint64_t tsc);

/* Fill @cpu with the CPU this runs on, from CPUID.  Never fails. */
void bt_cpu_read(struct bt_cpu *cpu);

#endif /* BTRACE_CAPTURE_H */
