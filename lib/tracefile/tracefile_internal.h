/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TRACEFILE_INTERNAL_H
#define BTRACE_TRACEFILE_INTERNAL_H

/* Trace file layout constants shared by the writer, the reader and tests. */

#include <stddef.h>
#include <stdint.h>

#include "btrace/tracefile.h"

#define BT_TRACE_VERSION_MAJOR 1
#define BT_TRACE_VERSION_MINOR 1

/* Thread data is checksummed per chunk of this many bytes (1.1). */
#define BT_TRACE_CHUNK 65536u
/* The thread section's fields before the data, data size included. */
#define THREAD_FIELDS 60

enum bt_sec_type {
	BT_SEC_END = 1,
	BT_SEC_META,
	BT_SEC_STOP,
	BT_SEC_STATS,
	BT_SEC_MAPS,
	BT_SEC_THREAD,
	BT_SEC_CODE,
	BT_SEC_SYMS,
};

/* A reader that does not know a section with this flag must refuse the file. */
#define BT_SECF_REQUIRED 1u

uint32_t bt_crc32(uint32_t crc, const void *buf, size_t len);

/* Function symbols of the ELF mapped by @maps (tracefile_syms.c). */
int bt_trace_collect_syms(struct bt_trace *trace);

#endif /* BTRACE_TRACEFILE_INTERNAL_H */
