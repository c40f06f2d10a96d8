/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_HANDOFF_H
#define BTRACE_HANDOFF_H

#include <stddef.h>

#include "btrace/btrace.h"

/*
 * btrace handoff: the GDB plugin's way to trace its inferior with
 * the software backend (docs/gdb.md).  Trace the attached @target until its
 * next stop, save the trace to @save, print one line
 *	btrace-stop: reason=signal tid=T signal=11 si_code=1 pc=0x... ...
 * on stdout, and hand the process back stopped (bt_target_detach_stopped),
 * or let it exit if it was exiting.  @breaks are addresses or function
 * names.  Returns the exit status.
 */
struct handoff_opts {
	const char *save;
	const char *const *breaks;
	size_t nbreaks;
};

int attach_handoff(struct bt_target *target, const struct handoff_opts *o);

#endif /* BTRACE_HANDOFF_H */
