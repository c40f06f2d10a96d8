#!/usr/bin/env bash
# Trace files end to end: run --save then show gives the live output (text
# and JSON); the file is 0600; it decodes and names functions with the
# binary gone; --save-on-crash writes only for a crash; truncated, corrupt
# and foreign files give clear errors.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/crash_null

"$BTRACE" run --no-color --last 16 --backend soft --save "$work/a.trace" \
	-- "$prog" >"$work/live.txt" 2>"$work/err"
rc=$?
expect_rc 139
grep -q "saved to $work/a.trace" "$work/err" || fail "no 'saved' message"
[ "$(stat -c %a "$work/a.trace")" = 600 ] || fail "mode $(stat -c %a "$work/a.trace")"
"$BTRACE" show --no-color --last 16 "$work/a.trace" >"$work/show.txt" 2>"$work/err" ||
	{ cat "$work/err"; fail "show failed"; }
diff -u "$work/live.txt" "$work/show.txt" || fail "show differs from the live output"
grep -q store_value "$work/show.txt" || fail "no store_value in show"

# JSON: the same document as live.
"$BTRACE" run --json --last 16 --backend soft --save "$work/b.trace" \
	-- "$prog" >"$work/live.json" 2>/dev/null
"$BTRACE" show --json --last 16 "$work/b.trace" >"$work/show.json" ||
	fail "show --json failed"
python3 - "$work/live.json" "$work/show.json" <<'PY' || exit 1
import json, sys
live, show = (json.load(open(p)) for p in sys.argv[1:3])
assert live == show, "JSON differs:\n%s\n%s" % (live, show)
br = show["threads"][0]["branches"]
assert len(br) == 16 and br[-1]["to_sym"] == "store_value", br[-1]
assert show["stop"]["signal"] == "SIGSEGV", show["stop"]
PY

# --insn: the instructions of the last blocks, ending at the fault.
"$BTRACE" show --insn --last 2 "$work/a.trace" >"$work/insn.txt" ||
	fail "show --insn failed"
grep -q "store_value" "$work/insn.txt" || fail "no store_value in --insn"
[ "$(grep -c '^  0x' "$work/insn.txt")" -ge 4 ] || fail "too few instructions"

# Without the binary: code and function names come from the file.
cp "$prog" "$work/gone"
"$BTRACE" run --no-color --backend soft --last 8 --save "$work/c.trace" \
	-- "$work/gone" >/dev/null 2>&1
rm -f "$work/gone"
"$BTRACE" show --no-color --last 8 "$work/c.trace" >"$work/gone.txt" 2>&1 ||
	{ cat "$work/gone.txt"; fail "show without the binary failed"; }
grep -q "walk" "$work/gone.txt" && grep -q "store_value" "$work/gone.txt" ||
	{ cat "$work/gone.txt"; fail "no saved symbols without the binary"; }

# --save-on-crash: a file for a crash, named after the program, and none
# for a clean exit.
mkdir "$work/crashes"
"$BTRACE" run --backend soft --save-on-crash "$work/crashes" -- "$prog" \
	>/dev/null 2>"$work/err"
f=$(ls "$work/crashes"/btrace-crash_null-*.trace 2>/dev/null)
[ -n "$f" ] || { cat "$work/err"; fail "no trace saved on crash"; }
grep -qF "$f" "$work/err" || fail "the path is not printed"
"$BTRACE" show --last 4 "$f" >/dev/null || fail "cannot show $f"
"$BTRACE" run --backend soft --save-on-crash "$work/crashes" -- \
	"$TARGETS/exit_status" >/dev/null 2>&1
[ "$(ls "$work/crashes" | wc -l)" = 1 ] || fail "a trace saved without a crash"
no_leftovers "$prog"

# attach --save: saved at the first stop (here Ctrl-C), mode 0600; and
# the session's save command.
sleep 30 &
sleeper=$!
sleep 0.2
timeout -s INT 2 "$BTRACE" attach --backend soft --batch --save "$work/att.trace" \
	"$sleeper" >/dev/null 2>"$work/err"
[ "$(stat -c %a "$work/att.trace" 2>/dev/null)" = 600 ] ||
	{ cat "$work/err"; kill "$sleeper"; fail "attach --save wrote no 0600 file"; }
"$BTRACE" show --json "$work/att.trace" >"$work/att.json" ||
	{ kill "$sleeper"; fail "show of attach --save"; }
grep -q '"reason": "interrupt"' "$work/att.json" || { kill "$sleeper"; fail "attach --save: not the interrupt stop"; }
(sleep 2; kill -INT "$(pgrep -f "btrace attach --backend soft $sleeper")") &
killer=$!
printf 'save %s\nquit\n' "$work/sess.trace" |
	"$BTRACE" attach --backend soft "$sleeper" >/dev/null 2>"$work/err"
wait "$killer"
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null
"$BTRACE" show "$work/sess.trace" >/dev/null 2>&1 ||
	{ cat "$work/err"; fail "the session's save"; }

# Bad files: one clear line, exit 1, never a crash.
size=$(stat -c %s "$work/a.trace")
for n in 0 5 31 100 $((size / 2)) $((size - 1)); do
	head -c "$n" "$work/a.trace" >"$work/cut.trace"
	"$BTRACE" show "$work/cut.trace" >/dev/null 2>"$work/err"
	rc=$?
	expect_rc 1
	grep -q "^btrace: cannot load '$work/cut.trace': corrupt trace file: truncated" \
		"$work/err" || { cat "$work/err"; fail "truncated at $n: unclear error"; }
done
cp "$work/a.trace" "$work/bad.trace"
# flip every bit of the middle byte (a fixed value may be there already)
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))' \
	"$work/bad.trace" $((size / 2))
"$BTRACE" show "$work/bad.trace" >/dev/null 2>"$work/err"
rc=$?
expect_rc 1
grep -q "corrupt trace file: .*checksum mismatch" "$work/err" ||
	{ cat "$work/err"; fail "corruption not reported"; }
"$BTRACE" show "$prog" >/dev/null 2>"$work/err"
rc=$?
expect_rc 1
grep -q "not a btrace trace file" "$work/err" || { cat "$work/err"; fail "foreign file"; }
"$BTRACE" show "$work/none.trace" >/dev/null 2>"$work/err"
rc=$?
expect_rc 1
grep -q "No such file" "$work/err" || { cat "$work/err"; fail "missing file"; }
"$BTRACE" show >/dev/null 2>&1
rc=$?
expect_rc 2
exit 0
