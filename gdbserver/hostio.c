// SPDX-License-Identifier: MIT
/*
 * vFile: GDB reads the target's files (the program, its libraries,
 * /proc/PID/maps) through the stub, as its sysroot "target:" wants.
 * Reading only: open O_RDONLY, pread, fstat, readlink, close, setfs.
 * A target whose process is gone (post-mortem) makes up its /proc files.
 * Replies are "F<result>[,<errno>][;<data>]" with GDB's errno numbers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"

#define FIO_ENAMETOOLONG 91
#define FIO_EUNKNOWN 9999

static int fio_errno(int e)
{
	switch (e) {
	case EPERM: case ENOENT: case EINTR: case EBADF: case EACCES:
	case EFAULT: case EBUSY: case EEXIST: case ENODEV: case ENOTDIR:
	case EISDIR: case EINVAL: case ENFILE: case EMFILE: case EFBIG:
	case ENOSPC: case ESPIPE: case EROFS:
		return e;
	case ENAMETOOLONG:
		return FIO_ENAMETOOLONG;
	default:
		return FIO_EUNKNOWN;
	}
}

static void fio_fail(struct gs_server *s, int e)
{
	gs_buf_reset(&s->reply);
	gs_buf_addf(&s->reply, "F-1,%x", fio_errno(e));
}

/* Comma-separated hex numbers after the command's colon. */
static int fio_args(const char *p, uint64_t *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!gs_parse_hex(&p, &v[i]))
			return -1;
		if (i + 1 < n && *p++ != ',')
			return -1;
	}
	return *p ? -1 : 0;
}

/* A hex-encoded file name up to ',' or the end. */
static int fio_name(const char **p, char *out, size_t size)
{
	size_t n = strcspn(*p, ",");

	if (n % 2 || n / 2 >= size || gs_unhex(*p, n / 2, (uint8_t *)out) < 0)
		return -1;
	out[n / 2] = '\0';
	if (strlen(out) != n / 2)
		return -1;
	*p += n;
	return 0;
}

/*
 * A file the target makes up (ops->proc_file) has a descriptor of its own
 * numbering: VIRT_FD plus its slot.
 */
#define VIRT_FD 0x10000

static int fd_slot(struct gs_server *s, uint64_t fd)
{
	size_t i;

	for (i = 0; i < GS_HOSTIO_FDS; i++)
		if (s->hostio_fd[i] >= 0 && (uint64_t)s->hostio_fd[i] == fd)
			return (int)i;
	return -1;
}

/* "/proc/PID/REST" of the target's process: REST, else NULL. */
static const char *proc_name(struct gs_server *s, const char *path)
{
	char prefix[32];
	size_t n;

	if (!s->ops->proc_file || !s->ops->pid)
		return NULL;
	n = (size_t)snprintf(prefix, sizeof(prefix), "/proc/%d/",
			     (int)s->ops->pid(s->ctx));
	return strncmp(path, prefix, n) ? NULL : path + n;
}

static int open_virtual(struct gs_server *s, int slot, const char *name)
{
	struct gs_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	if (s->ops->proc_file(s->ctx, name, b) < 0 || b->oom) {
		gs_buf_release(b);
		free(b);
		return -ENOENT;
	}
	s->hostio_virt[slot] = b;
	s->hostio_fd[slot] = VIRT_FD + slot;
	return s->hostio_fd[slot];
}

static void hostio_close(struct gs_server *s, int slot)
{
	if (s->hostio_virt[slot]) {
		gs_buf_release(s->hostio_virt[slot]);
		free(s->hostio_virt[slot]);
		s->hostio_virt[slot] = NULL;
	} else {
		close(s->hostio_fd[slot]);
	}
	s->hostio_fd[slot] = -1;
}

static void fio_open(struct gs_server *s, const char *p)
{
	uint64_t v[2];
	char name[4096];
	int fd, i;

	if (fio_name(&p, name, sizeof(name)) < 0 || *p++ != ',' ||
	    fio_args(p, v, 2) < 0)
		return fio_fail(s, EINVAL);
	if (v[0] != 0)		/* reading only */
		return fio_fail(s, EACCES);
	for (i = 0; i < GS_HOSTIO_FDS && s->hostio_fd[i] >= 0; i++)
		;
	if (i == GS_HOSTIO_FDS)
		return fio_fail(s, EMFILE);
	if (proc_name(s, name)) {
		fd = open_virtual(s, i, proc_name(s, name));
		if (fd < 0)
			return fio_fail(s, -fd);
	} else {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fio_fail(s, errno);
		s->hostio_fd[i] = fd;
	}
	gs_buf_addf(&s->reply, "F%x", fd);
}

