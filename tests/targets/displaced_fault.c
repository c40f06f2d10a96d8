// SPDX-License-Identifier: MIT
/*
 * A conditional branch whose target is a faulting store, taken again and
 * again.  The fast software backend runs the instruction at such a target
 * from a slot in scratch memory (displaced execution), so the fault
 * happens there.  The program's SIGSEGV handler checks that the pc in its
 * signal frame is the store's own address (fault_at), then siglongjmps
 * out.  Exits 0 after ROUNDS faults if every frame showed fault_at, 1 if
 * not.  With "crash", no handler: it dies of SIGSEGV at fault_at.
 *
 *	displaced_fault [crash]
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#define ROUNDS 5

extern char fault_at[];
static sigjmp_buf env;
static volatile int bad;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	if ((char *)uc->uc_mcontext.gregs[REG_RIP] != fault_at)
		bad++;
	siglongjmp(env, 1);
}

/* go: jump to the store through *p (NULL); else step around it */
static void __attribute__((noinline)) store(int *p, int go)
{
	__asm__ volatile("test %1, %1\n\t"
			 "jnz fault_at\n\t"
			 "nop\n\t"
			 "jmp 1f\n"
			 ".globl fault_at\n"
			 "fault_at: movl $1, (%0)\n"
			 "1:\n"
			 : : "r"(p), "r"(go) : "memory", "cc");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv,
				.sa_flags = SA_SIGINFO };
	volatile int i;

	if (!(argc > 1 && !strcmp(argv[1], "crash")))
		sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < ROUNDS; i++)
		if (sigsetjmp(env, 1) == 0) {
			store(NULL, 0);
			store(NULL, 1);
		}
	return bad ? 1 : 0;
}
