#!/usr/bin/env bash
# btrace run with a ring too small for the whole run: the overwritten
# branches are counted and shown as a leading gap, what is left is the most
# recent, and --last larger than what is left shows all of it.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/recursion

btrace_json --buffer-size 4K --last 100000 -- "$prog"
expect_rc 139
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
th = [t for t in doc["threads"] if t["tid"] == doc["stop"]["tid"]][0]
br = th["branches"]
assert th["lost"] > 1000, th["lost"]
assert br[0]["kind"] == "gap" and br[0]["gap"] == "overflow", br[0]
assert not any(b["kind"] == "gap" for b in br[1:]), br
# 4 KiB hold about a hundred 40-byte records.
assert 50 <= len(br) - 1 <= 4096 // 32, len(br)
assert th["lost"] + len(br) - 1 == doc["stats"]["branches"], \
    (th["lost"], len(br), doc["stats"])
c.expect_last(br, "call", "descend", "descend")
PY
