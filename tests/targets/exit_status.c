// SPDX-License-Identifier: MIT
/* A normal exit with status 3, computed by a small loop. */
static int count_odd(int n)
{
	int i, odd = 0;

	for (i = 0; i < n; i++)
		if (i & 1)
			odd++;
	return odd;
}

int main(void)
{
	return count_odd(6);
}
