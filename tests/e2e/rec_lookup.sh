#!/usr/bin/env bash
# The recorder's lookup tables learn while other threads run (issue 22):
# rec_lookup_threads calls, through pointers, functions whose lookup
# entries collide, in phases, so that each phase's target finds a place
# only by taking another's over.  Stops are counted in the same program
# alone and with sleeping threads (blocked in read(): they count as
# running, and once kept every entry from being replaced): the sleepers
# may add a few stops of their own, not one per call.  The output of each
# run equals an untraced run's.  (The branch-for-branch comparison with
# single-stepping, several threads taking entries over at once, is
# soft_diff's: this target is in tests/targets.)
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/rec_lookup_threads

# stops ARGS...: the recorder's stops over a whole run, its output checked
stops() {
	local want
	want=$("$prog" "$@") || fail "$prog $* fails untraced"
	"$BTRACE" run --json --last 1 --soft-mode record -- "$prog" "$@" \
		>"$work/out" 2>"$work/err" || {
		cat "$work/err"; fail "btrace run $* failed"; }
	python3 - "$work/out" "$want" <<'PY' || fail "run $*: output or stats"
import json, sys
text = open(sys.argv[1]).read()
at = text.index('{"btrace"')
assert text[:at] == sys.argv[2] + "\n", (text[:at], sys.argv[2])
doc = json.loads(text[at:])
assert doc["stop"]["reason"] == "exit" and doc["stop"]["status"] == 0, doc["stop"]
print(doc["stats"]["stops"])
PY
}

alone=$(stops 0 0 6) || exit 1
one=$(stops 0 1 6) || exit 1
four=$(stops 0 4 6) || exit 1
echo "stops: main alone $alone, with one sleeper $one, with four $four"
# one stop per call would be ~3,800 (16 x 6 x 40 calls, half of them to a
# target whose entry is taken); learning, ~200
[ "$one" -le $((2 * alone + 100)) ] ||
	fail "one sleeping thread: $one stops against $alone alone"
[ "$four" -le $((2 * alone + 200)) ] ||
	fail "four sleeping threads: $four stops against $alone alone"
# many threads taking entries over at once: the same sums
stops 4 2 6 >/dev/null || exit 1
# ... with each entry left half written for 2 ms (its translation stored,
# its original not yet) whenever another thread may probe it: a probe
# that meets it must be caught by the entry's check of its original, and
# while one thread ran alone the entries skipped that check, so the
# second thread's entry must have put it back in every entry (a build
# that never does gives wrong sums in each such run)
for i in 1 2 3; do
	BTRACE_TEST_TABLE_STALL_US=2000 stops 4 1 12 >/dev/null || exit 1
done
echo "ok: stops stay within a bound of the single thread's; entries met half written are caught"
