// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: bytes as GDB would send them to btrace gdbserver,
 * through the packet parser into the server, over a target that has
 * 256 bytes of memory, one thread and no trace.  Nothing may crash.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "gdbserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t mem[256];

static pid_t f_pid(void *ctx) { return 42; }

static size_t f_threads(void *ctx, pid_t *tids, size_t max)
{
	if (max)
		tids[0] = 42;
	return 1;
}

static int f_regs(void *ctx, pid_t tid, struct gs_regs *r)
{
	memset(r, 0, sizeof(*r));
	return tid == 42 ? 0 : -bte_noent;
}

static ssize_t f_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (addr >= sizeof(mem))
		return -bte_io;
	len = len < sizeof(mem) - addr ? len : sizeof(mem) - addr;
	memcpy(buf, mem + addr, len);
	return (ssize_t)len;
}

static int f_resume(void *ctx, const struct bt_resume *r, size_t n,
		    struct bt_stop *stop)
{
	memset(stop, 0, sizeof(*stop));
	stop->reason = BT_STOP_STEP;
	stop->tid = 42;
	return 0;
}

static const struct gs_target_ops ops = {
	.pid = f_pid, .threads = f_threads, .get_regs = f_regs,
	.read = f_read, .resume = f_resume,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bt_stop first = { .reason = BT_STOP_STEP, .tid = 42 };
	const struct gs_buf *reply;
	struct gs_server *s;
	struct gs_parser p;
	size_t i;

	if (gs_server_alloc(&s, &ops, NULL, -1, -1, &first) < 0)
		return 0;
	gs_parser_init(&p);
	for (i = 0; i < size; i++)
		if (gs_parser_feed(&p, data[i]) == GS_EV_PACKET &&
		    gs_server_handle(s, (char *)p.pkt, p.len, &reply))
			break;
	gs_parser_release(&p);
	gs_server_free(s);
	return 0;
}
