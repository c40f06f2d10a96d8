#!/usr/bin/env bash
# The recorder and the fast mode against the single-step reference: on
# every program in tests/targets, each thread's full branch history (from,
# to, kind, flags, instruction counts) must be the same in each mode --
# signals, sigreturn, int3, rep strings, code written at run time, code
# unmapped and remapped, fork, threads included.  (The fast mode does not
# see file-mapped code change under it: rec_remap is the recorder's only.)  Threaded targets are compared with the
# timing-dependent parts relaxed (softdiff -t).  Skipped, and named as
# such: the programs of the attach and session tests (they wait on
# clocks, threads and input), pin_mask (it prints the CPUs it may run on,
# and softdiff binds its reference to one: e2e/rec_pin), the process trees of rec_filters and
# rec_tree_fate (compared there, children too), scrub (it walks its own mappings, btrace's
# among them), programs sized for clocks or ring overflow, exit_race_dyn
# (its loop runs until a timer's _exit: e2e/run_exit_race), sigqueue_count
# (it computes until its signals came: e2e/run_sigqueue), and programs
# that do not end by themselves or take more than 0.5 s untraced.
#
# The targets are taken in three parts, every third one (SOFT_DIFF_PART 1,
# the default; 2 and 3: soft_diff2.sh, soft_diff3.sh), so that each script
# stays well within a test's 10 minutes on a loaded machine (stepping is
# the slow side: its ptrace stops cost what the VM makes them cost).
. "$TESTDIR/e2e/lib/common.sh"
SOFTDIFF="$TOOLS/softdiff"
[ -x "$SOFTDIFF" ] || { echo "no $SOFTDIFF"; exit 1; }
part=${SOFT_DIFF_PART:-1}
modes=${SOFT_DIFF_MODES:-record fast}	# e2e/rec_hot_diff: record only
fails=0 n=0 i=0
for prog in "$TARGETS"/*; do
	[ -x "$prog" ] || continue
	i=$((i + 1))
	[ $((i % 3 + 1)) = "$part" ] || continue
	name=$(basename "$prog")
	opt=
	case $name in
	# threads; timeline's worker may or may not be in its read() yet
	# when main crashes; the workers of rec_spawn, jit_pair, fast_mix
	# and fault_return are ended by the exit
	*thread*|gdbsrv_dyn|timeline|rec_spawn|jit_pair|fast_mix|fault_return)
		opt=-t ;;
	cap_*|attach_*|sess_*)	# clocks, threads, input: not repeatable
		echo "skip $name: a timing-dependent program for attach tests"
		continue ;;
	scrub)	# walks /proc/self/maps: its path depends on btrace's mappings
		echo "skip $name: its path depends on the mappings btrace adds (e2e/rec_scrub)"
		continue ;;
	pin_mask)	# prints its CPU mask, which softdiff's reference binds
		echo "skip $name: its path depends on the CPUs it may use (e2e/rec_pin)"
		continue ;;
	fork_filter_dyn|tree_kill)	# trees, compared in their own tests
		echo "skip $name: a process tree (e2e/rec_filters, e2e/rec_tree_fate)"
		continue ;;
	timed|fault_handled|fault_late)	# sized for clocks and ring overflow
		echo "skip $name: too long to single-step (e2e/timeline_time, e2e/run_fault_handled)"
		continue ;;
	exit_race_dyn)	# its first thread loops until a timer's _exit
		echo "skip $name: how long its loop runs is a clock's (e2e/run_exit_race)"
		continue ;;
	sigqueue_count)	# computes until a child's signals have come
		echo "skip $name: how long it computes is its signals' timing (e2e/run_sigqueue)"
		continue ;;
	esac
	t0=$(date +%s%N)
	( timeout 2 "$prog" </dev/null >/dev/null 2>&1 ) 2>/dev/null
	rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
	if [ $rc = 124 ]; then
		echo "skip $name: does not end by itself"
		continue
	fi
	if [ $ms -gt 500 ]; then	# stepping is ~100x slower
		echo "skip $name: too long to single-step (${ms} ms untraced)"
		continue
	fi
	n=$((n + 1))
	for mode in $modes; do
		if [ $mode = fast ] && [ $name = rec_remap ]; then
			echo "skip $name in the fast mode: file-mapped code changing is not seen there"
			continue
		fi
		# Open too: while a vfork child runs in the process's memory
		# the int3s are lifted, and the worker's chain runs past one
		if [ $mode = fast ] && [ $name = rec_spawn ]; then
			echo "skip $name in the fast mode: its worker's int3s are lifted while a vfork child runs (open)"
			continue
		fi
		if out=$(timeout 120 "$SOFTDIFF" $opt -m $mode -- "$prog" </dev/null 2>&1); then
			echo "ok   $name ($mode): $(echo "$out" | grep "^$mode" | cut -d' ' -f2-)"
		else
			echo "FAIL $name ($mode)"
			echo "$out" | sed 's/^/     /'
			fails=$((fails + 1))
		fi
	done
done
# Following the forked child (--follow-fork): the parent's history holds;
# with "thread" the child starts a thread of its own (the fast mode steps
# the child: its clone3 counted once though the clone event stops the
# step).  Threads wait for the end: -t.
[ "$part" = 1 ] && for mode in $modes; do
	for arg in "" thread; do
		if out=$(timeout 120 "$SOFTDIFF" -t -k -m $mode -- \
			 "$TARGETS/fast_mix" $arg </dev/null 2>&1); then
			echo "ok   fast_mix $arg --follow-fork ($mode)"
		else
			echo "FAIL fast_mix $arg --follow-fork ($mode)"
			echo "$out" | sed 's/^/     /'
			fails=$((fails + 1))
		fi
	done
done
[ $n -gt 0 ] || { echo "no targets in $TARGETS"; exit 1; }
[ $fails = 0 ]
