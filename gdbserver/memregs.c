// SPDX-License-Identifier: MIT
/*
 * The process's registers (g, G, p, P), memory (m, M, X) and
 * breakpoints (Z, z), through the target's ops (cmds.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

/* ---- registers ---- */

static int regs_of(struct gs_server *s, pid_t *tid, struct gs_regs *r)
{
	memset(r, 0, sizeof(*r));
	*tid = gs_current(s);
	if (!*tid || !s->ops->get_regs || s->ops->get_regs(s->ctx, *tid, r) < 0) {
		gs_reply_err(s, ESRCH);
		return -1;
	}
	return 0;
}

void gs_cmd_read_regs(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	struct gs_regs r;
	pid_t tid;
	int i;

	if (regs_of(s, &tid, &r) < 0)
		return;
	for (i = 0; i < gs_regs_count(s->avx); i++)
		gs_buf_hex(&s->reply, v, gs_reg_get(&r, i, v));
}

static void put_regs(struct gs_server *s, pid_t tid, const struct gs_regs *r,
		     const struct gs_regs *old)
{
	if (!s->ops->set_regs || s->ops->set_regs(s->ctx, tid, r, old) < 0)
		gs_reply_err(s, EIO);
	else
		gs_reply_ok(s);
}

void gs_cmd_write_regs(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	struct gs_regs r, old;
	const char *p = pkt + 1;
	size_t left = strlen(p), size;
	pid_t tid;
	int i;

	if (regs_of(s, &tid, &r) < 0)
		return;
	old = r;
	/* a short G sets the registers it has */
	for (i = 0; i < gs_regs_count(s->avx) && left; i++) {
		size = gs_reg_size(i);
		if (left < 2 * size || gs_unhex(p, size, v) < 0 ||
		    gs_reg_set(&r, i, v, size) < 0) {
			gs_reply_err(s, EINVAL);
			return;
		}
		p += 2 * size;
		left -= 2 * size;
	}
	if (left) {
		gs_reply_err(s, EINVAL);
		return;
	}
	put_regs(s, tid, &r, &old);
}

void gs_cmd_read_reg(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	const char *p = pkt + 1;
	struct gs_regs r;
	uint64_t n;
	pid_t tid;

	if (!gs_parse_hex(&p, &n) || *p || n >= (uint64_t)gs_regs_count(s->avx)) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (regs_of(s, &tid, &r) < 0)
		return;
	gs_buf_hex(&s->reply, v, gs_reg_get(&r, (int)n, v));
}

void gs_cmd_write_reg(struct gs_server *s, char *pkt)
{
	uint8_t v[GS_REG_MAX_SIZE];
	const char *p = pkt + 1;
	struct gs_regs r, old;
	uint64_t n;
	size_t size;
	pid_t tid;

	if (!gs_parse_hex(&p, &n) || *p != '=' ||
	    n >= (uint64_t)gs_regs_count(s->avx)) {
		gs_reply_err(s, EINVAL);
		return;
	}
	p++;
	size = gs_reg_size((int)n);
	if (strlen(p) != 2 * size || gs_unhex(p, size, v) < 0) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (regs_of(s, &tid, &r) < 0)
		return;
	old = r;
	gs_reg_set(&r, (int)n, v, size);
	put_regs(s, tid, &r, &old);
}

/* ---- memory ---- */
void gs_cmd_read_mem(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	uint8_t *buf;
	ssize_t n;

	if (gs_parse_addr_len(&p, '\0', &addr, &len) < 0) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (len > (GS_PACKET_MAX - 8) / 2)
		len = (GS_PACKET_MAX - 8) / 2;
	if (!len) {
		gs_buf_adds(&s->reply, "");
		return;
	}
	buf = malloc(len);
	if (!buf) {
		gs_reply_err(s, ENOMEM);
		return;
	}
	n = s->gone || !s->ops->read ? -1 : s->ops->read(s->ctx, addr, buf, len);
	if (n <= 0)
		gs_reply_err(s, EFAULT);
	else
		gs_buf_hex(&s->reply, buf, (size_t)n);
	free(buf);
}

static void write_mem(struct gs_server *s, uint64_t addr, const uint8_t *buf,
		      size_t len)
{
	ssize_t n;

	if (!len) {
		gs_reply_ok(s);
		return;
	}
	if (!gs_alive(s) || !s->ops->write) {
		gs_reply_err(s, EPERM);
		return;
	}
	n = s->ops->write(s->ctx, addr, buf, len);
	if (n != (ssize_t)len)
		gs_reply_err(s, EFAULT);
	else
		gs_reply_ok(s);
}

void gs_cmd_write_mem(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	uint8_t *buf;

	if (gs_parse_addr_len(&p, ':', &addr, &len) < 0 ||
	    strlen(p) != 2 * len) {
		gs_reply_err(s, EINVAL);
		return;
	}
	buf = malloc(len + 1);
	if (!buf) {
		gs_reply_err(s, ENOMEM);
		return;
	}
	if (gs_unhex(p, len, buf) < 0)
		gs_reply_err(s, EINVAL);
	else
		write_mem(s, addr, buf, len);
	free(buf);
}

/* X: binary data, escaped; @pkt's length is what counts (NULs inside). */
void gs_cmd_write_bin(struct gs_server *s, char *pkt, size_t pktlen)
{
	const char *p = pkt + 1;
	uint64_t addr, len;
	size_t n;

	if (gs_parse_addr_len(&p, ':', &addr, &len) < 0) {
		gs_reply_err(s, EINVAL);
		return;
	}
	n = gs_unescape((uint8_t *)p, pktlen - (size_t)(p - pkt));
	if (n != len) {
		gs_reply_err(s, EINVAL);
		return;
	}
	write_mem(s, addr, (const uint8_t *)p, len);
}

/* ---- breakpoints ---- */

void gs_cmd_break(struct gs_server *s, char *pkt)
{
	const char *p = pkt + 1;
	uint64_t type, addr, kind;
	int ret;

	if (!gs_parse_hex(&p, &type) || *p++ != ',' ||
	    !gs_parse_hex(&p, &addr) || *p++ != ',' ||
	    !gs_parse_hex(&p, &kind) || (*p && *p != ';')) {
		gs_reply_err(s, EINVAL);
		return;
	}
	if (type != 0)
		return;		/* hardware breakpoints, watchpoints: none */
	if (!s->ops->resume) {
		/* a saved trace: GDB's replay checks its breakpoints itself */
		gs_reply_ok(s);
		return;
	}
	if (!gs_alive(s) || !s->ops->break_insert) {
		gs_reply_err(s, EPERM);
		return;
	}
	if (*pkt == 'Z')
		ret = s->ops->break_insert(s->ctx, addr);
	else
		ret = s->ops->break_remove(s->ctx, addr);
	if (ret < 0)
		gs_reply_err(s, EFAULT);
	else
		gs_reply_ok(s);
}

