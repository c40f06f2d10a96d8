#!/usr/bin/env bash
# MiniDebugInfo: a stripped program that carries, as Fedora builds it, the
# symbols of its functions that .dynsym lacks in an xz-compressed ELF file
# in section .gnu_debugdata (find-debuginfo's recipe: nm, objcopy, xz).
# btrace names those functions (elfutils reads the section when built with
# lzma, as Debian's is) but, with no DWARF there, gives no lines; the same
# program without the section names neither.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/debuginfo.sh"
prog=$work/prog
split_debug "$TARGETS/plt_dyn" "$prog"
cp "$prog" "$work/plain"

# Fedora's find-debuginfo.sh, add_minidebug() (names trimmed for comm).
nm -D "$prog" --format=posix --defined-only | awk '{ print $1 }' | sort >"$work/dynsyms"
nm "$prog.debug" --format=sysv --defined-only |
	awk -F '|' '$4 ~ "FUNC" { sub(/ +$/, "", $1); print $1 }' | sort >"$work/funcsyms"
comm -13 "$work/dynsyms" "$work/funcsyms" >"$work/keep_symbols"
grep -qx work "$work/keep_symbols" || fail "work is not among the symbols kept"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$work/keep_symbols" "$prog.debug" "$work/mini_debuginfo" ||
	fail "objcopy (mini debuginfo)"
xz "$work/mini_debuginfo"
objcopy --add-section .gnu_debugdata="$work/mini_debuginfo.xz" "$prog" ||
	fail "objcopy --add-section .gnu_debugdata"
rm "$prog.debug"
readelf -S "$prog" | grep -q gnu_debugdata || fail "no .gnu_debugdata"
readelf -S "$prog" | grep -qE 'debug_info|\.symtab' && fail "$prog is not stripped"

check() {	# JSON, 1: named
	python3 - "$1" "$2" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
named = sys.argv[2] == "1"
br = c.stopped_thread(doc)
calls = [b for b in br if b["kind"] == "call" and b["to_sym"] == "puts@plt"]
assert len(calls) == 2, br[-60:]
if named:
    c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="work")
    assert c.func(calls[-1]["from_sym"]) == "work", calls[-1]
    assert any(b["kind"] == "call" and b["to_sym"] == "work" and
               c.func(b["from_sym"]) == "main" for b in br), br[-60:]
else:
    assert doc["stop"]["sym"] is None, doc["stop"]
    assert calls[-1]["from_sym"] is None, calls[-1]
# Symbols only: no line of the program anywhere.
assert doc["stop"]["src"] is None, doc["stop"]
assert not any("plt_dyn.c" in (b["from_src"] or "") + (b["to_src"] or "")
               for b in br), br
PY
}

btrace_json --last 400 -- "$prog"
expect_rc 139
check "$work/out.json" 1
btrace_json --last 400 -- "$work/plain"
expect_rc 139
check "$work/out.json" 0
"$BTRACE" run --no-color --last 400 -- "$prog" >"$work/out.txt" 2>&1
grep -E "=> 0x[0-9a-f]+ +work\+0x[0-9a-f]+ +mov" "$work/out.txt" ||
	fail "text: the stop is not named work"
echo ok
