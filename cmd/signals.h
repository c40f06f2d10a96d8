/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_SIGNALS_H
#define BTRACE_CMD_SIGNALS_H

#include <signal.h>

/*
 * The signals that would end btrace while it holds a target: every one
 * whose default is to terminate and that comes from outside (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGXCPU and SIGXFSZ of a
 * limit, SIGPWR, SIGSTKFLT, the real-time ones), not the faults of
 * btrace's own bugs.  Under the recorder a program whose tracer died
 * runs into its ring's guard or an int3 of the translation and dies, so
 * btrace catches them all: @handler then lets the target go (attach) or
 * kills it (run) and btrace exits with 128 + the signal.  SIGPIPE is
 * ignored: a reader gone makes a write fail, not btrace die.
 *
 * Install them after a launch: what btrace ignores, a program it starts
 * would inherit (a program must run as it would without btrace).
 */
void cmd_catch_signals(void (*handler)(int));

/* Block (SIG_BLOCK) every signal cmd_catch_signals() catches; the mask
 * before into *@old. */
void cmd_block_signals(sigset_t *old);

#endif /* BTRACE_CMD_SIGNALS_H */
