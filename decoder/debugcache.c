// SPDX-License-Identifier: MIT
/*
 * The cache of inflated debug files (debugcache.h).
 *
 * Debian's -dbg packages and debuginfod servers ship debug files whose
 * DWARF sections are compressed (SHF_COMPRESSED), and libdw inflates
 * every .debug_* section of such a file when it opens it: at each run,
 * whatever the run looks up in it (for libc's, a quarter of the CPU of
 * `btrace run -- /bin/true`).  The first run that opens one writes a copy
 * with those sections inflated, named by the module's build-id, and
 * later runs open the copy, as GDB's index-cache keeps what it computed
 * from a file by build-id.  A copy is written under a temporary name and
 * renamed, so a reader sees a whole file or none; its build-id is checked
 * again before it is used, and anything wrong with it (or with the cache
 * directory) only means the file found is used as it is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "debugcache.h"

#define KEEP_DAYS	30	/* copies not used for longer go */

/* BTRACE_DEBUG_CACHE: "0" or "off": none; a directory; else the default. */
static int cache_dir(char *buf, size_t size)
{
	const char *env = getenv("BTRACE_DEBUG_CACHE"), *base;
	int n;

	if (env && (!strcmp(env, "0") || !strcmp(env, "off")))
		return -1;
	if (env && env[0] == '/')
		n = snprintf(buf, size, "%s", env);
	else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/')
		n = snprintf(buf, size, "%s/btrace/debug", base);
	else if ((base = getenv("HOME")) && base[0] == '/')
		n = snprintf(buf, size, "%s/.cache/btrace/debug", base);
	else
		return -1;
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* mkdir -p @dir, private to its user. */
static int make_dir(char *dir)
{
	char *p;

	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(dir, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * The compressed .debug_* sections of @elf: without @inflate, is there
 * one (1 or 0); with, each is inflated in memory, for elf_update() to
 * write (0, or -1 if one could not be).
 */
static int debug_compressed(Elf *elf, int inflate)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return inflate ? -1 : 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if (!inflate)
			return 1;
		if (elf_compress(scn, 0, 0) < 0)
			return -1;
	}
	return 0;
}

/*
 * Is @fd a whole ELF file (every section within it) whose build-id is @id
 * (@len bytes), with nothing compressed?
 */
static int same_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	const void *got;
	struct stat st;
	GElf_Ehdr eh;
	size_t shstrndx;
	int ok;

	if (!elf)
		return 0;
	ok = fstat(fd, &st) == 0 && gelf_getehdr(elf, &eh) &&
	     eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize <=
		(uint64_t)st.st_size &&
	     elf_getshdrstrndx(elf, &shstrndx) == 0 &&
	     dwelf_elf_gnu_build_id(elf, &got) == len &&
	     !memcmp(got, id, (size_t)len) && !debug_compressed(elf, 0);
	while (ok && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		ok = gelf_getshdr(scn, &sh) &&
		     (sh.sh_type == SHT_NOBITS ||
		      sh.sh_offset + sh.sh_size <= (uint64_t)st.st_size);
	}
	elf_end(elf);
	return ok;
}

/* Does @name end in @suffix, after something? */
static int ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && !strcmp(name + n - k, suffix);
}

/*
 * Copies in @dir not used for KEEP_DAYS go (each use touches its time),
 * and what a run that was killed while it wrote one left, after a day.
 */
static void sweep(const char *dir)
{
	time_t old = time(NULL) - KEEP_DAYS * 86400;
	time_t day = time(NULL) - 86400;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int tmp = ends_with(e->d_name, ".tmp");
		struct stat st;

		if (!tmp && !ends_with(e->d_name, ".debug") &&
		    !ends_with(e->d_name, ".src"))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 &&
		    st.st_mtime < (tmp ? day : old))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* Copy @in's bytes to @out; 0 or -1. */
