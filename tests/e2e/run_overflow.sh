#!/usr/bin/env bash
# btrace run with a ring too small for the whole run: the overwritten
# branches are counted and shown as a leading gap, what is left is the most
# recent, and --last larger than what is left shows all of it.  The
# recorder's ring in the process wraps too (a guard page, the record moved
# to the top with a place to decode from): what it keeps ends the same way,
# after one leading gap, and holds at least 8x the fast mode's branches.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/recursion

btrace_json --buffer-size 4K --last 100000 --soft-mode fast -- "$prog"
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
fast_kept=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["threads"][0]["branches"]) - 1)' "$work/out.json")

# Branch records against branch records: without the recorder's time
# records (where the tracer held the thread, as many as timing decides).
BTRACE_REC_TIME=0 btrace_json --buffer-size 4K --last 100000 --soft-mode record -- "$prog"
expect_rc 139
no_leftovers "$prog"
python3 - "$work/out.json" "$fast_kept" <<'PY' || exit 1
import sys, btcheck as c
doc, fast_kept = c.load(sys.argv[1]), int(sys.argv[2])
th = [t for t in doc["threads"] if t["tid"] == doc["stop"]["tid"]][0]
br = th["branches"]
assert br[0]["kind"] == "gap" and br[0]["gap"] == "overflow", br[0]
assert not any(b["kind"] == "gap" for b in br[1:]), br
assert len(br) - 1 >= 8 * fast_kept, (len(br), fast_kept)
assert len(br) - 1 < doc["stats"]["branches"], (len(br), doc["stats"])
c.expect_last(br, "call", "descend", "descend")
PY
