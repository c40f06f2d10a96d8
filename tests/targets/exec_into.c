// SPDX-License-Identifier: MIT
/*
 * A process that execs another program: the exec is the process's own
 * (not a fork child's), so its history goes from the system call in the
 * old program straight into the new one's start, whose code at the old
 * call's address is another program's.
 *
 *	exec_into [PROGRAM]	execs PROGRAM, by default exit_status, the
 *				test program beside it (which exits 3)
 */
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], self[4096];
	char *args[] = { path, NULL };

	if (argc > 1) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		snprintf(self, sizeof(self), "%s", argv[0]);
		snprintf(path, sizeof(path), "%s/exit_status", dirname(self));
	}
	execv(path, args);
	perror("exec_into: execv");
	return 1;
}
