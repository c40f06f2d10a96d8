/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PERF_H
#define BTRACE_PERF_H

/*
 * perf_event plumbing for the hardware backends (perf_backend.c: pt, bts):
 * opening one event per thread, mapping its ring, and reading the ring
 * back after the kernel wrote it in overwrite mode.
 *
 * The readers depend only on a memory layout (struct bt_perf_layout): the
 * control page and the data and AUX areas.  The same code runs on the
 * kernel's mmaps and on a test's simulated kernel memory, so every reader
 * is proven on any host (tests/unit/test_perf_*.c).
 *
 * Facts the readers rely on (kernel/events/ring_buffer.c,
 * arch/x86/events/intel/{ds,pt}.c):
 *  - A read-only mapping makes the ring overwrite: the kernel ignores
 *    data_tail.  A forward ring's data_head is a free-running byte count
 *    from 0; a write_backward ring's data_head runs down from 0 (so
 *    -data_head bytes were written) and each reservation is written
 *    upwards from the new head.
 *  - BTS samples (sample_type IP|ADDR) are 24 bytes each.  The kernel
 *    drains the hardware buffer in batches: one reservation per batch,
 *    records in time order inside it.  So a forward ring holds records in
 *    time order; a backward ring holds batches newest first, each batch
 *    oldest first inside, and nothing marks where a batch ends except the
 *    sample time (all samples of a batch share it).
 *  - The AUX area mapped read-only is a snapshot ring: PT writes it
 *    circularly and aux_head tells where the next byte goes (an offset
 *    into the area for intel_pt, a free-running count for other drivers;
 *    the reader works with both).  Pages never written are zeros, which
 *    decode as PAD packets.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/capture.h"

/* A ring as the reader sees it; pointers into real or simulated memory. */
struct bt_perf_layout {
	struct perf_event_mmap_page *page;	/* control page */
	const uint8_t *data;	/* data area (may be NULL if unused) */
	size_t data_size;	/* bytes, power of two */
	const uint8_t *aux;	/* AUX area or NULL */
	size_t aux_size;	/* bytes, power of two */
	/*
	 * Optional: load data_head (@aux 0) or aux_head (@aux 1).  Default:
	 * an acquire load from the control page.  Tests use it to let a
	 * simulated writer race the reader.
	 */
	uint64_t (*load_head)(void *ctx, int aux);
	void *ctx;
};

/* One BTS sample as perf writes it with sample_type IP|ADDR. */
struct bt_perf_bts_rec {
	struct perf_event_header hdr;	/* PERF_RECORD_SAMPLE, size 24 */
	uint64_t from;			/* PERF_SAMPLE_IP: the branch */
	uint64_t to;			/* PERF_SAMPLE_ADDR: its target */
};

/* The same with sample_type IP|TIME|ADDR (for write_backward rings). */
struct bt_perf_bts_trec {
	struct perf_event_header hdr;	/* PERF_RECORD_SAMPLE, size 32 */
	uint64_t from;
	uint64_t time;			/* one value per drained batch */
	uint64_t to;
};

#define BT_PERF_BTS_REC_SIZE 24
#define BT_PERF_BTS_TREC_SIZE 32

/* What a reader got: malloc'ed bytes, owned by the caller. */
struct bt_perf_read {
	uint8_t *data;
	size_t size;
	uint64_t lost;		/* records (BTS) or bytes (AUX) known overwritten */
	int status;		/* 0, -bte_corrupt or -bte_torn: data ends early */
};

/*
 * Read a forward-written overwrite ring of 24-byte BTS samples: step back
 * from data_head one record at a time, validating each header, until the
 * oldest record still whole in the ring.  data_head is re-read after the
 * copy and records the writer reached meanwhile are dropped.
 * Fills @out with struct bt_perf_bts_rec records oldest first (the
 * BT_FMT_PERF_BTS format) and lost with the records overwritten.
 * Returns the number of records, -bte_invalid for a bad layout, -bte_nomem.
 * An invalid header stops the walk: the newer records are kept and
 * out->status is -bte_corrupt.
 */
int bt_perf_bts_read(const struct bt_perf_layout *l, struct bt_perf_read *out);

