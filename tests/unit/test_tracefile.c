// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "tracefile/tracefile_internal.h"

/* A trace with a bit of everything, its data varied by @seed. */
static struct bt_trace *sample(unsigned int seed)
{
	struct bt_trace *t = calloc(1, sizeof(*t));
	size_t i, j;

	assert_non_null(t);
	srand(seed);
	t->pid = 4242;
	t->created = 1700000000;
	t->exe = strdup("/usr/bin/crash me");
	t->backend = strdup("soft");
	t->stop = (struct bt_stop){ .reason = BT_STOP_SIGNAL, .tid = 4243,
				    .signal = 11, .si_code = 1, .pc = 0x401000,
				    .addr = 0x10, .sender = 77,
				    .sender_uid = 1000, .sender_comm = "sender",
				    .value = -5 };
	t->stats = (struct bt_stats){ .instructions = 123456, .branches = 7890, .stops = 12 };
	t->buffer_size = 1 << 20;
	t->maps.count = 3;
	t->maps.map = calloc(3, sizeof(*t->maps.map));
	t->maps.map[0] = (struct bt_map){ .start = 0x400000, .end = 0x402000,
					  .offset = 0x1000,
					  .prot = BT_MAP_R | BT_MAP_X,
					  .path = strdup("/usr/bin/crash me") };
	memset(t->maps.map[0].build_id, 0xab, 20);
	t->maps.map[0].build_id_len = 20;
	t->maps.map[1] = (struct bt_map){ .start = 0x7fff0000,
					  .end = 0x7fff2000,
					  .prot = BT_MAP_R | BT_MAP_X,
					  .path = strdup("[vdso]") };
	t->maps.map[2] = (struct bt_map){ .start = 0x7fff3000,
					  .end = 0x7fff4000,
					  .prot = BT_MAP_R | BT_MAP_W };
	t->nthreads = 2;
	t->thread = calloc(2, sizeof(*t->thread));
	for (i = 0; i < 2; i++) {
		struct bt_capture *c = &t->thread[i];

		c->format = i ? BT_FMT_PT : BT_FMT_SOFT;
		c->tid = 4242 + i;
		c->lost = 17 * i;
		c->size = 100 + 37 * i + rand() % 50;
		c->data = malloc(c->size);
		for (j = 0; j < c->size; j++)
			c->data[j] = rand();
		c->cpu = (struct bt_cpu){ BT_CPU_INTEL, 0x55, 4, 6 };
		c->pt_config = 0x2001 * i;
		c->pt_mtc_freq = 3;
		c->pt_nom_freq = 0x22;
		c->pt_cpuid_15_eax = 2;
		c->pt_cpuid_15_ebx = 0x11c;
		if (i)
			c->pt_time = (struct bt_tsc_conv){ 0x123456789ull,
							   0x8aaaaaab, 31,
							   -77777 };
	}
	t->ncode = 2;
	t->code = calloc(2, sizeof(*t->code));
	for (i = 0; i < 2; i++) {
		t->code[i].vaddr = i ? 0x7fff0000 : 0x401000;
		t->code[i].size = 64 + 3 * i;
		t->code[i].bytes = malloc(t->code[i].size);
		for (j = 0; j < t->code[i].size; j++)
			t->code[i].bytes[j] = rand();
	}
	t->nfaults = 1;
	t->fault = calloc(1, sizeof(*t->fault));
	t->fault[0].stop = (struct bt_stop){ .reason = BT_STOP_SIGNAL,
					     .tid = 4243, .signal = 11,
					     .si_code = 1, .pc = 0x401010 };
	t->fault[0].after = 1000000;
	t->fault[0].after_lost = 1;
	t->fault[0].count = 2;
	t->fault[0].cap.format = BT_FMT_SOFT;
	t->fault[0].cap.tid = 4243;
	t->fault[0].cap.lost = 3;
	t->fault[0].cap.pt_time = (struct bt_tsc_conv){ 5, 3, 1, 42 };
	t->fault[0].cap.size = 64 + rand() % 50;
	t->fault[0].cap.data = malloc(t->fault[0].cap.size);
	for (j = 0; j < t->fault[0].cap.size; j++)
		t->fault[0].cap.data[j] = rand();
	t->nsyms = 3;
	t->sym = calloc(3, sizeof(*t->sym));
	t->sym[0] = (struct bt_trace_sym){ 0x401000, 0x20, strdup("main") };
	t->sym[1] = (struct bt_trace_sym){ 0x401020, 0, strdup("crash") };
	t->sym[2] = (struct bt_trace_sym){ 0x7fff0100, 0x10,
					   strdup("__vdso_time") };
	return t;
}

