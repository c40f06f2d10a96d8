// SPDX-License-Identifier: MIT
/*
 * Writing trace files: a struct bt_trace encoded into sections
 * (docs/trace-format.md; keep the two in step).  Reading is
 * tracefile_read.c.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "internal.h"
#include "tracefile/tracefile_internal.h"

/* ---- writing: a growing buffer; the first failure sticks ---- */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
	size_t sec;	/* offset of the open section's header */
};

static uint8_t *wb_room(struct wbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	if (b->err)
		return NULL;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -bte_nomem;
			return NULL;
		}
		cap *= 2;
	}
	if (cap != b->cap) {
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -bte_nomem;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += n;
	return p;
}

static void wb_bytes(struct wbuf *b, const void *data, size_t n)
{
	uint8_t *p = wb_room(b, n);

	if (p && n)
		memcpy(p, data, n);
}

static void wb_u8(struct wbuf *b, uint8_t v)
{
	wb_bytes(b, &v, 1);
}

static void wb_u16(struct wbuf *b, uint16_t v)
{
	v = htole16(v);
	wb_bytes(b, &v, 2);
}

static void wb_u32(struct wbuf *b, uint32_t v)
{
	v = htole32(v);
	wb_bytes(b, &v, 4);
}

static void wb_u64(struct wbuf *b, uint64_t v)
{
	v = htole64(v);
	wb_bytes(b, &v, 8);
}

static void wb_str(struct wbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!s || n >= BT_TRACE_STR_NULL) {
		wb_u32(b, BT_TRACE_STR_NULL);
		return;
	}
	wb_u32(b, n);
	wb_bytes(b, s, n);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static void sec_begin(struct wbuf *b, uint32_t type, uint32_t flags)
{
	b->sec = b->len;
	wb_u32(b, type);
	wb_u32(b, flags);
	wb_u64(b, 0);	/* length, crc: filled in by sec_end() */
	wb_u32(b, 0);
	wb_u32(b, 0);
}

static void sec_end(struct wbuf *b)
{
	static const uint8_t zero[8];
	uint8_t *h;
	size_t len;

	if (b->err)
		return;
	len = b->len - b->sec - BT_TRACE_SEC_HDR_SIZE;
	h = b->p + b->sec;
	put_le64(h + 8, len);
	put_le32(h + 16, bt_crc32(0, h + BT_TRACE_SEC_HDR_SIZE, len));
	put_le32(h + 20, bt_crc32(0, h, 20));
	wb_bytes(b, zero, (8 - len % 8) % 8);
}

static void enc_header(struct wbuf *b)
{
	uint8_t *h;

	wb_bytes(b, bt_trace_magic, sizeof(bt_trace_magic));
	wb_u16(b, BT_TRACE_VERSION_MAJOR);
	wb_u16(b, BT_TRACE_VERSION_MINOR);
	wb_u32(b, BT_TRACE_HDR_SIZE);
	wb_u32(b, 0);	/* flags */
	wb_u32(b, 0);
	wb_u32(b, 0);
	h = wb_room(b, 4);
	if (h)
		put_le32(h, bt_crc32(0, b->p, BT_TRACE_HDR_SIZE - 4));
}

static void enc_meta(struct wbuf *b, const struct bt_trace *t)
{
	sec_begin(b, BT_SEC_META, BT_SECF_REQUIRED);
	wb_u32(b, t->pid);
	wb_u32(b, 0);
	wb_u64(b, t->created);
	wb_str(b, t->exe);
	wb_str(b, t->backend);
	sec_end(b);
}

static void enc_stop_fields(struct wbuf *b, const struct bt_stop *s)
{
	wb_u32(b, s->reason);
	wb_u32(b, s->tid);
	wb_u32(b, s->signal);
	wb_u32(b, s->si_code);
	wb_u32(b, s->status);
	wb_u32(b, s->breakpoint);
	wb_u64(b, s->pc);
	wb_u64(b, s->addr);
	/* added later (see dec_stop) */
	wb_u32(b, s->sender);
	wb_u32(b, s->sender_uid);
	wb_u64(b, s->value);
	wb_bytes(b, s->sender_comm, sizeof(s->sender_comm));
}

