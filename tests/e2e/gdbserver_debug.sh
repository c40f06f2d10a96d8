#!/usr/bin/env bash
# btrace gdbserver with Debian's GDB, everyday debugging of a PIE with
# shared libraries and threads (tests/targets/gdbsrv_dyn.c) over stdio,
# TCP and a unix socket: breakpoints, backtraces, registers, memory,
# step/next/finish, a signal with a handler, threads, a crash, Ctrl-C,
# detach (the process runs on, attached or launched) and kill.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

SQ=$(line_of MARK_SQUARE\ )
SQRET=$(line_of MARK_SQUARE_RET)
CALLSQ=$(line_of MARK_CALL_SQUARE)
STORE=$(line_of MARK_STORE)

# 1. Breakpoints, backtrace, registers, memory, stepping, libraries.
gsgdb "$work/basic.out" "$GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break square" -ex continue -ex bt -ex "info registers rip" \
	-ex 'x/2i $pc' -ex 'p x' -ex 'p/x *(unsigned char *)$pc' \
	-ex next -ex step -ex finish -ex "info sharedlibrary" \
	-ex 'p $fs_base != 0' -ex 'p $orig_rax' -ex 'p sizeof($xmm15)' \
	-ex 'p sizeof($ymm15)' -ex 'p $st0' -ex 'p $mxcsr' \
	-ex 'set var n = 7' -ex 'p n' -ex kill
gdb_clean "$work/basic.out"
expect "$work/basic.out" "^Breakpoint 1, square \(x=1\) at .*gdbsrv_dyn.c:$SQ" "no stop at square"
expect "$work/basic.out" "^#1 +0x[0-9a-f]+ in sum_squares \(n=4\) at .*gdbsrv_dyn.c:$CALLSQ" "backtrace lacks sum_squares"
expect "$work/basic.out" "^#2 +0x[0-9a-f]+ in main " "backtrace lacks main"
bp=$(sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\):.*/\1/p' "$work/basic.out")
expect "$work/basic.out" "^rip +$bp +$bp <square\+[0-9]+>" "rip is not the breakpoint address $bp"
expect "$work/basic.out" "^=> $bp <square\+[0-9]+>:" "x/i shows no instruction at pc"
expect "$work/basic.out" '^\$1 = 1$' "p x at the first call"
expect_not "$work/basic.out" '^\$2 = 0xcc$' "the breakpoint's int3 shows through memory"
expect "$work/basic.out" "^$SQRET"$'\t' "next did not go to the return line"
expect "$work/basic.out" '^Value returned is \$[0-9]+ = 1$' "finish returned no value"
expect "$work/basic.out" "/libc.so.6" "no C library in info sharedlibrary"
expect "$work/basic.out" '^\$[0-9]+ = 1$' "no fs_base"
expect_not "$work/basic.out" "Invalid register|could not read register" "a register is missing"
expect "$work/basic.out" '^\$[0-9]+ = 16$' "no xmm15"
expect "$work/basic.out" '^\$[0-9]+ = 32$' "no ymm15 (AVX)"
expect "$work/basic.out" '^\$[0-9]+ = \[ IE DE ZE OE UE PE IM DM ZM OM UM PM \]$|^\$[0-9]+ = \[ [A-Z ]*IM DM ZM OM UM PM \]$' "mxcsr"
expect "$work/basic.out" '^\$[0-9]+ = 7$' "set var did not write the variable"
expect "$work/basic.out" "^\[Inferior 1 \(process [0-9]+\) killed\]" "kill"
no_leftovers "$GS_PROG"

# 2. A signal with a handler: GDB stops for it, the handler runs when it
#    is passed, a breakpoint in the handler shows the signal frame.
gsgdb "$work/sig.out" "$GS_PROG" -ex continue -ex "break on_usr1" \
	-ex "break square" -ex continue -ex bt -ex continue -ex 'p handled' \
	-ex kill
gdb_clean "$work/sig.out"
expect "$work/sig.out" "^Program received signal SIGUSR1, User defined signal 1" "no SIGUSR1 stop"
expect "$work/sig.out" "^Breakpoint 1, on_usr1 \(sig=10\) at .*gdbsrv_dyn.c:$(line_of MARK_HANDLER)" "the handler did not run"
expect "$work/sig.out" "^#1 +<signal handler called>" "no signal frame"
expect "$work/sig.out" "^Breakpoint 2, square \(x=1\)" "the program did not go on after the handler"
expect "$work/sig.out" '^\$1 = 1$' "handled is not 1"
no_leftovers "$GS_PROG"

# 3. Threads: a breakpoint hit in a worker, the thread list, the end.
gsgdb "$work/thr.out" "$GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break worker" -ex continue -ex "info threads" -ex continue \
	-ex "thread 1" -ex "delete" -ex continue
gdb_clean "$work/thr.out"
expect "$work/thr.out" "^Thread [0-9]+ \"gdbsrv_dyn\" hit Breakpoint 1, worker \(arg=0x[56]\)" "no worker breakpoint hit"
[ "$(grep -Ec '^Thread [0-9]+ "gdbsrv_dyn" hit Breakpoint 1, worker' "$work/thr.out")" = 2 ] ||
	{ cat "$work/thr.out"; fail "not both workers stopped at the breakpoint"; }
