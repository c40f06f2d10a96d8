// SPDX-License-Identifier: MIT
/*
 * Leaves a zombie: the child exits at once, the parent prints the child's
 * pid and sleeps SECONDS (default 20) without reaping it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 20;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	printf("%d\n", (int)pid);
	fflush(stdout);
	sleep(seconds);
	return 0;
}