static void enc_stop(struct wbuf *b, const struct bt_stop *s)
{
	sec_begin(b, BT_SEC_STOP, 0);
	enc_stop_fields(b, s);
	sec_end(b);
}

static void enc_stats(struct wbuf *b, const struct bt_trace *t)
{
	sec_begin(b, BT_SEC_STATS, 0);
	wb_u64(b, t->stats.instructions);
	wb_u64(b, t->stats.branches);
	wb_u64(b, t->stats.stops);
	wb_u64(b, t->buffer_size);
	wb_u64(b, t->stats.displaced);
	wb_u64(b, t->stats.ring_bytes);
	wb_u64(b, t->stats.ring_read);
	sec_end(b);
}

static void enc_maps(struct wbuf *b, const struct bt_maps *maps)
{
	size_t i;

	sec_begin(b, BT_SEC_MAPS, 0);
	wb_u32(b, maps->count);
	for (i = 0; i < maps->count; i++) {
		const struct bt_map *m = &maps->map[i];

		wb_u64(b, m->start);
		wb_u64(b, m->end);
		wb_u64(b, m->offset);
		wb_u32(b, m->prot);
		wb_u8(b, m->build_id_len);
		wb_bytes(b, m->build_id, sizeof(m->build_id));
		wb_str(b, m->path);
	}
	sec_end(b);
}

/*
 * Format 1.1: after a thread's data, a CRC per chunk of it (and one of the
 * fields before it), so that a reader that maps the file checks only the
 * chunks it decodes.  Readers of 1.0 ignore it, as appended fields.
 */
static void enc_chunks(struct wbuf *b, const struct bt_capture *c)
{
	uint64_t n = (c->size + BT_TRACE_CHUNK - 1) / BT_TRACE_CHUNK, i;
	size_t table = b->len, fields = b->len - c->size - THREAD_FIELDS;

	wb_u32(b, BT_TRACE_CHUNK);
	wb_u32(b, (uint32_t)n);
	wb_u32(b, b->err ? 0 : bt_crc32(0, b->p + fields, THREAD_FIELDS));
	for (i = 0; i < n; i++) {
		uint64_t len = c->size - i * BT_TRACE_CHUNK;

		len = len < BT_TRACE_CHUNK ? len : BT_TRACE_CHUNK;
		wb_u32(b, bt_crc32(0, c->data + i * BT_TRACE_CHUNK, len));
	}
	wb_u32(b, b->err ? 0 : bt_crc32(0, b->p + table, b->len - table));
}

/* A capture's fields and data (THREAD_FIELDS bytes, then the data). */
static void enc_capture(struct wbuf *b, const struct bt_capture *c)
{
	wb_u32(b, c->format);
	wb_u32(b, c->tid);
	wb_u64(b, c->lost);
	wb_u32(b, c->status);
	wb_u8(b, c->cpu.vendor);
	wb_u8(b, c->cpu.model);
	wb_u8(b, c->cpu.stepping);
	wb_u8(b, 0);
	wb_u16(b, c->cpu.family);
	wb_u16(b, 0);
	wb_u64(b, c->pt_config);
	wb_u32(b, c->pt_mtc_freq);
	wb_u32(b, c->pt_nom_freq);
	wb_u32(b, c->pt_cpuid_15_eax);
	wb_u32(b, c->pt_cpuid_15_ebx);
	wb_u64(b, c->size);
	wb_bytes(b, c->data, c->size);
}

/*
 * PT's TSC conversion (1.3), after what readers of 1.2 and before read:
 * they ignore a section's bytes past the fields they know.  Its own CRC:
 * a mapped thread's section CRC is not checked (its chunks are).
 */
static void enc_pt_time(struct wbuf *b, const struct bt_tsc_conv *t)
{
	size_t at = b->len;

	wb_u64(b, t->time_zero);
	wb_u32(b, t->time_mult);
	wb_u16(b, t->time_shift);
	wb_u16(b, 0);
	wb_u64(b, (uint64_t)t->mono_offset);
	wb_u32(b, b->err ? 0 : bt_crc32(0, b->p + at, PT_TIME_FIELDS));
}

