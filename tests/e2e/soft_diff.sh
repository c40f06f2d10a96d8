#!/usr/bin/env bash
# The fast software backend against the single-step reference: on every
# program in tests/targets, each thread's full branch history (from, to,
# kind, flags, instruction counts) must be the same in both modes --
# signals, sigreturn, int3, rep strings, code written at run time, fork,
# threads included.  Threaded targets (names with "thread") are compared
# with the timing-dependent parts relaxed (softdiff -t).
set -u
SOFTDIFF="$TOOLS/softdiff"
[ -x "$SOFTDIFF" ] || { echo "no $SOFTDIFF"; exit 1; }
fails=0 n=0
for prog in "$TARGETS"/*; do
	[ -x "$prog" ] || continue
	name=$(basename "$prog")
	opt=
	case $name in *thread*) opt=-t ;; esac
	n=$((n + 1))
	if out=$("$SOFTDIFF" $opt -- "$prog" 2>&1); then
		echo "ok   $name: $(echo "$out" | grep '^fast' | cut -d' ' -f2-)"
	else
		echo "FAIL $name"
		echo "$out" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
done
[ $n -gt 0 ] || { echo "no targets in $TARGETS"; exit 1; }
[ $fails = 0 ]
