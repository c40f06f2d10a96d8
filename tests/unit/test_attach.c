// SPDX-License-Identifier: MIT
/*
 * Attach and detach: the target runs exactly as before.  A two-threaded
 * checksum (build/targets/cap_checksum) is attached, traced to a
 * breakpoint or an interrupt, sent signals, and detached again and again;
 * its output must equal an untraced run's, its code bytes the file's.
 * Also: attach failures, a stopped process stays stopped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/btrace.h"

#define TARGET "build/targets/cap_checksum"
#define ROUNDS "60000000"

static const struct bt_target_opts step_opts = {
	.size = sizeof(struct bt_target_opts),
	.backend = BT_BACKEND_SOFT,
	.soft_mode = BT_SOFT_STEP,
};

struct child {
	pid_t pid;
	int in;		/* its stdin: closing it lets it finish */
	int out;	/* its stdout */
};

static void child_start(struct child *c, const char *rounds)
{
	int in[2], out[2], execd[2], n;
	char byte;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe2(execd, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		/* As from a terminal: a background shell ignores SIGINT. */
		signal(SIGINT, SIG_DFL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(TARGET, TARGET, rounds, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* Closed by the exec: the target is running its own code now. */
	close(execd[1]);
	assert_int_equal(read(execd[0], &byte, 1), 0);
	close(execd[0]);
	c->in = in[1];
	c->out = out[0];
	/* "ready\n": its signal handler is in place. */
	for (n = 0; n < 6; n++)
		assert_int_equal(read(c->out, &byte, 1), 1);
	assert_int_equal(byte, '\n');
}

/* Let it finish; its output into @buf and its wait status returned. */
static int child_finish(struct child *c, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int status;

	close(c->in);
	while ((n = read(c->out, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(c->out);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	return status;
}

/* The address, file offset and size of @name in the ELF file @path. */
static void elf_symbol(const char *path, const char *name, uint64_t *addr,
		       uint64_t *off, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t i, phnum;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	*addr = 0;
	while ((scn = elf_nextscn(elf, scn)) && !*addr) {
		Elf_Data *data;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			gelf_getsym(data, i, &sym);
			if (!strcmp(elf_strptr(elf, sh.sh_link, sym.st_name),
				    name)) {
				*addr = sym.st_value;
				*size = sym.st_size;
			}
		}
	}
	assert_true(*addr != 0);
	elf_getphdrnum(elf, &phnum);
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		gelf_getphdr(elf, i, &ph);
		if (ph.p_type == PT_LOAD && *addr >= ph.p_vaddr &&
		    *addr < ph.p_vaddr + ph.p_filesz)
			*off = *addr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	close(fd);
}

/* The code of @name in the running @pid equals the file's. */
static void assert_code_intact(pid_t pid, const char *name)
{
	uint8_t file[4096], mem[4096];
	uint64_t addr, off, size;
	char path[64];
	int fd;

	elf_symbol(TARGET, name, &addr, &off, &size);
	assert_true(size > 0 && size <= sizeof(file));
	fd = open(TARGET, O_RDONLY);
	assert_int_equal(pread(fd, file, size, off), (ssize_t)size);
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, mem, size, addr), (ssize_t)size);
	close(fd);
	assert_memory_equal(file, mem, size);
}

/* Attach, saying why not when it fails. */
static struct bt_target *attach(pid_t pid)
{
	struct bt_target *t = NULL;
	char path[64], line[256];
	int ret = bt_target_attach(&t, &step_opts, pid);
	FILE *f;

	if (ret < 0) {
		print_message("attach %d: %s (%s)\n", pid, bt_errstr(ret),
			      bt_errdetail());
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "TracerPid", 9) ||
			    !strncmp(line, "State", 5))
				print_message("%s", line);
		if (f)
			fclose(f);
	}
	assert_int_equal(ret, 0);
	return t;
}

static struct bt_target *alarm_target;
static int breaks_hit;	/* breakpoints hit a second time */

static void on_alarm(int sig)
{
	bt_target_interrupt(alarm_target);
}

static void alarm_in(struct bt_target *t, long usec)
{
	struct itimerval it = { .it_value = { 0, usec } };

	alarm_target = t;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void alarm_off(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &it, NULL);
	alarm_target = NULL;
}

/* On a failure: the last branches recorded, newest first. */
static void print_branches(const uint8_t *start,
			   const struct bt_rec_branch *b, int round)
{
	int k;

	for (k = 0; k < 6 && (const uint8_t *)b >= start; k++, b--)
		print_message("round %d: 0x%llx -> 0x%llx kind %d, %u insns\n",
			      round, (unsigned long long)b->from,
			      (unsigned long long)b->to, b->kind, b->ninsn);
}

/* One attach: trace to a breakpoint at mix or an interrupt; detach. */
static int attach_cycle(pid_t pid, uint64_t mix, int round, int *sent)
{
	struct bt_target *t;
	struct bt_stop stop;
	struct bt_capture cap;
	int bp = 0, ret;

	ret = bt_target_attach(&t, &step_opts, pid);
	if (ret < 0)
		print_message("attach: %s (%s)\n", bt_errstr(ret), bt_errdetail());
	assert_int_equal(ret, 0);
	assert_true(bt_target_threads(t, NULL, 0) >= 1);
	if (round % 3 == 0) {
		/* A signal pending while attached, delivered under tracing. */
		kill(pid, SIGRTMIN);
		(*sent)++;
	}
	if (round % 2 == 0) {
		bp = bt_target_break_insert(t, mix);
		if (bp < 0)
			print_message("break: %s (%s) %d\n", bt_errstr(bp),
				      bt_errdetail(), bt_errno());
		assert_true(bp > 0);
	}
	alarm_in(t, 30000);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	alarm_off();
	if (stop.reason != BT_STOP_BREAK && stop.reason != BT_STOP_INTERRUPT)
		print_message("round %d: stop %d sig %d tid %d pc %llx\n",
			      round, stop.reason, stop.signal, stop.tid,
			      (unsigned long long)stop.pc);
	assert_true(stop.reason == BT_STOP_BREAK ||
		    stop.reason == BT_STOP_INTERRUPT);
	if (stop.reason == BT_STOP_BREAK) {
		assert_int_equal(stop.breakpoint, bp);
		assert_int_equal(stop.pc, mix);
		/*
		 * Resume over the breakpoint once: it is hit again, unless
		 * the checksum is done and the alarm stops it.
		 */
		alarm_in(t, 30000);
		assert_int_equal(bt_target_cont(t, &stop), 0);
		alarm_off();
		if (stop.reason == BT_STOP_BREAK)
			breaks_hit++;
		else
			assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
		/*
		 * At a breakpoint, the thread's last branch, if it took one
		 * under tracing, led there.
		 */
		assert_int_equal(bt_target_capture(t, stop.tid, &cap), 0);
		assert_int_equal(cap.status, 0);
		if (cap.size && stop.reason == BT_STOP_BREAK) {
			const struct bt_rec_branch *last = NULL;
			const struct bt_rec_hdr *rec;
			size_t off = 0;

			/* the last branch record (time records follow it) */
			while (!bt_rec_next(cap.data, cap.size, &off, &rec))
				if (rec->type == BT_REC_BRANCH)
					last = (const void *)rec;
			assert_non_null(last);
			/* A call, or a handler returning to mix's entry. */
			if (last->to != mix)
				print_branches(cap.data, last, round);
			assert_int_equal(last->to, mix);
			assert_true(last->kind == BT_BR_CALL ||
				    (last->kind == BT_BR_SYSRET &&
				     (last->flags & BT_BRF_SIGRETURN)));
		}
		bt_capture_release(&cap);
	}
	if (round % 3 == 1) {
		/* A signal pending at detach: it must not be lost. */
		kill(pid, SIGRTMIN);
		(*sent)++;
	}
	assert_int_equal(bt_target_detach(t), 0);
	bt_target_free(t);
	return 0;
}

static void attach_detach_many(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	char plain[128], traced[128], want[160];
	uint64_t mix, off, size;
	struct child c;
	int i, sent = 0, status;

	sigaction(SIGALRM, &sa, NULL);
	elf_symbol(TARGET, "mix", &mix, &off, &size);

	child_start(&c, ROUNDS);
	status = child_finish(&c, plain, sizeof(plain));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	child_start(&c, ROUNDS);
	for (i = 0; i < 50; i++)
		attach_cycle(c.pid, mix, i, &sent);
	assert_true(breaks_hit >= 5);
	assert_code_intact(c.pid, "mix");
	assert_code_intact(c.pid, "work");
	status = child_finish(&c, traced, sizeof(traced));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Same checksums; every SIGRTMIN arrived. */
	*strrchr(plain, ' ') = '\0';
	snprintf(want, sizeof(want), "%s %d\n", plain, sent);
	assert_string_equal(traced, want);
}

static void attach_errors(void **state)
{
	struct bt_target *t, *t2;
	struct child c;
	char buf[128];
	siginfo_t zinfo;
	pid_t z;

	assert_int_equal(bt_target_attach(&t, &step_opts, 0), -bte_noent);
	assert_int_equal(bt_target_attach(&t, &step_opts, -5), -bte_noent);
	assert_int_equal(bt_target_attach(&t, &step_opts, 0x3ffffff0),
			 -bte_noent);
	assert_int_equal(bt_target_attach(NULL, &step_opts, 1), -bte_invalid);

	/* A zombie. */
	z = fork();
	if (z == 0)
		_exit(0);
	/* Wait until it is a zombie, without reaping it. */
	assert_int_equal(waitid(P_PID, z, &zinfo, WEXITED | WNOWAIT), 0);
	assert_int_equal(bt_target_attach(&t, &step_opts, z), -bte_noent);
	assert_non_null(strstr(bt_errdetail(), "zombie"));
	waitpid(z, NULL, 0);

	/* Already traced. */
	child_start(&c, "1");
	t = attach(c.pid);
	assert_int_equal(bt_target_attach(&t2, &step_opts, c.pid), -bte_busy);
	assert_non_null(strstr(bt_errdetail(), "already traced"));
	assert_int_equal(bt_target_detach(t), 0);
	bt_target_free(t);
	child_finish(&c, buf, sizeof(buf));
}

/* A process stopped by SIGSTOP before attach is still stopped after. */
static void attach_stopped(void **state)
{
	struct bt_target *t;
	struct child c;
	char buf[128], st[64];
	int status;

	child_start(&c, "1");
	usleep(50000);
	kill(c.pid, SIGSTOP);
	assert_int_equal(waitpid(c.pid, &status, WUNTRACED), c.pid);
	assert_true(WIFSTOPPED(status));
	t = attach(c.pid);
	assert_int_equal(bt_target_detach(t), 0);
	bt_target_free(t);
	usleep(50000);
	snprintf(buf, sizeof(buf), "/proc/%d/stat", c.pid);
	{
		FILE *f = fopen(buf, "r");

		assert_non_null(f);
		assert_int_equal(fscanf(f, "%*d %*s %63s", st), 1);
		fclose(f);
	}
	assert_string_equal(st, "T");
	kill(c.pid, SIGCONT);
	status = child_finish(&c, buf, sizeof(buf));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* SIGINT from outside (Ctrl-C) is an interrupt; finishing delivers it. */
static void attach_sigint(void **state)
{
	struct bt_target *t;
	struct bt_stop stop;
	struct child c;
	char buf[128];
	int ws, status;

	child_start(&c, "1");
	t = attach(c.pid);
	kill(c.pid, SIGINT);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
	assert_int_equal(stop.signal, SIGINT);
	assert_int_equal(bt_target_finish(t, &ws), 0);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGINT);
	bt_target_free(t);
	status = child_finish(&c, buf, sizeof(buf));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
}

static pid_t helper_pid;

/* SIGSTOP, look at the state, SIGCONT; returns the state letter. */
static void *stop_cont(void *arg)
{
	char path[64], st[8] = "?";
	FILE *f;

	usleep(20000);
	kill(helper_pid, SIGSTOP);
	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/stat", helper_pid);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%*d %*s %7s", st) != 1)
			st[0] = '?';
		fclose(f);
	}
	kill(helper_pid, SIGCONT);
	return (void *)(long)st[0];
}

