/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_RING_H
#define BTRACE_REC_RING_H

/*
 * The recorder's ring: per thread, in the traced process, written by the
 * translated code itself (rec_xlate.h) and read by the tracer.
 *
 * Layout: [guard page][ring][control block], the control block at the
 * thread's gs base.  The ring is written downwards, as perf's
 * write_backward ring: each record is stored at head - size, and head
 * (TCB_HEAD) moves down once the record is whole: the store of head is the
 * commit, so a thread stopped anywhere leaves at worst one record beyond
 * head, which no reader sees.  From head, records are walked upwards,
 * newest to oldest; each starts with its tag byte:
 *
 *   REC_N, REC_T     1 byte   a conditional branch not taken / taken
 *   REC_IND          9 bytes  the target of a ret, jmp r/m or call r/m
 *   REC_IND32        5 bytes  the same, whose high 32 bits are those of the
 *                             thread's last REC_IND (TCB_HI); the tracer
 *                             resets TCB_HI where a thread enters and where
 *                             its ring wraps, so a REC_IND comes first, and
 *                             a target is whole wherever bits 8-15 of the
 *                             head are 0: a place to decode from in every
 *                             64 KiB of ring
 *   REC_SYNC         9 bytes  decoding (re)starts at this address
 *   0                         never written: the end
 *
 * Direct jumps and calls write nothing: the decoder follows them in the
 * code.  When a record would cross the bottom it faults on the guard
 * page; the tracer moves the record to the top, writes a REC_SYNC above
 * it (the conditional's own address) so that decoding can start there,
 * and notes where the pass before ended (the oldest records then lie
 * between that point and the new head).  Tags 0x20-0xff are free for
 * later record kinds (timestamps).
 */

#define REC_N		0x02
#define REC_T		0x03
#define REC_IND		0x10
#define REC_SYNC	0x11
#define REC_IND32	0x12	/* a target, its high half the last REC_IND's */
#define REC_ADDR_LEN	9	/* tag + 8-byte address */
#define REC_IND32_LEN	5	/* tag + the low 4 bytes */

/* TCB_HI when no REC_IND may be shortened: never a user address's half. */
#define REC_HI_NONE	0xffffffffu

#endif /* BTRACE_REC_RING_H */
