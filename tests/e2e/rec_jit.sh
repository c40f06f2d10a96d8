#!/usr/bin/env bash
# Real programs whose code is generated at run time, under the recorder,
# which translates it (write-protecting the pages it translated, dropping
# their translations when the program writes them): node (V8 runs even
# its builtins from anonymous memory, and writes its code pages as it
# compiles) and grep -P (PCRE2's JIT).  Each prints what it prints
# untraced and exits 0, the recorder stopping less than once per hundred
# branches (stepping such code stopped at every instruction).  The stats
# count the branches decoded, and what a ring overwrote is never decoded
# (code the JIT dropped included): the default 1 MiB kept 0.97 M of node's
# branches for its 9.7 k stops, so the ring is 8 MiB here (4.7 M).
. "$TESTDIR/e2e/lib/common.sh"
need_cmd node grep python3
fails=0

check() {	# what it must print, then the program
	local want=$1 out rc
	shift
	out=$("$BTRACE" run --soft-mode record --buffer-size 8M --json \
		--last 4 -- "$@" \
		2>"$work/err")
	rc=$?
	if [ $rc = 0 ] && python3 - "$out" "$want" "$*" <<'PY'
import json, sys
text, want, what = sys.argv[1:]
assert text.startswith(want), (text[:80], want)
doc = json.loads(text[len(want):])
assert doc["stop"]["reason"] == "exit" and doc["stop"]["status"] == 0, doc["stop"]
st = doc["stats"]
assert st["branches"] > 100000, st
assert st["stops"] < st["branches"] / 100, st
print("ok  ", what, st)
PY
	then :; else
		echo "FAIL $* (exit $rc)"; head -5 "$work/err"
		fails=$((fails + 1))
	fi
}

want=$(node -e 'let s = 0; for (let i = 0; i < 100000; i++) s += i % 7; console.log(s)')
check "$want"$'\n' node -e 'let s = 0; for (let i = 0; i < 100000; i++) s += i % 7; console.log(s)'
seq 1 3000 | sed 's/$/ foo bar/' >"$work/lines.txt"
want=$(grep -P '^(\d*7)\s+fo+' "$work/lines.txt")
check "$want"$'\n' grep -P '^(\d*7)\s+fo+' "$work/lines.txt"
[ $fails = 0 ]
