// SPDX-License-Identifier: MIT
/*
 * The remote protocol's framing (packet.h): bytes in, events out; payloads
 * in, frames out.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "packet.h"

/* ---- buffers ---- */

void gs_buf_init(struct gs_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void gs_buf_release(struct gs_buf *b)
{
	free(b->data);
	gs_buf_init(b);
}

void gs_buf_reset(struct gs_buf *b)
{
	b->len = 0;
	b->oom = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int buf_room(struct gs_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return 0;
	if (b->len + more + 1 <= b->cap)
		return 1;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = 1;
		return 0;
	}
	b->data = p;
	b->cap = cap;
	return 1;
}

void gs_buf_add(struct gs_buf *b, const void *data, size_t len)
{
	if (!buf_room(b, len))
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void gs_buf_adds(struct gs_buf *b, const char *s)
{
	gs_buf_add(b, s, strlen(s));
}

void gs_buf_addf(struct gs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_room(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static const char hexdig[] = "0123456789abcdef";

void gs_buf_hex(struct gs_buf *b, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	if (!buf_room(b, 2 * len))
		return;
	for (i = 0; i < len; i++) {
		b->data[b->len++] = hexdig[p[i] >> 4];
		b->data[b->len++] = hexdig[p[i] & 15];
	}
	b->data[b->len] = '\0';
}

static int must_escape(uint8_t c)
{
	return c == '#' || c == '$' || c == '}' || c == '*';
}

void gs_buf_bin(struct gs_buf *b, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	if (!buf_room(b, 2 * len))
		return;
	for (i = 0; i < len; i++) {
		if (must_escape(p[i])) {
			b->data[b->len++] = '}';
			b->data[b->len++] = (char)(p[i] ^ 0x20);
		} else {
			b->data[b->len++] = (char)p[i];
		}
	}
	b->data[b->len] = '\0';
}

size_t gs_bin_fit(const void *data, size_t len, size_t room)
{
	const uint8_t *p = data;
	size_t i, used = 0;

	for (i = 0; i < len; i++) {
		size_t w = must_escape(p[i]) ? 2 : 1;

		if (used + w > room)
			break;
		used += w;
	}
	return i;
}

size_t gs_unescape(uint8_t *data, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		if (data[i] == '}' && i + 1 < len)
			data[o++] = data[++i] ^ 0x20;
		else
			data[o++] = data[i];
	}
	return o;
}

/* ---- hex ---- */

int gs_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int gs_parse_hex(const char **s, uint64_t *val)
{
	const char *p = *s;
	uint64_t v = 0;
	int n = 0;

	while (gs_hexval(*p) >= 0) {
		if (++n > 16)
			return 0;
		v = v << 4 | (uint64_t)gs_hexval(*p++);
	}
	if (!n)
		return 0;
	*s = p;
	*val = v;
	return 1;
}

ssize_t gs_unhex(const char *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = gs_hexval(s[2 * i]), lo;

		if (hi < 0)
			return -1;
		lo = gs_hexval(s[2 * i + 1]);
		if (lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (ssize_t)n;
}

/* ---- parsing ---- */

enum { P_IDLE, P_DATA, P_SUM1, P_SUM2 };

void gs_parser_init(struct gs_parser *p)
{
	memset(p, 0, sizeof(*p));
}

void gs_parser_release(struct gs_parser *p)
{
	free(p->pkt);
	gs_parser_init(p);
}

static void parser_put(struct gs_parser *p, uint8_t c)
{
	p->sum += c;
	if (p->toolong)
		return;
	if (p->len >= GS_PACKET_MAX) {
		p->toolong = 1;
		return;
	}
	if (p->len + 1 >= p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		uint8_t *n = realloc(p->pkt, cap);

		if (!n) {
			p->toolong = 1;
			return;
		}
		p->pkt = n;
		p->cap = cap;
	}
	p->pkt[p->len++] = c;
}

static int parser_end(struct gs_parser *p, uint8_t c)
{
	int hi = gs_hexval(p->csum), lo = gs_hexval(c);

	p->state = P_IDLE;
	if (p->toolong)
		return GS_EV_TOOLONG;
	if (!p->pkt) {
		p->pkt = malloc(1);
		if (!p->pkt)
			return GS_EV_TOOLONG;
		p->cap = 1;
	}
	p->pkt[p->len] = '\0';
	if (hi < 0 || lo < 0 || (uint8_t)(hi << 4 | lo) != p->sum)
		return GS_EV_BADSUM;
	return GS_EV_PACKET;
}

int gs_parser_feed(struct gs_parser *p, uint8_t c)
{
	switch (p->state) {
	case P_IDLE:
		if (c == '$') {
			p->state = P_DATA;
			p->len = 0;
			p->sum = 0;
			p->toolong = 0;
			return GS_EV_NONE;
		}
		if (c == 0x03)
			return GS_EV_INTERRUPT;
		if (c == '+')
			return GS_EV_ACK;
		if (c == '-')
			return GS_EV_NAK;
		return GS_EV_NONE;	/* line noise between packets */
	case P_DATA:
		if (c == '#')
			p->state = P_SUM1;
		else if (c == '$') {	/* a new packet: the old one was cut */
			p->len = 0;
			p->sum = 0;
			p->toolong = 0;
		} else
			parser_put(p, c);
		return GS_EV_NONE;
	case P_SUM1:
		p->csum = c;
		p->state = P_SUM2;
		return GS_EV_NONE;
	default:
		return parser_end(p, c);
	}
}

/* ---- the connection ---- */

void gs_conn_init(struct gs_conn *c, int in, int out)
{
	memset(c, 0, sizeof(*c));
	c->in = in;
	c->out = out;
	gs_parser_init(&c->parser);
}

void gs_conn_release(struct gs_conn *c)
{
	gs_parser_release(&c->parser);
}

int gs_conn_pending(const struct gs_conn *c)
{
	return c->rpos < c->rlen;
}

/* More bytes into rbuf.  1, 0 at end of file, or -bte_io. */
static int conn_fill(struct gs_conn *c)
{
	ssize_t n;

	for (;;) {
		if (c->quit)
			return 0;
		n = read(c->in, c->rbuf, sizeof(c->rbuf));
		if (n > 0)
			break;
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { .fd = c->in, .events = POLLIN };

			poll(&pfd, 1, -1);
			continue;
		}
		return errno == ECONNRESET ? 0 :
			bt_fail(bte_io, errno, "read from gdb");
	}
	c->rpos = 0;
	c->rlen = (size_t)n;
	return 1;
}

static int conn_write(struct gs_conn *c, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = send(c->out, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(c->out, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = c->out,
						      .events = POLLOUT };

				poll(&pfd, 1, -1);
				continue;
			}
			return bt_fail(bte_io, errno, "write to gdb");
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int gs_conn_recv(struct gs_conn *c)
{
	int ev, ret;

	for (;;) {
		if (c->interrupted) {
			c->interrupted = 0;
			return GS_EV_INTERRUPT;
		}
		if (c->rpos == c->rlen) {
			ret = conn_fill(c);
			if (ret <= 0)
				return ret;
		}
		ev = gs_parser_feed(&c->parser, c->rbuf[c->rpos++]);
		switch (ev) {
		case GS_EV_PACKET:
			if (!c->noack && conn_write(c, "+", 1) < 0)
				return -bte_io;
			return ev;
		case GS_EV_BADSUM:
			/* with acks, '-' asks for it again; without, an error */
			if (c->noack)
				return ev;
			if (conn_write(c, "-", 1) < 0)
				return -bte_io;
			continue;
		case GS_EV_TOOLONG:
			/* received whole, refused: an error reply follows */
			if (!c->noack && conn_write(c, "+", 1) < 0)
				return -bte_io;
			return ev;
		case GS_EV_INTERRUPT:
			return ev;
		default:
			continue;	/* stray acks, noise */
		}
	}
}

/* Wait for the peer's ack: 1 for '+', 0 for '-', <= 0 at an error. */
static int conn_ack(struct gs_conn *c)
{
	int ret;

	for (;;) {
		if (c->rpos == c->rlen) {
			ret = conn_fill(c);
			if (ret <= 0)
				return ret < 0 ? ret : -bte_io;
		}
		switch (c->rbuf[c->rpos]) {
		case '+':
			c->rpos++;
			return 1;
		case '-':
			c->rpos++;
			return 0;
		case 0x03:
			c->rpos++;
			c->interrupted = 1;
			continue;
		case '$':
			return 1;	/* a packet instead: take it as the ack */
		default:
			c->rpos++;
		}
	}
}

int gs_conn_send(struct gs_conn *c, const char *payload, size_t len)
{
	uint8_t sum = 0;
	char *frame;
	size_t i;
	int ret, tries;

	frame = malloc(len + 4);
	if (!frame)
		return bt_fail(bte_nomem, errno, "reply of %zu bytes", len);
	frame[0] = '$';
	memcpy(frame + 1, payload, len);
	for (i = 0; i < len; i++)
		sum += (uint8_t)payload[i];
	frame[len + 1] = '#';
	frame[len + 2] = hexdig[sum >> 4];
	frame[len + 3] = hexdig[sum & 15];
	for (tries = 0; tries < 8; tries++) {
		ret = conn_write(c, frame, len + 4);
		if (ret < 0 || c->noack)
			break;
		ret = conn_ack(c);
		if (ret != 0)
			break;
	}
	free(frame);
	if (ret == 0 && !c->noack)
		return bt_fail(bte_io, 0, "gdb refused a reply 8 times");
	return ret < 0 ? ret : 0;
}

/* A notification: %payload#xx, never acknowledged. */
int gs_conn_notify(struct gs_conn *c, const char *payload, size_t len)
{
	uint8_t sum = 0;
	char tail[3];
	size_t i;
	int ret;

	for (i = 0; i < len; i++)
		sum += (uint8_t)payload[i];
	tail[0] = '#';
	tail[1] = hexdig[sum >> 4];
	tail[2] = hexdig[sum & 15];
	ret = conn_write(c, "%", 1);
	if (ret == 0)
		ret = conn_write(c, payload, len);
	if (ret == 0)
		ret = conn_write(c, tail, 3);
	return ret;
}
