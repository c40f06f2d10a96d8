// SPDX-License-Identifier: MIT
/*
 * execve under tracing: runs itself again with an argument, and that run
 * exits with 4.  The trace goes on across the exec, from the execve
 * syscall instruction to the new program's first instruction.
 */
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1)
		return 4;
	execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 1;
}
