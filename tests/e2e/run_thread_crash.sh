#!/usr/bin/env bash
# btrace run on a thread that crashes while another spins: the stop names
# the crashing thread (not the main one) and shows its own branches.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/thread_crash

btrace_json --last 16 -- "$prog"
expect_rc 139
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="crash_here",
              src="thread_crash.c:23")
assert doc["stop"]["tid"] != doc["pid"], doc["stop"]
br = c.stopped_thread(doc)
c.expect_last(br, "call", "crasher", "crash_here")
# Only the crashing thread's branches: the spinner's loop is not there.
assert not any(c.func(b["from_sym"]) in ("spinner", "main") for b in br), br
assert doc["stats"]["branches"] > len(br)
PY