static void enc_thread(struct wbuf *b, const struct bt_capture *c)
{
	sec_begin(b, BT_SEC_THREAD, 0);
	enc_capture(b, c);
	enc_chunks(b, c);
	enc_pt_time(b, &c->pt_time);
	sec_end(b);
}

/* A fault a handler took: its stop, what came after, its history. */
static void enc_fault(struct wbuf *b, const struct bt_fault *f)
{
	sec_begin(b, BT_SEC_FAULT, 0);
	enc_stop_fields(b, &f->stop);
	wb_u64(b, f->after);
	wb_u64(b, f->count);
	enc_capture(b, &f->cap);
	enc_pt_time(b, &f->cap.pt_time);
	wb_u64(b, (uint64_t)f->after_lost);	/* format 1.4 and on */
	sec_end(b);
}

static void enc_code(struct wbuf *b, const struct bt_trace_code *c)
{
	sec_begin(b, BT_SEC_CODE, 0);
	wb_u64(b, c->vaddr);
	wb_u64(b, c->size);
	wb_bytes(b, c->bytes, c->size);
	sec_end(b);
}

static void enc_syms(struct wbuf *b, const struct bt_trace *t)
{
	size_t i;

	sec_begin(b, BT_SEC_SYMS, 0);
	wb_u32(b, t->nsyms);
	for (i = 0; i < t->nsyms; i++) {
		wb_u64(b, t->sym[i].addr);
		wb_u64(b, t->sym[i].size);
		wb_str(b, t->sym[i].name);
	}
	sec_end(b);
}

int bt_trace_encode(const struct bt_trace *t, uint8_t **buf, size_t *len)
{
	struct wbuf b = { 0 };
	size_t i;

	if (!t || !buf || !len)
		return bt_fail(bte_invalid, 0, "bt_trace_encode(NULL)");
	if (t->maps.count > UINT32_MAX || t->nsyms > UINT32_MAX)
		return bt_fail(bte_invalid, 0, "too many maps or symbols");
	enc_header(&b);
	enc_meta(&b, t);
	enc_stop(&b, &t->stop);
	enc_stats(&b, t);
	enc_maps(&b, &t->maps);
	for (i = 0; i < t->nthreads; i++)
		enc_thread(&b, &t->thread[i]);
	for (i = 0; i < t->nfaults; i++)
		enc_fault(&b, &t->fault[i]);
	for (i = 0; i < t->ncode; i++)
		enc_code(&b, &t->code[i]);
	if (t->nsyms)
		enc_syms(&b, t);
	sec_begin(&b, BT_SEC_END, BT_SECF_REQUIRED);
	sec_end(&b);
	if (b.err) {
		free(b.p);
		return bt_fail(b.err, ENOMEM, "encoding a trace");
	}
	*buf = b.p;
	*len = b.len;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int bt_trace_write(const struct bt_trace *t, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char *tmp = NULL;
	int fd, ret, e;

	if (!path)
		return bt_fail(bte_invalid, 0, "bt_trace_write(NULL)");
	ret = bt_trace_encode(t, &buf, &len);
	if (ret < 0)
		return ret;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		ret = bt_fail(bte_nomem, ENOMEM, "'%s'", path);
		goto out;
	}
	/* mkstemp creates the file 0600 whatever the umask. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		ret = bt_fail(bt_errno_to_bte(e), e, "cannot create '%s'", tmp);
		goto out;
	}
	if (fchmod(fd, 0600) < 0 || write_all(fd, buf, len) < 0 ||
	    fsync(fd) < 0) {
		e = errno;
		ret = bt_fail(bte_io, e, "cannot write '%s'", tmp);
		close(fd);
		goto err_tmp;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		e = errno;
		ret = bt_fail(e == ENOENT ? bte_noent : bte_io, e,
			      "cannot write '%s'", path);
		goto err_tmp;
	}
	ret = 0;
	goto out;
err_tmp:
	unlink(tmp);
out:
	free(tmp);
	free(buf);
	return ret;
}