static void assert_str_equal(const char *a, const char *b)
{
	if (a && b)
		assert_string_equal(a, b);
	else
		assert_ptr_equal(a, b);
}

static void assert_tsc_conv_equal(const struct bt_tsc_conv *a,
				  const struct bt_tsc_conv *b)
{
	assert_int_equal(a->time_zero, b->time_zero);
	assert_int_equal(a->time_mult, b->time_mult);
	assert_int_equal(a->time_shift, b->time_shift);
	assert_int_equal(a->mono_offset, b->mono_offset);
}

static void assert_trace_equal(const struct bt_trace *a,
			       const struct bt_trace *b)
{
	size_t i;

	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->created, b->created);
	assert_str_equal(a->exe, b->exe);
	assert_str_equal(a->backend, b->backend);
	assert_memory_equal(&a->stop, &b->stop, sizeof(a->stop));
	assert_memory_equal(&a->stats, &b->stats, sizeof(a->stats));
	assert_int_equal(a->buffer_size, b->buffer_size);
	assert_int_equal(a->maps.count, b->maps.count);
	for (i = 0; i < a->maps.count; i++) {
		const struct bt_map *x = &a->maps.map[i], *y = &b->maps.map[i];

		assert_int_equal(x->start, y->start);
		assert_int_equal(x->end, y->end);
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->prot, y->prot);
		assert_int_equal(x->build_id_len, y->build_id_len);
		assert_memory_equal(x->build_id, y->build_id, 20);
		assert_str_equal(x->path, y->path);
	}
	assert_int_equal(a->nthreads, b->nthreads);
	for (i = 0; i < a->nthreads; i++) {
		const struct bt_capture *x = &a->thread[i], *y = &b->thread[i];

		assert_int_equal(x->format, y->format);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->lost, y->lost);
		assert_int_equal(x->status, y->status);
		assert_memory_equal(&x->cpu, &y->cpu, sizeof(x->cpu));
		assert_int_equal(x->pt_config, y->pt_config);
		assert_int_equal(x->pt_mtc_freq, y->pt_mtc_freq);
		assert_int_equal(x->pt_nom_freq, y->pt_nom_freq);
		assert_int_equal(x->pt_cpuid_15_eax, y->pt_cpuid_15_eax);
		assert_int_equal(x->pt_cpuid_15_ebx, y->pt_cpuid_15_ebx);
		assert_tsc_conv_equal(&x->pt_time, &y->pt_time);
		assert_int_equal(x->size, y->size);
		assert_memory_equal(x->data, y->data, x->size);
	}
	assert_int_equal(a->nfaults, b->nfaults);
	for (i = 0; i < a->nfaults; i++) {
		const struct bt_fault *x = &a->fault[i], *y = &b->fault[i];

		assert_memory_equal(&x->stop, &y->stop, sizeof(x->stop));
		assert_int_equal(x->after, y->after);
		assert_int_equal(x->after_lost, y->after_lost);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->cap.format, y->cap.format);
		assert_int_equal(x->cap.tid, y->cap.tid);
		assert_int_equal(x->cap.lost, y->cap.lost);
		assert_tsc_conv_equal(&x->cap.pt_time, &y->cap.pt_time);
		assert_int_equal(x->cap.size, y->cap.size);
		assert_memory_equal(x->cap.data, y->cap.data, x->cap.size);
	}
	assert_int_equal(a->ncode, b->ncode);
	for (i = 0; i < a->ncode; i++) {
		assert_int_equal(a->code[i].vaddr, b->code[i].vaddr);
		assert_int_equal(a->code[i].size, b->code[i].size);
		assert_memory_equal(a->code[i].bytes, b->code[i].bytes,
				    a->code[i].size);
	}
	assert_int_equal(a->nsyms, b->nsyms);
	for (i = 0; i < a->nsyms; i++) {
		assert_int_equal(a->sym[i].addr, b->sym[i].addr);
		assert_int_equal(a->sym[i].size, b->sym[i].size);
		assert_string_equal(a->sym[i].name, b->sym[i].name);
	}
}

