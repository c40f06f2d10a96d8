// SPDX-License-Identifier: MIT
/*
 * Trace files: encode a struct bt_trace into sections, and parse them back
 * with every length checked before it is trusted.  The format is described
 * in docs/trace-format.md; keep the two in step.
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

static const uint8_t magic[8] = { 0x89, 'B', 'T', 'R', '\r', '\n', 0x1a, '\n' };

#define HDR_SIZE 32
#define SEC_HDR_SIZE 24
#define STR_NULL 0xffffffffu

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

	if (!s || n >= STR_NULL) {
		wb_u32(b, STR_NULL);
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
	len = b->len - b->sec - SEC_HDR_SIZE;
	h = b->p + b->sec;
	put_le64(h + 8, len);
	put_le32(h + 16, bt_crc32(0, h + SEC_HDR_SIZE, len));
	put_le32(h + 20, bt_crc32(0, h, 20));
	wb_bytes(b, zero, (8 - len % 8) % 8);
}

static void enc_header(struct wbuf *b)
{
	uint8_t *h;

	wb_bytes(b, magic, sizeof(magic));
	wb_u16(b, BT_TRACE_VERSION_MAJOR);
	wb_u16(b, BT_TRACE_VERSION_MINOR);
	wb_u32(b, HDR_SIZE);
	wb_u32(b, 0);	/* flags */
	wb_u32(b, 0);
	wb_u32(b, 0);
	h = wb_room(b, 4);
	if (h)
		put_le32(h, bt_crc32(0, b->p, HDR_SIZE - 4));
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

