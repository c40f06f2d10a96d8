// SPDX-License-Identifier: MIT
/*
 * /proc/PID/maps of this very process, checked against what the dynamic
 * linker (dladdr), the auxiliary vector and an independent libelf read of
 * the build-id notes say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/maps.h"

struct note_id {
	uint8_t id[64];
	size_t len;
};

/* The NT_GNU_BUILD_ID note from the section headers of @file. */
static void read_note_id(const char *file, struct note_id *out)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	out->len = 0;
	fd = open(file, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, next, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (next = gelf_getnote(data, off, &nhdr, &name_off,
						    &desc_off)) > 0) {
			const char *name = (const char *)data->d_buf + name_off;

			if (nhdr.n_type == NT_GNU_BUILD_ID &&
			    nhdr.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nhdr.n_descsz <= sizeof(out->id)) {
				memcpy(out->id, (const char *)data->d_buf +
				       desc_off, nhdr.n_descsz);
				out->len = nhdr.n_descsz;
			}
			off = next;
		}
	}
	elf_end(elf);
	close(fd);
}

static void assert_build_id(const struct bt_map *m, const char *file)
{
	struct note_id note;

	read_note_id(file, &note);
	assert_true(note.len > 0);
	assert_int_equal(m->build_id_len, note.len);
	assert_memory_equal(m->build_id, note.id, note.len);
}

static void assert_sorted(const struct bt_maps *maps)
{
	for (size_t i = 0; i < maps->count; i++) {
		assert_true(maps->map[i].start < maps->map[i].end);
		if (i)
			assert_true(maps->map[i - 1].end <= maps->map[i].start);
	}
}

static void read_self(void **state)
{
	char exe[PATH_MAX];
	struct bt_maps maps;
	const struct bt_map *m;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(bt_maps_read(getpid(), &maps), 0);
	assert_true(maps.count > 5);
	assert_sorted(&maps);

	m = bt_maps_find(&maps, (uintptr_t)read_self);
	assert_non_null(m);
	assert_string_equal(m->path, exe);
	assert_true(m->prot & BT_MAP_X);
	assert_int_equal(m->deleted, 0);
	assert_build_id(m, "/proc/self/exe");
	bt_maps_release(&maps);
}

/* A libc function: its file as the dynamic linker knows it. */
static void read_libc(void **state)
{
	char want[PATH_MAX], got[PATH_MAX];
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	struct bt_maps maps;
	const struct bt_map *m;
	Dl_info info;
	void *fn;

	/* Asked of libc itself: a sanitizer may interpose common names. */
	assert_non_null(libc);
	fn = dlsym(libc, "gnu_get_libc_version");
	assert_non_null(fn);
	assert_true(dladdr(fn, &info));
	assert_non_null(realpath(info.dli_fname, want));
	assert_non_null(strstr(want, "libc"));
	assert_int_equal(bt_maps_read(0, &maps), 0);
	m = bt_maps_find(&maps, (uintptr_t)fn);
	assert_non_null(m);
	assert_non_null(realpath(m->path, got));
	assert_string_equal(got, want);
	assert_true(m->prot & BT_MAP_X);
	assert_build_id(m, want);
	/* Every mapping of libc carries the same id. */
	for (size_t i = 0; i < maps.count; i++)
		if (maps.map[i].path && !strcmp(maps.map[i].path, m->path))
			assert_build_id(&maps.map[i], want);
	bt_maps_release(&maps);
	dlclose(libc);
}

static void read_vdso_anon(void **state)
{
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	struct bt_maps maps;
	const struct bt_map *m;
	uint8_t *anon;

	anon = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(bt_maps_read(0, &maps), 0);
	if (vdso) {
		m = bt_maps_find(&maps, vdso);
		assert_non_null(m);
		assert_string_equal(m->path, "[vdso]");
		assert_int_equal(m->build_id_len, 0);
	}
	m = bt_maps_find(&maps, (uintptr_t)anon + 4096);
	assert_non_null(m);
	assert_null(m->path);
	assert_int_equal(m->prot, BT_MAP_R);
	assert_true(m->start <= (uintptr_t)anon);
	assert_true(m->end >= (uintptr_t)anon + 3 * 4096);
	assert_int_equal(m->build_id_len, 0);
	bt_maps_release(&maps);
	munmap(anon, 3 * 4096);
}

static char tmp_path[64];

/* Remove the copy even when an assertion failed half-way. */
static int unlink_tmp(void **state)
{
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
	return 0;
}