static void encode(const struct bt_trace *t, uint8_t **buf, size_t *len)
{
	assert_int_equal(bt_trace_encode(t, buf, len), 0);
	assert_true(*len > 32);
}

static void roundtrip(void **state)
{
	struct bt_trace *t = sample(1), *u;
	uint8_t *buf;
	size_t len;

	encode(t, &buf, &len);
	assert_int_equal(len % 8, 0);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_trace_equal(t, u);
	assert_non_null(bt_trace_thread(u, 4243));
	assert_null(bt_trace_thread(u, 1));
	assert_ptr_equal(bt_trace_fault(u, 4243), &u->fault[0]);
	assert_null(bt_trace_fault(u, 4242));
	bt_trace_free(u);
	bt_trace_free(t);
	free(buf);
}

static void roundtrip_empty(void **state)
{
	struct bt_trace t = { .pid = 1 }, *u;
	uint8_t *buf;
	size_t len;

	encode(&t, &buf, &len);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_trace_equal(&t, u);
	assert_null(u->exe);
	bt_trace_free(u);
	free(buf);
}

static void parse_null(void **state)
{
	struct bt_trace *u;

	assert_int_equal(bt_trace_parse(NULL, "", 0), -bte_invalid);
	assert_int_equal(bt_trace_parse(&u, NULL, 4), -bte_invalid);
	assert_int_equal(bt_trace_encode(NULL, NULL, NULL), -bte_invalid);
	assert_int_equal(bt_trace_read(&u, NULL), -bte_invalid);
	assert_null(bt_trace_symbol(NULL, 0, NULL));
	bt_trace_free(NULL);
}

/* Every proper prefix of a file is detected as truncated. */
static void parse_truncated(void **state)
{
	struct bt_trace *t = sample(2), *u = (void *)1;
	uint8_t *buf, *cut;
	size_t len, i;

	encode(t, &buf, &len);
	for (i = 0; i < len; i++) {
		/* an exact-size copy, so that a read past it is caught */
		cut = malloc(i ? i : 1);
		memcpy(cut, buf, i);
		assert_int_equal(bt_trace_parse(&u, cut, i), -bte_corrupt);
		assert_null(u);
		assert_true(strlen(bt_errdetail()) > 0);
		free(cut);
	}
	assert_int_equal(bt_trace_parse(&u, buf, 16), -bte_corrupt);
	assert_non_null(strstr(bt_errdetail(), "truncated"));
	bt_trace_free(t);
	free(buf);
}

/* Any single damaged byte is detected. */
static void parse_corrupt(void **state)
{
	struct bt_trace *t = sample(3), *u;
	uint8_t *buf;
	size_t len, i;
	int ret;

	encode(t, &buf, &len);
	for (i = 0; i < len; i++) {
		buf[i] ^= 0x20;
		ret = bt_trace_parse(&u, buf, len);
		if (i < 8)	/* the magic: not ours any more */
			assert_int_equal(ret, -bte_format);
		else
			assert_int_equal(ret, -bte_corrupt);
		buf[i] ^= 0x20;
	}
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	bt_trace_free(u);
	bt_trace_free(t);
	free(buf);
}