/*
 * Read a write_backward overwrite ring of 32-byte BTS samples (sample_type
 * IP|TIME|ADDR): walk forward from data_head, cut the records into batches
 * by their time, and emit the batches in reverse order so that the result
 * is strictly oldest first, as 24-byte struct bt_perf_bts_rec records.
 * When the ring has wrapped, the oldest batch in it lost its newest
 * records to the wrap (its end was overwritten): it is dropped whole,
 * counted in lost, so that the history has no hole in the middle.
 * Returns the number of records, -bte_invalid, -bte_nomem; out->status as
 * for bt_perf_bts_read().
 */
int bt_perf_bts_read_backward(const struct bt_perf_layout *l,
			      struct bt_perf_read *out);

/*
 * Copy the AUX area of a snapshot (read-only AUX) ring: the last aux_size
 * bytes ending at aux_head, in order (two pieces when the write position
 * is not at the start).  The never-written part stays as zeros for the
 * decoder, which syncs at the first PSB.  lost is aux_head - aux_size when
 * the driver's head is free-running and passed the size, else 0 (unknown).
 * Returns the number of bytes, -bte_invalid, -bte_nomem; out->status is
 * -bte_torn if aux_head moved during the copy.
 */
int bt_perf_aux_read(const struct bt_perf_layout *l, struct bt_perf_read *out);

/* Free what a reader returned; accepts NULL. */
void bt_perf_read_release(struct bt_perf_read *out);

/*
 * A PMU's sysfs directory (/sys/bus/event_source/devices/<name>): its type
 * and the config terms of format/ ("config:0-7", "config1:0,2-3").
 */
#define BT_PMU_DIR "/sys/bus/event_source/devices"

/* The PMU's type (for perf_event_attr.type), or a negative bt_error. */
int bt_pmu_type(const char *pmu_dir);

/*
 * Set format term @term of @pmu_dir to @value in @attr (config, config1 or
 * config2, bits as the format file says).
 * Returns 0; -bte_noent if the PMU has no such term; -bte_invalid if @value
 * does not fit the term's bits; -bte_format for an unreadable format line.
 */
int bt_pmu_term_set(const char *pmu_dir, const char *term, uint64_t value,
		    struct perf_event_attr *attr);

/*
 * The value of format term @term in @attr (the inverse of
 * bt_pmu_term_set).  Returns 0, -bte_noent or -bte_format as it does.
 */
int bt_pmu_term_get(const char *pmu_dir, const char *term,
		    const struct perf_event_attr *attr, uint64_t *value);

/*
 * Parse one format string into the field it lives in (0 config, 1
 * config1, 2 config2) and the mask of its bits in that field.
 * Returns 0 or -bte_format.
 */
int bt_pmu_format_parse(const char *s, int *field, uint64_t *mask);

/* Read caps/@cap (hex, as the kernel prints them) into *@value. */
int bt_pmu_cap(const char *pmu_dir, const char *cap, uint64_t *value);

/* Read a decimal file in @pmu_dir (e.g. max_nonturbo_ratio). */
int bt_pmu_read_u64(const char *pmu_dir, const char *file, uint64_t *value);

/*
 * One thread's perf event and its mapped ring.  fd starts at -1.
 * Mapping: the control page and data area together, and the AUX area apart.
 */
struct bt_perf_event {
	int fd;
	void *base;		/* control page + data area */
	size_t base_len;
	void *aux;		/* AUX area or NULL */
	size_t aux_len;
	struct bt_perf_layout layout;
};

void bt_perf_event_init(struct bt_perf_event *ev);

/* perf_event_open(@attr, @tid, cpu -1, no group, CLOEXEC). */
int bt_perf_event_open(struct bt_perf_event *ev, struct perf_event_attr *attr,
		       pid_t tid);

/*
 * Map the control page and @data_size bytes of data area (power of two,
 * at least a page), read-write or read-only (@overwrite).  When the kernel
 * refuses for the mlock limit, retries with half the size down to
 * @min_size; the size obtained is in ev->layout.data_size.
 * Returns 0; -bte_invalid for a size that is not a power of two;
 * -bte_perm or -bte_nomem when even @min_size is refused.
 */
int bt_perf_event_map(struct bt_perf_event *ev, size_t data_size,
		      size_t min_size, int overwrite);

/*
 * Map an AUX area of @aux_size bytes read-only (snapshot mode) after the
 * data area, writing aux_offset and aux_size into the control page (mapped
 * read-write for that); halves down to @min_size like bt_perf_event_map().
 */
int bt_perf_event_map_aux(struct bt_perf_event *ev, size_t aux_size,
			  size_t min_size);

