#!/usr/bin/env bash
# Separate debug files, found where gdb finds them: a stripped program
# whose debug file lies under --debug-dir DIR by build-id
# (DIR/.build-id/xx/yyyy.debug), or is named by its .gnu_debuglink and lies
# in DIR, in DIR/<the program's directory>/ or beside the program.  btrace
# then names its (unexported) functions and their lines in run's text and
# JSON, in the session (run -i --debug-dir, and its debug-dir command), in
# show and in decode; without the debug file it cannot.  A --debug-dir
# that does not exist is a one-line error.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/debuginfo.sh"
src=$TESTDIR/targets/plt_dyn.c
l_work=$(src_line "$src" 'puts("work")')
l_crash=$(src_line "$src" '*slot = x;')

mkdir -p "$work/bin" "$work/dbg" "$work/dl" "$work/ln" "$work/tree$work/ln"
split_debug "$TARGETS/plt_dyn" "$work/bin/prog"
by_build_id "$work/bin/prog.debug" "$work/bin/prog" "$work/dbg"
rm "$work/bin/prog.debug"

# JSON $1 names work and main with their lines ($2 = 1), or neither.
check() {
	python3 - "$1" "$2" "$l_work" "$l_crash" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
named, l_work, l_crash = sys.argv[2] == "1", sys.argv[3], sys.argv[4]
br = c.stopped_thread(doc)
calls = [b for b in br if b["kind"] == "call" and b["to_sym"] == "puts@plt"]
assert len(calls) == 2, br[-60:]
if named:
    c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="work",
                  src="plt_dyn.c:" + l_crash)
    assert c.func(calls[-1]["from_sym"]) == "work", calls[-1]
    assert calls[-1]["from_src"] == "plt_dyn.c:" + l_work, calls[-1]
    assert any(b["kind"] == "call" and b["to_sym"] == "work" and
               c.func(b["from_sym"]) == "main" for b in br), br[-60:]
else:
    assert doc["stop"]["sym"] is None and doc["stop"]["src"] is None, doc["stop"]
    assert calls[-1]["from_sym"] is None and calls[-1]["from_src"] is None, calls[-1]
PY
}

run_json() {	# expected: 1 named, 0 not; btrace run options...
	local named=$1
	shift
	btrace_json --last 400 "$@"
	expect_rc 139
	check "$work/out.json" "$named"
}

# By build-id.
run_json 0 -- "$work/bin/prog"
run_json 1 --debug-dir "$work/dbg" -- "$work/bin/prog"
run_json 1 --debug-dir "$work/dl:$work/dbg" -- "$work/bin/prog"
(cd "$work" && "$BTRACE" run --json --last 400 --debug-dir dbg -- bin/prog \
	>"$work/rel.json" 2>"$work/err")
check "$work/rel.json" 1
"$BTRACE" run --no-color --last 400 --debug-dir "$work/dbg" -- "$work/bin/prog" \
	>"$work/out.txt" 2>&1
grep -E "work\+0x[0-9a-f]+ +plt_dyn.c:$l_work +call .*puts@plt" "$work/out.txt" ||
	fail "text: no call from work (plt_dyn.c:$l_work) to puts@plt"
grep -E "=> 0x[0-9a-f]+ +work\+0x[0-9a-f]+ +plt_dyn.c:$l_crash" "$work/out.txt" ||
	fail "text: the stop is not in work at plt_dyn.c:$l_crash"

# By .gnu_debuglink: in DIR, in DIR/<the program's directory>, beside it.
split_debug "$TARGETS/plt_dyn" "$work/ln/prog" link
mv "$work/ln/prog.debug" "$work/dl/"
run_json 0 -- "$work/ln/prog"
run_json 1 --debug-dir "$work/dl" -- "$work/ln/prog"
mv "$work/dl/prog.debug" "$work/tree$work/ln/"
run_json 1 --debug-dir "$work/tree" -- "$work/ln/prog"
mv "$work/tree$work/ln/prog.debug" "$work/ln/"
run_json 1 -- "$work/ln/prog"
# A debug file of another build is not taken for it.
cp "$work/ln/prog.debug" "$work/keep.debug"
objcopy --only-keep-debug "$TARGETS/qsort_dyn" "$work/ln/prog.debug"
run_json 0 -- "$work/ln/prog"
mv "$work/keep.debug" "$work/ln/prog.debug"

