/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SOFT_DISPLACE_H
#define BTRACE_SOFT_DISPLACE_H

/*
 * Displaced execution for the fast software backend (soft_fast.c).
 *
 * A thread stopped at one of the backend's int3s must still run the
 * instruction under it.  Lifting the int3 and stepping costs a second
 * stop, and another thread may run past the lifted spot unseen.  Instead
 * the instruction runs from a copy: a slot in a scratch area mapped into
 * the process (read and execute only; written through /proc/PID/mem)
 * holding the instruction, its rip-relative displacement re-based, and an
 * absolute jump back to the instruction after it.  The thread is moved to
 * the slot and continued: one stop in all, and the int3 never leaves.
 *
 * Only instructions that do the same anywhere are copied (x86/decode.h's
 * BT_X86_SEQ): no control transfer, no system call, nothing the decoder
 * does not know, and a rip-relative operand only where the slot lies
 * within a rel32's reach of what it points at (the relocator,
 * x86/reloc.h, re-encodes it).  Anything else is stepped as before.
 *
 * Scratch areas are mapped with mmap run inside a stopped thread
 * (bt_thread_syscall), placed near the code they serve.  They stay in the
 * process after detach but are never run again: the backend maps a pc
 * inside a slot back (bt_displace_unmap) whenever a thread stops for
 * anything but its own trap, so no signal frame, report or detached
 * thread keeps one.
 *
 * Internal to the library.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bt_target;
struct bt_thread;
struct bt_displace;

/* Returns 0 or -bte_nomem/-bte_internal; free accepts NULL. */
int bt_displace_alloc(struct bt_displace **d);
void bt_displace_free(struct bt_displace *d);

/* A new address space (exec): every area and slot is gone. */
void bt_displace_reset(struct bt_displace *d);

/*
 * Can the instruction whose bytes are @code (@len readable) at @addr run
 * from a slot?  1 or 0.  A yes may still meet no scratch memory in reach
 * of a rip-relative operand when the slot is made.
 */
int bt_displace_can(struct bt_displace *d, const uint8_t *code, size_t len,
		    uint64_t addr);

/*
 * Make the slot for the instruction at @addr (original bytes @code, @len
 * readable), mapping scratch memory through @th if need be: @th must be
 * stopped at a trap its backend consumed (see bt_thread_syscall).  Slot
 * bytes are written through @memfd (/proc/PID/mem, read-write).
 * Returns 0 with the slot's address in *@slot; -bte_nosys if this
 * instruction cannot run displaced; -bte_nomem if no scratch memory can be
 * had (every later call then says so at once); -bte_exited.
 */
int bt_displace_make(struct bt_displace *d, struct bt_target *t,
		     struct bt_thread *th, int memfd, const uint8_t *code,
		     size_t len, uint64_t addr, uint64_t *slot);

#define BT_DISPLACE_SLOT_SIZE 32	/* an instruction (<= 15), the jump back */

/*
 * The bytes of a slot at @slot for the instruction in @code (@len
 * readable) at @addr: the instruction, its rip-relative displacement
 * re-based for @slot, then jmp *0(%rip) and the address after the
 * original.  Returns the slot's length; -bte_nosys if the instruction
 * cannot run displaced, or not from @slot (a rip-relative operand out of
 * reach).
 */
int bt_displace_encode(struct bt_displace *d, const uint8_t *code,
		       size_t len, uint64_t addr, uint64_t slot,
		       uint8_t out[BT_DISPLACE_SLOT_SIZE]);

/*
 * Is @pc the first byte of a slot?  1 with the original instruction's
 * address and length, else 0.
 */
int bt_displace_slot_of(const struct bt_displace *d, uint64_t pc,
			uint64_t *orig, uint8_t *len);

/*
 * The program's own pc for @pc: inside a slot, the original instruction's
 * address before it ran and the next instruction's after; anywhere else
 * @pc itself.
 */
uint64_t bt_displace_unmap(const struct bt_displace *d, uint64_t pc);

/*
 * A syscall instruction (0f 05) in the process to run system calls through
 * (bt_thread_syscall): one in the vDSO, read through @memfd.  0: none.
 */
uint64_t bt_find_syscall_insn(struct bt_target *t, int memfd);
/* The same in process @pid (a followed fork child). */
uint64_t bt_find_syscall_insn_pid(pid_t pid, int memfd);

/*
 * The one slot where any thread runs a system call displaced: "syscall;
 * int3", made on first use near @addr as bt_displace_make() makes slots
 * (@th stopped at a trap).  The program's own syscall keeps the int3
 * that stops other threads there: no thread runs past it while one is
 * inside the call (a blocking read can take as long as it likes).  The
 * thread comes back at the int3 after it, its rcx the slot's (the
 * caller puts back the original).  bt_displace_sys(): its address, 0
 * none yet.  bt_displace_unmap() and bt_displace_slot_of() do not know
 * it (it runs no one instruction: the caller keeps which).
 */
int bt_displace_sys_make(struct bt_displace *d, struct bt_target *t,
			 struct bt_thread *th, int memfd, uint64_t addr,
			 uint64_t *slot);
uint64_t bt_displace_sys(const struct bt_displace *d);

/* Slots made so far (for tests and statistics). */
size_t bt_displace_count(const struct bt_displace *d);

#endif /* BTRACE_SOFT_DISPLACE_H */