/* Copy this test's executable to a file whose name has spaces. */
static int copy_exe(char *path)
{
	struct stat st;
	int in, out;

	strcpy(path, "/tmp/bt maps test XXXXXX");
	out = mkstemp(path);
	assert_true(out >= 0);
	strcpy(tmp_path, path);
	in = open("/proc/self/exe", O_RDONLY);
	assert_true(in >= 0);
	assert_int_equal(fstat(in, &st), 0);
	assert_int_equal(sendfile(out, in, NULL, st.st_size), st.st_size);
	close(in);
	return out;
}

/*
 * A mapped file with spaces in its name, then deleted: the path stays as
 * the kernel shows it and the build-id is still that of the mapped file.
 */
static void read_spaces_deleted(void **state)
{
	char path[64], deleted[80];
	struct bt_maps maps;
	const struct bt_map *m;
	void *p;
	int fd;

	fd = copy_exe(path);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);

	assert_int_equal(bt_maps_read(0, &maps), 0);
	m = bt_maps_find(&maps, (uintptr_t)p);
	assert_non_null(m);
	assert_string_equal(m->path, path);
	assert_int_equal(m->offset, 0);
	assert_int_equal(m->deleted, 0);
	assert_build_id(m, "/proc/self/exe");
	bt_maps_release(&maps);

	unlink_tmp(NULL);
	snprintf(deleted, sizeof(deleted), "%s (deleted)", path);
	assert_int_equal(bt_maps_read(0, &maps), 0);
	m = bt_maps_find(&maps, (uintptr_t)p);
	assert_non_null(m);
	assert_string_equal(m->path, deleted);
	assert_int_equal(m->deleted, 1);
	assert_build_id(m, "/proc/self/exe");
	bt_maps_release(&maps);
	munmap(p, 4096);
}

/*
 * Another process: a forked child has the same layout.  It is reaped
 * before any assertion, so a failure leaves no process behind.
 */
static void read_child(void **state)
{
	struct bt_maps maps;
	const struct bt_map *m;
	pid_t parent = getpid(), pid;
	int ret;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == parent)
			pause();
		_exit(0);
	}
	ret = bt_maps_read(pid, &maps);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(ret, 0);
	m = bt_maps_find(&maps, (uintptr_t)read_child);
	assert_non_null(m);
	assert_true(m->prot & BT_MAP_X);
	assert_build_id(m, "/proc/self/exe");
	bt_maps_release(&maps);
}

static void read_noent(void **state)
{
	struct bt_maps maps;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* Reaped: the pid names no process now. */
	assert_int_equal(bt_maps_read(pid, &maps), -bte_noent);
	assert_int_equal(maps.count, 0);
	assert_null(maps.map);
}

static void read_null(void **state)
{
	struct bt_maps maps;

	assert_int_equal(bt_maps_read(0, NULL), -bte_invalid);
	assert_int_equal(bt_maps_read(-1, &maps), -bte_invalid);
	bt_maps_release(NULL);
}

/* Binary search at every boundary of a hand-made table with gaps. */
static void find(void **state)
{
	struct bt_map map[7];
	struct bt_maps maps = { map, 7 };

	memset(map, 0, sizeof(map));
	for (int i = 0; i < 7; i++) {
		map[i].start = 0x1000 * (2 * i + 1);
		map[i].end = map[i].start + 0x1000 * (i % 2 + 1);
	}
	for (int i = 0; i < 7; i++) {
		assert_ptr_equal(bt_maps_find(&maps, map[i].start), &map[i]);
		assert_ptr_equal(bt_maps_find(&maps, map[i].end - 1), &map[i]);
		assert_ptr_equal(bt_maps_find(&maps, map[i].start - 1),
				 i && map[i - 1].end == map[i].start ?
				 &map[i - 1] : NULL);
		if (i % 2 == 0)
			assert_null(bt_maps_find(&maps, map[i].end));
	}
	assert_null(bt_maps_find(&maps, 0));
	assert_null(bt_maps_find(&maps, UINT64_MAX));
}

static void find_null(void **state)
{
	struct bt_maps empty = { NULL, 0 };

	assert_null(bt_maps_find(NULL, 0x1000));
	assert_null(bt_maps_find(&empty, 0x1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_self),
		cmocka_unit_test(read_libc),
		cmocka_unit_test(read_vdso_anon),
		cmocka_unit_test_teardown(read_spaces_deleted, unlink_tmp),
		cmocka_unit_test(read_child),
		cmocka_unit_test(read_noent),
		cmocka_unit_test(read_null),
		cmocka_unit_test(find),
		cmocka_unit_test(find_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
