/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_GS_PACKET_H
#define BTRACE_GS_PACKET_H

/*
 * GDB's remote serial protocol on the wire: $payload#xx packets with a
 * modulo-256 checksum, + and - acknowledgements until QStartNoAckMode, the
 * lone 0x03 byte that interrupts, and the binary escape (0x7d, then the
 * byte xor 0x20) of X packets and qXfer replies.  Replies never use
 * run-length encoding, so a '*' in binary data is escaped too.
 *
 * Nothing here knows about commands: packet.c turns bytes into events and
 * payloads into frames.  Internal to btrace gdbserver.
 */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest payload accepted, and the PacketSize qSupported announces. */
#define GS_PACKET_MAX 0x10000

/* A growing byte buffer; data stays NUL-terminated. */
struct gs_buf {
	char *data;
	size_t len, cap;
	int oom;		/* an append failed: the content is short */
};

void gs_buf_init(struct gs_buf *b);
void gs_buf_release(struct gs_buf *b);
void gs_buf_reset(struct gs_buf *b);
void gs_buf_add(struct gs_buf *b, const void *data, size_t len);
void gs_buf_adds(struct gs_buf *b, const char *s);
void gs_buf_addf(struct gs_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @len bytes as two lowercase hex digits each. */
void gs_buf_hex(struct gs_buf *b, const void *data, size_t len);
/* @len bytes escaped as binary data ('#', '$', '}', '*' escaped). */
void gs_buf_bin(struct gs_buf *b, const void *data, size_t len);
/* The escaped size of @len bytes at @data, at most @max bytes of input
 * taken: how many input bytes fit in @room output bytes. */
size_t gs_bin_fit(const void *data, size_t len, size_t room);

enum gs_event {
	GS_EV_NONE = 0,		/* nothing complete yet */
	GS_EV_PACKET,		/* a packet with a good checksum */
	GS_EV_BADSUM,		/* a packet whose checksum did not match */
	GS_EV_TOOLONG,		/* a packet over GS_PACKET_MAX (dropped) */
	GS_EV_INTERRUPT,	/* 0x03 outside a packet */
	GS_EV_ACK,		/* + */
	GS_EV_NAK,		/* - */
};

/* Bytes to events: a state machine that never fails on any input. */
struct gs_parser {
	int state;
	uint8_t sum;		/* of the payload so far */
	uint8_t csum;		/* the checksum's first digit */
	uint8_t *pkt;		/* payload, NUL-terminated when complete */
	size_t len, cap;
	int toolong;
};

void gs_parser_init(struct gs_parser *p);
void gs_parser_release(struct gs_parser *p);
/* Feed one byte; returns an enum gs_event.  After GS_EV_PACKET the payload
 * is p->pkt (p->len bytes) until the next byte is fed. */
int gs_parser_feed(struct gs_parser *p, uint8_t c);

/* A connection: one fd to read, one to write (the same for a socket). */
struct gs_conn {
	int in, out;
	int noack;		/* QStartNoAckMode was accepted */
	struct gs_parser parser;
	uint8_t rbuf[4096];
	size_t rpos, rlen;
	int interrupted;	/* a 0x03 came while waiting for an ack */
	volatile sig_atomic_t quit;	/* btrace is to end: reads as closed */
};

void gs_conn_init(struct gs_conn *c, int in, int out);
void gs_conn_release(struct gs_conn *c);

/*
 * The next event from the peer, blocking: GS_EV_PACKET (payload in
 * c->parser.pkt), GS_EV_INTERRUPT; bad and oversized packets are answered
 * here ('-' with acks on) and returned too, for an error reply.
 * Returns the event, 0 at end of file, or a negative bt_error (-bte_io).
 */
int gs_conn_recv(struct gs_conn *c);

/* Bytes already read and not yet parsed? (a 0x03 may wait in them) */
int gs_conn_pending(const struct gs_conn *c);

/*
 * Send @len bytes of payload as one packet; with acks on, wait for '+'
 * (resending on '-', a few times).  Returns 0 or a negative bt_error
 * (-bte_io: the peer is gone).
 */
int gs_conn_send(struct gs_conn *c, const char *payload, size_t len);

/*
 * Send @len bytes of payload as a notification (%payload#xx): no ack is
 * waited for.  Returns 0 or -bte_io.
 */
int gs_conn_notify(struct gs_conn *c, const char *payload, size_t len);

/* Undo the binary escape in place; returns the new length. */
size_t gs_unescape(uint8_t *data, size_t len);

/* Parse hex digits; helpers for the command handlers. */
int gs_hexval(int c);
/* A hex number at *@s up to a non-hex character; 0 if none or too long. */
int gs_parse_hex(const char **s, uint64_t *val);
/* @n hex digit pairs at @s into @out; returns bytes decoded or -1. */
ssize_t gs_unhex(const char *s, size_t n, uint8_t *out);

#endif /* BTRACE_GS_PACKET_H */
