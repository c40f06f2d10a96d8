// SPDX-License-Identifier: MIT
/* Argument parsing shared by the subcommands. */
#include <errno.h>
#include <stdlib.h>

#include "cmd.h"

size_t cmd_parse_count(const char *s, size_t max)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return 0;
	return v;
}
