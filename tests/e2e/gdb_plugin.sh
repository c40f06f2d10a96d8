#!/usr/bin/env bash
# The GDB plugin in Debian's GDB, batch mode: btrace continue on a crash,
# an abort and a breakpoint, btrace last/calls and btrace.branches(); a
# saved trace loaded post-mortem beside its core file; clear errors.
. "$TESTDIR/e2e/lib/common.sh"
plugin=$TESTDIR/../gdb/btrace.py
command -v gdb >/dev/null || { echo "gdb is not installed"; exit 77; }
gdb -nx -batch -ex 'python import gdb' >/dev/null 2>&1 ||
	{ echo "this gdb has no Python"; exit 77; }

gdbrun() {	# output file, gdb arguments...
	local out=$1
	shift
	TMPDIR=$work/tmp timeout 120 gdb -nx -batch -ex "source $plugin" "$@" \
		>"$out" 2>&1
}
mkdir "$work/tmp"

expect() {	# file, extended regexp, what
	grep -Eq -e "$2" "$1" || { sed 's/^/    /' "$1"; fail "$3"; }
}

# 1. A crash: btrace continue, GDB sees the SIGSEGV, the history ends with
#    walk calling store_value, the data agrees.
prog=$TARGETS/crash_null
gdbrun "$work/crash.out" -ex "file $prog" -ex start -ex "btrace continue" \
	-ex "btrace last 8" -ex "bt" -ex "btrace calls 40" \
	-ex "python import btrace; b = btrace.branches(8); print('DATA', len(b), b[-1]['kind'], b[-1]['from_func'], b[-1]['to_func'], b[-1]['to_src'])" \
	-ex kill
expect "$work/crash.out" "Program received signal SIGSEGV" "no SIGSEGV in gdb"
expect "$work/crash.out" "^#0 +(0x[0-9a-f]+ in )?store_value .*crash_null.c:12" "gdb not at the fault"
expect "$work/crash.out" "^ *-1 +0x[0-9a-f]+ +walk\+0x[0-9a-f]+ +crash_null.c:21 +call 0x[0-9a-f]+ +call +-> 0x[0-9a-f]+ +store_value +crash_null.c:11$" \
	"btrace last does not end with walk calling store_value"
expect "$work/crash.out" "^ *-8 " "btrace last 8 shows fewer than 8"
expect "$work/crash.out" "^DATA 8 call walk store_value crash_null.c:11$" "btrace.branches() data"
# btrace calls: what btrace show --calls prints, store_value in walk in process.
depth() {	# the indentation of the last segment of function $1 in $work/crash.out
	sed -n "s/^ *-[0-9]*  \( *\)$1  (.*/\1/p" "$work/crash.out" | tail -n 1 | wc -c
}
[ "$(depth process)" -gt 1 ] && [ "$(depth walk)" -gt "$(depth process)" ] &&
	[ "$(depth store_value)" -gt "$(depth walk)" ] ||
	{ sed 's/^/    /' "$work/crash.out"; fail "btrace calls: store_value is not nested in walk in process"; }
expect "$work/crash.out" "^ *-1 +  +store_value  \(0 branches(, [0-9.]+ [a-z]+)?\)  crash_null.c:11$" "btrace calls: does not end in store_value"
grep -q Traceback "$work/crash.out" && fail "a Python traceback"
no_leftovers "$prog"

# 1b. Threads: the crash in a thread is reported in that thread, with
#     that thread's branches.
gdbrun "$work/thr.out" -ex "file $TARGETS/thread_crash" -ex start \
	-ex "btrace continue" -ex "btrace last 2" -ex "info threads" -ex kill
expect "$work/thr.out" "^Thread [0-9]+ .* received signal SIGSEGV" "no SIGSEGV in a thread"
expect "$work/thr.out" "^\* +[0-9]+ +Thread .* in crash_here " "the crashing thread is not selected"
expect "$work/thr.out" "^ *-1 .*crasher.* call +-> 0x[0-9a-f]+ +crash_here +thread_crash.c:22$" "not the crashing thread's branches"
no_leftovers "$TARGETS/thread_crash"

