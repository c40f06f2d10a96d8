/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SAVE_H
#define BTRACE_SAVE_H

#include "btrace/btrace.h"

/*
 * Saving trace files from the front ends (run --save, --save-on-crash,
 * attach --save, the session's save): bt_trace_save() plus the messages.
 * Both print "btrace: trace saved to PATH" or the error on stderr, and
 * return 0 or a negative bt_error.
 */
int save_trace(struct bt_target *target, const struct bt_stop *stop,
	       const char *path);

/* Into @dir as btrace-<program>-<pid>.trace, if @stop is a fatal signal. */
int save_on_crash(struct bt_target *target, const struct bt_stop *stop,
		  const char *dir);

#endif /* BTRACE_SAVE_H */
