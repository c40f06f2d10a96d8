// SPDX-License-Identifier: MIT
/*
 * Trace files: loading them (read into memory, or mapped with each
 * thread's data checked when asked), freeing and looking into a trace.
 * The sections are written by tracefile_write.c and parsed by
 * tracefile_read.c; the format is described in docs/trace-format.md.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "internal.h"
#include "tracefile/tracefile_internal.h"

const uint8_t bt_trace_magic[8] = { 0x89, 'B', 'T', 'R', '\r', '\n', 0x1a, '\n' };

/* CRC-32 (IEEE 802.3, as zlib's crc32()), table built on first use. */
uint32_t bt_crc32(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const uint8_t *p = buf;
	size_t i;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* Forget what points into the mapping, which bt_trace_free() then keeps. */
void bt_trace_unmap_pointers(struct bt_trace *t)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		t->thread[i].data = NULL;
	for (i = 0; i < t->ncode; i++)
		t->code[i].bytes = NULL;
	t->mapping = NULL;
}

static void mapping_free(struct bt_trace_mapping *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nlazy_cap; i++)
		free(m->lazy[i].checked);
	free(m->lazy);
	if (m->base)
		munmap(m->base, m->len);
	free(m);
}

/* Open @path as a regular file: the fd, or a negative bt_error. */
static int open_trace(const char *path, struct stat *st)
{
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return bt_fail(bt_errno_to_bte(e), e, "cannot open '%s'", path);
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		e = S_ISDIR(st->st_mode) ? EISDIR : errno;
		close(fd);
		return bt_fail(bte_format, e, "'%s' is not a regular file", path);
	}
	return fd;
}

int bt_trace_map(struct bt_trace **trace, const char *path)
{
	struct bt_trace_mapping *m;
	struct stat st;
	int fd, ret, e;

	if (!trace || !path)
		return bt_fail(bte_invalid, 0, "bt_trace_map(NULL)");
	*trace = NULL;
	fd = open_trace(path, &st);
	if (fd < 0)
		return fd;
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return bt_fail(bte_nomem, ENOMEM, "'%s'", path);
	}
	m->len = st.st_size;
	if (m->len) {
		m->base = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->base == MAP_FAILED) {
			e = errno;
			m->base = NULL;
			mapping_free(m);
			close(fd);
			return bt_fail(bt_errno_to_bte(e), e, "cannot map '%s'",
				       path);
		}
	}
	close(fd);
	ret = bt_trace_parse_buf(trace, m->base ? m->base : "", m->len, m);
	if (ret < 0)
		mapping_free(m);
	return ret;
}

static int check_chunk(const struct lazy_thread *lz, const uint8_t *data,
		       uint64_t size, uint32_t i)
{
	uint64_t off = (uint64_t)i * lz->chunk;
	uint64_t len = size - off < lz->chunk ? size - off : lz->chunk;
	uint32_t crc;

	memcpy(&crc, lz->crcs + (size_t)i * 4, 4);
	if (crc_ok(le32toh(crc), data + off, len)) {
		lz->checked[i] = 1;
		return 0;
	}
	return bt_fail(bte_corrupt, 0,
		       "thread section at offset %zu: checksum mismatch in data bytes %llu..%llu",
		       lz->sec_off, (unsigned long long)off,
		       (unsigned long long)(off + len));
}

int bt_trace_check(const struct bt_trace *t, const struct bt_capture *cap,
		   uint64_t begin, uint64_t end)
{
	const struct lazy_thread *lz;
	size_t idx;
	uint32_t i;
	int ret;

	if (!t || !cap || cap < t->thread || cap >= t->thread + t->nthreads)
		return bt_fail(bte_invalid, 0, "bt_trace_check: not a thread of the trace");
	idx = cap - t->thread;
	if (!t->mapping || idx >= t->mapping->nlazy_cap)
		return 0;
	lz = &t->mapping->lazy[idx];
	end = end < cap->size ? end : cap->size;
	if (!lz->chunk || begin >= end)
		return 0;
	for (i = begin / lz->chunk; i <= (end - 1) / lz->chunk; i++) {
		if (lz->checked[i])
			continue;
		ret = check_chunk(lz, cap->data, cap->size, i);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int bt_trace_read(struct bt_trace **trace, const char *path)
{
	uint8_t *buf = NULL;
	struct stat st;
	size_t len = 0;
	int fd, ret, e;

	if (!trace || !path)
		return bt_fail(bte_invalid, 0, "bt_trace_read(NULL)");
	*trace = NULL;
	fd = open_trace(path, &st);
	if (fd < 0)
		return fd;
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		ret = bt_fail(bte_nomem, ENOMEM, "'%s'", path);
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = errno;
			ret = bt_fail(bte_io, n ? e : 0, "cannot read '%s'", path);
			goto out;
		}
		len += n;
	}
	ret = bt_trace_parse(trace, buf, len);
out:
	free(buf);
	close(fd);
	return ret;
}

void bt_trace_free(struct bt_trace *t)
{
	size_t i;

	if (!t)
		return;
	free(t->exe);
	free(t->backend);
	bt_maps_release(&t->maps);
	if (t->mapping) {
		struct bt_trace_mapping *m = t->mapping;

		bt_trace_unmap_pointers(t);
		mapping_free(m);
	}
	for (i = 0; i < t->nthreads; i++)
		bt_capture_release(&t->thread[i]);
	free(t->thread);
	for (i = 0; i < t->nfaults; i++)
		bt_fault_release(&t->fault[i]);
	free(t->fault);
	for (i = 0; i < t->ncode; i++)
		free(t->code[i].bytes);
	free(t->code);
	for (i = 0; i < t->nsyms; i++)
		free(t->sym[i].name);
	free(t->sym);
	free(t);
}

const struct bt_fault *bt_trace_fault(const struct bt_trace *t, pid_t tid)
{
	size_t i;

	for (i = 0; t && i < t->nfaults; i++)
		if (t->fault[i].stop.tid == tid)
			return &t->fault[i];
	return NULL;
}

const struct bt_capture *bt_trace_thread(const struct bt_trace *t, pid_t tid)
{
	size_t i;

	for (i = 0; t && i < t->nthreads; i++)
		if (t->thread[i].tid == tid)
			return &t->thread[i];
	return NULL;
}

const char *bt_trace_symbol(const struct bt_trace *t, uint64_t addr,
			    uint64_t *offset)
{
	const struct bt_trace_sym *s;
	const struct bt_map *m;
	size_t lo = 0, hi, i;

	if (!t || !t->nsyms)
		return NULL;
	/* The last symbol starting at or before @addr. */
	hi = t->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->sym[lo - 1];
	if (s->size) {
		if (addr - s->addr >= s->size)
			return NULL;
	} else {
		/* Unknown size: up to the end of the mapping it starts in. */
		for (i = 0; i < t->maps.count; i++) {
			m = &t->maps.map[i];
			if (m->start <= s->addr && addr < m->end)
				break;
		}
		if (i == t->maps.count)
			return NULL;
	}
	if (offset)
		*offset = addr - s->addr;
	return s->name;
}
