// SPDX-License-Identifier: MIT
/* The shared output module (cmd/print*.c), on a history made here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../cmd/print.c"
#include "../../cmd/print_json.c"
#include "../../cmd/print_stop.c"

/* 0x1000: call 0x1010 ; 0x1005: jmp rax ; 0x1007: ret */
static const uint8_t code[] = { 0xe8, 0x0b, 0x00, 0x00, 0x00, 0xff, 0xe0,
				0xc3 };

static ssize_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (addr < 0x1000 || addr >= 0x1000 + sizeof(code))
		return 0;
	if (len > 0x1000 + sizeof(code) - addr)
		len = 0x1000 + sizeof(code) - addr;
	memcpy(buf, code + (addr - 0x1000), len);
	return len;
}

static struct bt_branch branches[] = {
	{ .kind = BT_BR_GAP, .gap = BT_GAP_OVERFLOW },
	{ .from = 0x1000, .to = 0x1010, .kind = BT_BR_CALL },
	{ .from = 0x1005, .to = 0x123456789a, .kind = BT_BR_IJUMP },
	{ .from = 0x1007, .to = 0x2000, .kind = BT_BR_RET },
};

static struct bt_history hist = { .branch = branches, .count = 4,
				  .lost = 7 };

/* The traced tree's first process, where the report's is another. */
static pid_t render_root;

/* Render with @fn into a string (caller frees). */
static char *render(void (*fn)(FILE *, const struct print_report *,
			       const struct print_ctx *),
		    const struct bt_stop *stop, int color)
{
	struct print_ctx pc = { .read = read_code, .color = color };
	struct print_thread th = { .tid = 42, .hist = &hist };
	struct bt_stats stats = { .instructions = 100, .branches = 20,
				  .stops = 101, .displaced = 9 };
	struct print_report r = { .backend = "soft", .pid = 42, .stop = stop,
				  .root = render_root,
				  .threads = &th, .nthreads = 1,
				  .stats = &stats };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(bt_disasm_alloc(&pc.dis), 0);
	fn(f, &r, &pc);
	fclose(f);
	bt_disasm_free(pc.dis);
	return buf;
}

/* A stop in a followed child: its pid, and the tree's first one. */
static void report_tree(void **state)
{
	struct bt_stop stop = { .reason = BT_STOP_SIGNAL, .tid = 42,
				.signal = SIGSEGV, .pc = 0x1007 };
	char *text, *json;

	(void)state;
	render_root = 7;
	text = render(print_report_text, &stop, 0);
	json = render(print_report_json, &stop, 0);
	render_root = 0;
	assert_non_null(strstr(text, "101 stops traced in pid 7 and the processes it forked\n"));
	assert_non_null(strstr(json, "\"pid\": 42, \"root_pid\": 7"));
	free(text);
	free(json);
	render_root = 42;	/* the first process itself: no root_pid */
	json = render(print_report_json, &stop, 0);
	render_root = 0;
	assert_null(strstr(json, "root_pid"));
	free(json);
}

static void report_text(void **state)
{
	struct bt_stop stop = { .reason = BT_STOP_SIGNAL, .tid = 42,
				.signal = SIGSEGV, .si_code = SEGV_MAPERR,
				.pc = 0x1007 };
	char *out = render(print_report_text, &stop, 0), *line, *save;
	int arrows = -1, n = 0;

	assert_non_null(strstr(out, "last 3 branches of thread 42, oldest first (7 older ones overwritten):\n"));
	assert_non_null(strstr(out, "  -4  -- gap: overflow --\n"));
	assert_non_null(strstr(out, "call 0x1010"));
	assert_non_null(strstr(out, "jmp rax"));
	assert_non_null(strstr(out, "indirect jump -> 0x123456789a"));
	assert_non_null(strstr(out, "stop: SIGSEGV (Segmentation fault) at address 0x0 in thread 42: address not mapped (SEGV_MAPERR)\n   => 0x1007  ret\n"));
	assert_non_null(strstr(out, "soft backend: 100 instructions, 20 branches, 101 stops traced in pid 42\n"));
	assert_null(strchr(out, '\033'));
	/* Aligned: the arrows of every branch line in one column. */
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, " -> ");

		if (!arrow)
			continue;
		if (arrows < 0)
			arrows = arrow - line;
		assert_int_equal(arrow - line, arrows);
		n++;
	}
	assert_int_equal(n, 3);
	free(out);
}