/* PERF_EVENT_IOC_ENABLE / DISABLE (disabling flushes PT). */
int bt_perf_event_enable(struct bt_perf_event *ev, int on);

/* Unmap and close; the event is back to its init state. */
void bt_perf_event_release(struct bt_perf_event *ev);

/*
 * Attributes of the hardware backends' events, per thread, user space
 * only, created enabled.  PT: the intel_pt PMU at @pmu_dir with branch
 * tracing, return compression, the densest PSB period the caps allow up
 * to 4 KiB, and time: TSC packets, and MTC packets at the period nearest
 * perf's default (2^3 crystal clock ticks) where caps/mtc says the CPU
 * has them; no CYC (see perf.c).  BTS: PERF_TYPE_HARDWARE branch
 * instructions with period 1, sample_type IP|ADDR.
 * Returns 0 or a negative bt_error (PT: PMU or format terms missing).
 */
int bt_pt_attr_init(struct perf_event_attr *attr, const char *pmu_dir);
/* The timing terms of that (perf_time.c); terms the PMU lacks are skipped. */
void bt_pt_attr_time(struct perf_event_attr *attr, const char *pmu_dir);
void bt_bts_attr_init(struct perf_event_attr *attr);

#define BT_PT_PMU_DIR BT_PMU_DIR "/intel_pt"

/*
 * The MTC frequency libipt needs (IA32_RTIT_CTL.MTCFreq) of a PT event
 * with attr.config @config: its mtc_period term, 0 where MTC is off or
 * the PMU has no such terms.
 */
uint8_t bt_pt_mtc_freq(const char *pmu_dir, uint64_t config);

/*
 * Perf's TSC conversion from the control page @pg (read under its
 * seqlock), and the offset from perf's clock to CLOCK_MONOTONIC now:
 * all zero where the kernel does not offer it (cap_user_time_zero 0).
 */
void bt_perf_tsc_conv(const struct perf_event_mmap_page *pg,
		      struct bt_tsc_conv *conv);

/*
 * One traced thread's hardware trace: its event, how to read it, and the
 * last capture kept after the thread is gone.
 */
enum bt_perf_mode {
	BT_PERF_AUX = 1,	/* PT: AUX snapshot area -> BT_FMT_PT */
	BT_PERF_SAMPLES,	/* BTS: 24-byte samples, forward -> BT_FMT_PERF_BTS */
};

struct bt_perf_thread {
	struct bt_perf_event ev;
	int mode;		/* enum bt_perf_mode */
	pid_t tid;
	uint64_t config;	/* attr.config, for the PT decoder */
	int disabled;		/* stopped for reading; enable before resume */
	int closed;		/* event released; only saved is left */
	struct bt_capture saved;	/* the final capture once closed */
};

/*
 * Open @attr on thread @tid and map its ring in @mode with @size bytes
 * (a power of two of at least a page; halved down to 4 pages when the
 * kernel refuses for the mlock limit: the size granted is in *@granted).
 * Returns 0 or a negative bt_error (the cause in bt_errdetail()).
 */
int bt_perf_thread_open(struct bt_perf_thread *pth, int mode,
			struct perf_event_attr *attr, pid_t tid, size_t size,
			size_t *granted);

/*
 * Copy the thread's trace into @cap (caller releases it): disables the
 * event first (flushing PT), so call bt_perf_thread_ready() before the
 * thread runs again.  Once closed, gives a copy of the final capture.
 * Returns 0 or a negative bt_error.
 */
int bt_perf_thread_capture(struct bt_perf_thread *pth, struct bt_capture *cap);

/* Re-enable the event if a capture disabled it.  0 or a bt_error. */
int bt_perf_thread_ready(struct bt_perf_thread *pth);

/* Keep the final capture and release the event (thread gone, detach). */
void bt_perf_thread_close(struct bt_perf_thread *pth);

/* Close if still open and free the saved capture; accepts NULL. */
void bt_perf_thread_release(struct bt_perf_thread *pth);

/*
 * PT decoder parameters of this host into @cap (cpu, cpuid 0x15, ratio,
 * the MTC frequency of @config); the time conversion is the event's.
 */
void bt_perf_pt_params(struct bt_capture *cap, uint64_t config);

/* The page size, and whether @n is a power of two. */
size_t bt_page_size(void);
int bt_is_pow2(size_t n);

#endif /* BTRACE_PERF_H */
