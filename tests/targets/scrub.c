// SPDX-License-Identifier: MIT
/*
 * A crash handler that tests the memory, as Redis's does, and more: after
 * a store through NULL its SIGSEGV handler walks /proc/self/maps and, for
 * every read-write mapping of anonymous memory or of a memfd (its stack,
 * its own buffer and its thread's control block aside),
 * backs each piece up, fills it with each word's address, then with
 * patterns, checks them, and puts the backup back; then it re-raises
 * the signal with its default action (status 139).  Everything it uses
 * meanwhile is on its stack or in registers: it writes over every other
 * anonymous read-write byte of the process, a tracer's among them.
 * Not the thread's control block (a static program's is in the heap): it
 * holds the rseq area glibc registers with the kernel, which the kernel
 * reads at every return to the thread after it was switched out, and
 * garbage there is a SIGSEGV (SI_KERNEL) -- natively too, once the thread
 * is preempted in the middle of a piece; under a tracer's stops, often.
 *
 *	scrub [now]	now: scrub in main, then store through NULL
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define PIECE 65536

static uint64_t backup[PIECE / 8];
static int *volatile slot;
static volatile unsigned long pieces, errors;

/* Back up, pattern-fill, check and restore [p, p + n) (n: 8 divides). */
static __attribute__((noinline)) void scrub_piece(uint64_t *p, size_t n)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	size_t i, w = n / 8;

	for (i = 0; i < w; i++)
		backup[i] = p[i];
	for (i = 0; i < w; i++)
		p[i] = (uint64_t)(uintptr_t)&p[i];
	for (i = 0; i < w; i++)
		if (p[i] != (uint64_t)(uintptr_t)&p[i])
			errors++;
	for (i = 0; i < w; i++)
		p[i] = 0xaaaaaaaaaaaaaaaaull;
	for (i = 0; i < w; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = x;
	}
	for (i = 0; i < w; i++)
		p[i] = backup[i];
	pieces++;
}

static int hexval(char c)
{
	return c >= 'a' ? c - 'a' + 10 : c - '0';
}

/* 1 if the piece at @a holds @self's piece or the thread's control block. */
static int kept(uint64_t a, uint64_t self)
{
	uint64_t tp = (uint64_t)(uintptr_t)__builtin_thread_pointer();

	return (self >= a && self < a + PIECE) ||
	       (tp + PIECE > a && tp < a + 2 * PIECE);
}

/* One line of maps: scrub it if anonymous and read-write. */
static void scrub_line(const char *l, uint64_t self)
{
	uint64_t lo = 0, hi = 0, a;

	while (*l && *l != '-')
		lo = lo * 16 + hexval(*l++);
	l++;
	while (*l && *l != ' ')
		hi = hi * 16 + hexval(*l++);
	if (strncmp(l, " rw", 3) ||
	    (!strstr(l, " 00:00 0 ") && !strstr(l, "/memfd:")) ||
	    strstr(l, "[stack]") || strstr(l, "[vvar") || strstr(l, "[vdso]"))
		return;
	for (a = lo; a < hi; a += PIECE)
		if (!kept(a, self))
			scrub_piece((uint64_t *)(uintptr_t)a,
				    hi - a < PIECE ? hi - a : PIECE);
}

static void scrub_all(void)
{
	char maps[65536], *l, *nl;
	ssize_t n, len = 0;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	while (len < (ssize_t)sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = '\0';
	for (l = maps; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		*nl = '\0';
		scrub_line(l, (uint64_t)(uintptr_t)backup & ~(uint64_t)(PIECE - 1));
	}
}

static void on_segv(int sig)
{
	scrub_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static __attribute__((noinline)) void store_fault(int value)
{
	*slot = value;	/* slot is NULL: SIGSEGV */
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	if (argc > 1 && !strcmp(argv[1], "now"))
		scrub_all();
	store_fault(7);
	return 0;
}
