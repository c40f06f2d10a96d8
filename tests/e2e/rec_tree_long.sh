#!/usr/bin/env bash
# A long-lived tree under --follow-fork (a shell loop of 100 short
# programs, as make or a test harness runs them): btrace's memory and
# descriptors stay bounded by what is live, not by how many processes
# came and went.  Each gone process's /proc/PID/mem is closed with its
# last thread, and the histories of gone threads are kept up to a budget
# (eight threads' rings, at least 64 MiB), the first gone dropped first.
# Before: 110 descriptors and 747 MB of btrace's memory at the end of
# this loop (a heap-reused history ring was cleared whole), growing with
# every process.  The output and exit are the untraced run's.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 bash seq
fails=0

# the loop, then how many descriptors its parent (btrace) holds
loop='for i in $(seq 100); do /bin/true; done; echo done'
want=$(bash -c "$loop")
python3 - "$BTRACE" "$loop" "$want" "$work" <<'PY'
import os, resource, subprocess, sys
btrace, loop, want, work = sys.argv[1:5]
script = loop + "; ls /proc/$PPID/fd | wc -l"
p = subprocess.run([btrace, "run", "--follow-fork", "-o", work + "/report",
                    "--", "bash", "-c", script],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
out = p.stdout.split("\n")
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
assert p.returncode == 0, (p.returncode, p.stderr)
assert out[0] == want, (out, want)
fds = int(out[1])
report = open(work + "/report").read()
assert "stop: exit with status 0" in report and " branches, " in report, report[-300:]
print("btrace: %d descriptors open after 100 processes, %d MiB at most" % (fds, rss))
assert fds < 32, fds
assert rss < 300, rss
PY
[ $? = 0 ] || fails=$((fails + 1))
[ $fails = 0 ]
