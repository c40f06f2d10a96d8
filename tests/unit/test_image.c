// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "image_internal.h"

static ssize_t pattern_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t i;

	(*(int *)ctx)++;
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(addr + i);
	return len;
}

static void add_mem(void **state)
{
	struct bt_image *image = bt_image_alloc();
	uint8_t a[64], b[16], out[64];
	size_t i;

	assert_non_null(image);
	for (i = 0; i < sizeof(a); i++)
		a[i] = 0xa0 ^ i;
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(bt_image_add_mem(image, a, sizeof(a), 0x1000), 0);
	assert_int_equal(bt_image_read(image, 0x1000, out, 64), 64);
	assert_memory_equal(out, a, 64);
	/* Reads stop at the end of a section. */
	assert_int_equal(bt_image_read(image, 0x1030, out, 64), 16);
	assert_memory_equal(out, a + 0x30, 16);
	assert_int_equal(bt_image_read(image, 0x1040, out, 1), 0);
	assert_int_equal(bt_image_read(image, 0xfff, out, 1), 0);
	/* Later sections win on overlap. */
	assert_int_equal(bt_image_add_mem(image, b, sizeof(b), 0x1010), 0);
	assert_int_equal(bt_image_read(image, 0x1000, out, 64), 16);
	assert_memory_equal(out, a, 16);
	assert_int_equal(bt_image_read(image, 0x1010, out, 64), 16);
	assert_memory_equal(out, b, 16);
	assert_int_equal(bt_image_read(image, 0x1020, out, 64), 32);
	assert_memory_equal(out, a + 0x20, 32);
	bt_image_free(image);
}

static void add_mem_null(void **state)
{
	uint8_t buf[4] = { 0 };

	assert_int_equal(bt_image_add_mem(NULL, buf, 4, 0), -bte_invalid);
	assert_int_equal(bt_image_read(NULL, 0, buf, 4), -bte_invalid);
	assert_int_equal(bt_image_add_elf(NULL, "/bin/true", 0), -bte_invalid);
	assert_null(bt_image_pt(NULL));
	bt_image_free(NULL);
}

static void fallback(void **state)
{
	struct bt_image *image = bt_image_alloc();
	uint8_t sec[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[8];
	int calls = 0;

	assert_int_equal(bt_image_add_mem(image, sec, 8, 0x500), 0);
	bt_image_set_fallback(image, pattern_read, &calls);
	assert_int_equal(bt_image_read(image, 0x500, out, 8), 8);
	assert_memory_equal(out, sec, 8);
	assert_int_equal(calls, 0);
	assert_int_equal(bt_image_read(image, 0x9000, out, 4), 4);
	assert_int_equal(out[0], 0x00);
	assert_int_equal(out[3], 0x03);
	assert_int_equal(calls, 1);
	bt_image_free(image);
}

static void add_file(void **state)
{
	char path[] = "/tmp/btrace-image-XXXXXX";
	struct bt_image *image = bt_image_alloc();
	uint8_t data[256], out[256];
	int fd, i;

	for (i = 0; i < 256; i++)
		data[i] = 255 - i;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);
	/* Sections are truncated to the file. */
	assert_int_equal(bt_image_add_file(image, path, 0x80, 0x1000, 0x7000),
			 0);
	assert_int_equal(bt_image_read(image, 0x7000, out, 256), 128);
	assert_memory_equal(out, data + 0x80, 128);
	assert_true(bt_image_add_file(image, "/nonexistent/x", 0, 1, 0) < 0);
	unlink(path);
	bt_image_free(image);
}

static int find_main(struct dl_phdr_info *info, size_t size, void *ctx)
{
	*(uint64_t *)ctx = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

/* The ELF file of this very test at its load bias reads as its memory. */
static void add_elf(void **state)
{
	struct bt_image *image = bt_image_alloc();
	const uint8_t *code = (const uint8_t *)(uintptr_t)add_elf;
	uint8_t out[64];
	uint64_t bias = 0;
	char exe[4096];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(find_main, &bias);
	assert_int_equal(bt_image_add_elf(image, exe, bias), 0);
	assert_int_equal(bt_image_read(image, (uint64_t)(uintptr_t)code, out,
				       sizeof(out)), sizeof(out));
	assert_memory_equal(out, code, sizeof(out));
	assert_true(bt_image_add_elf(image, "/proc/self/status", 0) < 0);
	bt_image_free(image);
}

/* Our own memory, as a debugger reads it: errors, not faults. */
static ssize_t self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
}

/* A file mapping comes from its file, an anonymous one through @read. */
static void add_maps(void **state)
{
	static uint8_t anon[32] = { 0xc3, 0x90, 0x90, 0xcc };
	struct bt_image *image = bt_image_alloc();
	struct bt_map m[3];
	struct bt_maps maps = { m, 3 };
	uint8_t data[64], out[64];
	char path[] = "/tmp/btrace-image-XXXXXX";
	int fd;

	memset(data, 0x5a, sizeof(data));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);
	memset(m, 0, sizeof(m));
	m[0] = (struct bt_map){ .start = 0x400000, .end = 0x400040,
				.prot = BT_MAP_R | BT_MAP_X, .path = path };
	m[1] = (struct bt_map){ .start = (uintptr_t)anon,
				.end = (uintptr_t)anon + 32,
				.prot = BT_MAP_R | BT_MAP_X, .path = "[vdso]" };
	m[2] = (struct bt_map){ .start = 0x600000, .end = 0x600040,
				.prot = BT_MAP_R, .path = path };
	assert_int_equal(bt_image_add_maps(image, &maps, self_read, NULL), 0);
	assert_int_equal(bt_image_read(image, 0x400000, out, 64), 64);
	assert_memory_equal(out, data, 64);
	assert_int_equal(bt_image_read(image, (uintptr_t)anon, out, 32), 32);
	assert_memory_equal(out, anon, 32);
	/* Not executable: not part of the code image. */
	assert_int_equal(bt_image_read(image, 0x600000, out, 4), 0);
	unlink(path);
	bt_image_free(image);
}

/* This very process: its code from its files, the vDSO through @read. */
static void add_maps_self(void **state)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)add_elf;
	struct bt_image *image = bt_image_alloc();
	struct bt_maps maps = { 0 };
	uint8_t out[64];
	size_t i;

	assert_int_equal(bt_maps_read(getpid(), &maps), 0);
	assert_int_equal(bt_image_add_maps(image, &maps, self_read, NULL), 0);
	assert_int_equal(bt_image_read(image, (uintptr_t)code, out, 64), 64);
	assert_memory_equal(out, code, 64);
	code = (const uint8_t *)(uintptr_t)memcpy;	/* libc, or static */
	assert_int_equal(bt_image_read(image, (uintptr_t)code, out, 16), 16);
	assert_memory_equal(out, code, 16);
	for (i = 0; i < maps.count; i++) {
		const struct bt_map *m = &maps.map[i];

		if (m->path && !strcmp(m->path, "[vdso]")) {
			assert_int_equal(bt_image_read(image, m->start, out, 64),
					 64);
			assert_memory_equal(out, (void *)(uintptr_t)m->start,
					    64);
		}
	}
	bt_maps_release(&maps);
	bt_image_free(image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_mem),
		cmocka_unit_test(add_mem_null),
		cmocka_unit_test(fallback),
		cmocka_unit_test(add_file),
		cmocka_unit_test(add_elf),
		cmocka_unit_test(add_maps),
		cmocka_unit_test(add_maps_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
