#!/usr/bin/env bash
# Process trees under the recorder (--follow-fork): a fork child goes on
# in a copy of its parent's recorder, a vfork child runs its parent's
# translations with rings of its own until its exec, a program exec'd
# starts a fresh one.
# - softdiff -k against single-stepping, every thread of every process
#   branch for branch: targets/rec_fork (parent and child both run code
#   translated before the fork, then the parent crashes after the child
#   exited; or the child crashes first: its stop is the one reported, and
#   where its parent had got to then is timing, softdiff -t),
#   targets/rec_vfork (vfork + exec of /bin/true: its loader's start),
#   targets/rec_spawn (posix_spawn while a second thread runs: children
#   that exec, one with a file action, one whose exec fails and exits;
#   its worker ends with the exit, softdiff -t), targets/fast_mix thread
#   (a parent that ran a second thread forks a child that starts one:
#   the child's lookup entries are its parent's, and the second thread
#   must find them all checking their original again).  rec_spawn recorded
#   stops less than once per 50 taken branches: its vfork children are
#   not stepped (they were: 0.15).
# - python3 forking and exec'ing /bin/true, and through subprocess
#   (vfork), twice each: exit 0 and the output of an untraced run,
#   the stop the program's exit (a trap of the translation the program
#   saw would be a SIGTRAP stop).
# - real trees, output equal to an untraced run: a bash loop of gzip | wc
#   (ptrace stops per taken branch of the whole tree below 0.02: no
#   process is stepped), a multiprocessing Pool of 2.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 bash gzip wc setarch
fails=0

softdiff_check -n -T 300 -k -m record -- "$TARGETS/rec_fork"
softdiff_check -n -T 300 -k -t -m record -- "$TARGETS/rec_fork" child
softdiff_check -n -T 300 -k -m record -- "$TARGETS/rec_vfork" true
softdiff_check -n -T 300 -k -t -m record -- "$TARGETS/fast_mix" thread
softdiff_check -n -T 300 -k -t -m record -- "$TARGETS/rec_spawn"
python3 - "$work/softdiff.log" <<'PY' || fails=$((fails + 1))
import re, sys
m = re.search(r"^record .* (\d+) branches, (\d+) stops", open(sys.argv[1]).read(), re.M)
if not m or int(m.group(2)) >= 0.02 * int(m.group(1)):
    sys.exit("FAIL rec_spawn: stops per branch: %s" % (m and m.group(0)))
PY

# The crash of a child is the stop, shown with the child's history; the
# tree then meets its fate as without btrace (the parent reports it and
# crashes: 139).
"$BTRACE" run --follow-fork -- "$TARGETS/rec_fork" child >"$work/out" 2>&1
rc=$?
grep -q "^stop: SIGSEGV .* in thread" "$work/out" &&
	grep -q "child killed 11" "$work/out" &&
	grep -q "crash+0x[0-9a-f]* *rec_fork.c" "$work/out" && [ $rc = 139 ] ||
	{ echo "FAIL rec_fork child: exit $rc"; cat "$work/out"; fails=$((fails + 1)); }

cat >"$work/forkexec.py" <<'PY'
import os
pid = os.fork()
if pid == 0:
    os.execv("/bin/true", ["/bin/true"])
print("child", os.waitpid(pid, 0)[1])
PY
cat >"$work/spawn.py" <<'PY'
import subprocess
print(subprocess.run(["/bin/true"]).returncode, subprocess.run(["/bin/false"]).returncode)
PY
cat >"$work/pool.py" <<'PY'
import multiprocessing
def sq(x):
    return x * x
if __name__ == "__main__":
    # close and join: the workers end on their own (the with statement's
    # terminate(), SIGTERM to those still alive: rec_tree_fate.sh)
    p = multiprocessing.Pool(2)
    print(sum(p.map(sq, range(200))))
    p.close()
    p.join()
PY

# name, then the command (follow_same); a gzip loop also stops rarely
same() {
	follow_same "$@" || { fails=$((fails + 1)); return 1; }
	case $1 in gzip*) ;; *) return 0 ;; esac
	python3 - "$work/report" "$1" <<'PY' || fails=$((fails + 1))
import json, sys
stats = json.load(open(sys.argv[1]))["stats"]
per = stats["stops"] / max(stats["branches"], 1)
if per >= 0.02:
    sys.exit("FAIL %s: %.4f stops per branch: %s" % (sys.argv[2], per, stats))
PY
}

for i in 1 2; do
	same "fork+exec #$i" python3 "$work/forkexec.py"
	same "subprocess #$i" python3 "$work/spawn.py"
done
same "gzip | wc loop" bash -c 'for i in 1 2; do gzip -c /etc/services | wc -c; done'
same "multiprocessing pool" python3 "$work/pool.py"
[ $fails = 0 ]
