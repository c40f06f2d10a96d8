#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The single-step backend's branch records, with their block sizes, equal
# the branches derived from an independent PTRACE_SINGLESTEP trace of the
# same program (tests/tools/steptrace.c), branch for branch; the stop and
# the program's fate are the real ones.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {	# target, expected stop line prefix, expected wstatus
	local t=$1 stop=$2 ws=$3
	"$TOOLS/steptrace" -o "$tmp/$t.step" -- "$TARGETS/$t" &
	"$TOOLS/captrace" -- "$TARGETS/$t" >"$tmp/$t.cap" || {
		echo "FAIL $t: captrace failed"; fail=1; wait; return; }
	wait
	if ! grep -q "^stop $stop\( \|$\)" "$tmp/$t.cap"; then
		echo "FAIL $t: expected stop '$stop', got: $(grep '^stop' "$tmp/$t.cap")"
		fail=1
	fi
	if ! grep -qx "wstatus $ws" "$tmp/$t.cap"; then
		echo "FAIL $t: expected wstatus $ws, got: $(grep '^wstatus' "$tmp/$t.cap")"
		fail=1
	fi
	if ! python3 "$TESTDIR/e2e/capture_steptrace.py" "$tmp/$t.step" "$tmp/$t.cap"; then
		echo "FAIL $t: records differ from steptrace"
		fail=1
	fi
}

check exit_status "exit tid=[0-9]* sig=0 status=3" 0x300
check crash_null "signal tid=[0-9]* sig=11 status=0 pc=0x[0-9a-f]* addr=0x0" 0xb
check sighandler "signal tid=[0-9]* sig=11" 0xb
# The handler was entered as an interrupt branch and left by rt_sigreturn.
grep -q " interrupt [0-9]* 0$" "$tmp/sighandler.cap" ||
	{ echo "FAIL sighandler: no interrupt branch into the handler"; fail=1; }
grep -q " sysret [0-9]* 4$" "$tmp/sighandler.cap" ||
	{ echo "FAIL sighandler: no sigreturn branch"; fail=1; }
exit $fail