/* The stop line says how the signal came: its si_code and sender. */
static void stop_how_text(void **state)
{
	static const struct {
		struct bt_stop stop;
		const char *line;
	} cases[] = {
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGSEGV,
		    .si_code = SI_USER, .sender = 5, .sender_comm = "prog" },
		  "stop: SIGSEGV (Segmentation fault) in thread 5: sent by pid 5 (prog) with kill() (SI_USER)\n" },
		/* a trace file written before the sender was kept */
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGSEGV },
		  "stop: SIGSEGV (Segmentation fault) in thread 5: sent with kill() (SI_USER)\n" },
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGUSR1,
		    .si_code = SI_QUEUE, .sender = 9, .value = -3 },
		  "stop: SIGUSR1 (User defined signal 1) in thread 5: sent by pid 9 with sigqueue() (SI_QUEUE), value -3\n" },
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGBUS,
		    .si_code = BUS_ADRERR, .addr = 0x7000 },
		  "stop: SIGBUS (Bus error) at address 0x7000 in thread 5: no memory behind the address, such as past a file's end (BUS_ADRERR)\n" },
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGFPE,
		    .si_code = FPE_INTDIV, .addr = 0x1005 },
		  "stop: SIGFPE (Floating point exception) in thread 5: integer divide by zero (FPE_INTDIV)\n" },
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGSEGV,
		    .si_code = SI_KERNEL },
		  "stop: SIGSEGV (Segmentation fault) in thread 5: raised by the kernel with no fault address (SI_KERNEL)" },
		{ { .reason = BT_STOP_SIGNAL, .tid = 5, .signal = SIGUSR2,
		    .si_code = -42 },
		  "stop: SIGUSR2 (User defined signal 2) in thread 5: si_code -42\n" },
		{ { .reason = BT_STOP_EXIT, .tid = 5, .status = 2 },
		  "stop: exit with status 2 in thread 5\n" },
	};
	size_t i;

	for (i = 0; i < BT_ARRAY_SIZE(cases); i++) {
		char *out = render(print_report_text, &cases[i].stop, 0);

		if (!strstr(out, cases[i].line))
			fail_msg("case %zu: %s", i, out);
		free(out);
	}
}

static void report_text_color(void **state)
{
	struct bt_stop stop = { .reason = BT_STOP_EXIT, .tid = 42,
				.status = 3, .pc = 0x1000 };
	char *out = render(print_report_text, &stop, 1);

	assert_non_null(strchr(out, '\033'));
	assert_non_null(strstr(out, "exit with status 3"));
	free(out);
}

static void report_json(void **state)
{
	struct bt_stop stop = { .reason = BT_STOP_SIGNAL, .tid = 43,
				.signal = SIGABRT, .si_code = SI_TKILL,
				.pc = 0x1005, .sender = 42, .sender_uid = 1000,
				.sender_comm = "prog" };
	char *out = render(print_report_json, &stop, 1);

	assert_null(strchr(out, '\033'));
	assert_non_null(strstr(out, "{\"btrace\": 1, \"backend\": \"soft\", \"pid\": 42,"));
	assert_non_null(strstr(out, "\"stop\": {\"tid\": 43, \"reason\": \"signal\", \"signal\": \"SIGABRT\", \"status\": null, \"pc\": \"0x1005\", \"addr\": null, \"siginfo\": {\"si_code\": -6, \"code\": \"SI_TKILL\", \"what\": \"sent with tgkill() (raise, abort)\", \"fault\": false, \"sender\": {\"pid\": 42, \"uid\": 1000, \"comm\": \"prog\"}, \"value\": null}, \"sym\": null, \"src\": null, \"insn\": \"jmp rax\"}"));
	assert_non_null(strstr(out, "\"threads\": [{\"tid\": 42, \"lost\": 7, \"branches\": ["));
	assert_non_null(strstr(out, "{\"from\": \"0x0\", \"to\": \"0x0\", \"kind\": \"gap\", \"gap\": \"overflow\", \"from_sym\": null, \"to_sym\": null, \"from_src\": null, \"to_src\": null, \"insn\": null, \"ts\": null}"));
	assert_non_null(strstr(out, "{\"from\": \"0x1000\", \"to\": \"0x1010\", \"kind\": \"call\", \"from_sym\": null, \"to_sym\": null, \"from_src\": null, \"to_src\": null, \"insn\": \"call 0x1010\", \"ts\": null}"));
	assert_non_null(strstr(out, "\"stats\": {\"instructions\": 100, \"branches\": 20, \"stops\": 101, \"displaced\": 9, \"ring_bytes\": 0, \"ring_read\": 0}}\n"));
	free(out);
}

