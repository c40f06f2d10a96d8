/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SOFT_FAST_H
#define BTRACE_SOFT_FAST_H

/*
 * The fast software backend (BT_SOFT_FAST): one ptrace stop per decision
 * branch instead of one per instruction.
 *
 * From the pc where a thread is resumed, the path up to the next
 * conditional branch, return or indirect jump/call is known in advance:
 * basic blocks (soft_block.h) linked by direct jumps and calls, and
 * syscalls that come back to the next instruction (but those that wait:
 * they are stepped, so that the stops around one time it, tracer/clock.c).
 * That chain is
 * remembered per thread and an int3 is put on the decision branch that
 * ends it (kept there for every later visit, by every thread).  When a
 * thread stops anywhere -- at such a breakpoint, a signal, an exit -- the
 * part of its chain before the stop pc is committed to its ring, and a
 * decision branch is evaluated from registers, flags and memory
 * (soft_emu.h) and the thread moved on without stepping it.
 *
 * Conditionals mostly go unwatched, so that a thread stops about once per
 * taken branch, or less: the chain follows one side and an int3 waits on
 * the first instruction of the other (an exit), so a stop there says which
 * way the thread went.  Usually the chain follows the fall-through and the
 * exit is the taken target; where the fall-through runs into the taken
 * target (if (c) body;) it is the other way round; a loop's head is made
 * an exit by starting the chain just after it.  Exit targets lie outside
 * the chain, one exit a target.  Where neither side can be the exit, the
 * taken side is followed to the next decision branch if its blocks are new
 * to the chain, else the conditional gets its own int3.  An int3 is shared
 * by all threads and stays: one that another chain left on this chain's
 * path is taken out unless another thread's chain relies on it.
 *
 * A thread stopped at an int3 over an ordinary instruction (an exit, a
 * chain cut short) runs that instruction from a slot in scratch memory
 * (soft_displace.h) and goes on with one PTRACE_CONT; the int3 never
 * leaves, so no other thread can pass unseen.  A pc inside a slot is put
 * back where the program has it at every signal stop, every stop reported
 * and before detach.  What can neither be evaluated nor run displaced is
 * stepped once with its int3 lifted.
 *
 * Signals are delivered with a single step so that a handler's entry is
 * seen (an interrupt branch from the interrupted pc); the return through
 * rt_sigreturn is stepped at the restorer.  Code in writable or anonymous
 * executable mappings, and code found changed under a breakpoint, is
 * single-stepped like the reference mode (BT_SOFT_STEP).
 *
 * Module filters (only/exclude) let untraced code run natively: control
 * leaving traced code is recorded as a branch into untraced code, and its
 * return (or a callback into a traced function) as a BT_GAP_UNTRACED gap.
 * from_sym holds every thread in that untraced state until the symbol runs.
 * A from_sym or until_sym in a library not loaded yet waits: an int3 on
 * the dynamic loader's _dl_debug_state looks them up again after each
 * change to its list of libraries.
 */

#include "backend/backend.h"

extern const struct bt_backend_ops bt_backend_soft_fast;

#endif /* BTRACE_SOFT_FAST_H */
