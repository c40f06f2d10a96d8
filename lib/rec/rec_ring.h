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
 *   REC_TNT | o      1 byte   1-6 conditionals' outcomes o: a leading 1,
 *                             then one bit each, oldest first, 1 taken
 *                             (0x82: one not taken, 0x83: one taken); an
 *                             outcome may be a jmp/call r/m's that went
 *                             where its block's icbit says (rec_xlate.h),
 *                             taken as a conditional is
 *   REC_IND          9 bytes  the target of a ret, jmp r/m or call r/m
 *   REC_IND32        5 bytes  the same, whose high 32 bits are those of the
 *                             thread's last REC_IND (TCB_HI); the tracer
 *                             resets TCB_HI where a thread enters and where
 *                             its ring wraps, so a REC_IND comes first, and
 *                             a target is whole wherever bits 8-15 of the
 *                             head are 0: a place to decode from in every
 *                             64 KiB of ring
 *   REC_IND_O | o    9 bytes  REC_IND after 1-4 conditionals' outcomes o;
 *                             the last one not taken where the branch is
 *                             a jmp/call r/m with an icbit: it went
 *                             elsewhere, to this target
 *   REC_IND32_O | o  5 bytes  REC_IND32 after them
 *   REC_SYNC         9 bytes  decoding (re)starts at this address
 *   REC_TIME_SYS     9 bytes  the TSC (rdtsc) before the thread's next
 *                             system call (its block's instructions but
 *                             the syscall ran)
 *   REC_TIME         9 bytes  the TSC here (after a system call)
 *   REC_TIME_NS      9 bytes  CLOCK_MONOTONIC here, in ns: written by the
 *                             tracer where it stopped the thread (a
 *                             translation's miss) and where it let it go
 *   0                         never written: the end
 *
 * Direct jumps and calls write nothing: the decoder follows them in the
 * code.  When a record would cross the bottom it faults on the guard
 * page; the tracer moves the record to the top, writes a REC_SYNC above
 * it (for a REC_TNT of one outcome: the conditional's own address) so
 * that decoding can start there, and notes where the pass before ended
 * (the oldest records then lie between that point and the new head).
 * Tags 0x23-0x3f are free for later record kinds.
 */

#define REC_TNT		0x80	/* | outcomes, 0x82-0xff */
#define REC_TNT_MAX	6	/* outcomes a REC_TNT holds */
#define REC_IND_O	0x40	/* | outcomes, 0x42-0x5f */
#define REC_IND32_O	0x60	/* | outcomes, 0x62-0x7f */
#define REC_O_MAX	4	/* outcomes a target record holds */
#define REC_IND		0x10
#define REC_SYNC	0x11
#define REC_IND32	0x12	/* a target, its high half the last REC_IND's */
#define REC_TIME_SYS	0x20	/* the TSC before the next syscall */
#define REC_TIME	0x21	/* the TSC here */
#define REC_TIME_NS	0x22	/* CLOCK_MONOTONIC here (the tracer's) */
/* REC_TIME_SYS in ns: only in a record the tracer holds (rec_slot.c) */
#define REC_TIME_SYS_NS	0x23
/* A time record as a ring holds it: the program's two, the tracer's */
#define REC_IS_TIME(tag)	((tag) >= REC_TIME_SYS && (tag) <= REC_TIME_NS)
#define REC_ADDR_LEN	9	/* tag + 8-byte address */
#define REC_IND32_LEN	5	/* tag + the low 4 bytes */

/* TCB_HI when no REC_IND may be shortened: never a user address's half
 * (TCB_HI holds the high half in place, its low half 0). */
#define REC_HI_NONE	0xffffffff00000000ull

#endif /* BTRACE_REC_RING_H */
