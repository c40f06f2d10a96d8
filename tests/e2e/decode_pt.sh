#!/usr/bin/env bash
# btrace decode on a synthesized PT stream: every branch and every
# instruction of the ground truth, the last N, JSON, and usage errors.
. "$TESTDIR/e2e/lib/common.sh"
set -e
dir=$work

"$TOOLS/ptsynth" "$dir" 7 3000 1024 >/dev/null
raw="--raw $dir/code.bin:0x400000"

# Branches (gaps as "[gap]") against the truth.
"$BTRACE" decode --pt "$dir/trace.pt" $raw --all >"$dir/out.txt"
branch_pairs <"$dir/out.txt" >"$dir/got.txt"
diff -u "$dir/truth.txt" "$dir/got.txt" | head -20
cmp -s "$dir/truth.txt" "$dir/got.txt"

# The default is the last 32.
"$BTRACE" decode --pt "$dir/trace.pt" $raw | branch_pairs >"$dir/last.txt"
[ "$(wc -l <"$dir/last.txt")" = 32 ]
tail -n 32 "$dir/got.txt" | cmp -s - "$dir/last.txt"

# Every instruction: the truth's, and none past the end of the trace.
"$BTRACE" decode --pt "$dir/trace.pt" $raw --all --insn >"$dir/insn.txt"
awk '/^  0x/ { print $1 } /^  -- gap:/ { print "[gap]" }' "$dir/insn.txt" | cmp -s - "$dir/insns.txt"
# ... each with its disassembly.
grep -Eq '^  0x[0-9a-f]+ +call 0x' "$dir/insn.txt"
grep -Eq '^  0x[0-9a-f]+ +ret' "$dir/insn.txt"

# JSON parses and holds the same branches.
"$BTRACE" decode --pt "$dir/trace.pt" $raw --all --json >"$dir/out.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = [l.strip() for l in open(sys.argv[2])]
got = ["[gap]" if b["kind"] == "gap" else "%s -> %s" % (b["from"], b["to"])
       for b in d["threads"][0]["branches"]]
assert got == want, "json differs"
' "$dir/out.json" "$dir/truth.txt"

# Usage errors exit 2, bad input 1, with one line of message.
set +e
"$BTRACE" decode --raw nocolon 2>"$dir/err"; [ $? = 2 ] || exit 1
"$BTRACE" decode --pt /nonexistent $raw 2>"$dir/err"; [ $? = 1 ] || exit 1
[ "$(wc -l <"$dir/err")" = 1 ] || exit 1
echo ok
