// SPDX-License-Identifier: MIT
/*
 * Code rewritten by one thread while a second runs code of the same
 * pages: the recorder must drop what the writer changes and keep both
 * threads' histories whole.  The threads take turns through pipes (a
 * blocking read is one system call whatever the timing), so the control
 * flow of each is the same in every run.
 *
 *	jit_pair [ROUNDS]
 *		(default 40) the worker calls the function of slot A a
 *		number of times while main rewrites slot B of the same page
 *		(and a slot on the next page); then main hands it B to call
 *		and A and B swap.  The worker's answers are summed and
 *		printed; main returns while the worker waits for more
 *		(where it is by then is timing: softdiff -t).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef unsigned int (*fn_t)(unsigned int);

static int req[2], resp[2];
static uint8_t *buf;

/* f(x): eax = x; repeat k times: eax += c, eax ^= 0x66 where even. */
static void emit(uint8_t *p, unsigned int k, unsigned int c)
{
	size_t n = 0;

	p[n++] = 0x89; p[n++] = 0xf8;			/* mov eax, edi */
	p[n++] = 0xb9; memcpy(p + n, &k, 4); n += 4;	/* mov ecx, k */
	p[n++] = 0x05; memcpy(p + n, &c, 4); n += 4;	/* L: add eax, c */
	p[n++] = 0xa8; p[n++] = 0x01;			/* test al, 1 */
	p[n++] = 0x74; p[n++] = 0x05;			/* jz +5 */
	p[n++] = 0x35; memcpy(p + n, &(uint32_t){ 0x66 }, 4); n += 4;
	p[n++] = 0xff; p[n++] = 0xc9;			/* dec ecx */
	p[n++] = 0x75; p[n++] = 0xee;			/* jnz L */
	p[n++] = 0xc3;					/* ret */
}

/* Each request: a slot's offset and a count; the answer: the sum. */
static void *worker(void *arg)
{
	uint32_t ask[2], sum;

	for (;;) {
		if (read(req[0], ask, sizeof(ask)) != sizeof(ask))
			return NULL;
		for (sum = 0; ask[1]--;)
			sum += ((fn_t)(buf + ask[0]))(sum);
		if (write(resp[1], &sum, sizeof(sum)) != sizeof(sum))
			return NULL;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	uint32_t a = 0x100, b = 0x900, ask[2], got, total = 0;
	pthread_t th;
	int i;

	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || pipe(req) < 0 || pipe(resp) < 0)
		return 1;
	emit(buf + a, 3, 1);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	for (i = 0; i < rounds; i++) {
		uint32_t t;

		ask[0] = a;
		ask[1] = 20;
		if (write(req[1], ask, sizeof(ask)) != sizeof(ask))
			return 1;
		/* the worker runs slot a meanwhile */
		emit(buf + b, 1 + i % 6, (unsigned int)i * 5 + 3);
		emit(buf + 0x1200, 2, (unsigned int)i);
		if (read(resp[0], &got, sizeof(got)) != sizeof(got))
			return 1;
		total = total * 17 + got;
		t = a, a = b, b = t;
	}
	ask[0] = 0x1200;
	ask[1] = 1;
	if (write(req[1], ask, sizeof(ask)) != sizeof(ask) ||
	    read(resp[0], &got, sizeof(got)) != sizeof(got))
		return 1;
	printf("%u %u\n", total, got);
	return 0;
}
