#!/usr/bin/env bash
# Output a tool can parse: -o FILE takes the report (text or JSON) and
# leaves the program's standard output alone, for run, show, decode and
# attach; without -o, the JSON document follows the program's own output.
# A bad -o is one line and exit status 1, before anything runs.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/prints

# run -o FILE --json: stdout is exactly the program's; FILE parses.
"$BTRACE" run -o "$work/r.json" --json --last 8 -- "$prog" 4 \
	>"$work/out" 2>"$work/err"
rc=$?
expect_rc 0
"$prog" 4 >"$work/native"
cmp -s "$work/native" "$work/out" ||
	{ diff -u "$work/native" "$work/out"; fail "run -o: stdout is not the program's own"; }
python3 - "$work/r.json" <<'PY' || fail "run -o: the file"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stop"]["reason"] == "exit" and d["stop"]["status"] == 0, d["stop"]
br = d["threads"][0]["branches"]
assert len(br) == 8, len(br)
assert d["stats"]["branches"] > 0
PY

# The same with --output and text: the report is in the file, not on stdout.
"$BTRACE" run --output "$work/r.txt" --last 4 -- "$prog" 2 >"$work/out" 2>/dev/null
grep -q '^last 4 branches of thread' "$work/r.txt" || fail "run --output: no report in the file"
grep -q '^stop: exit with status 0' "$work/r.txt" || fail "run --output: no stop in the file"
grep -q 'branches\|stop:' "$work/out" && fail "run --output: the report is on stdout too"

# Without -o: the program's lines, then one JSON document, on one stdout.
"$BTRACE" run --json --last 4 -- "$prog" 2 >"$work/mixed" 2>/dev/null
python3 - "$work/mixed" <<'PY' || fail "run --json: program output then JSON"
import json, sys
text = open(sys.argv[1]).read()
prog, doc = text.split("{", 1)
assert prog.splitlines()[:2] == ["line 1", "line 2"], prog
d = json.loads("{" + doc)
assert len(d["threads"][0]["branches"]) == 4
PY

# A program that prints through the C library and the dynamic loader:
# python3 -c 'print(1)' (about 2 s under the recorder).
if command -v python3 >/dev/null; then
	"$BTRACE" run -o "$work/py.json" --json -- python3 -c 'print(1)' \
		>"$work/out" 2>"$work/err"
	rc=$?
	expect_rc 0
	[ "$(cat "$work/out")" = 1 ] || fail "python3: stdout is '$(cat "$work/out")', not 1"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["stop"]["reason"] == "exit"' \
		"$work/py.json" || fail "python3: the -o file does not parse"
fi

# show and decode take -o too.
"$BTRACE" run --save "$work/t.trace" --last 4 -- "$TARGETS/crash_null" >/dev/null 2>&1
"$BTRACE" show -o "$work/s.json" --json --last 6 "$work/t.trace" >"$work/out" ||
	fail "show -o"
[ -s "$work/out" ] && fail "show -o: output on stdout"
python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["threads"][0]["branches"]) == 6' \
	"$work/s.json" || fail "show -o: the file"
mkdir "$work/pt" && "$TOOLS/ptsynth" "$work/pt" 7 300 1024 >/dev/null
"$BTRACE" decode --pt "$work/pt/trace.pt" --raw "$work/pt/code.bin:0x400000" \
	-o "$work/d.json" --json >"$work/out" || fail "decode -o"
[ -s "$work/out" ] && fail "decode -o: output on stdout"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["threads"][0]["branches"]' \
	"$work/d.json" || fail "decode -o: the file"

# attach -o: the session's reports go to the file.
"$TARGETS/sleeper" >/dev/null 2>&1 &
victim=$!
sleep 0.2
timeout -s INT 3 "$BTRACE" attach --batch -o "$work/a.txt" -ex 'last 3' \
	"$victim" >"$work/out" 2>"$work/err"
kill "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
grep -q '^stop: interrupted' "$work/a.txt" || { cat "$work/err"; fail "attach -o: no stop in the file"; }
grep -q "^detached from process $victim" "$work/a.txt" || fail "attach -o: no detach in the file"
[ -s "$work/out" ] && fail "attach -o: output on stdout: $(cat "$work/out")"

# A bad -o: one line, exit 1, and the program never ran.
for cmd in "run --json -o $work/no/such/dir/f -- touch $work/ran" \
	   "show -o $work/no/such/dir/f $work/t.trace" \
	   "attach -o $work/no/such/dir/f 1"; do
	# shellcheck disable=SC2086
	"$BTRACE" $cmd >"$work/out" 2>"$work/err" </dev/null
	rc=$?
	expect_rc 1
	[ "$(wc -l <"$work/err")" = 1 ] || fail "btrace $cmd: $(cat "$work/err")"
	grep -q "^btrace: cannot write '$work/no/such/dir/f': No such file or directory$" "$work/err" ||
		fail "btrace $cmd: $(cat "$work/err")"
done
[ -e "$work/ran" ] && fail "run with a bad -o ran the program"
"$BTRACE" run -o '' -- /bin/true >/dev/null 2>"$work/err"
rc=$?
expect_rc 2
no_leftovers "$prog"
exit 0