static void parse_foreign(void **state)
{
	static const char text[] = "hello, this is not a trace file at all\n";
	uint8_t elf[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	struct bt_trace *u;

	assert_int_equal(bt_trace_parse(&u, text, sizeof(text)), -bte_format);
	assert_string_equal(bt_errdetail(), "not a btrace trace file");
	assert_int_equal(bt_trace_parse(&u, elf, sizeof(elf)), -bte_format);
	assert_int_equal(bt_trace_parse(&u, "x", 1), -bte_format);
	assert_int_equal(bt_trace_read(&u, "/proc/self/exe"), -bte_format);
	assert_int_equal(bt_trace_read(&u, "/"), -bte_format);
	assert_int_equal(bt_trace_read(&u, "/nonexistent/x.trace"),
			 -bte_noent);
	assert_int_equal(bt_errno(), ENOENT);
}

/* Insert a section of @type/@flags with @len bytes of payload before END. */
static uint8_t *insert_section(const uint8_t *buf, size_t len, uint32_t type,
			       uint32_t flags, size_t plen, size_t *outlen)
{
	size_t pad = (8 - plen % 8) % 8, at = len - 24;
	uint8_t *out = calloc(1, len + 24 + plen + pad), *h;
	uint32_t v32;
	uint64_t v64;

	memcpy(out, buf, at);
	h = out + at;
	v32 = htole32(type);
	memcpy(h, &v32, 4);
	v32 = htole32(flags);
	memcpy(h + 4, &v32, 4);
	v64 = htole64(plen);
	memcpy(h + 8, &v64, 8);
	memset(h + 24, 0x5a, plen);
	v32 = htole32(bt_crc32(0, h + 24, plen));
	memcpy(h + 16, &v32, 4);
	v32 = htole32(bt_crc32(0, h, 20));
	memcpy(h + 20, &v32, 4);
	memcpy(h + 24 + plen + pad, buf + at, 24);
	*outlen = len + 24 + plen + pad;
	return out;
}

static void parse_unknown_section(void **state)
{
	struct bt_trace *t = sample(4), *u;
	uint8_t *buf, *ext;
	size_t len, elen;

	encode(t, &buf, &len);
	ext = insert_section(buf, len, 999, 0, 13, &elen);
	assert_int_equal(bt_trace_parse(&u, ext, elen), 0);
	assert_trace_equal(t, u);
	bt_trace_free(u);
	free(ext);

	/* a fault section too short for its fields is corrupt */
	ext = insert_section(buf, len, BT_SEC_FAULT, 0, 13, &elen);
	assert_int_equal(bt_trace_parse(&u, ext, elen), -bte_corrupt);
	assert_non_null(strstr(bt_errdetail(), "fault section"));
	free(ext);

	ext = insert_section(buf, len, 999, BT_SECF_REQUIRED, 5, &elen);
	assert_int_equal(bt_trace_parse(&u, ext, elen), -bte_format);
	assert_non_null(strstr(bt_errdetail(), "newer btrace"));
	free(ext);
	bt_trace_free(t);
	free(buf);
}

static void parse_newer_version(void **state)
{
	struct bt_trace *t = sample(5), *u;
	uint8_t *buf;
	uint32_t crc;
	size_t len;

	encode(t, &buf, &len);
	buf[8] = 2;	/* major version 2.0 */
	buf[10] = 0;
	crc = htole32(bt_crc32(0, buf, 28));
	memcpy(buf + 28, &crc, 4);
	assert_int_equal(bt_trace_parse(&u, buf, len), -bte_format);
	assert_non_null(strstr(bt_errdetail(), "2.0"));

	buf[8] = 1;	/* a newer minor version reads fine */
	buf[10] = 7;
	crc = htole32(bt_crc32(0, buf, 28));
	memcpy(buf + 28, &crc, 4);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	bt_trace_free(u);
	bt_trace_free(t);
	free(buf);
}

/*
 * A soft capture of three branches of 10 instructions each with time
 * records at 0 and 30 instructions (1000 and 4000 ns): the branches'
 * times interpolated (2000, 3000, 4000), kept through a trace file; the
 * same capture without them in a file of format 1.1 loads, untimed.
 */
static void soft_timed(struct bt_capture *c, int timed)
{
	struct bt_ring *ring = bt_ring_alloc(4096);
	struct bt_ring_view v;
	struct bt_rec_branch br = { .kind = BT_BR_JUMP, .ninsn = 10 };
	struct bt_rec_time tr = { .ns = 1000 };
	int i;

	assert_non_null(ring);
	if (timed)
		assert_int_equal(bt_ring_write(ring, BT_REC_TIME, &tr.ns,
					       sizeof(tr) - sizeof(tr.hdr)), 0);
	for (i = 0; i < 3; i++) {
		br.from = 0x401000 + 0x10 * i;
		br.to = br.from + 0x100;
		assert_int_equal(bt_ring_write(ring, BT_REC_BRANCH, &br.from,
					       sizeof(br) - sizeof(br.hdr)), 0);
	}
	tr.ns = 4000;
	if (timed)
		assert_int_equal(bt_ring_write(ring, BT_REC_TIME, &tr.ns,
					       sizeof(tr) - sizeof(tr.hdr)), 0);
	bt_ring_view_init(&v, ring);
	free(c->data);
	c->format = BT_FMT_SOFT;
	c->lost = 0;
	assert_true(bt_ring_copy(&v, &c->data, &c->size) >= 0);
	bt_ring_free(ring);
}

static void check_times(const struct bt_capture *c, int timed)
{
	struct bt_decode_opts o = { .size = sizeof(o) };
	struct bt_history *h;
	size_t i;

	assert_int_equal(bt_decode(c, &o, &h), 0);
	assert_int_equal(h->count, 3);
	assert_int_equal(h->end_ts, timed ? 4000 : 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(h->branch[i].ts, timed ? 2000 + 1000 * i : 0);
	bt_history_free(h);
}

static void time_records(void **state)
{
	struct bt_trace *t = sample(9), *u;
	uint8_t *buf;
	uint32_t crc;
	size_t len;

	soft_timed(&t->thread[0], 1);
	encode(t, &buf, &len);
	assert_int_equal(buf[10], BT_TRACE_VERSION_MINOR);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_trace_equal(t, u);
	check_times(&u->thread[0], 1);
	bt_trace_free(u);
	free(buf);

	soft_timed(&t->thread[0], 0);	/* as btrace wrote 1.1 */
	encode(t, &buf, &len);
	buf[10] = 1;
	crc = htole32(bt_crc32(0, buf, 28));
	memcpy(buf + 28, &crc, 4);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	check_times(&u->thread[0], 0);
	bt_trace_free(u);
	bt_trace_free(t);
	free(buf);
}

/*
 * @buf as btrace wrote format 1.@minor: the fault section without its
 * last field (1.4: whether records were lost after it), and before 1.3
 * the thread and fault sections without the PT time fields and their CRC
 * (the 28 bytes before).
 */
static size_t as_older(uint8_t *buf, size_t len, int minor)
{
	size_t in = BT_TRACE_HDR_SIZE, out = in;
	uint32_t v;

	while (in < len) {
		uint32_t type = le32toh(*(uint32_t *)(buf + in));
		uint64_t n = le64toh(*(uint64_t *)(buf + in + 8)), pad;

		memmove(buf + out, buf + in, BT_TRACE_SEC_HDR_SIZE + n);
		in += BT_TRACE_SEC_HDR_SIZE + n + (8 - n % 8) % 8;
		if (type == BT_SEC_FAULT)
			n -= 8;
		if (minor < 3 &&
		    (type == BT_SEC_THREAD || type == BT_SEC_FAULT))
			n -= PT_TIME_FIELDS + 4;
		*(uint64_t *)(buf + out + 8) = htole64(n);
		v = htole32(bt_crc32(0, buf + out + BT_TRACE_SEC_HDR_SIZE, n));
		memcpy(buf + out + 16, &v, 4);
		v = htole32(bt_crc32(0, buf + out, 20));
		memcpy(buf + out + 20, &v, 4);
		out += BT_TRACE_SEC_HDR_SIZE + n;
		pad = (8 - n % 8) % 8;
		memset(buf + out, 0, pad);
		out += pad;
	}
	buf[10] = (uint8_t)minor;
	v = htole32(bt_crc32(0, buf, 28));
	memcpy(buf + 28, &v, 4);
	return out;
}

/*
 * PT's TSC conversion is kept (1.3), and whether a fault's records were
 * lost after it (1.4); a file of 1.3 loads with none lost, one of 1.2
 * untimed too.
 */
static void pt_time_fields(void **state)
{
	struct bt_trace *t = sample(10), *u;
	struct bt_tsc_conv none = { 0 };
	uint8_t *buf;
	size_t len;

	encode(t, &buf, &len);
	assert_int_equal(buf[10], 4);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_trace_equal(t, u);
	bt_trace_free(u);
	free(buf);

	encode(t, &buf, &len);
	len = as_older(buf, len, 3);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_int_equal(u->fault[0].after_lost, 0);
	t->fault[0].after_lost = 0;
	assert_trace_equal(t, u);
	bt_trace_free(u);
	free(buf);

	encode(t, &buf, &len);
	len = as_older(buf, len, 2);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	assert_tsc_conv_equal(&u->thread[1].pt_time, &none);
	assert_tsc_conv_equal(&u->fault[0].cap.pt_time, &none);
	t->thread[1].pt_time = none;
	t->fault[0].cap.pt_time = none;
	assert_trace_equal(t, u);
	bt_trace_free(u);
	bt_trace_free(t);
	free(buf);
}

static void write_read(void **state)
{
	char dir[] = "/tmp/test_tracefile.XXXXXX", path[64];
	struct bt_trace *t = sample(6), *u;
	struct dirent *de;
	struct stat st;
	mode_t old;
	DIR *d;
	int n = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	old = umask(0);
	assert_int_equal(bt_trace_write(t, path), 0);
	/* overwriting an existing file keeps the mode strict too */
	assert_int_equal(bt_trace_write(t, path), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(bt_trace_read(&u, path), 0);
	assert_trace_equal(t, u);
	bt_trace_free(u);

	d = opendir(dir);	/* no temporary file left behind */
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/no/such/dir.trace", dir);
	assert_int_equal(bt_trace_write(t, path), -bte_noent);
	rmdir(dir);
	bt_trace_free(t);
}

/* Write @t to a new file in @dir; the offset of thread 1's data. */
static size_t write_big(const struct bt_trace *t, const char *path)
{
	uint8_t *buf, *at;
	size_t len;

	encode(t, &buf, &len);
	at = memmem(buf, len, t->thread[1].data, 256);
	assert_non_null(at);
	assert_int_equal(bt_trace_write(t, path), 0);
	free(buf);
	return at - buf;
}

static void flip_byte(const char *path, size_t off)
{
	FILE *f = fopen(path, "r+b");
	int c;

	assert_non_null(f);
	fseek(f, off, SEEK_SET);
	c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 0x40, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * bt_trace_map: the same trace as bt_trace_read, nothing copied; a
 * thread's data checked per chunk, only where bt_trace_check asks.
 */
static void map_check(void **state)
{
	char dir[] = "/tmp/test_tracefile.XXXXXX", path[64];
	struct bt_trace *t = sample(7), *u;
	struct bt_capture *c = &t->thread[1];
	size_t off, i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.trace", dir);
	free(c->data);
	c->size = 5 * BT_TRACE_CHUNK + 123;
	c->data = malloc(c->size);
	for (i = 0; i < c->size; i++)
		c->data[i] = (uint8_t)(i * 7 + i / 251);
	off = write_big(t, path);
	assert_int_equal(bt_trace_map(&u, path), 0);
	assert_trace_equal(t, u);
	assert_int_equal(bt_trace_check(u, &u->thread[1], 0, c->size), 0);
	assert_int_equal(bt_trace_check(u, &u->thread[0], 0, 1), 0);
	assert_int_equal(bt_trace_check(u, c, 0, 1), -bte_invalid);
	bt_trace_free(u);

	/* A damaged byte in the first chunk: found only when asked for. */
	flip_byte(path, off + 10);
	assert_int_equal(bt_trace_read(&u, path), -bte_corrupt);
	assert_int_equal(bt_trace_map(&u, path), 0);
	assert_int_equal(bt_trace_check(u, &u->thread[1], BT_TRACE_CHUNK,
					c->size), 0);
	assert_int_equal(bt_trace_check(u, &u->thread[1], 0, c->size),
			 -bte_corrupt);
	assert_non_null(strstr(bt_errdetail(), "data bytes 0..65536"));
	bt_trace_free(u);
	flip_byte(path, off + 10);

	/* PT's time fields after the chunk table (6 chunks): their CRC. */
	flip_byte(path, off + c->size + 16 + 6 * 4 + 8);
	assert_int_equal(bt_trace_map(&u, path), -bte_corrupt);
	assert_null(u);
	flip_byte(path, off + c->size + 16 + 6 * 4 + 8);

	/* The fields before the data are checked at once. */
	flip_byte(path, off - THREAD_FIELDS + 4);
	assert_int_equal(bt_trace_map(&u, path), -bte_corrupt);
	assert_null(u);
	unlink(path);
	assert_int_equal(bt_trace_map(&u, path), -bte_noent);
	assert_int_equal(bt_trace_map(&u, dir), -bte_format);
	rmdir(dir);
	bt_trace_free(t);
}

static void symbol(void **state)
{
	struct bt_trace *t = sample(7);
	uint64_t off = 0;

	assert_string_equal(bt_trace_symbol(t, 0x401000, &off), "main");
	assert_int_equal(off, 0);
	assert_string_equal(bt_trace_symbol(t, 0x40101f, &off), "main");
	assert_int_equal(off, 0x1f);
	/* no size: up to the end of its mapping */
	assert_string_equal(bt_trace_symbol(t, 0x401fff, &off), "crash");
	assert_null(bt_trace_symbol(t, 0x402000, &off));
	assert_null(bt_trace_symbol(t, 0x400fff, &off));
	assert_string_equal(bt_trace_symbol(t, 0x7fff0105, &off),
			    "__vdso_time");
	assert_null(bt_trace_symbol(t, 0x7fff0110, &off));
	bt_trace_free(t);
}

/* The executable mapping of this test program, from /proc/self/maps. */
static void self_map(struct bt_map *m, char *path, size_t size)
{
	char line[512], perms[8], p[400];
	unsigned long s, e, off;
	ssize_t n;
	FILE *f;

	n = readlink("/proc/self/exe", path, size - 1);
	assert_true(n > 0);
	path[n] = '\0';
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %399s", &s, &e, perms,
			   &off, p) == 5 && perms[2] == 'x' && !strcmp(p, path))
			break;
		s = 0;
	}
	fclose(f);
	assert_true(s != 0);
	*m = (struct bt_map){ .start = s, .end = e, .offset = off,
			      .prot = BT_MAP_R | BT_MAP_X, .path = path };
}

static void marker_function(void)
{
}

/* Symbols collected from this program's own ELF file name its functions. */
static void collect_syms(void **state)
{
	struct bt_trace t = { 0 };
	char path[400];
	struct bt_map m;
	uint64_t off;
	size_t i;

	self_map(&m, path, sizeof(path));
	t.maps.map = &m;
	t.maps.count = 1;
	assert_int_equal(bt_trace_collect_syms(&t), 0);
	assert_true(t.nsyms > 5);
	assert_string_equal(bt_trace_symbol(&t, (uintptr_t)marker_function,
					    &off), "marker_function");
	assert_int_equal(off, 0);
	assert_string_equal(bt_trace_symbol(&t, (uintptr_t)collect_syms + 3,
					    &off), "collect_syms");
	assert_int_equal(off, 3);
	for (i = 0; i < t.nsyms; i++)
		free(t.sym[i].name);
	free(t.sym);
}

/* The saved code is what an offline image reads back. */
static void add_image(void **state)
{
	struct bt_trace *t = sample(8);
	struct bt_image *image = bt_image_alloc();
	uint8_t buf[80];

	assert_non_null(image);
	assert_int_equal(bt_trace_add_image(t, image), 0);
	assert_int_equal(bt_image_read(image, 0x401000, buf, 64), 64);
	assert_memory_equal(buf, t->code[0].bytes, 64);
	assert_int_equal(bt_image_read(image, 0x7fff0010, buf, 10), 10);
	assert_memory_equal(buf, t->code[1].bytes + 0x10, 10);
	assert_true(bt_image_read(image, 0x500000, buf, 4) <= 0);
	assert_int_equal(bt_trace_add_image(NULL, image), -bte_invalid);
	bt_image_free(image);
	bt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip),
		cmocka_unit_test(roundtrip_empty),
		cmocka_unit_test(parse_null),
		cmocka_unit_test(parse_truncated),
		cmocka_unit_test(parse_corrupt),
		cmocka_unit_test(parse_foreign),
		cmocka_unit_test(parse_unknown_section),
		cmocka_unit_test(parse_newer_version),
		cmocka_unit_test(time_records),
		cmocka_unit_test(pt_time_fields),
		cmocka_unit_test(write_read),
		cmocka_unit_test(map_check),
		cmocka_unit_test(symbol),
		cmocka_unit_test(collect_syms),
		cmocka_unit_test(add_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
