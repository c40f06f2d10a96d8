// SPDX-License-Identifier: MIT
/* Says it is ready (on stderr), then waits for signals until killed. */
#include <unistd.h>

static void wait_forever(void)
{
	for (;;)
		pause();
}

int main(void)
{
	write(2, "ready\n", 6);
	wait_forever();
	return 0;
}