/*
 * SIGSTOP and SIGCONT sent while traced keep their meaning: the program
 * stops and goes on; it ends with the output of an untraced run.
 */
static void attach_stop_cont(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct bt_target *t;
	struct bt_stop stop;
	struct child c;
	char buf[128];
	int status;
	pthread_t helper;
	void *seen;

	sigaction(SIGALRM, &sa, NULL);
	child_start(&c, "1");
	t = attach(c.pid);
	helper_pid = c.pid;
	assert_int_equal(pthread_create(&helper, NULL, stop_cont, NULL), 0);
	alarm_in(t, 300000);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	alarm_off();
	assert_int_equal(stop.reason, BT_STOP_INTERRUPT);
	assert_int_equal(pthread_join(helper, &seen), 0);
	assert_int_equal((long)seen, 't');
	assert_int_equal(bt_target_detach(t), 0);
	bt_target_free(t);
	status = child_finish(&c, buf, sizeof(buf));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(buf, " 0\n"));
}

/* The program exits while traced: the exit is a stop, then it is gone. */
static void attach_exit(void **state)
{
	struct bt_target *t;
	struct bt_stop stop;
	struct child c;
	char buf[128];
	int ws, status;

	child_start(&c, "1");
	t = attach(c.pid);
	close(c.in);
	c.in = open("/dev/null", O_RDONLY);
	assert_int_equal(bt_target_cont(t, &stop), 0);
	assert_int_equal(stop.reason, BT_STOP_EXIT);
	assert_int_equal(stop.status, 0);
	assert_int_equal(stop.tid, c.pid);
	assert_int_equal(bt_target_finish(t, &ws), 0);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	bt_target_free(t);
	status = child_finish(&c, buf, sizeof(buf));
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Killed while attached: it is gone, reaped by its parent as killed. */
static void attach_kill(void **state)
{
	struct bt_target *t;
	struct child c;
	char buf[128];
	int status;

	child_start(&c, "1");
	t = attach(c.pid);
	assert_int_equal(bt_target_kill(t), 0);
	bt_target_free(t);
	status = child_finish(&c, buf, sizeof(buf));
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attach_errors),
		cmocka_unit_test(attach_stopped),
		cmocka_unit_test(attach_sigint),
		cmocka_unit_test(attach_stop_cont),
		cmocka_unit_test(attach_exit),
		cmocka_unit_test(attach_kill),
		cmocka_unit_test(attach_detach_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
