// SPDX-License-Identifier: MIT
/* A call chain that ends in a store through a NULL pointer (SIGSEGV). */
#include <stddef.h>

struct node {
	int value;
	struct node *next;
};

static void store_value(struct node *n, int value)
{
	n->value = value;	/* n is NULL on the last call: SIGSEGV */
}

static int walk(struct node *list, int depth)
{
	int i;

	for (i = 0; i < depth; i++)
		list = list ? list->next : NULL;
	store_value(list, depth);
	return depth;
}

static int process(struct node *list)
{
	return walk(list, 1) + walk(list, 3);
}

int main(void)
{
	struct node c = { 3, NULL }, b = { 2, &c }, a = { 1, &b };

	return process(&a);
}
