#!/usr/bin/env bash
# The fast software backend against the single-step reference: on every
# program in tests/targets, each thread's full branch history (from, to,
# kind, flags, instruction counts) must be the same in both modes --
# signals, sigreturn, int3, rep strings, code written at run time, fork,
# threads included.  Threaded targets are compared with the
# timing-dependent parts relaxed (softdiff -t).  A program that does not
# end by itself within 2 s untraced is skipped (named as such).
set -u
SOFTDIFF="$TOOLS/softdiff"
[ -x "$SOFTDIFF" ] || { echo "no $SOFTDIFF"; exit 1; }
fails=0 n=0
for prog in "$TARGETS"/*; do
	[ -x "$prog" ] || continue
	name=$(basename "$prog")
	opt=
	case $name in
	*thread*) opt=-t ;;
	cap_*|attach_*)	# wait on clocks, threads, their input: not repeatable
		echo "skip $name: a timing-dependent program for attach tests"
		continue ;;
	esac
	( timeout 2 "$prog" </dev/null >/dev/null 2>&1 ) 2>/dev/null
	if [ $? = 124 ]; then
		echo "skip $name: does not end by itself"
		continue
	fi
	n=$((n + 1))
	if out=$(timeout 120 "$SOFTDIFF" $opt -- "$prog" </dev/null 2>&1); then
		echo "ok   $name: $(echo "$out" | grep '^fast' | cut -d' ' -f2-)"
	else
		echo "FAIL $name"
		echo "$out" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
done
[ $n -gt 0 ] || { echo "no targets in $TARGETS"; exit 1; }
[ $fails = 0 ]
