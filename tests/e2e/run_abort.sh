#!/usr/bin/env bash
# btrace run on abort(): SIGABRT raised by the program itself, the path
# from the failed check into abort, exit status 128+6.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/abort

native=$(native_status "$prog")
[ "$native" = 134 ] || fail "abort exits $native natively"
btrace_json --last 40 -- "$prog"
expect_rc "$native"
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGABRT")
br = c.stopped_thread(doc)
c.expect_sequence(br, [("call", "main", "check"),
                       ("call", "check", "abort")])
# abort() raises it in the C library, through pthread_kill.
c.expect_sequence(br, [("call", "check", "abort"), ("call", "abort", "raise")])
assert "pthread_kill" in doc["stop"]["sym"] or \
    c.func(doc["stop"]["sym"]) == "raise", doc["stop"]
assert doc["stop"]["addr"] is None, doc["stop"]
PY