static void json_string(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	print_json_string(f, "a\"b\\c\nd\x01");
	fputc(' ', f);
	print_json_string(f, NULL);
	fclose(f);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\u000ad\\u0001\" null");
	free(buf);
}

static void signame(void **state)
{
	char buf[16];

	assert_string_equal(print_signame(SIGSEGV, buf, sizeof(buf)), "SIGSEGV");
	assert_string_equal(print_signame(SIGABRT, buf, sizeof(buf)), "SIGABRT");
	assert_string_equal(print_signame(SIGRTMIN + 1, buf, sizeof(buf)),
			    "SIG35");
}

/* Render report @r into a string (caller frees), text or JSON. */
static char *render_report(const struct print_report *r, int json)
{
	struct print_ctx pc = { .read = read_code };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(bt_disasm_alloc(&pc.dis), 0);
	print_report(f, r, &pc, json);
	fclose(f);
	bt_disasm_free(pc.dis);
	return buf;
}

static void history_null(void **state)
{
	struct print_thread th = { .tid = 7 };
	struct print_report r = { .threads = &th, .nthreads = 1 };
	char *out = render_report(&r, 0);

	assert_string_equal(out, "last 0 branches of thread 7, oldest first:\n"
				 "  (no branches recorded for thread 7)\n");
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "\"threads\": [{\"tid\": 7, \"lost\": 0, \"branches\": []}]}\n"));
	free(out);
}

/* A window: indices stay counted from the newest of the whole history. */
static void history_window(void **state)
{
	struct print_thread th = { .tid = 42, .hist = &hist, .window = 1,
				   .first = 1, .end = 3 };
	struct print_report r = { .threads = &th, .nthreads = 1 };
	char *out = render_report(&r, 0);

	assert_non_null(strstr(out, "branches -3 to -2 of thread 42"));
	assert_non_null(strstr(out, "\n  -3  0x1000  call 0x1010"));
	assert_non_null(strstr(out, "\n  -2  0x1005  jmp rax"));
	assert_null(strstr(out, "-1 "));
	assert_null(strstr(out, "-4 "));
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "\"from\": \"0x1000\""));
	assert_non_null(strstr(out, "\"from\": \"0x1005\""));
	assert_null(strstr(out, "\"from\": \"0x1007\""));
	free(out);
}

static void calls_view(void **state)
{
	struct bt_call call[] = {
		{ .depth = 0, .start = 0x1000, .nbranches = 1, .ninsn = 3 },
		{ .depth = 1, .gap = 1, .reason = BT_GAP_OVERFLOW },
		{ .depth = 1, .start = 0x1010, .nbranches = 0 },
	};
	struct bt_calls calls = { call, 3 };
	struct print_thread th = { .tid = 42, .calls = &calls };
	struct print_report r = { .view = PRINT_CALLS, .threads = &th,
				  .nthreads = 1 };
	char *out = render_report(&r, 0);

	assert_non_null(strstr(out, "call history of thread 42, the last 3 segments:\n"
				    "  -3  0x1000  (1 branch, 3 instructions)\n"
				    "  -2    -- gap: overflow --\n"
				    "  -1    0x1010  (0 branches)\n"));
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "\"calls\": [\n"
				    "    {\"depth\": 0, \"func\": null, \"addr\": \"0x1000\", \"src\": null, \"branches\": 1, \"instructions\": 3, \"ts\": null, \"duration\": null},\n"
				    "    {\"depth\": 1, \"gap\": \"overflow\"},\n"));
	free(out);
}

static int three_insns(void *ctx, bt_insn_fn fn, void *fn_ctx)
{
	return fn(0x1000, 0, fn_ctx) ?: fn(0, BT_GAP_NOCODE, fn_ctx) ?:
	       fn(0x1007, 0, fn_ctx);
}

