// SPDX-License-Identifier: MIT
/*
 * Reading trace files: the sections parsed back with every length checked
 * before it is trusted (docs/trace-format.md; keep the two in step).  Each
 * section's reader is a row of one table, sections[].
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "internal.h"
#include "tracefile/tracefile_internal.h"

/* ---- a reader of bytes: every length checked against what is left ---- */

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
	if (n == BT_TRACE_STR_NULL)
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

/* ---- the section readers ---- */

/* What the readers build, and how (copying, or pointing into a mapping). */
struct parser {
	struct bt_trace *t;
	int nomem;
	int have_meta;
	size_t ncode_cap, nthreads_cap, nfaults_cap;
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

static int dec_stop_fields(struct bt_stop *s, struct rbuf *r)
{
	s->reason = (int)rb_u32(r);
	s->tid = (pid_t)rb_u32(r);
	s->signal = (int)rb_u32(r);
	s->si_code = (int)rb_u32(r);
	s->status = (int)rb_u32(r);
	s->breakpoint = (int)rb_u32(r);
	s->pc = rb_u64(r);
	s->addr = rb_u64(r);
	if (r->err)
		return -1;
	/* added later: files without them load with the sender unknown */
	if (r->len - r->off >= 32) {
		const uint8_t *comm;

		s->sender = (pid_t)rb_u32(r);
		s->sender_uid = rb_u32(r);
		s->value = (int64_t)rb_u64(r);
		comm = rb_take(r, sizeof(s->sender_comm));
		if (comm)
			memcpy(s->sender_comm, comm, sizeof(s->sender_comm));
		s->sender_comm[sizeof(s->sender_comm) - 1] = '\0';
	}
	return r->err ? -1 : 0;
}

static int dec_stop(struct parser *ps, struct rbuf *r)
{
	return dec_stop_fields(&ps->t->stop, r);
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
	/* added later, one after the other: files without them load with 0 */
	if (r->len - r->off >= 8)
		t->stats.displaced = rb_u64(r);
	if (r->len - r->off >= 16) {
		t->stats.ring_bytes = rb_u64(r);
		t->stats.ring_read = rb_u64(r);
	}
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

/* A capture's fields before its data; returns the data's size. */
static uint64_t dec_capture_fields(struct bt_capture *c, struct rbuf *r)
{
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
	return rb_u64(r);
}

/* The chunk table, passed over where nothing is mapped to check lazily. */
static int skip_chunks(struct rbuf *r, const struct bt_capture *c)
{
	uint32_t chunk, n;

	if (r->len - r->off < 16)
		return 0;	/* 1.0: none */
	chunk = rb_u32(r);
	n = rb_u32(r);
	if (!chunk || n != (c->size + chunk - 1) / chunk)
		return -1;
	rb_take(r, (size_t)n * 4 + 8);
	return r->err ? -1 : 0;
}

/* PT's TSC conversion (1.3); files before it have none: untimed. */
static int dec_pt_time(struct rbuf *r, struct bt_tsc_conv *t)
{
	const uint8_t *at = r->p + r->off;

	memset(t, 0, sizeof(*t));
	if (r->len - r->off < PT_TIME_FIELDS + 4)
		return 0;
	t->time_zero = rb_u64(r);
	t->time_mult = rb_u32(r);
	t->time_shift = rb_u16(r);
	rb_u16(r);
	t->mono_offset = (int64_t)rb_u64(r);
	return crc_ok(rb_u32(r), at, PT_TIME_FIELDS) ? 0 : -1;
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
	size = dec_capture_fields(c, r);
	c->data = dec_bytes(ps, r, size);
	if (!c->data)
		return -1;
	c->size = size;
	t->nthreads++;
	if ((ps->map ? dec_chunks(ps, r, c) : skip_chunks(r, c)) < 0)
		return -1;
	return dec_pt_time(r, &c->pt_time);
}

/* A fault a handler took (format 1.1 and on; older readers skip it). */
static int dec_fault(struct parser *ps, struct rbuf *r)
{
	struct bt_trace *t = ps->t;
	struct bt_fault *f;
	uint64_t size;

	if (grow((void **)&t->fault, &ps->nfaults_cap, t->nfaults,
		 sizeof(*f)) < 0) {
		ps->nomem = 1;
		return -1;
	}
	f = &t->fault[t->nfaults];
	if (dec_stop_fields(&f->stop, r) < 0)
		return -1;
	f->after = rb_u64(r);
	f->count = rb_u64(r);
	size = dec_capture_fields(&f->cap, r);
	f->cap.data = rb_dup(r, size, &ps->nomem);	/* never mapped */
	if (!f->cap.data)
		return -1;
	f->cap.size = size;
	t->nfaults++;
	if (dec_pt_time(r, &f->cap.pt_time) < 0)
		return -1;
	f->after_lost = r->len - r->off >= 8 && rb_u64(r) != 0;
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

/*
 * The sections a reader knows, one row each: a new section is a new row
 * (and its writer in tracefile_write.c).  A type not here is a newer
 * writer's: skipped, or refused if it is marked required.
 */
struct sec_reader {
	uint32_t type;		/* enum bt_sec_type */
	const char *name;	/* for messages */
	int (*read)(struct parser *ps, struct rbuf *r);	/* NULL: end */
};

static const struct sec_reader sections[] = {
	{ BT_SEC_END, "end", NULL },
	{ BT_SEC_META, "meta", dec_meta },
	{ BT_SEC_STOP, "stop", dec_stop },
	{ BT_SEC_STATS, "stats", dec_stats },
	{ BT_SEC_MAPS, "maps", dec_maps },
	{ BT_SEC_THREAD, "thread", dec_thread },
	{ BT_SEC_CODE, "code", dec_code },
	{ BT_SEC_SYMS, "syms", dec_syms },
	{ BT_SEC_FAULT, "fault", dec_fault },
};

static const struct sec_reader *sec_find(uint32_t type)
{
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(sections); i++)
		if (sections[i].type == type)
			return &sections[i];
	return NULL;
}

static const char *sec_name(uint32_t type)
{
	const struct sec_reader *s = sec_find(type);

	return s ? s->name : "unknown";
}

static int check_header(const uint8_t *p, size_t len)
{
	uint16_t major, minor;
	uint32_t crc;

	if (len < sizeof(bt_trace_magic)) {
		if (!memcmp(p, bt_trace_magic, len))
			return bt_fail(bte_corrupt, 0,
				       "truncated: %zu bytes, the header alone needs %d",
				       len, BT_TRACE_HDR_SIZE);
		return bt_fail(bte_format, 0, "not a btrace trace file");
	}
	if (memcmp(p, bt_trace_magic, sizeof(bt_trace_magic)))
		return bt_fail(bte_format, 0, "not a btrace trace file");
	if (len < BT_TRACE_HDR_SIZE)
		return bt_fail(bte_corrupt, 0,
			       "truncated: %zu bytes, the header alone needs %d",
			       len, BT_TRACE_HDR_SIZE);
	memcpy(&crc, p + BT_TRACE_HDR_SIZE - 4, 4);
	if (!crc_ok(le32toh(crc), p, BT_TRACE_HDR_SIZE - 4))
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

/* One section as found in the file, its contents not yet parsed. */
struct sec {
	uint32_t type, flags, crc;
	size_t at;		/* the header's offset in the file */
	struct rbuf body;
	int lazy;		/* its checksum waits for bt_trace_check() */
};

/*
 * Take the section at @r->off: its header, and its contents checked for
 * length, padding and (unless @sec->lazy) checksum.
 */
static int sec_take(struct parser *ps, struct rbuf *r, struct sec *sec)
{
	const uint8_t *h = r->p + r->off;
	uint64_t len, pad;
	uint32_t hcrc;

	sec->at = r->off;
	if (r->len - r->off < BT_TRACE_SEC_HDR_SIZE)
		return bt_fail(bte_corrupt, 0,
			       "truncated at offset %zu: no end section", sec->at);
	sec->type = rb_u32(r);
	sec->flags = rb_u32(r);
	len = rb_u64(r);
	sec->crc = rb_u32(r);
	hcrc = rb_u32(r);
	if (!crc_ok(hcrc, h, 20))
		return bt_fail(bte_corrupt, 0,
			       "section header at offset %zu: checksum mismatch",
			       sec->at);
	pad = (8 - len % 8) % 8;
	if (len > r->len - r->off || pad > r->len - r->off - len)
		return bt_fail(bte_corrupt, 0,
			       "truncated: %s section at offset %zu needs %llu bytes, %zu left",
			       sec_name(sec->type), sec->at,
			       (unsigned long long)(len + pad),
			       r->len - r->off);
	sec->body = (struct rbuf){ .p = r->p + r->off, .len = len };
	r->off += len + pad;
	/* A mapped thread's data waits for bt_trace_check(). */
	sec->lazy = ps->map && sec->type == BT_SEC_THREAD;
	if ((!sec->lazy && !crc_ok(sec->crc, sec->body.p, len)) ||
	    !zero(sec->body.p + len, pad))
		return bt_fail(bte_corrupt, 0,
			       "%s section at offset %zu: checksum mismatch",
			       sec_name(sec->type), sec->at);
	return 0;
}

/* Check one section at @r->off and parse it; sets *@end at BT_SEC_END. */
static int parse_section(struct parser *ps, struct rbuf *r, int *end)
{
	const struct sec_reader *rd;
	struct sec sec;
	int ret;

	ret = sec_take(ps, r, &sec);
	if (ret < 0)
		return ret;
	if (sec.type == BT_SEC_END) {
		*end = 1;
		return 0;
	}
	rd = sec_find(sec.type);
	if (!rd || !rd->read) {
		if (sec.flags & BT_SECF_REQUIRED)
			return bt_fail(bte_format, 0,
				       "section type %u at offset %zu needs a newer btrace",
				       sec.type, sec.at);
		return 0;	/* a newer writer's optional section */
	}
	/* Fields appended by newer minor versions are ignored. */
	ps->sec_off = sec.at;
	ps->lazy = 0;
	if (rd->read(ps, &sec.body) < 0 || sec.body.err) {
		if (ps->nomem)
			return bt_fail(bte_nomem, ENOMEM, "loading a trace");
		return bt_fail(bte_corrupt, 0, "%s section at offset %zu: %s",
			       rd->name, sec.at, sec.lazy ? "checksum mismatch" :
							   "inconsistent contents");
	}
	if (sec.lazy && !ps->lazy && !crc_ok(sec.crc, sec.body.p, sec.body.len))
		return bt_fail(bte_corrupt, 0,
			       "%s section at offset %zu: checksum mismatch",
			       rd->name, sec.at);
	return 0;
}

int bt_trace_parse_buf(struct bt_trace **trace, const void *buf, size_t len,
		       struct bt_trace_mapping *map)
{
	struct rbuf r = { .p = buf, .len = len, .off = BT_TRACE_HDR_SIZE };
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
		bt_trace_unmap_pointers(ps.t);	/* the caller's to release */
	bt_trace_free(ps.t);
	return ret;
}

int bt_trace_parse(struct bt_trace **trace, const void *buf, size_t len)
{
	if (!trace || (!buf && len))
		return bt_fail(bte_invalid, 0, "bt_trace_parse(NULL)");
	return bt_trace_parse_buf(trace, buf, len, NULL);
}