static void enc_stop(struct wbuf *b, const struct bt_stop *s)
{
	sec_begin(b, BT_SEC_STOP, 0);
	wb_u32(b, s->reason);
	wb_u32(b, s->tid);
	wb_u32(b, s->signal);
	wb_u32(b, s->si_code);
	wb_u32(b, s->status);
	wb_u32(b, s->breakpoint);
	wb_u64(b, s->pc);
	wb_u64(b, s->addr);
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

static void enc_thread(struct wbuf *b, const struct bt_capture *c)
{
	sec_begin(b, BT_SEC_THREAD, 0);
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
	enc_chunks(b, c);
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

/* ---- reading: every length checked against what is left ---- */

/*
 * Fuzzers build with checksums ignored (the libFuzzer convention), so that
 * they reach the section parsers instead of stopping at every CRC.
 */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define crc_ok(crc, p, n) ((void)(crc), 1)
#else
#define crc_ok(crc, p, n) ((crc) == bt_crc32(0, (p), (n)))
#endif

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	int err;	/* set at the first overrun */
};

static const uint8_t *rb_take(struct rbuf *r, size_t n)
{
	const uint8_t *p;

	if (r->err || n > r->len - r->off) {
		r->err = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static uint8_t rb_u8(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 1);

	return p ? *p : 0;
}

static uint16_t rb_u16(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 2);
	uint16_t v = 0;

	if (p)
		memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t rb_u32(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t rb_u64(struct rbuf *r)
{
	const uint8_t *p = rb_take(r, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return le64toh(v);
}

/* A malloc'ed copy of @n bytes (at least one byte allocated), or NULL. */
static void *rb_dup(struct rbuf *r, uint64_t n, int *nomem)
{
	const uint8_t *p;
	uint8_t *d;

	if (n > r->len - r->off) {
		r->err = 1;
		return NULL;
	}
	p = rb_take(r, (size_t)n);
	if (!p)
		return NULL;
	d = malloc(n ? n : 1);
	if (!d) {
		*nomem = 1;
		return NULL;
	}
	memcpy(d, p, n);
	return d;
}

/* Returns 0 with *@s NULL or a string; -1 on overrun or no memory. */
static int rb_str(struct rbuf *r, char **s, int *nomem)
{
	uint32_t n = rb_u32(r);
	const uint8_t *p;
	char *d;

	*s = NULL;
	if (r->err)
		return -1;
	if (n == STR_NULL)
		return 0;
	p = rb_take(r, n);
	if (!p)
		return -1;
	d = malloc((size_t)n + 1);
	if (!d) {
		*nomem = 1;
		return -1;
	}
	memcpy(d, p, n);
	d[n] = '\0';
	*s = d;
	return 0;
}

/* A count of elements of at least @min bytes each, checked against the rest. */
static int rb_count(struct rbuf *r, size_t min, size_t *count)
{
	uint32_t n = rb_u32(r);

	if (r->err || n > (r->len - r->off) / min)
		return -1;
	*count = n;
	return 0;
}

/* A mapped thread's data, checked chunk by chunk when asked. */
struct lazy_thread {
	size_t sec_off;		/* the section's offset in the file */
	const uint8_t *crcs;	/* nchunks little-endian CRCs */
	uint32_t chunk, nchunks;
	uint8_t *checked;	/* one byte per chunk */
};

struct bt_trace_mapping {
	void *base;
	size_t len;
	struct lazy_thread *lazy;	/* by thread index; chunk 0: none */
	size_t nlazy_cap;
};

struct parser {
	struct bt_trace *t;
	int nomem;
	int have_meta;
	size_t ncode_cap, nthreads_cap;
	/* bt_trace_map(): point into the file; thread data checked later */
	struct bt_trace_mapping *map;
	size_t sec_off;
	int lazy;		/* the thread just parsed has a chunk table */
};

/* Copy @n bytes out of @r, or point into the mapping with ps->map. */
static void *dec_bytes(struct parser *ps, struct rbuf *r, uint64_t n)
{
	if (!ps->map)
		return rb_dup(r, n, &ps->nomem);
	if (n > r->len - r->off) {
		r->err = 1;
		return NULL;
	}
	return (void *)rb_take(r, (size_t)n);
}

static int dec_meta(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;

	if (ps->have_meta++)
		return -1;
	t->pid = (pid_t)rb_u32(r);
	rb_u32(r);
	t->created = rb_u64(r);
	if (rb_str(r, &t->exe, &ps->nomem) < 0)
		return -1;
	return rb_str(r, &t->backend, &ps->nomem);
}

static int dec_stop(struct parser *ps, struct rbuf *r)
{
	struct bt_stop *s = &ps->t->stop;

	s->reason = (int)rb_u32(r);
	s->tid = (pid_t)rb_u32(r);
	s->signal = (int)rb_u32(r);
	s->si_code = (int)rb_u32(r);
	s->status = (int)rb_u32(r);
	s->breakpoint = (int)rb_u32(r);
	s->pc = rb_u64(r);
	s->addr = rb_u64(r);
	return r->err ? -1 : 0;
}

static int dec_stats(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;

	t->stats.instructions = rb_u64(r);
	t->stats.branches = rb_u64(r);
	t->stats.stops = rb_u64(r);
	t->buffer_size = rb_u64(r);
	if (r->err)
		return -1;
	/* added later: files without it load with 0 */
	if (r->len - r->off >= 8)
		t->stats.displaced = rb_u64(r);
	return r->err ? -1 : 0;
}

#define MAP_MIN_SIZE (3 * 8 + 4 + 1 + 20 + 4)

static int dec_maps(struct parser *ps, struct rbuf *r)
{
	struct bt_maps *maps = &ps->t->maps;
	size_t i, n;

	if (maps->map || rb_count(r, MAP_MIN_SIZE, &n) < 0)
		return -1;
	maps->map = calloc(n ? n : 1, sizeof(*maps->map));
	if (!maps->map) {
		ps->nomem = 1;
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct bt_map *m = &maps->map[i];
		const uint8_t *id;

		m->start = rb_u64(r);
		m->end = rb_u64(r);
		m->offset = rb_u64(r);
		m->prot = rb_u32(r);
		m->build_id_len = rb_u8(r);
		id = rb_take(r, sizeof(m->build_id));
		if (!id || m->start > m->end ||
		    m->build_id_len > sizeof(m->build_id))
			return -1;
		memcpy(m->build_id, id, sizeof(m->build_id));
		if (rb_str(r, &m->path, &ps->nomem) < 0)
			return -1;
		maps->count = i + 1;
	}
	return 0;
}

/* Grow *@arr of @elem-byte elements to hold *@n + 1; -1 if no memory. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * elem);
	if (!p)
		return -1;
	memset((uint8_t *)p + n * elem, 0, (c - n) * elem);
	*arr = p;
	*cap = c;
	return 0;
}

/*
 * The chunk table after a mapped thread's data (format 1.1), checked
 * itself; without one (1.0) the section's CRC is checked as a whole.
 */
static int dec_chunks(struct parser *ps, struct rbuf *r, struct bt_capture *c)
{
	struct bt_trace_mapping *m = ps->map;
	size_t table = r->off, idx = ps->t->nthreads - 1;
	uint32_t chunk, n, fields_crc, crc;
	struct lazy_thread *lz;
	const uint8_t *crcs;

	ps->lazy = 0;
	if (r->len - r->off < 16)
		return 0;
	chunk = rb_u32(r);
	n = rb_u32(r);
	fields_crc = rb_u32(r);
	if (!chunk || n != (c->size + chunk - 1) / chunk ||
	    (uint64_t)n * 4 + 4 > r->len - r->off)
		return -1;
	crcs = rb_take(r, (size_t)n * 4);
	crc = rb_u32(r);
	if (!crc_ok(crc, r->p + table, r->off - table - 4) ||
	    !crc_ok(fields_crc, c->data - THREAD_FIELDS, THREAD_FIELDS))
		return -1;
	if (grow((void **)&m->lazy, &m->nlazy_cap, idx, sizeof(*lz)) < 0) {
		ps->nomem = 1;
		return -1;
	}
	lz = &m->lazy[idx];
	lz->checked = calloc(n ? n : 1, 1);
	if (!lz->checked) {
		ps->nomem = 1;
		return -1;
	}
	lz->sec_off = ps->sec_off;
	lz->crcs = crcs;
	lz->chunk = chunk;
	lz->nchunks = n;
	ps->lazy = 1;
	return 0;
}

static int dec_thread(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;
	struct bt_capture *c;
	uint64_t size;

	if (grow((void **)&t->thread, &ps->nthreads_cap, t->nthreads,
		 sizeof(*c)) < 0) {
		ps->nomem = 1;
		return -1;
	}
	c = &t->thread[t->nthreads];
	c->format = (int)rb_u32(r);
	c->tid = (pid_t)rb_u32(r);
	c->lost = rb_u64(r);
	c->status = (int)rb_u32(r);
	c->cpu.vendor = rb_u8(r);
	c->cpu.model = rb_u8(r);
	c->cpu.stepping = rb_u8(r);
	rb_u8(r);
	c->cpu.family = rb_u16(r);
	rb_u16(r);
	c->pt_config = rb_u64(r);
	c->pt_mtc_freq = rb_u32(r);
	c->pt_nom_freq = rb_u32(r);
	c->pt_cpuid_15_eax = rb_u32(r);
	c->pt_cpuid_15_ebx = rb_u32(r);
	size = rb_u64(r);
	c->data = dec_bytes(ps, r, size);
	if (!c->data)
		return -1;
	c->size = size;
	t->nthreads++;
	if (ps->map)
		return dec_chunks(ps, r, c);
	return 0;
}

static int dec_code(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;
	struct bt_trace_code *c;
	uint64_t vaddr, size;

	vaddr = rb_u64(r);
	size = rb_u64(r);
	if (r->err || size > UINT64_MAX - vaddr)
		return -1;
	/* Sorted and disjoint, so that lookups can trust the order. */
	if (t->ncode) {
		c = &t->code[t->ncode - 1];
		if (vaddr < c->vaddr + c->size)
			return -1;
	}
	if (grow((void **)&t->code, &ps->ncode_cap, t->ncode, sizeof(*c)) < 0) {
		ps->nomem = 1;
		return -1;
	}
	c = &t->code[t->ncode];
	c->bytes = dec_bytes(ps, r, size);
	if (!c->bytes)
		return -1;
	c->vaddr = vaddr;
	c->size = size;
	t->ncode++;
	return 0;
}

static int dec_syms(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;
	size_t i, n;

	if (t->sym || rb_count(r, 20, &n) < 0)
		return -1;
	t->sym = calloc(n ? n : 1, sizeof(*t->sym));
	if (!t->sym) {
		ps->nomem = 1;
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct bt_trace_sym *s = &t->sym[i];

		s->addr = rb_u64(r);
		s->size = rb_u64(r);
		if (rb_str(r, &s->name, &ps->nomem) < 0 || !s->name)
			return -1;
		t->nsyms = i + 1;
		if (i && s->addr < t->sym[i - 1].addr)
			return -1;
	}
	return 0;
}

/* The sections a reader knows: each one's name and parser. */
static const struct {
	const char *name;
	int (*parse)(struct parser *ps, struct rbuf *r);
} sections[] = {
	[BT_SEC_END] = { "end", NULL },
	[BT_SEC_META] = { "meta", dec_meta },
	[BT_SEC_STOP] = { "stop", dec_stop },
	[BT_SEC_STATS] = { "stats", dec_stats },
	[BT_SEC_MAPS] = { "maps", dec_maps },
	[BT_SEC_THREAD] = { "thread", dec_thread },
	[BT_SEC_CODE] = { "code", dec_code },
	[BT_SEC_SYMS] = { "syms", dec_syms },
};

static const char *sec_name(uint32_t type)
{
	if (type < BT_ARRAY_SIZE(sections) && sections[type].name)
		return sections[type].name;
	return "unknown";
}

static int check_header(const uint8_t *p, size_t len)
{
	uint16_t major, minor;
	uint32_t crc;

	if (len < sizeof(magic)) {
		if (!memcmp(p, magic, len))
			return bt_fail(bte_corrupt, 0,
				       "truncated: %zu bytes, the header alone needs %d",
				       len, HDR_SIZE);
		return bt_fail(bte_format, 0, "not a btrace trace file");
	}
	if (memcmp(p, magic, sizeof(magic)))
		return bt_fail(bte_format, 0, "not a btrace trace file");
	if (len < HDR_SIZE)
		return bt_fail(bte_corrupt, 0,
			       "truncated: %zu bytes, the header alone needs %d",
			       len, HDR_SIZE);
	memcpy(&crc, p + HDR_SIZE - 4, 4);
	if (!crc_ok(le32toh(crc), p, HDR_SIZE - 4))
		return bt_fail(bte_corrupt, 0, "header checksum mismatch");
	memcpy(&major, p + 8, 2);
	memcpy(&minor, p + 10, 2);
	major = le16toh(major);
	minor = le16toh(minor);
	if (major != BT_TRACE_VERSION_MAJOR)
		return bt_fail(bte_format, 0,
			       "trace format %u.%u, this btrace reads %u.x",
			       major, minor, BT_TRACE_VERSION_MAJOR);
	return 0;
}

static int zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* Check one section at @r->off and parse it; sets *@end at BT_SEC_END. */
static int parse_section(struct parser *ps, struct rbuf *r, int *end)
{
	const uint8_t *h = r->p + r->off;
	uint32_t type, flags, crc, hcrc;
	size_t at = r->off;
	uint64_t len, pad;
	struct rbuf sec;
	int lazy;

	if (r->len - r->off < SEC_HDR_SIZE)
		return bt_fail(bte_corrupt, 0,
			       "truncated at offset %zu: no end section", at);
	type = rb_u32(r);
	flags = rb_u32(r);
	len = rb_u64(r);
	crc = rb_u32(r);
	hcrc = rb_u32(r);
	if (!crc_ok(hcrc, h, 20))
		return bt_fail(bte_corrupt, 0,
			       "section header at offset %zu: checksum mismatch",
			       at);
	pad = (8 - len % 8) % 8;
	if (len > r->len - r->off || pad > r->len - r->off - len)
		return bt_fail(bte_corrupt, 0,
			       "truncated: %s section at offset %zu needs %llu bytes, %zu left",
			       sec_name(type), at,
			       (unsigned long long)(len + pad),
			       r->len - r->off);
	sec = (struct rbuf){ .p = r->p + r->off, .len = len };
	r->off += len + pad;
	/* A mapped thread's data waits for bt_trace_check(). */
	lazy = ps->map && type == BT_SEC_THREAD;
	if ((!lazy && !crc_ok(crc, sec.p, len)) || !zero(sec.p + len, pad))
		return bt_fail(bte_corrupt, 0,
			       "%s section at offset %zu: checksum mismatch",
			       sec_name(type), at);
	if (type == BT_SEC_END) {
		*end = 1;
		return 0;
	}
	if (type >= BT_ARRAY_SIZE(sections) || !sections[type].parse) {
		if (flags & BT_SECF_REQUIRED)
			return bt_fail(bte_format, 0,
				       "section type %u at offset %zu needs a newer btrace",
				       type, at);
		return 0;	/* a newer writer's optional section */
	}
	/* Fields appended by newer minor versions are ignored. */
	ps->sec_off = at;
	ps->lazy = 0;
	if (sections[type].parse(ps, &sec) < 0 || sec.err) {
		if (ps->nomem)
			return bt_fail(bte_nomem, ENOMEM, "loading a trace");
		return bt_fail(bte_corrupt, 0,
			       "%s section at offset %zu: %s", sec_name(type),
			       at, lazy ? "checksum mismatch" :
					  "inconsistent contents");
	}
	if (lazy && !ps->lazy && !crc_ok(crc, sec.p, len))
		return bt_fail(bte_corrupt, 0,
			       "%s section at offset %zu: checksum mismatch",
			       sec_name(type), at);
	return 0;
}

/* Forget what points into the mapping, which bt_trace_free() then keeps. */
static void unmap_pointers(struct bt_trace *t)
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

/* Parse @len bytes at @buf; with @map, point into them (bt_trace_map). */
static int parse_buf(struct bt_trace **trace, const void *buf, size_t len,
		     struct bt_trace_mapping *map)
{
	struct rbuf r = { .p = buf, .len = len, .off = HDR_SIZE };
	struct parser ps = { .map = map };
	int ret, end = 0;

	*trace = NULL;
	ret = check_header(buf, len);
	if (ret < 0)
		return ret;
	ps.t = calloc(1, sizeof(*ps.t));
	if (!ps.t)
		return bt_fail(bte_nomem, ENOMEM, "loading a trace");
	ps.t->mapping = map;
	while (!end) {
		ret = parse_section(&ps, &r, &end);
		if (ret < 0)
			goto err;
	}
	if (!ps.have_meta) {
		ret = bt_fail(bte_corrupt, 0, "no meta section");
		goto err;
	}
	*trace = ps.t;
	return 0;
err:
	if (map)
		unmap_pointers(ps.t);	/* the caller's to release */
	bt_trace_free(ps.t);
	return ret;
}

int bt_trace_parse(struct bt_trace **trace, const void *buf, size_t len)
{
	if (!trace || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_trace_parse(NULL)");
	return parse_buf(trace, buf, len, NULL);
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
	ret = parse_buf(trace, m->base ? m->base : "", m->len, m);
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
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return bt_fail(bt_errno_to_bte(e), e, "cannot open '%s'", path);
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		e = S_ISDIR(st.st_mode) ? EISDIR : errno;
		ret = bt_fail(bte_format, e, "'%s' is not a regular file", path);
		goto out;
	}
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

		unmap_pointers(t);
		mapping_free(m);
	}
	for (i = 0; i < t->nthreads; i++)
		bt_capture_release(&t->thread[i]);
	free(t->thread);
	for (i = 0; i < t->ncode; i++)
		free(t->code[i].bytes);
	free(t->code);
	for (i = 0; i < t->nsyms; i++)
		free(t->sym[i].name);
	free(t->sym);
	free(t);
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