static int copy_bytes(int in, int out)
{
	char buf[1 << 16];
	off_t at = 0;
	ssize_t n;

	for (;;) {
		n = pread(in, buf, sizeof(buf), at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		if (write(out, buf, (size_t)n) != n)
			return -1;
		at += n;
	}
}

/*
 * @file written through a temporary beside it, renamed once whole: open
 * it (a descriptor, or < 0), then publish() what was written.
 */
static int publish_open(const char *file, char tmp[4096 + 128])
{
	snprintf(tmp, 4096 + 128, "%s.%d.tmp", file, (int)getpid());
	return open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* 0 if @ok, @fd closed and @tmp renamed to @file; else -1, @tmp gone. */
static int publish(int fd, int ok, const char *tmp, const char *file)
{
	ok &= close(fd) == 0;
	if (ok && rename(tmp, file) == 0)
		return 0;
	unlink(tmp);
	return -1;
}

/* @file: a copy of @fd with its .debug_* sections inflated; 0 or -1. */
static int write_copy(int fd, const char *file)
{
	char tmp[4096 + 128];
	int out = publish_open(file, tmp), ok = 0;
	Elf *elf;

	if (out < 0)
		return -1;
	if (copy_bytes(fd, out) == 0 &&
	    (elf = elf_begin(out, ELF_C_RDWR, NULL))) {
		ok = debug_compressed(elf, 1) == 0 &&
		     elf_update(elf, ELF_C_WRITE) >= 0;
		elf_end(elf);
	}
	return publish(out, ok, tmp, file);
}

/*
 * @mod's copy's name into @file (room for 4096 + 96), ".debug" at
 * *@ext (where ".src" goes for its source's); 0, or -1.
 */
static int copy_name(Dwfl_Module *mod, char *file, char **ext,
		     const unsigned char **id, int *len)
{
	char dir[4096];
	GElf_Addr vaddr;
	int i, n;

	if (cache_dir(dir, sizeof(dir)) < 0)
		return -1;
	*len = dwfl_module_build_id(mod, id, &vaddr);
	if (*len <= 0 || *len > 40)
		return -1;
	n = snprintf(file, 4096 + 96, "%s/", dir);
	for (i = 0; i < *len; i++)
		n += snprintf(file + n, 4096 + 96 - (size_t)n, "%02x",
			      (*id)[i]);
	*ext = file + n;
	snprintf(*ext, 4096 + 96 - (size_t)n, ".debug");
	return 0;
}

/*
 * What a copy stands for, in its ".src" beside it: the debug file it was
 * made from, as stat() sees it, and its path.  A copy is used only while
 * that file is there unchanged: removing or upgrading a -dbg package
 * takes its copies out of use as it takes the files.
 */
static int source_line(const char *path, char *buf, size_t size)
{
	struct stat st;
	int n;

	if (!path || path[0] != '/' || stat(path, &st) < 0)
		return -1;
	n = snprintf(buf, size, "%llu %llu %lld %lld.%09ld %s\n",
		     (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, path);
	return n > 0 && (size_t)n < size ? n : -1;
}

/* Is the source @src names (a ".src" file) there unchanged? */
static int source_same(const char *src)
{
	char got[4096 + 128], want[4096 + 128], *nl;
	int fd = open(src, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, got, sizeof(got) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	got[n] = 0;
	nl = strchr(got, '\n');
	if (!nl || nl[1])
		return 0;
	*nl = 0;
	nl = strchr(got, '/');	/* the path, after the numbers */
	return nl && source_line(nl, want, sizeof(want)) > 0 &&
	       !strncmp(got, want, strlen(got)) && want[strlen(got)] == '\n';
}

int bt_debugcache_find(Dwfl_Module *mod, char **path)
{
	const unsigned char *id;
	char file[4096 + 96], *ext, *name;
	int len, fd;

	if (copy_name(mod, file, &ext, &id, &len) < 0)
		return -1;
	strcpy(ext, ".src");
	if (!source_same(file))
		return -1;
	strcpy(ext, ".debug");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	name = strdup(file);
	if (!name || !same_id(fd, id, len)) {
		free(name);
		close(fd);
		return -1;
	}
	futimens(fd, NULL);	/* used: kept by sweep() */
	free(*path);
	*path = name;
	return fd;
}

/* Write @len bytes of @buf as @file, through a temporary; 0 or -1. */
static int write_file(const char *file, const char *buf, size_t len)
{
	char tmp[4096 + 128];
	int fd = publish_open(file, tmp);

	if (fd < 0)
		return -1;
	return publish(fd, write(fd, buf, len) == (ssize_t)len, tmp, file);
}

void bt_debugcache_add(Dwfl_Module *mod, int fd, const char *path)
{
	const unsigned char *id;
	char file[4096 + 96], src[4096 + 128], *ext, *slash;
	int len, n;
	Elf *elf;

	if (fd < 0 || copy_name(mod, file, &ext, &id, &len) < 0)
		return;
	/* worth a copy only where libdw would inflate */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf && debug_compressed(elf, 0) == 1;
	elf_end(elf);
	slash = strrchr(file, '/');
	len = source_line(path, src, sizeof(src));
	if (!n || !slash || len < 0)
		return;
	*slash = 0;
	n = make_dir(file);
	*slash = '/';
	if (n < 0)
		return;
	if (write_copy(fd, file) < 0)
		return;
	strcpy(ext, ".src");
	if (write_file(file, src, (size_t)len) < 0)
		return;
	*slash = 0;
	sweep(file);
}
