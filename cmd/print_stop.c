// SPDX-License-Identifier: MIT
/*
 * A stop in words, for the printer's text and JSON (print_int.h): its
 * reason, the signal and how it came (from its si_code).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "print.h"
#include "print_int.h"

const char *reason_name(int reason)
{
	static const char *const names[] = {
		[BT_STOP_NONE] = "none",	 [BT_STOP_SIGNAL] = "signal",
		[BT_STOP_EXIT] = "exit",	 [BT_STOP_INTERRUPT] = "interrupt",
		[BT_STOP_BREAK] = "break",	 [BT_STOP_KILLED] = "killed",
		[BT_STOP_STEP] = "step",
	};

	if (reason < 0 || reason >= (int)BT_ARRAY_SIZE(names))
		return "?";
	return names[reason];
}

/* A signal's stop: one that has a siginfo. */
int has_siginfo(const struct bt_stop *stop)
{
	return stop->reason == BT_STOP_SIGNAL ||
	       (stop->reason == BT_STOP_INTERRUPT && stop->signal);
}

/* The system call that sends a signal with @si_code. */
static const char *send_call(int si_code)
{
	switch (si_code) {
	case SI_USER:
		return "kill()";
	case SI_TKILL:
		return "tgkill()";
	case SI_QUEUE:
		return "sigqueue()";
	}
	return "?";
}

/*
 * "SIGSEGV (Segmentation fault) at address 0x0", "exit with status 3"...
 * The address only for a fault of the program's (si_code > 0): a SIGSEGV
 * sent with kill() has none.
 */
void stop_words(const struct bt_stop *stop, char *buf, size_t size)
{
	const char *words, *name;
	char sig[32];

	print_signame(stop->signal, sig, sizeof(sig));
	switch (stop->reason) {
	case BT_STOP_SIGNAL:
		if ((stop->signal == SIGSEGV || stop->signal == SIGBUS) &&
		    bt_sigcode_describe(stop->signal, stop->si_code, &words,
					&name) == 2)
			snprintf(buf, size, "%s (%s) at address 0x%" PRIx64,
				 sig, strsignal(stop->signal), stop->addr);
		else
			snprintf(buf, size, "%s (%s)", sig,
				 strsignal(stop->signal));
		break;
	case BT_STOP_EXIT:
		snprintf(buf, size, "exit with status %d", stop->status);
		break;
	case BT_STOP_INTERRUPT:
		if (stop->signal)
			snprintf(buf, size, "interrupted by %s", sig);
		else
			snprintf(buf, size, "interrupted");
		break;
	case BT_STOP_BREAK:
		snprintf(buf, size, "breakpoint %d", stop->breakpoint);
		break;
	case BT_STOP_KILLED:
		snprintf(buf, size, "killed by %s", sig);
		break;
	default:
		snprintf(buf, size, "stopped");
	}
}

/* "sent by pid 42 (sh) with kill() (SI_USER)"; no pid when unknown. */
static void stop_sender(const struct bt_stop *stop, const char *name,
			char *buf, size_t size)
{
	char by[48] = "";

	if (stop->sender && stop->sender_comm[0])
		snprintf(by, sizeof(by), " by pid %d (%.16s)",
			 (int)stop->sender, stop->sender_comm);
	else if (stop->sender)
		snprintf(by, sizeof(by), " by pid %d", (int)stop->sender);
	if (stop->si_code == SI_QUEUE)
		snprintf(buf, size, "sent%s with %s (%s), value %" PRId64, by,
			 send_call(stop->si_code), name, stop->value);
	else
		snprintf(buf, size, "sent%s with %s (%s)", by,
			 send_call(stop->si_code), name);
}

/*
 * How a signal came, from its si_code: "address not mapped
 * (SEGV_MAPERR)", "sent by pid 42 (sh) with kill() (SI_USER)"; "" for a
 * stop without a signal.
 */
void stop_how(const struct bt_stop *stop, char *buf, size_t size)
{
	const char *words, *name;

	buf[0] = '\0';
	if (!has_siginfo(stop))
		return;
	if (bt_sigcode_describe(stop->signal, stop->si_code, &words,
				&name) == 1)
		stop_sender(stop, name, buf, size);
	else if (stop->si_code == SI_KERNEL &&
		 (stop->signal == SIGSEGV || stop->signal == SIGBUS))
		snprintf(buf, size, "raised by the kernel with no fault "
			 "address (SI_KERNEL): a general protection fault (a "
			 "non-canonical address, a privileged instruction) or "
			 "a signal frame it could not write");
	else if (words)
		snprintf(buf, size, "%s (%s)", words, name);
	else
		snprintf(buf, size, "si_code %d", stop->si_code);
}
