// SPDX-License-Identifier: MIT
/* A recursion five calls deep whose innermost call stores through NULL. */
static int *slot;

static int descend(int depth)
{
	if (depth == 0) {
		*slot = 1;	/* slot is NULL: SIGSEGV */
		return 0;
	}
	return descend(depth - 1) + 1;
}

int main(void)
{
	return descend(5);
}
