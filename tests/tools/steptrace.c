// SPDX-License-Identifier: MIT
/*
 * steptrace: independent ground truth for the capture tests.
 *
 *	steptrace [-o FILE] [-n MAX] -- PROGRAM [ARGS...]
 *
 * Launches PROGRAM under plain PTRACE_SINGLESTEP and prints every pc the
 * main thread executes, from its first instruction after execve, one per
 * line as "0xPC LEN" (LEN: the instruction's length in bytes, decoded here
 * with capstone directly).  Other threads run untraced at full speed
 * (no PTRACE_O_TRACECLONE).  Signals are passed through as they come;
 * an execve goes on into the new program.
 * Nothing of the btrace library is used, on purpose: this is what the
 * library's recorders are checked against.
 *
 * The last line is "exit N" or "signal N" with the program's fate.
 * Exit status 0 after the program ended, 1 on failure.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The length of the instruction at @pc, 0 if it does not decode; *@cpuid
 * tells whether it is cpuid.  Single-stepping cpuid in some VMs traps
 * only after the next instruction (the hypervisor emulates cpuid and skips
 * the trap flag's trap): trace() then prints that instruction too.
 */
static int insn_len(csh cs, pid_t pid, uint64_t pc, int *cpuid)
{
	uint8_t code[16];
	struct iovec local = { code, sizeof(code) };
	struct iovec remote = { (void *)pc, sizeof(code) };
	const uint8_t *p = code;
	size_t size;
	uint64_t addr = pc;
	cs_insn *insn;
	ssize_t n;
	int len = 0;

	*cpuid = 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return 0;
	size = n;
	insn = cs_malloc(cs);
	*cpuid = 0;
	if (cs_disasm_iter(cs, &p, &size, &addr, insn)) {
		len = insn->size;
		*cpuid = insn->id == X86_INS_CPUID;
	}
	cs_free(insn, 1);
	return len;
}

static int trace(pid_t pid, FILE *out, unsigned long max)
{
	struct user_regs_struct regs;
	unsigned long steps = 0;
	uint64_t cpuid_next = 0;	/* after a stepped cpuid: where it ends */
	int status, sig = 0, first = 1, len, cpuid;
	csh cs;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -1;
	for (;;) {
		if (waitpid(pid, &status, 0) < 0)
			return -1;
		if (WIFEXITED(status)) {
			fprintf(out, "exit %d\n", WEXITSTATUS(status));
			break;
		}
		if (WIFSIGNALED(status)) {
			fprintf(out, "signal %d\n", WTERMSIG(status));
			break;
		}
		sig = WSTOPSIG(status);
		if (status >> 16) {
			/* An event stop (exec): no instruction ran. */
			sig = 0;
			goto resume;
		}
		if (sig == SIGTRAP) {
			siginfo_t si;

			/*
			 * The exec stop, or a step trap: TRAP_TRACE, TRAP_BRKPT
			 * after a syscall, SIGTRAP at a signal handler's entry.
			 * int3 (SI_KERNEL) and raise() belong to the program.
			 */
			if (ptrace(PTRACE_GETSIGINFO, pid, 0, &si) < 0)
				return -1;
			if (getenv("STEPTRACE_DEBUG"))
				fprintf(stderr, "trap si_code %d\n", si.si_code);
			if (first || si.si_code == TRAP_TRACE ||
			    si.si_code == TRAP_BRKPT || si.si_code == SIGTRAP)
				sig = 0;
		}
		if (first)
			ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXEC);
		first = 0;
		if (sig == 0 && (!max || steps < max)) {
			ptrace(PTRACE_GETREGS, pid, 0, &regs);
			if (cpuid_next && regs.rip != cpuid_next) {
				/* the trap came one instruction late */
				fprintf(out, "0x%llx %d\n",
					(unsigned long long)cpuid_next,
					insn_len(cs, pid, cpuid_next, &cpuid));
				steps++;
			}
			len = insn_len(cs, pid, regs.rip, &cpuid);
			fprintf(out, "0x%llx %d\n", regs.rip, len);
			cpuid_next = cpuid ? regs.rip + len : 0;
			steps++;
		} else {
			cpuid_next = 0;
		}
resume:
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, sig) < 0)
			return -1;
	}
	cs_close(&cs);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long max = 0;
	FILE *out = stdout;
	pid_t pid;
	int opt;

	while ((opt = getopt(argc, argv, "+o:n:")) != -1) {
		switch (opt) {
		case 'o':
			out = fopen(optarg, "w");
			if (!out) {
				perror(optarg);
				return 1;
			}
			break;
		case 'n':
			max = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: steptrace [-o FILE] [-n MAX] -- PROGRAM [ARGS...]\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: steptrace [-o FILE] [-n MAX] -- PROGRAM [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	/* The first stop is the SIGTRAP of execve, at the first instruction. */
	if (trace(pid, out, max) < 0) {
		perror("steptrace");
		kill(pid, SIGKILL);
		return 1;
	}
	fclose(out);
	return 0;
}
