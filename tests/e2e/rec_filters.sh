#!/usr/bin/env bash
# The recorder with module filters and --from: untraced code runs natively
# (the translation leaves to it without a stop and comes back at an int3 on
# a traced function's entry or a translated call's return site), and the
# history of the traced modules is the stepped one filtered the same way,
# branch for branch (softdiff -o/-x: the branch into untraced code, then
# an untraced gap to where control came back); --from against the fast
# mode's.  Without address randomization, as rec_diff.
. "$TESTDIR/e2e/lib/common.sh"
SOFTDIFF="$TOOLS/softdiff"
fails=0

check() {	# softdiff options, then -- and the program
	local log=$work/log
	if timeout 900 setarch -R "$SOFTDIFF" "$@" </dev/null >"$log" 2>&1; then
		echo "ok   $*: $(grep -a '^record' "$log")"
	else
		echo "FAIL $*"
		grep -aE '^(step|fast|record|  |softdiff)' "$log" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
}

q="$TARGETS/qsort_dyn" h="$TARGETS/libc_heavy_dyn" c="$TARGETS/compute"
# qsort in libc calls back into the program's compare (which crashes)
check -m record -o qsort_dyn -- "$q"
check -m record -x 'libc.so*' -- "$q"
# the work in libc, called from a loop of the program's
check -m record -o libc_heavy_dyn -- "$h" 3 4096
check -m record -x 'libc.so*' -- "$h" 3 4096
# signals taken inside libc with the handler in the program
check -m record -o sig_dyn -- "$TARGETS/sig_dyn"
# a stripped program of the distribution: its entry point, functions of
# its unwind table and its constructors and destructors catch the way back
printf 'a line to compress\n%.0s' $(seq 1 50) >"$work/in.txt"
check -m record -o gzip -- gzip -c "$work/in.txt"
check -m record -x 'libc.so*' -- gzip -c "$work/in.txt"
# threads that start in libc, run the program's function, and crash
check -t -m record -o thread_crash -- "$TARGETS/thread_crash"
# --from: native until the symbol, then recorded
check -b fast -m record -F fib -- "$c" 5
check -b fast -m record -F main -o qsort_dyn -- "$q"

# btrace run: the callback's way back into compare is an untraced gap,
# nothing of libc recorded, and the recorder did the work
out=$("$BTRACE" run --soft-mode record --only qsort_dyn --json --last 64 -- "$q" \
	2>"$work/run.err")
python3 - "$out" <<'PY' || { echo "FAIL btrace run --only"; cat "$work/run.err"; fails=$((fails + 1)); }
import json, sys
doc = json.loads(sys.argv[1])
assert doc["stop"]["reason"] == "signal", doc["stop"]
br = doc["threads"][0]["branches"]
gaps = [b for b in br if b["kind"] == "gap"]
assert gaps and gaps[-1] is br[-1], br[-3:]
assert "compare" in json.dumps(br[-1]), br[-1]
# nothing of libc's: without the filter qsort alone takes hundreds
assert doc["stats"]["branches"] < 50, doc["stats"]
print("ok   btrace run --only qsort_dyn:", doc["stats"])
PY
# --until in an untraced library: native code meets the breakpoint
out=$("$BTRACE" run --soft-mode record --only qsort_dyn --until qsort --last 3 -- "$q" 2>&1)
if echo "$out" | grep -q '^stop: breakpoint 1' && echo "$out" | grep -q '=> .* qsort '; then
	echo "ok   --only --until qsort"
else
	echo "FAIL --only --until qsort"; echo "$out"; fails=$((fails + 1))
fi
[ $fails = 0 ]
