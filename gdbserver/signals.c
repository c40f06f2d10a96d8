// SPDX-License-Identifier: MIT
/*
 * Signal numbers: the remote protocol carries GDB's own numbering
 * (include/gdb/signals.def), which matches Linux's only for some.
 */
#include <signal.h>

#include "gdbserver.h"

enum {
	GDB_SIG_UNKNOWN = 143,
	GDB_SIG_RT33 = 45,	/* 45..75: SIG33..SIG63 */
	GDB_SIG_RT32 = 77,
	GDB_SIG_RT64 = 78,
};

/* Linux signals 1..31 and their GDB numbers. */
static const struct {
	int host, gdb;
} sigmap[] = {
	{ SIGHUP, 1 },	  { SIGINT, 2 },     { SIGQUIT, 3 },   { SIGILL, 4 },
	{ SIGTRAP, 5 },	  { SIGABRT, 6 },    { SIGFPE, 8 },    { SIGKILL, 9 },
	{ SIGBUS, 10 },	  { SIGSEGV, 11 },   { SIGSYS, 12 },   { SIGPIPE, 13 },
	{ SIGALRM, 14 },  { SIGTERM, 15 },   { SIGURG, 16 },   { SIGSTOP, 17 },
	{ SIGTSTP, 18 },  { SIGCONT, 19 },   { SIGCHLD, 20 },  { SIGTTIN, 21 },
	{ SIGTTOU, 22 },  { SIGIO, 23 },     { SIGXCPU, 24 },  { SIGXFSZ, 25 },
	{ SIGVTALRM, 26 }, { SIGPROF, 27 },  { SIGWINCH, 28 }, { SIGUSR1, 30 },
	{ SIGUSR2, 31 },  { SIGPWR, 32 },
};

int gs_signal_to_gdb(int sig)
{
	size_t i;

	if (sig == 0)
		return 0;
	for (i = 0; i < sizeof(sigmap) / sizeof(sigmap[0]); i++)
		if (sigmap[i].host == sig)
			return sigmap[i].gdb;
	if (sig == 32)
		return GDB_SIG_RT32;
	if (sig >= 33 && sig <= 63)
		return GDB_SIG_RT33 + sig - 33;
	if (sig == 64)
		return GDB_SIG_RT64;
	return GDB_SIG_UNKNOWN;
}

int gs_signal_from_gdb(int gsig)
{
	size_t i;

	if (gsig == 0)
		return 0;
	for (i = 0; i < sizeof(sigmap) / sizeof(sigmap[0]); i++)
		if (sigmap[i].gdb == gsig)
			return sigmap[i].host;
	if (gsig == GDB_SIG_RT32)
		return 32;
	if (gsig >= GDB_SIG_RT33 && gsig <= GDB_SIG_RT33 + 30)
		return 33 + gsig - GDB_SIG_RT33;
	if (gsig == GDB_SIG_RT64)
		return 64;
	return -1;
}
