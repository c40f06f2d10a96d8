/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TRACEFILE_INTERNAL_H
#define BTRACE_TRACEFILE_INTERNAL_H

/*
 * Trace file layout constants shared by the writer (tracefile_write.c),
 * the reader (tracefile_read.c), the loaders (tracefile.c) and tests.
 */

#include <stddef.h>
#include <stdint.h>

#include "btrace/tracefile.h"

extern const uint8_t bt_trace_magic[8];

#define BT_TRACE_HDR_SIZE 32
#define BT_TRACE_SEC_HDR_SIZE 24
/* A string's length that says "no string" (NULL). */
#define BT_TRACE_STR_NULL 0xffffffffu

#define BT_TRACE_VERSION_MAJOR 1
#define BT_TRACE_VERSION_MINOR 4	/* 2: soft captures may hold BT_REC_TIME;
					   3: PT's TSC conversion per thread;
					   4: a fault's records lost after it */

/* Thread data is checksummed per chunk of this many bytes (1.1). */
#define BT_TRACE_CHUNK 65536u
/* The thread section's fields before the data, data size included. */
#define THREAD_FIELDS 60
#define PT_TIME_FIELDS 24	/* 1.3: struct bt_tsc_conv, then its CRC */

enum bt_sec_type {
	BT_SEC_END = 1,
	BT_SEC_META,
	BT_SEC_STOP,
	BT_SEC_STATS,
	BT_SEC_MAPS,
	BT_SEC_THREAD,
	BT_SEC_CODE,
	BT_SEC_SYMS,
	BT_SEC_FAULT,	/* a fault the program's handler took (bt_fault) */
};

/* A reader that does not know a section with this flag must refuse the file. */
#define BT_SECF_REQUIRED 1u

uint32_t bt_crc32(uint32_t crc, const void *buf, size_t len);

/*
 * Fuzzers build with checksums ignored (the libFuzzer convention), so that
 * they reach the section parsers instead of stopping at every CRC.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define crc_ok(crc, p, n) ((void)(crc), 1)
#else
#define crc_ok(crc, p, n) ((crc) == bt_crc32(0, (p), (n)))
#endif

/* A mapped thread's data, checked chunk by chunk when asked. */
struct lazy_thread {
	size_t sec_off;		/* the section's offset in the file */
	const uint8_t *crcs;	/* nchunks little-endian CRCs */
	uint32_t chunk, nchunks;
	uint8_t *checked;	/* one byte per chunk */
};

/* A trace file bt_trace_map() mapped, which its trace points into. */
struct bt_trace_mapping {
	void *base;
	size_t len;
	struct lazy_thread *lazy;	/* by thread index; chunk 0: none */
	size_t nlazy_cap;
};

/*
 * Parse @len bytes at @buf into *@trace (tracefile_read.c); with @map,
 * point into them (bt_trace_map()), the mapping still the caller's on
 * failure.  Returns 0, -bte_format, -bte_corrupt or -bte_nomem.
 */
int bt_trace_parse_buf(struct bt_trace **trace, const void *buf, size_t len,
		       struct bt_trace_mapping *map);

/* Forget what points into the mapping, which bt_trace_free() then keeps. */
void bt_trace_unmap_pointers(struct bt_trace *t);

/* Function symbols of the ELF mapped by @maps (tracefile_syms.c). */
int bt_trace_collect_syms(struct bt_trace *trace);

#endif /* BTRACE_TRACEFILE_INTERNAL_H */
