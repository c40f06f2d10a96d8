#!/usr/bin/env bash
# A worker's exit_group while the first thread runs (targets/exit_race_dyn):
# the first thread is killed by it, and the kernel reports its end only
# once the worker is reaped.  btrace holds the caller of exit_group at its
# exit to report the process's end from it; before, it also waited for
# the first thread's end, which could not come: under --only, where the
# worker's _exit() runs natively, 5 of 21 runs hung.  And the first
# thread, killed while its trap of a fast-mode int3 waited to be read,
# was out of its stop when its siginfo was asked for: read as zeros, the
# trap was reported as the program's SIGTRAP "sent with kill()" (29 of
# 100 fast-mode runs beside a busy loop).  Under the recorder with --only
# and the fast mode (each delay thrice) and without --only, at delays
# from 0 to 10 ms: the exit's report from the worker, exit status 3,
# nothing left running.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/exit_race_dyn
delays="0 200000 1000000 2000000 3000000 5000000 10000000"

for mode in "record --only exit_race_dyn" record fast; do
	# shellcheck disable=SC2086
	set -- $delays
	# shellcheck disable=SC2086
	[ "$mode" = record ] || set -- $delays $delays $delays
	for ns in "$@"; do
		# shellcheck disable=SC2086
		timeout --verbose -k 5 60 "$BTRACE" run --soft-mode $mode \
			--last 1 -- "$prog" $ns >"$work/out" 2>"$work/err"
		rc=$?
		grep -q '^timeout: sending signal' "$work/err" && rc=124
		[ $rc != 124 ] || fail "[$mode, $ns ns] btrace still waits after 60 s"
		[ $rc = 3 ] || { cat "$work/out" "$work/err"; fail "[$mode, $ns ns] exit status $rc, not 3"; }
		pid=$(sed -n 's/.* traced in pid \([0-9]*\)$/\1/p' "$work/out")
		tid=$(sed -n 's/^stop: exit with status 3 in thread \([0-9]*\)$/\1/p' "$work/out")
		[ -n "$tid" ] || { cat "$work/out"; fail "[$mode, $ns ns] no report of the exit"; }
		[ "$tid" != "$pid" ] || { cat "$work/out"; fail "[$mode, $ns ns] the exit reported from the first thread, not the worker's _exit"; }
		no_leftovers "$prog"
	done
done
echo "ok: the worker's exit reported, status 3, in every mode"