# The session: from the command line, and set with debug-dir.
printf 'last 4\ndebug-dir %s\nlast 4\ndebug-dir /nonexistent\nquit\n' \
	"$work/dbg" | "$BTRACE" run -i -- "$work/bin/prog" >"$work/sess" 2>&1
cat "$work/sess"
first=$(sed -n '/looked for in/q;p' "$work/sess")
after=$(sed -n '/looked for in/,$p' "$work/sess")
grep -q ' work+0x' <<<"$first" && fail "session: work named before debug-dir"
grep -q "separate debug files are looked for in $work/dbg" <<<"$after" ||
	fail "session: debug-dir did not say the directory"
grep -q ' work+0x[0-9a-f]* ' <<<"$after" || fail "session: work not named after debug-dir"
grep -q "cannot use debug directory '/nonexistent'" "$work/sess" ||
	fail "session: a missing directory was taken"
printf 'last 4\nquit\n' |
	"$BTRACE" run -i --debug-dir "$work/dbg" -- "$work/bin/prog" >"$work/sess" 2>&1
grep -q ' work+0x[0-9a-f]* ' "$work/sess" || { cat "$work/sess"; fail "run -i --debug-dir"; }

# show: the saved trace, symbols from the debug file when asked.
"$BTRACE" run --save "$work/t.trace" --last 1 -- "$work/bin/prog" >/dev/null 2>&1
"$BTRACE" show --json --last 400 "$work/t.trace" >"$work/show.json" || fail "show"
check "$work/show.json" 0
"$BTRACE" show --json --last 400 --debug-dir "$work/dbg" "$work/t.trace" \
	>"$work/show.json" || fail "show --debug-dir"
check "$work/show.json" 1

# decode: a PT stream of the stripped static program, as user-only PT
# tracing would leave it, against the stripped ELF.
rec=$work/bin/recursion
split_debug "$TARGETS/recursion" "$rec"
by_build_id "$rec.debug" "$rec" "$work/dbg"
rm "$rec.debug"
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX,-BMI2,-EVEX \
	"$TOOLS/captrace" -- "$rec" >"$work/records.txt"
"$TOOLS/ptreal" "$rec" "$work/records.txt" "$work/trace.pt" "$work/want.txt" ||
	fail "ptreal"
"$BTRACE" decode --pt "$work/trace.pt" --elf "$rec" --last 4 >"$work/dec.txt" ||
	fail "decode"
grep -q descend "$work/dec.txt" && fail "decode: descend named without its debug file"
"$BTRACE" decode --pt "$work/trace.pt" --elf "$rec" --last 4 \
	--debug-dir "$work/dbg" >"$work/dec.txt" || fail "decode --debug-dir"
cat "$work/dec.txt"
l_rec=$(src_line "$TESTDIR/targets/recursion.c" 'return descend(depth - 1) + 1;')
grep -qE "descend\+0x[0-9a-f]+ +recursion.c:$l_rec +call .*-> 0x[0-9a-f]+ +descend " \
	"$work/dec.txt" || fail "decode: no recursive call of descend at recursion.c:$l_rec"

# A debug directory that is not there: one line, exit status 2, nothing run.
for cmd in "run --debug-dir $work/none -- $work/bin/prog" \
	   "show --debug-dir $work/none $work/t.trace" \
	   "decode --pt $work/trace.pt --debug-dir $work/none" \
	   "attach --debug-dir $work/none 1" \
	   "run --debug-dir $src -- $work/bin/prog" \
	   "run --debug-dir $work/dbg:$work/none -- $work/bin/prog"; do
	# shellcheck disable=SC2086
	"$BTRACE" $cmd >"$work/out" 2>"$work/err"
	rc=$?
	[ "$rc" = 2 ] || fail "btrace $cmd: exit $rc, not 2"
	[ "$(wc -l <"$work/err")" = 1 ] && [ ! -s "$work/out" ] ||
		{ cat "$work/err"; fail "btrace $cmd: not one line"; }
	grep -qE "^btrace: cannot use debug directory '.*': (No such file or directory|Not a directory)$" \
		"$work/err" || { cat "$work/err"; fail "btrace $cmd: unclear"; }
done
echo ok
