// SPDX-License-Identifier: MIT
/*
 * Queries and settings: qSupported, QStartNoAckMode, QPassSignals,
 * QNonStop, the packets answered "OK", and the monitor commands of qRcmd
 * (cmds.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

static int has_feature(const char *list, const char *feature)
{
	size_t n = strlen(feature);
	const char *p = list;

	while ((p = strstr(p, feature))) {
		if ((p == list || p[-1] == ';' || p[-1] == ':') &&
		    (p[n] == ';' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

void gs_cmd_supported(struct gs_server *s, char *pkt)
{
	int bt = s->ops->trace_formats ? s->ops->trace_formats(s->ctx) : 0;

	/* no process yet: the one run or attach makes will have one of these */
	if (s->ops == &gs_no_proc_ops && s->spawner)
		bt = GS_BT_BTS | GS_BT_PT;
	s->multiprocess = has_feature(pkt, "multiprocess+");
	s->swbreak = has_feature(pkt, "swbreak+");
	gs_buf_addf(&s->reply,
		    "PacketSize=%x;QStartNoAckMode+;QPassSignals+;"
		    "QProgramSignals+;qXfer:features:read+;"
		    "qXfer:threads:read+;qXfer:auxv:read+;qXfer:siginfo:read+;"
		    "qXfer:exec-file:read+;qXfer:libraries-svr4:read+;"
		    "vContSupported+;QThreadEvents+;QNonStop+",
		    GS_PACKET_MAX);
	if (s->multiprocess)
		gs_buf_adds(&s->reply, ";multiprocess+");
	if (s->swbreak)
		gs_buf_adds(&s->reply, ";swbreak+");
	if (bt & GS_BT_BTS)
		gs_buf_adds(&s->reply, ";Qbtrace:bts+;Qbtrace-conf:bts:size+");
	if (bt & GS_BT_PT)
		gs_buf_adds(&s->reply, ";Qbtrace:pt+;Qbtrace-conf:pt:size+");
	if (bt)
		gs_buf_adds(&s->reply, ";Qbtrace:off+;qXfer:btrace:read+;"
				       "qXfer:btrace-conf:read+");
}

void gs_cmd_noack(struct gs_server *s, char *pkt)
{
	s->noack_after = 1;
	gs_reply_ok(s);
}

void gs_cmd_pass_signals(struct gs_server *s, char *pkt)
{
	const char *p = strchr(pkt, ':') + 1;
	uint64_t mask = 0, g;
	int sig;

	while (*p) {
		if (!gs_parse_hex(&p, &g) || (*p && *p++ != ';')) {
			gs_reply_err(s, EINVAL);
			return;
		}
		sig = g <= 0xff ? gs_signal_from_gdb((int)g) : -1;
		if (sig > 0 && sig <= 64)
			mask |= 1ull << (sig - 1);
	}
	s->pass = mask;
	if (gs_alive(s) && s->ops->stop_signals)
		s->ops->stop_signals(s->ctx, ~mask);
	gs_reply_ok(s);
}

void gs_cmd_ok(struct gs_server *s, char *pkt)
{
	gs_reply_ok(s);
}

/* ---- monitor commands (qRcmd) ---- */

static void mon_help(struct gs_server *s, const char *arg)
{
	gs_buf_adds(&s->console,
		    "btrace gdbserver monitor commands:\n"
		    "  monitor save FILE   save the branch trace of every thread,\n"
		    "                      with this stop, as a btrace trace file\n"
		    "                      (btrace show FILE, btrace gdbserver\n"
		    "                      --trace FILE)\n"
		    "  monitor exit        end the server (after GDB's disconnect\n"
		    "                      it waits for the next connection)\n"
		    "  monitor help        this list\n");
}

/* The server ends after this reply, its process as at a disconnect. */
static void mon_exit(struct gs_server *s, const char *arg)
{
	s->quit = 1;
	s->ended = GS_END_DISCONNECTED;
}

static void mon_save(struct gs_server *s, const char *arg)
{
	int ret;

	while (*arg == ' ')
		arg++;
	if (!*arg) {
		gs_buf_adds(&s->console, "usage: monitor save FILE\n");
		return;
	}
	if (s->gone || !s->ops->save) {
		gs_buf_adds(&s->console, "btrace: no live process to save\n");
		return;
	}
	ret = s->ops->save(s->ctx, &s->last, arg);
	if (ret < 0)
		gs_buf_addf(&s->console, "btrace: cannot save '%s': %s\n", arg,
			    bt_errstr(ret));
	else
		gs_buf_addf(&s->console, "saved the trace of process %d to %s\n",
			    (int)s->ops->pid(s->ctx), arg);
}

void gs_cmd_rcmd(struct gs_server *s, char *pkt)
{
	static const struct {
		const char *name;
		void (*fn)(struct gs_server *s, const char *arg);
	} mons[] = { { "help", mon_help }, { "save", mon_save },
		     { "exit", mon_exit } };
	size_t n = strlen(pkt + 6) / 2, i, len;
	char *cmd;

	cmd = malloc(n + 1);
	if (!cmd || strlen(pkt + 6) % 2 ||
	    gs_unhex(pkt + 6, n, (uint8_t *)cmd) < 0) {
		free(cmd);
		gs_reply_err(s, EINVAL);
		return;
	}
	cmd[n] = '\0';
	for (i = 0; i < sizeof(mons) / sizeof(mons[0]); i++) {
		len = strlen(mons[i].name);
		if (!strncmp(cmd, mons[i].name, len) &&
		    (cmd[len] == ' ' || !cmd[len])) {
			mons[i].fn(s, cmd + len);
			break;
		}
	}
	if (i == sizeof(mons) / sizeof(mons[0]))
		gs_buf_addf(&s->console, "btrace: unknown monitor command '%s'; "
			    "try 'monitor help'\n", cmd);
	free(cmd);
	gs_reply_ok(s);
}

