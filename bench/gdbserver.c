// SPDX-License-Identifier: MIT
/*
 * btrace gdbserver's branch trace, read as GDB reads it: a live process
 * (build/targets/gdbsrv_spin) under the software backend, its trace
 * enabled at gs_mark(0); at gs_mark(1), 1M taken branches later, a full
 * qXfer:btrace:read:all in GDB's pieces; at gs_mark(2), 1k branches later,
 * a qXfer:btrace:read:delta.  Time and bytes of each, in the stub (the
 * packets through gs_server_handle, without the pipe): goal, the delta
 * costs under 1% of the full read in both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "btrace/btrace.h"
#include "gdbserver.h"

#define BRANCHES 1000000ul
#define NEW 1000ul
#define PIECE 0xfff0	/* what GDB asks for at a time with PacketSize 0x10000 */

struct read_cost {
	double secs;
	size_t bytes;		/* the replies, with $...#xx framing */
	size_t packets;
	size_t blocks;
};

static const char *ask(struct gs_server *s, const char *pkt)
{
	const struct gs_buf *reply;
	static char *copy;

	free(copy);
	copy = strdup(pkt);
	gs_server_handle(s, copy, strlen(copy), &reply);
	return reply && reply->data ? reply->data : "";
}

static int find_mark(const char *name, uint64_t addr, void *ctx)
{
	if (strcmp(name, "gs_mark"))
		return 0;
	*(uint64_t *)ctx = addr;
	return 1;
}

/* One qXfer:btrace:read as GDB does it: pieces until the 'l' one. */
static int read_trace(struct gs_server *s, const char *annex,
		      struct read_cost *c)
{
	const char *r;
	char pkt[128];
	size_t off = 0, len, i;
	double t0 = bench_now();

	memset(c, 0, sizeof(*c));
	do {
		snprintf(pkt, sizeof(pkt), "qXfer:btrace:read:%s:%zx,%x", annex,
			 off, PIECE);
		r = ask(s, pkt);
		if (r[0] != 'm' && r[0] != 'l') {
			fprintf(stderr, "bench: %s read failed: %.60s\n", annex, r);
			return -1;
		}
		len = strlen(r);
		c->bytes += len + 4;
		c->packets++;
		for (i = 0; i + 6 < len; i++)
			if (!memcmp(r + i, "<block", 6))
				c->blocks++;
		off += len - 1;	/* XML: nothing escaped */
	} while (r[0] == 'm');
	c->secs = bench_now() - t0;
	return 0;
}

static int cont_to_mark(struct gs_server *s, int n)
{
	const char *r = ask(s, "vCont;c");

	if (strncmp(r, "T05", 3)) {
		fprintf(stderr, "bench: no stop at gs_mark(%d): %s\n", n, r);
		return -1;
	}
	return 0;
}

int main(void)
{
	struct bt_target_opts o = { .size = sizeof(o),
				    .backend = BT_BACKEND_SOFT,
				    .buffer_size = 4u << 20 };
	char rounds[32], extra[32], pkt[64];
	char *argv[] = { "build/targets/gdbsrv_spin", rounds, extra, NULL };
	struct bt_stop first = { .reason = BT_STOP_STEP };
	struct read_cost full, delta;
	struct bt_symtab *st = NULL;
	struct gs_server *s = NULL;
	struct gs_live *live = NULL;
	struct bt_target *t;
	uint64_t mark = 0;
	int ok, ret = 1;

	snprintf(rounds, sizeof(rounds), "%lu", BRANCHES / 3 + 1);
	snprintf(extra, sizeof(extra), "%lu", NEW / 3 + 1);
	if (bt_target_launch(&t, &o, argv) < 0) {
		printf("skipped: cannot launch %s: %s\n", argv[0], bt_errdetail());
		return 0;
	}
	if (bt_symtab_from_pid(&st, bt_target_pid(t)) < 0 ||
	    bt_symtab_foreach(st, find_mark, &mark) != 1 ||
	    gs_live_alloc(&live, t) < 0)
		goto out;
	first.tid = bt_target_pid(t);
	if (gs_server_alloc(&s, &gs_live_ops, live, -1, -1, &first) < 0)
		goto out;
	ask(s, "qSupported:multiprocess+;swbreak+");
	snprintf(pkt, sizeof(pkt), "Z0,%" PRIx64 ",1", mark);
	ask(s, pkt);
	if (cont_to_mark(s, 0) || strcmp(ask(s, "Qbtrace:bts"), "OK") ||
	    cont_to_mark(s, 1) || read_trace(s, "all", &full) ||
	    cont_to_mark(s, 2) || read_trace(s, "delta", &delta))
		goto out;
	printf("full read, %lu branches: %8.3f s  %10zu bytes  %5zu packets  %7zu blocks\n",
	       BRANCHES, full.secs, full.bytes, full.packets, full.blocks);
	printf("delta read, %lu new:     %8.3f s  %10zu bytes  %5zu packets  %7zu blocks\n",
	       NEW, delta.secs, delta.bytes, delta.packets, delta.blocks);
	ok = delta.bytes * 100 < full.bytes && delta.secs * 100 < full.secs;
	printf("delta / full: time %.3f%%, bytes %.3f%% (goal < 1%% each): %s\n",
	       100 * delta.secs / full.secs, 100.0 * delta.bytes / full.bytes,
	       bench_verdict(ok));
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "bench: gdbserver benchmark failed\n");
	gs_server_free(s);
	gs_live_free(live);
	bt_symtab_free(st);
	bt_target_free(t);
	return ret;
}
