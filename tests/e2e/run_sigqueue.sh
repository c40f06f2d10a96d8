#!/usr/bin/env bash
# Signals reach the program with the siginfo they were sent with: 300
# sigqueue()s from a child, each with its own value, into a parent that
# computes and sleeps under the recorder and the fast mode.  A signal that
# came while the recorder walked the thread out of its translation, given
# at the walk's last step, had been delivered as one sent by btrace
# (SI_USER, btrace's pid, no value): a few in every run of 300.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/sigqueue_count

"$prog" 300 >"$work/native" || fail "sigqueue_count fails natively: $(cat "$work/native")"
for mode in record record fast; do
	"$BTRACE" run --soft-mode $mode -o "$work/report" -- "$prog" 300 \
		>"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 0 ] || { cat "$work/out" "$work/err"; fail "$mode: exit $rc"; }
	out=$(head -n 1 "$work/out")
	[ "$out" = "300 signals, 0 with another siginfo (${out##*(}" ] ||
		fail "$mode: $out"
	echo "ok   $mode: $out"
done
