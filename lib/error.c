// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"

static const char *const errstr[bte_max] = {
	[bte_ok] = "success",
	[bte_internal] = "internal error",
	[bte_invalid] = "invalid argument",
	[bte_nomem] = "out of memory",
	[bte_nosys] = "not supported on this host",
	[bte_perm] = "permission denied",
	[bte_noent] = "no such process, thread or file",
	[bte_busy] = "resource busy",
	[bte_io] = "input/output error",
	[bte_eos] = "end of stream",
	[bte_corrupt] = "corrupt record",
	[bte_torn] = "record overwritten while reading",
	[bte_format] = "unrecognised format",
	[bte_exited] = "process has exited",
	[bte_ptrace] = "ptrace request failed",
	[bte_decode] = "decoder error",
	[bte_nosync] = "no synchronisation point in trace",
	[bte_notrace] = "no trace data",
};

static __thread int last_errno;
static __thread char last_detail[256];

const char *bt_errstr(int err)
{
	if (err < 0)
		err = -err;
	if (err >= bte_max || !errstr[err])
		return "unknown error";
	return errstr[err];
}

int bt_errno(void)
{
	return last_errno;
}

const char *bt_errdetail(void)
{
	return last_detail;
}

int bt_fail(int err, int saved_errno, const char *fmt, ...)
{
	va_list ap;

	last_errno = saved_errno;
	last_detail[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(last_detail, sizeof(last_detail), fmt, ap);
		va_end(ap);
	}
	return err < 0 ? err : -err;
}

int bt_errno_to_bte(int e)
{
	switch (e) {
	case 0:
		return -bte_internal;
	case EPERM:
	case EACCES:
		return -bte_perm;
	case ESRCH:
	case ENOENT:
		return -bte_noent;
	case ENOMEM:
		return -bte_nomem;
	case EBUSY:
		return -bte_busy;
	case EINVAL:
		return -bte_invalid;
	case ENODEV:
	case EOPNOTSUPP:
	case ENOSYS:
		return -bte_nosys;
	default:
		return -bte_io;
	}
}
