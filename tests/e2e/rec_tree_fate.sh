#!/usr/bin/env bash
# Under --follow-fork a process of the tree killed by another process
# (kill, a pool's terminate(), SIGPIPE of a pipeline's writer) dies as it
# would and the rest of the tree is traced on to the real stop; a crash
# of its own (a fault, abort(), a kill of its own pid) is the stop, shown
# with that process's history.  Either way the tree's exit status and
# output are those of an untraced run.  The recorder and the fast mode.
# - targets/tree_kill: the parent SIGTERMs a live worker, then crashes
#   (the stop: the parent's crash, parent_only() in its history) or exits
#   5; or worker 2 aborts, or kills itself: the stop is that worker's,
#   worker_two_end() in its history.
# - a child that execs and crashes (crash_null under bash): its history
#   and its stop symbolized against its own program, not the shell.
# - python3: a Pool in a with statement (terminate()) and a Process
#   terminated while it sleeps; bash: `sleep & kill`; `yes | head -1`.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 bash yes head sleep
prog=$TARGETS/tree_kill
fails=0

# mode, how, checks (python over the report): traced like untraced?
tree_case() {
	local mode=$1 how=$2 want got rc nrc
	shift 2
	want=$("$prog" $how 2>/dev/null)
	nrc=$?
	got=$(timeout 300 "$BTRACE" run --soft-mode "$mode" --follow-fork \
		--json -o "$work/report" --last 500 -- "$prog" $how 2>"$work/err")
	rc=$?
	if [ $rc != $nrc ] || [ "$got" != "$want" ]; then
		echo "FAIL $mode '$how': exit $rc (untraced $nrc), '$got' ('$want')"
		cat "$work/err"
		fails=$((fails + 1))
		return
	fi
	python3 - "$work/report" "$mode '$how'" "$@" <<'PY' || fails=$((fails + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
name, want, sym = sys.argv[2], sys.argv[3], sys.argv[4]
stop = doc["stop"]
seen = "%s %s" % (stop["reason"], stop["signal"] or stop["status"])
if seen != want:
    sys.exit("FAIL %s: stop %s, want %s" % (name, seen, want))
root = doc.get("root_pid", doc["pid"])
ours = stop["tid"] == root
if ours != (sym == "parent_only") or doc["pid"] != stop["tid"]:
    sys.exit("FAIL %s: stop in %d, the report's pid %d, the traced pid %d" %
             (name, stop["tid"], doc["pid"], root))
sender = (stop.get("siginfo") or {}).get("sender")
if sender and sender["pid"] != stop["tid"]:
    sys.exit("FAIL %s: a signal sent by %s is the stop" % (name, sender))
th = [t for t in doc["threads"] if t["tid"] == stop["tid"]]
syms = [b["from_sym"] or "" for b in th[0]["branches"]] if th else []
if not any(s.startswith(sym) for s in syms):
    sys.exit("FAIL %s: %s not in the history of %d" % (name, sym, stop["tid"]))
print("ok   %s: %s in %s, %s in its history" %
      (name, seen, "the parent" if ours else "the worker", sym))
PY
}

for mode in record fast; do
	tree_case $mode "" "signal SIGSEGV" parent_only
	tree_case $mode exit "exit 5" parent_only
	tree_case $mode abort "signal SIGABRT" worker_two_end
	tree_case $mode selfkill "signal SIGTERM" worker_two_end
done

# A crash in an exec'd child: the report is that process's, with its own
# symbols, source lines and code; the shell goes on as untraced.
for mode in record fast; do
	got=$(timeout 300 "$BTRACE" run --soft-mode $mode --follow-fork --json \
		-o "$work/report" --last 50 -- bash -c "$TARGETS/crash_null; echo after" \
		2>"$work/err")
	rc=$?
	if [ $rc != 0 ] || [ "$got" != after ]; then
		echo "FAIL $mode exec'd crash: exit $rc, '$got'"; cat "$work/err"
		fails=$((fails + 1))
		continue
	fi
	python3 - "$work/report" $mode <<'PY' || fails=$((fails + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
stop = doc["stop"]
assert stop["reason"] == "signal" and stop["signal"] == "SIGSEGV", stop
assert doc["pid"] == stop["tid"] != doc["root_pid"], (doc["pid"], doc["root_pid"])
assert (stop.get("sym") or "").startswith("store_value"), stop
br = doc["threads"][0]["branches"]
last = br[-1]
assert last["to_sym"] == "store_value" and last["to_src"].startswith("crash_null.c:"), last
assert any(b["from_sym"].startswith("walk+") for b in br), [b["from_sym"] for b in br]
print("ok   %s: exec'd crash_null's stop in %d (bash %d): %s, %s" %
      (sys.argv[2], stop["tid"], doc["root_pid"], stop["sym"], last["to_src"]))
PY
done

cat >"$work/pool.py" <<'PY'
import multiprocessing, time
def sq(x):
    return x * x
if __name__ == "__main__":
    # leaving the with statement terminate()s the workers still alive
    with multiprocessing.Pool(2) as p:
        print(sum(p.map(sq, range(200))))
    q = multiprocessing.Process(target=time.sleep, args=(60,))
    q.start()
    q.terminate()
    q.join()
    print("exitcode", q.exitcode)
PY

# name, then the command: exit 0 and output as untraced, the stop its exit
same() {
	follow_same "$@" || fails=$((fails + 1))
}

same "pool terminate" python3 "$work/pool.py"
same "sleep & kill" bash -c 'sleep 60 & kill $!; wait $!; echo $?'
same "yes | head" bash -c 'yes | head -1'
[ $fails = 0 ]
