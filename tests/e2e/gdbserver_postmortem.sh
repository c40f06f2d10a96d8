#!/usr/bin/env bash
# btrace gdbserver --trace FILE [--core CORE]: a crash saved by btrace run
# --save-on-crash, served to Debian's GDB as a stopped process.  With the
# core: the backtrace with arguments, registers, memory; without: the pc
# and the program's and libraries' symbols placed from the saved maps.
# Either way GDB's record btrace replays the saved branches, as btrace
# show --calls shows them.  Bad files are refused with a reason.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

STORE=$(line_of MARK_STORE)
CALL=$(line_of MARK_CRASH_CALL)

# The crash, its trace, and the kernel's core of the same stop.
mkdir "$work/pm" && cd "$work/pm" || exit 1
ulimit -c unlimited 2>/dev/null
"$BTRACE" run --save-on-crash "$work/pm" -- "$GS_PROG" crash >"$work/run.out" 2>&1
trace=$(ls "$work"/pm/btrace-gdbsrv_dyn-*.trace 2>/dev/null)
[ -n "$trace" ] || { cat "$work/run.out"; fail "no trace saved at the crash"; }
core=$(ls "$work"/pm/core* 2>/dev/null | head -n 1)
cd "$work" || exit 1

pmgdb() {	# output, gdbserver options..., then -- and GDB's -ex list
	local out=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "target remote | $BTRACE gdbserver ${opts[*]} -" "$@" \
		"$GS_PROG" >"$out" 2>&1 </dev/null
}

replay_checks() {	# output file, what
	local out=$1 what=$2
	gdb_clean "$out"
	[ "$(section "$out" CALLS | cut -f 2 | tail -n 2 | tr '\n' ' ')" = "main store " ] ||
		{ cat "$out"; fail "$what: the call history does not end with main calling store"; }
	# GDB names an IFUNC resolver by its DWARF name (strcmp_ifunc), the
	# ELF symbol btrace uses is the function's (strcmp)
	section "$out" CALLS | cut -f 2 | sed 's/_ifunc$//' >"$work/gdb.calls"
	"$BTRACE" show --calls --last 100000 "$trace" | awk '$1 ~ /^-[0-9]+$/ { print $2 }' |
		tail -n "$(wc -l <"$work/gdb.calls")" >"$work/show.calls"
	diff "$work/gdb.calls" "$work/show.calls" >"$work/calls.diff" ||
		{ head -n 20 "$work/calls.diff"; fail "$what: GDB's call history differs from btrace show --calls"; }
	section "$out" BACK | grep -Eq "^$STORE"$'\t' ||
		{ section "$out" BACK; fail "$what: reverse-step: not at the start of the faulting line"; }
	section "$out" BACK | grep -Eq "^$CALL"$'\t' ||
		{ section "$out" BACK; fail "$what: reverse-step did not go back to the call"; }
	expect "$out" "Remote failure reply: E\.A saved trace does not run" "$what: continue did not say why it cannot"
}

REPLAY=(-ex "record btrace" -ex 'echo @@CALLS\n' -ex "record function-call-history"
	-ex 'echo @@BACK\n' -ex reverse-step -ex reverse-step -ex 'echo @@END\n'
	-ex "record goto end" -ex continue -ex detach)

# 1. With the core: the whole picture.
if [ -n "$core" ]; then
	pmgdb "$work/core.out" --trace "$trace" --core "$core" -- \
		-ex bt -ex "info registers rip" -ex 'x/i $pc' -ex 'p v' \
		-ex 'p $_siginfo' -ex "info sharedlibrary" "${REPLAY[@]}"
	expect "$work/core.out" "^#0 +0x[0-9a-f]+ in store \(p=0x0, v=30\) at .*gdbsrv_dyn.c:$STORE" "core: not at the fault"
	expect "$work/core.out" "^#1 +0x[0-9a-f]+ in main \(argc=2, " "core: no caller"
	expect "$work/core.out" "^rip +0x[0-9a-f]+ +0x[0-9a-f]+ <store\+[0-9]+>" "core: rip"
	expect "$work/core.out" "^=> 0x[0-9a-f]+ <store\+[0-9]+>:"$'\t'"mov +%edx,\(%rax\)" "core: x/i at the fault"
	expect "$work/core.out" '^\$1 = 30$' "core: p v"
	expect "$work/core.out" '^\$2 = \{si_signo = 11, si_errno = 0, si_code = 1,' "core: p \$_siginfo"
	expect "$work/core.out" "/libc.so.6$" "core: no C library"
	replay_checks "$work/core.out" "core"
else
	echo "no kernel core file (core_pattern: $(cat /proc/sys/kernel/core_pattern)): the trace alone"
fi

# 2. Without the core: the pc, the symbols, the same replay.
pmgdb "$work/nocore.out" --trace "$trace" -- -ex bt -ex "info sharedlibrary" \
	-ex 'x/i $pc' "${REPLAY[@]}"
expect "$work/nocore.out" "^#0 +0x[0-9a-f]+ in store \(.*\) at .*gdbsrv_dyn.c:$STORE" "no core: not at the fault"
expect "$work/nocore.out" "^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes +/.*/libc.so.6$" "no core: the C library is not placed"
expect "$work/nocore.out" "^=> 0x[0-9a-f]+ <store\+[0-9]+>:"$'\t'"mov +%edx,\(%rax\)" "no core: x/i from the trace's code"
replay_checks "$work/nocore.out" "no core"

# 3. Bad files: a reason, exit status 1; --core alone is a usage error.
"$BTRACE" gdbserver --trace "$work/none.trace" - </dev/null >"$work/e1" 2>&1
[ $? = 1 ] || fail "a missing trace file: not exit status 1"
expect "$work/e1" "^btrace: cannot load '.*none.trace'" "a missing trace file: no reason"
"$BTRACE" gdbserver --trace "$GS_PROG" - </dev/null >"$work/e2" 2>&1
expect "$work/e2" "not a btrace trace file" "an ELF file as trace: no reason"
"$BTRACE" gdbserver --trace "$trace" --core "$trace" - </dev/null >"$work/e3" 2>&1
[ $? = 1 ] || fail "a trace file as core: not exit status 1"
expect "$work/e3" "not an x86-64 ELF core file" "a trace file as core: no reason"
"$BTRACE" gdbserver --core x - </dev/null >"$work/e4" 2>&1
[ $? = 2 ] || fail "--core without --trace: not a usage error"
echo ok
