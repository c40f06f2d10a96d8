#!/usr/bin/env bash
# btrace run interrupted (SIGINT to btrace, as Ctrl-C): the stop is an
# interrupt of the waiting program, its branches are shown, and nothing is
# left running.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/sleeper

"$BTRACE" run --json -- "$prog" >"$work/out.json" 2>"$work/err" &
bt=$!
for _ in $(seq 300); do
	grep -q ready "$work/err" && break
	sleep 0.1
done
grep -q ready "$work/err" || { kill -KILL $bt; fail "sleeper never got ready"; }
sleep 0.3
kill -INT $bt
wait $bt
rc=$?
no_leftovers "$prog"
[ "$rc" = 130 ] || { cat "$work/err"; fail "btrace exited $rc, expected 130"; }
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "interrupt")
br = c.stopped_thread(doc)
c.expect_sequence(br, [("call", "main", "wait_forever"),
                       ("call", "wait_forever", "pause")])
PY
