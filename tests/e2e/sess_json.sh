#!/usr/bin/env bash
# One printer, JSON everywhere: the session's last/j, calls/j, insn/j,
# threads/j and info/j (and --json) print the documents of the commands:
# last/j equals btrace show --json of the trace saved at the same stop, and
# calls/j show --calls --json's.  run -i takes -ex and --batch as attach
# does, and run --calls prints what the session's calls prints.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/crash_null

# A launched program's session driven by a script, every report JSON.
"$BTRACE" run -i --batch --json -o "$work/docs" -ex "save $work/t.trace" \
	-ex 'last/j 10' -ex 'calls/j 5' -ex 'insn/j 6' -ex 'threads/j' \
	-ex 'info --json' -ex 'last 3' -- "$prog" >"$work/out" 2>"$work/err"
rc=$?
expect_rc 0
[ -s "$work/out" ] && fail "run -i -o: output on stdout: $(cat "$work/out")"
grep -q "^btrace: killed process" "$work/err" && fail "a note in JSON mode went to stdout's place"
"$BTRACE" show --json --last 10 "$work/t.trace" >"$work/show.json" || fail "show --json"
"$BTRACE" show --json --calls --last 5 "$work/t.trace" >"$work/calls.json" ||
	fail "show --calls --json"
python3 - "$work/docs" "$work/show.json" "$work/calls.json" <<'PY' || fail "session JSON"
import json, sys

text = open(sys.argv[1]).read()
dec, docs, at = json.JSONDecoder(), [], 0
while at < len(text):
    doc, at = dec.raw_decode(text, at)
    docs.append(doc)
    while at < len(text) and text[at].isspace():
        at += 1
stop, last, calls, insn, threads, info, last3 = docs
show = json.load(open(sys.argv[2]))
show_calls = json.load(open(sys.argv[3]))

assert stop["stop"]["signal"] == "SIGSEGV", stop["stop"]
assert last == show, "last/j differs from show --json:\n%s\n%s" % (last, show)
assert len(last["threads"][0]["branches"]) == 10
assert calls == show_calls, "calls/j differs:\n%s\n%s" % (calls, show_calls)
segs = calls["threads"][0]["calls"]
assert len(segs) == 5 and segs[-1]["func"] == "store_value", segs
assert segs[-2]["func"] == "walk" and segs[-1]["depth"] == segs[-2]["depth"] + 1
ins = insn["threads"][0]["insns"]
assert len(ins) == 6 and all(i["addr"].startswith("0x") for i in ins), ins
assert ins[-1]["sym"].startswith("store_value"), ins[-1]
th = threads["threads"]
assert len(th) == 1 and th[0]["current"] and th[0]["pc"] == stop["stop"]["pc"], th
assert info["state"] == "stopped" and info["origin"] == "launched", info
assert info["threads"][0]["decoded"] > 0 and info["breakpoints"] == []
assert len(last3["threads"][0]["branches"]) == 3, "--json: 'last' prints JSON"
for d in docs:
    assert d["btrace"] == 1 and d["backend"] == show["backend"]
PY

# run --calls prints the call history as the session's calls does.
rows() {	# file [header]: the rows after each header (the call history's),
	# without the durations (timing: each run has its own)
	awk -v h="^${2:-call history of thread}" \
		'$0 ~ h { on = 1; next } on && /^ +-[0-9]/ { print; next } { on = 0 }' "$1" |
		sed -E 's/, [0-9.]+ (ns|us|ms|s)\)/)/'
}
"$BTRACE" run --calls --last 12 --no-color -- "$prog" >"$work/run.txt" 2>/dev/null
rc=$?
expect_rc 139
"$BTRACE" run -i --batch --no-color -ex 'calls 12' -- "$prog" >"$work/sess.txt" 2>/dev/null
rows "$work/run.txt" >"$work/run.rows"
rows "$work/sess.txt" >"$work/sess.rows"
[ "$(wc -l <"$work/run.rows")" = 12 ] || { cat "$work/run.txt"; fail "run --calls: not 12 segments"; }
diff -u "$work/run.rows" "$work/sess.rows" || fail "run --calls differs from the session's calls"
grep -q '^stop: SIGSEGV' "$work/run.txt" || fail "run --calls: no stop"
# ... and show --calls of a saved trace, and attach --calls at its stop.
"$BTRACE" show --calls --last 12 --no-color "$work/t.trace" >"$work/show.txt"
rows "$work/show.txt" | diff -u "$work/run.rows" - || fail "show --calls differs"

# run -i --batch -ex: the commands run at the stop, then btrace kills it.
"$BTRACE" run -i --batch --no-color -ex 'last 5' -- "$prog" >"$work/b.txt" 2>&1
rc=$?
expect_rc 0
grep -q '^last 5 branches of thread' "$work/b.txt" || { cat "$work/b.txt"; fail "run -i --batch -ex 'last 5'"; }
[ "$(rows "$work/b.txt" 'last 5 branches' | wc -l)" = 5 ] || fail "last 5: rows missing"
grep -q '^killed process' "$work/b.txt" || fail "run --batch did not end the program"
# -ex alone implies -i.
"$BTRACE" run --batch -ex 'threads' -- "$prog" >"$work/b.txt" 2>&1 ||
	{ cat "$work/b.txt"; fail "run --batch -ex without -i"; }
grep -qE '^\* [0-9]+  0x[0-9a-f]+  store_value' "$work/b.txt" || { cat "$work/b.txt"; fail "threads"; }
no_leftovers "$prog"

# attach: --json, --calls at the stop, and -ex 'last/j'.
"$TARGETS/sess_checksum" 100000 2000 >"$work/sum.out" 2>&1 &
victim=$!
for i in $(seq 1 200); do
	grep -q ready "$work/sum.out" && break
	sleep 0.01
done
"$BTRACE" attach --batch --json --calls --last 3 --break sess_round_end \
	-ex 'last/j 4' "$victim" >"$work/att" 2>"$work/err"
rc=$?
kill "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
expect_rc 0
python3 - "$work/att" <<'PY' || { cat "$work/att" "$work/err"; fail "attach --json"; }
import json, sys
text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
stop, at = dec.raw_decode(text)
last = json.loads(text[at:])
assert stop["stop"]["reason"] == "break", stop["stop"]
calls = stop["threads"][0]["calls"]
assert len(calls) == 3 and calls[-1]["func"] == "sess_round_end", calls
br = last["threads"][0]["branches"]
assert len(br) == 4 and br[-1]["to_sym"] == "sess_round_end", br[-1]
PY
exit 0