expect "$work/thr.out" '^\* [0-9]+ +Thread [0-9]+\.[0-9]+ "gdbsrv_dyn" +worker' "info threads: no current worker"
expect "$work/thr.out" "^ +1 +Thread [0-9]+\.[0-9]+ \"gdbsrv_dyn\"" "info threads: no main thread"
expect "$work/thr.out" "^sum 30 total 61 handled 1$" "the program's result is wrong"
expect "$work/thr.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "no normal exit"
no_leftovers "$GS_PROG"

# 4. A crash: the fault where it happened, then the process dies of it.
gsgdb "$work/crash.out" "$GS_PROG crash" -ex "handle SIGUSR1 nostop noprint" \
	-ex continue -ex "bt" -ex 'p $_siginfo.si_signo' -ex continue
gdb_clean "$work/crash.out"
expect "$work/crash.out" "^(Program|Thread 1 .*) received signal SIGSEGV, Segmentation fault" "no SIGSEGV"
expect "$work/crash.out" '^\$1 = 11$' "p \$_siginfo.si_signo: not SIGSEGV"
expect "$work/crash.out" "store \(p=0x0, v=30\) at .*gdbsrv_dyn.c:$STORE" "not stopped in store"
expect "$work/crash.out" "^Program terminated with signal SIGSEGV, Segmentation fault" "the process did not die of it"
no_leftovers "$GS_PROG"

# 5. Ctrl-C while the program waits in a system call.
gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target remote | $BTRACE gdbserver - $TARGETS/sleeper" \
	-ex continue -ex bt -ex kill "$TARGETS/sleeper" >"$work/int.out" 2>&1 </dev/null &
g=$!
for i in $(seq 1 100); do grep -q ready "$work/int.out" && break; sleep 0.1; done
sleep 0.5
kill -INT $g
for i in $(seq 1 100); do kill -0 $g 2>/dev/null || break; sleep 0.1; done
kill -9 $g 2>/dev/null && fail "gdb hung after Ctrl-C"
gdb_clean "$work/int.out"
expect "$work/int.out" "^Program received signal SIGINT, Interrupt" "Ctrl-C did not stop the program"
expect "$work/int.out" "in wait_forever \(\) at .*sleeper.c" "no backtrace after Ctrl-C"
no_leftovers "$TARGETS/sleeper"

# 6. TCP on loopback, and a unix socket; detach from a launched process:
#    it runs on to its end.
"$BTRACE" gdbserver :0 "$GS_PROG" >"$work/tcp.err" 2>&1 &
stub=$!
for i in $(seq 1 100); do grep -q "Listening on port" "$work/tcp.err" && break; sleep 0.1; done
port=$(sed -n 's/^Listening on port \([0-9]*\)$/\1/p' "$work/tcp.err")
[ -n "$port" ] || { cat "$work/tcp.err"; fail "no port"; }
timeout 120 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" -ex "target remote 127.0.0.1:$port" \
	-ex "handle SIGUSR1 nostop noprint" -ex "break square" -ex continue \
	-ex detach "$GS_PROG" >"$work/tcp.out" 2>&1 </dev/null
wait $stub
cat "$work/tcp.err" >>"$work/tcp.out"
gdb_clean "$work/tcp.out"
expect "$work/tcp.out" "^Breakpoint 1, square" "TCP: no breakpoint"
expect "$work/tcp.out" "^\[Inferior 1 \(process [0-9]+\) detached\]" "TCP: no detach"
for i in $(seq 1 50); do grep -q "^sum 30" "$work/tcp.err" && break; sleep 0.1; done
expect "$work/tcp.err" "^sum 30 total 61 handled 1$" "the detached program did not run to its end"

"$BTRACE" gdbserver "unix:$work/sock" "$GS_PROG" 2>"$work/unix.err" &
stub=$!
for i in $(seq 1 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
timeout 120 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" -ex "target remote $work/sock" \
	-ex "handle SIGUSR1 nostop noprint" -ex continue "$GS_PROG" \
	>"$work/unix.out" 2>&1 </dev/null
wait $stub
gdb_clean "$work/unix.out"
expect "$work/unix.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "unix socket: no normal exit"
[ -e "$work/sock" ] && fail "the unix socket was left behind"
no_leftovers "$GS_PROG"

# 7. --attach: a running process, a breakpoint, detach: it runs on,
#    untraced, to the result it would have had.
"$TARGETS/sess_checksum" 20000 300 >"$work/sum.out" 2>&1 &
tp=$!
for i in $(seq 1 100); do grep -q ready "$work/sum.out" && break; sleep 0.05; done
timeout 120 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target remote | $BTRACE gdbserver --attach $tp -" \
	-ex "break sess_round_end" -ex continue -ex bt -ex 'p r > 0' -ex detach \
	"$TARGETS/sess_checksum" >"$work/att.out" 2>&1 </dev/null
gdb_clean "$work/att.out"
expect "$work/att.out" "^Breakpoint 1, sess_round_end \(r=[0-9]+\)" "attach: no breakpoint"
expect "$work/att.out" "^#1 +0x[0-9a-f]+ in main " "attach: no backtrace"
expect "$work/att.out" "^\[Inferior 1 \(process $tp\) detached\]" "attach: no detach"
grep -q '^TracerPid:[[:space:]]*0$' "/proc/$tp/status" || fail "still traced after detach"
kill -USR1 $tp
wait $tp
want=$("$TARGETS/sess_checksum" 20000 0 | tail -n 1)
[ "$(tail -n 1 "$work/sum.out")" = "$want" ] ||
	fail "attached run printed '$(tail -n 1 "$work/sum.out")', not '$want'"
echo "ok"