static void insns_view(void **state)
{
	struct print_thread th = { .tid = 42, .insns = three_insns };
	struct print_report r = { .view = PRINT_INSNS, .threads = &th,
				  .nthreads = 1 };
	char *out = render_report(&r, 0);

	assert_string_equal(out, "instructions of thread 42, oldest first:\n"
				 "  0x1000      call 0x1010\n"
				 "  -- gap: no code image --\n"
				 "  0x1007      ret\n");
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "\"insns\": [\n"
				    "    {\"addr\": \"0x1000\", \"sym\": null, \"src\": null, \"insn\": \"call 0x1010\"},\n"
				    "    {\"gap\": \"no code image\"},\n"));
	free(out);
}

/* last/d: each branch's block of code above it. */
static void blocks(void **state)
{
	struct bt_branch br[] = {
		{ .from = 0x1000, .to = 0x1005, .kind = BT_BR_CALL },
		{ .from = 0x1007, .to = 0x2000, .kind = BT_BR_RET },
	};
	struct bt_history h = { .branch = br, .count = 2 };
	struct print_ctx pc = { .read = read_code, .blocks = 1 };
	struct print_thread th = { .tid = 1, .hist = &h };
	struct print_report r = { .threads = &th, .nthreads = 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(bt_disasm_alloc(&pc.dis), 0);
	print_report_text(f, &r, &pc);
	fclose(f);
	bt_disasm_free(pc.dis);
	/* The first block's start is not known; the second's is 0x1005. */
	assert_non_null(strstr(buf, "        ...\n        0x1000      call 0x1010\n  -2  0x1000"));
	assert_non_null(strstr(buf, "        0x1005      jmp rax\n        0x1007      ret\n  -1  0x1007"));
	free(buf);
}

static void threads_view(void **state)
{
	struct bt_stop stop = { .reason = BT_STOP_BREAK, .tid = 8,
				.breakpoint = 1, .pc = 0x1000 };
	struct print_thread th[] = { { .tid = 7, .pc = 0x1005 },
				     { .tid = 8, .current = 1, .pc = 0x1000 } };
	struct print_report r = { .view = PRINT_THREADS, .stop = &stop,
				  .threads = th, .nthreads = 2 };
	char *out = render_report(&r, 0);

	assert_string_equal(out, "  7  0x1005\n* 8  0x1000  (stopped here)\n");
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "{\"tid\": 8, \"current\": true, \"pc\": \"0x1000\", \"sym\": null, \"src\": null}"));
	free(out);
}

static void info_view(void **state)
{
	struct print_bp bp = { 1, 0x1000, "main" };
	struct print_session ps = { "stopped", "attached", 4096, &bp, 1 };
	struct print_thread th = { .tid = 8, .hist = &hist, .captured = 1024,
				   .lost = 2, .lost_unit = "records" };
	struct bt_stats stats = { .instructions = 100, .branches = 20,
				  .stops = 101, .displaced = 9 };
	struct print_report r = { .view = PRINT_INFO, .backend = "soft",
				  .pid = 8, .threads = &th, .nthreads = 1,
				  .stats = &stats, .session = &ps };
	char *out = render_report(&r, 0);

	assert_string_equal(out, "process 8 (attached, stopped), backend soft\n"
				 "buffer: 4096 bytes per thread\n"
				 "  thread 8: 1024 bytes captured (25.0% of the buffer), 4 branches, 2 records lost\n"
				 "breakpoint 1 at 0x1000  (main)\n"
				 "soft backend: 100 instructions, 20 branches, 101 stops traced in pid 8\n");
	free(out);
	out = render_report(&r, 1);
	assert_non_null(strstr(out, "\"state\": \"stopped\", \"origin\": \"attached\", \"buffer_size\": 4096"));
	assert_non_null(strstr(out, "{\"tid\": 8, \"captured\": 1024, \"decoded\": 4, \"lost\": 2}"));
	assert_non_null(strstr(out, "\"breakpoints\": [{\"number\": 1, \"addr\": \"0x1000\", \"sym\": null, \"src\": null, \"spec\": \"main\"}]"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_text),
		cmocka_unit_test(report_tree),
		cmocka_unit_test(stop_how_text),
		cmocka_unit_test(report_text_color),
		cmocka_unit_test(report_json),
		cmocka_unit_test(json_string),
		cmocka_unit_test(signame),
		cmocka_unit_test(history_null),
		cmocka_unit_test(history_window),
		cmocka_unit_test(calls_view),
		cmocka_unit_test(insns_view),
		cmocka_unit_test(blocks),
		cmocka_unit_test(threads_view),
		cmocka_unit_test(info_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