# 2. abort(): a sent signal, re-sent at the hand-back.
gdbrun "$work/abort.out" -ex "file $TARGETS/abort" -ex start \
	-ex "btrace continue" -ex "btrace last 4" -ex "bt" -ex kill
expect "$work/abort.out" "Program received signal SIGABRT" "no SIGABRT in gdb"
expect "$work/abort.out" "check \(.*abort.c" "no check() in the backtrace"
no_leftovers "$TARGETS/abort"

# 3. A gdb breakpoint is honoured while btrace runs the program.
gdbrun "$work/break.out" -ex "file $prog" -ex "break store_value" -ex start \
	-ex "btrace continue" -ex "btrace last 2" -ex "info registers rip" -ex kill
expect "$work/break.out" "^Breakpoint 1, .*store_value" "the breakpoint was not reported"
expect "$work/break.out" "-> 0x[0-9a-f]+ +store_value" "no call of store_value before it"
grep -q "received signal SIGSEGV" "$work/break.out" && fail "ran past the breakpoint"
no_leftovers "$prog"

# 4. Post-mortem: a trace saved at the crash, beside the core file.
mkdir "$work/pm" && cd "$work/pm" || exit 1
ulimit -c unlimited 2>/dev/null
"$BTRACE" run --backend soft --save-on-crash "$work/pm" -- "$prog" >/dev/null 2>"$work/err"
trace=$(ls "$work"/pm/btrace-crash_null-*.trace 2>/dev/null)
[ -n "$trace" ] || { cat "$work/err"; fail "no trace saved on crash"; }
core=$(ls "$work"/pm/core* 2>/dev/null | head -n 1)
if [ -z "$core" ]; then
	# core_pattern may be a pipe (systemd-coredump, apport): gcore instead.
	echo "no kernel core file (core_pattern: $(cat /proc/sys/kernel/core_pattern)); using gcore"
	gdb -nx -batch -ex "file $prog" -ex run -ex "gcore $work/pm/core" -ex kill \
		>"$work/gcore.out" 2>&1
	core=$work/pm/core
	[ -s "$core" ] || { cat "$work/gcore.out"; fail "gcore made no core file"; }
fi
cd "$work" || exit 1
gdbrun "$work/pm.out" "$prog" "$core" -ex "btrace load $trace" \
	-ex "btrace last 8" -ex "bt 1"
expect "$work/pm.out" "btrace: loaded .*soft backend" "btrace load"
expect "$work/pm.out" "stopped by SIGSEGV at 0x[0-9a-f]+ store_value.* \(crash_null.c:12\)" "the stop"
expect "$work/pm.out" "^ *-1 .*walk.* call +-> 0x[0-9a-f]+ +store_value +crash_null.c:11$" "last branches post-mortem"
expect "$work/pm.out" "^#0 +(0x[0-9a-f]+ in )?store_value" "the core is not loaded"

# 5. Errors: one line each, no traceback.
gdbrun "$work/err.out" -ex "btrace last" -ex "btrace continue" \
	-ex "btrace load $work/none.trace" -ex "btrace load $prog" -ex "btrace calls x"
expect "$work/err.out" "^btrace: no trace: run 'btrace continue' or 'btrace load FILE' first$" "no-trace error"
expect "$work/err.out" "^btrace: no inferior: start the program first \(start, run or attach\)$" "no-inferior error"
expect "$work/err.out" "^btrace: cannot load '$work/none.trace': No such file or directory$" "missing file error"
expect "$work/err.out" "^btrace: cannot load '$prog': unrecognised format: not a btrace trace file$" "foreign file error"
expect "$work/err.out" "^btrace: 'x' is not a positive count$" "bad count error"
grep -q Traceback "$work/err.out" && { cat "$work/err.out"; fail "a Python traceback"; }
# 6. The plugin's directory for `btrace continue` goes when gdb exits.
[ -z "$(ls -A "$work/tmp")" ] || { ls -lR "$work/tmp"; fail "gdb left files in TMPDIR"; }
exit 0
