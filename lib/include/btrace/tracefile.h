/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TRACEFILE_H
#define BTRACE_TRACEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/capture.h"
#include "btrace/maps.h"
#include "btrace/target.h"

/*
 * Trace files: everything needed to show a stopped process's branch history
 * later, on another machine, without its binaries.  The format (versioned,
 * little-endian, sections of type + length, each checked by a CRC) is
 * described in docs/trace-format.md.
 *
 * A struct bt_trace owns everything it points to: bt_trace_free() releases
 * it all.  bt_trace_read() and bt_trace_from_target() allocate one; a
 * caller that builds one by hand may leave any array empty.
 */

/* A copy of executable memory: what the decoders need to walk the code. */
struct bt_trace_code {
	uint64_t vaddr;
	uint64_t size;
	uint8_t *bytes;		/* @size bytes */
};

/* A function symbol, saved so that show names code without the ELF files. */
struct bt_trace_sym {
	uint64_t addr;
	uint64_t size;		/* 0 if unknown */
	char *name;
};

struct bt_trace {
	pid_t pid;
	uint64_t created;	/* seconds since the epoch */
	char *exe;		/* the program's path, or NULL */
	char *backend;		/* "soft", "pt", "bts", or NULL */
	struct bt_stop stop;
	struct bt_stats stats;
	uint64_t buffer_size;	/* per-thread ring bytes, 0 if unknown */
	struct bt_maps maps;
	struct bt_capture *thread;	/* one per thread, raw native format */
	size_t nthreads;
	struct bt_trace_code *code;	/* sorted by vaddr, not overlapping */
	size_t ncode;
	struct bt_trace_sym *sym;	/* sorted by addr */
	size_t nsyms;
	/* faults the program's handlers took (bt_target_fault()), one at
	   most a thread; files written before load with none */
	struct bt_fault *fault;
	size_t nfaults;
	/* bt_trace_map(): the mapped file and what is left to check. */
	struct bt_trace_mapping *mapping;
};

/*
 * Snapshot the stopped @target: every thread's capture, the mappings with
 * build-ids, the bytes of every executable mapping (file-backed code, vDSO,
 * anonymous executable memory), function symbols of the mapped ELF files,
 * @stop (may be NULL), the backend, the statistics and the faults the
 * program's handlers took (bt_target_fault()).
 * Returns 0; -bte_invalid if @trace or @target is NULL; -bte_nomem; a
 * negative bt_error of bt_maps_read() (maps.h: -bte_noent if the process
 * is gone, -bte_perm...) or of bt_target_capture() (target.h: -bte_exited
 * if the process is gone); a thread that left meanwhile is skipped.
 */
int bt_trace_from_target(struct bt_trace **trace, struct bt_target *target,
			 const struct bt_stop *stop);

/*
 * Write @trace to @path: to a temporary file in the same directory, mode
 * 0600 (the file holds the process's code and addresses), renamed over
 * @path when complete, so a reader never sees a partial file.
 * Returns 0; -bte_invalid if @trace or @path is NULL, or @trace has more
 * than 2^32 maps or symbols; -bte_nomem; -bte_perm or -bte_noent if the
 * temporary file cannot be created in @path's directory; -bte_io if it
 * cannot be written or renamed (the cause in bt_errno()).
 */
int bt_trace_write(const struct bt_trace *trace, const char *path);

/*
 * bt_trace_from_target() then bt_trace_write().
 * Returns 0, or a negative bt_error as either of them.
 */
int bt_trace_save(struct bt_target *target, const struct bt_stop *stop,
		  const char *path);

/*
 * Load the trace file @path into a new *@trace.
 * Returns 0; -bte_invalid if @trace or @path is NULL; -bte_noent,
 * -bte_perm or -bte_io if it cannot be read; -bte_format if it is not a
 * regular file, not a trace file, or needs a newer btrace; -bte_corrupt if
 * it is truncated or damaged (bt_errdetail() says where); -bte_nomem.
 */
int bt_trace_read(struct bt_trace **trace, const char *path);

/*
 * Map the trace file @path into a new *@trace, for a reader that decodes a
 * part of a large trace (the last N branches): the threads' data and the
 * code point into the mapping, nothing is copied, and a thread's data
 * written with per-chunk checksums (format 1.1) is not checked until
 * bt_trace_check() asks for a range of it.  Everything else is checked as
 * bt_trace_read() does.  The mapping lives until bt_trace_free().
 * Returns as bt_trace_read(); also -bte_nomem, -bte_perm, -bte_nosys
 * or -bte_io if the file cannot be mapped.
 */
int bt_trace_map(struct bt_trace **trace, const char *path);

/*
 * Check the bytes [@begin, @end) of the data of @cap, a thread of @trace
 * from bt_trace_map(), against their chunks' checksums (each chunk once).
 * Data checked at load, or from bt_trace_read(), passes at once.
 * Returns 0; -bte_corrupt if a chunk's checksum does not match
 * (bt_errdetail() says where); -bte_invalid if @cap is not a thread of
 * @trace.
 */
int bt_trace_check(const struct bt_trace *trace, const struct bt_capture *cap,
		   uint64_t begin, uint64_t end);

/*
 * The same as bt_trace_read() from @len bytes at @buf (which may be freed
 * afterwards).  Returns 0; -bte_invalid if @trace is NULL or @buf is NULL
 * with @len > 0; -bte_format, -bte_corrupt, -bte_nomem as bt_trace_read().
 */
int bt_trace_parse(struct bt_trace **trace, const void *buf, size_t len);

/*
 * Serialise @trace into a malloc'ed buffer *@buf of *@len bytes, exactly
 * what bt_trace_write() puts in the file; the caller frees *@buf.
 * Returns 0; -bte_invalid if an argument is NULL or @trace has more than
 * 2^32 maps or symbols; -bte_nomem.
 */
int bt_trace_encode(const struct bt_trace *trace, uint8_t **buf, size_t *len);

/* Release @trace and all it owns (its mapping too); accepts NULL. */
void bt_trace_free(struct bt_trace *trace);

/* The fault thread @tid's handler took, kept in @trace; NULL if none. */
const struct bt_fault *bt_trace_fault(const struct bt_trace *trace,
				      pid_t tid);

/* The capture of thread @tid in @trace; NULL if none or @trace is NULL. */
const struct bt_capture *bt_trace_thread(const struct bt_trace *trace,
					 pid_t tid);

/*
 * The saved function containing @addr: its name and *@offset from its
 * start; NULL if none (a symbol of unknown size only matches up to the
 * next symbol and within one mapping).
 */
const char *bt_trace_symbol(const struct bt_trace *trace, uint64_t addr,
			    uint64_t *offset);

/*
 * Add the saved code of @trace to @image (image.h) as memory sections.
 * Implemented in libbtdecode (decoder/offline.c).  Returns 0;
 * -bte_invalid if @trace or @image is NULL; -bte_nomem or another negative
 * bt_error of bt_image_add_mem() (image.h).
 */
struct bt_image;
int bt_trace_add_image(const struct bt_trace *trace, struct bt_image *image);

#endif /* BTRACE_TRACEFILE_H */
