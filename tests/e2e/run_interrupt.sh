#!/usr/bin/env bash
# btrace run interrupted (SIGINT to btrace, as Ctrl-C): the stop is an
# interrupt of the waiting program, its branches are shown, it gets the
# SIGINT (exit 130); then its program killed from outside (SIGKILL, 137).
# Nothing is left running.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/sleeper

# A background job of a script starts with SIGINT ignored, and so would
# the program: give both the default a terminal's foreground job has.
env --default-signal=INT "$BTRACE" run --json -- "$prog" >"$work/out.json" 2>"$work/err" &
bt=$!
for _ in $(seq 300); do
	grep -q ready "$work/err" && break
	sleep 0.1
done
grep -q ready "$work/err" || { kill -KILL $bt; fail "sleeper never got ready"; }
sleep 0.3
kill -INT $bt
for _ in $(seq 300); do
	kill -0 $bt 2>/dev/null || break
	sleep 0.1
done
if kill -0 $bt 2>/dev/null; then
	kill -KILL $bt
	fail "btrace still runs 30 s after SIGINT"
fi
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
                       ("call", "wait_forever", None)])
# Stopped in the C library's pause(), waiting.
assert "pause" in br[-1]["to_sym"] and "pause" in doc["stop"]["sym"], \
    (br[-1], doc["stop"])
assert doc["stop"]["tid"] == doc["pid"]
PY

# The program killed from outside (SIGKILL): btrace still shows how it got
# there and exits as a shell would, 128+9.
: >"$work/err"
"$BTRACE" run --json -- "$prog" >"$work/out.json" 2>"$work/err" &
bt=$!
for _ in $(seq 300); do
	grep -q ready "$work/err" && break
	sleep 0.1
done
child=$(pgrep -P $bt)
[ -n "$child" ] || { kill -KILL $bt; fail "no child of btrace"; }
kill -KILL "$child"
wait $bt
rc=$?
no_leftovers "$prog"
[ "$rc" = 137 ] || { cat "$work/err"; fail "btrace exited $rc, expected 137"; }
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "killed", signal="SIGKILL")
c.expect_sequence(c.stopped_thread(doc), [("call", "main", "wait_forever")])
PY
