#!/usr/bin/env bash
# btrace run on a program that exits normally: its exit status passes
# through, the stop is an exit, and its last calls are there.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/exit_status

native=$(native_status "$prog")
[ "$native" = 3 ] || fail "exit_status exits $native natively"
btrace_json --last 2000 -- "$prog"
expect_rc "$native"
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "exit", status=3)
assert doc["stop"]["signal"] is None, doc["stop"]
br = c.stopped_thread(doc)
c.expect_sequence(br, [("call", "main", "count_odd"),
                       ("return", "count_odd", "main"),
                       ("return", "main", None), ("call", None, "exit")])
PY