static void fio_pread(struct gs_server *s, const char *p)
{
	const struct gs_buf *virt;
	uint64_t v[3];
	size_t room;
	uint8_t *buf;
	ssize_t n;
	int slot;

	if (fio_args(p, v, 3) < 0 || (slot = fd_slot(s, v[0])) < 0)
		return fio_fail(s, EBADF);
	/* escaped, the data must fit a packet: half of it, to be safe */
	room = (GS_PACKET_MAX - 32) / 2;
	if (v[1] > room)
		v[1] = room;
	virt = s->hostio_virt[slot];
	if (virt) {
		n = v[2] < virt->len ? (ssize_t)(virt->len - v[2]) : 0;
		n = (size_t)n < v[1] ? n : (ssize_t)v[1];
		gs_buf_addf(&s->reply, "F%zx;", (size_t)n);
		gs_buf_bin(&s->reply, n ? virt->data + v[2] : "", (size_t)n);
		return;
	}
	buf = malloc(v[1] ? v[1] : 1);
	if (!buf)
		return fio_fail(s, ENOMEM);
	n = pread((int)v[0], buf, v[1], (off_t)v[2]);
	if (n < 0)
		fio_fail(s, errno);
	else {
		gs_buf_addf(&s->reply, "F%zx;", (size_t)n);
		gs_buf_bin(&s->reply, buf, (size_t)n);
	}
	free(buf);
}

static void put_be(uint8_t **p, uint64_t v, int bytes)
{
	int i;

	for (i = bytes - 1; i >= 0; i--)
		*(*p)++ = (uint8_t)(v >> (8 * i));
}

static void fio_fstat(struct gs_server *s, const char *p)
{
	uint8_t st[64], *q = st;
	struct stat sb;
	uint64_t fd;

	int slot;

	if (fio_args(p, &fd, 1) < 0 || (slot = fd_slot(s, fd)) < 0)
		return fio_fail(s, EBADF);
	memset(&sb, 0, sizeof(sb));
	if (s->hostio_virt[slot]) {
		sb.st_mode = S_IFREG | 0444;
		sb.st_size = (off_t)s->hostio_virt[slot]->len;
	} else if (fstat((int)fd, &sb) < 0) {
		return fio_fail(s, errno);
	}
	put_be(&q, sb.st_dev, 4);
	put_be(&q, sb.st_ino, 4);
	put_be(&q, sb.st_mode, 4);
	put_be(&q, sb.st_nlink, 4);
	put_be(&q, sb.st_uid, 4);
	put_be(&q, sb.st_gid, 4);
	put_be(&q, sb.st_rdev, 4);
	put_be(&q, (uint64_t)sb.st_size, 8);
	put_be(&q, (uint64_t)sb.st_blksize, 8);
	put_be(&q, (uint64_t)sb.st_blocks, 8);
	put_be(&q, (uint64_t)sb.st_atime, 4);
	put_be(&q, (uint64_t)sb.st_mtime, 4);
	put_be(&q, (uint64_t)sb.st_ctime, 4);
	gs_buf_addf(&s->reply, "F%zx;", sizeof(st));
	gs_buf_bin(&s->reply, st, sizeof(st));
}

static void fio_close(struct gs_server *s, const char *p)
{
	uint64_t fd;
	int slot;

	if (fio_args(p, &fd, 1) < 0 || (slot = fd_slot(s, fd)) < 0)
		return fio_fail(s, EBADF);
	hostio_close(s, slot);
	gs_buf_adds(&s->reply, "F0");
}

static void fio_readlink(struct gs_server *s, const char *p)
{
	char name[4096], link[4096];
	ssize_t n;

	if (fio_name(&p, name, sizeof(name)) < 0 || *p)
		return fio_fail(s, EINVAL);
	n = readlink(name, link, sizeof(link));
	if (n < 0)
		return fio_fail(s, errno);
	gs_buf_addf(&s->reply, "F%zx;", (size_t)n);
	gs_buf_bin(&s->reply, link, (size_t)n);
}

/* Files are the same in every process's view here: setfs is accepted. */
static void fio_setfs(struct gs_server *s, const char *p)
{
	uint64_t pid;

	if (fio_args(p, &pid, 1) < 0)
		return fio_fail(s, EINVAL);
	gs_buf_adds(&s->reply, "F0");
}

void gs_cmd_hostio(struct gs_server *s, char *pkt)
{
	static const struct {
		const char *name;
		void (*fn)(struct gs_server *s, const char *args);
	} ops[] = {
		{ "open", fio_open },	    { "pread", fio_pread },
		{ "fstat", fio_fstat },	    { "close", fio_close },
		{ "readlink", fio_readlink }, { "setfs", fio_setfs },
	};
	const char *op = pkt + 6, *colon = strchr(op, ':');
	size_t i;

	if (!colon)
		return;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if ((size_t)(colon - op) == strlen(ops[i].name) &&
		    !strncmp(op, ops[i].name, (size_t)(colon - op))) {
			ops[i].fn(s, colon + 1);
			return;
		}
	/* pwrite, unlink, ...: not supported, the empty reply */
}

void gs_hostio_init(struct gs_server *s)
{
	size_t i;

	for (i = 0; i < GS_HOSTIO_FDS; i++) {
		s->hostio_fd[i] = -1;
		s->hostio_virt[i] = NULL;
	}
}

void gs_hostio_release(struct gs_server *s)
{
	size_t i;

	for (i = 0; i < GS_HOSTIO_FDS; i++)
		if (s->hostio_fd[i] >= 0)
			hostio_close(s, (int)i);
}
