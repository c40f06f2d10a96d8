#!/usr/bin/env bash
# A tree under --follow-fork with few file descriptors (ulimit -n 12, for
# btrace and the programs alike): six pipelines at once, each process's
# /proc/PID/mem kept open by btrace.  Where descriptors run out, the
# address space used longest ago gives its up and opens it again when next
# used (lib/fd.c, lib/tracer/aspace.c).  Before, an open of a child's
# /proc/PID/maps failed with EMFILE, its recorder was not set up, and the
# child crashed (SIGSEGV in md5sum, a broken pipe in seq) in most runs.
# The output and exit are the untraced run's, three times over.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd bash seq md5sum sort
fails=0

tree='for i in 1 2 3 4 5 6; do (seq 100000 | md5sum) & done; wait; echo end'
want=$(ulimit -n 12; bash -c "$tree" 2>&1 | sort)
for run in 1 2 3; do
	got=$(ulimit -n 12; "$BTRACE" run --follow-fork -o "$work/report.$run" \
		-- bash -c "$tree" 2>"$work/err.$run" | sort)
	rc=$?
	if [ "$got" = "$want" ] && [ $rc = 0 ] &&
	   grep -q 'stop: exit with status 0' "$work/report.$run" &&
	   ! grep -v 'soft backend' "$work/err.$run" | grep -q .; then
		echo "ok   run $run: the untraced run's output"
	else
		echo "FAIL run $run (exit $rc): got"; echo "$got"
		echo "want"; echo "$want"; cat "$work/err.$run"
		fails=$((fails + 1))
	fi
done
[ $fails = 0 ]
