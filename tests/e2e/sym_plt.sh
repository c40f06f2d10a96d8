#!/usr/bin/env bash
# PLT stubs are named as gdb names them ("puts@plt").  The names btrace
# computes from the stubs and the dynamic relocations (build/tools/pltdump)
# are binutils' own, stub by stub, on the C library, the loader, large
# programs, and a program linked with IBT stubs (.plt.sec); then
# btrace run names the call to puts@plt and the stub's jump in its text and
# JSON, stripped or not, as does show, from the ELF file or from the names
# saved in the trace; a static program's IFUNC stubs are named by their
# functions (strlen@plt), where binutils has no names.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/debuginfo.sh"
src=$TESTDIR/targets/plt_dyn.c

# "ADDR <NAME@plt>" of every named stub, from objdump and from btrace.
objdump_plt() {
	objdump -d -j .plt -j .plt.sec -j .plt.got "$1" 2>/dev/null |
		sed -n 's/^\([0-9a-f]*\) <\(.*@plt\)>:$/\1 <\2>/p' | sort
}
btrace_plt() {
	"$TOOLS/pltdump" "$1" | cut -d: -f1 | sort
}

cc -O0 -g -fcf-protection -Wl,-z,ibtplt -o "$work/ibt" "$src" ||
	fail "cannot link with -z ibtplt"
readelf -SW "$work/ibt" | grep -q '\.plt\.sec' || fail "no .plt.sec in $work/ibt"
libc=$(ldd "$TARGETS/plt_dyn" | awk '$1 == "libc.so.6" { print $3 }')
ldso=$(ldd "$TARGETS/plt_dyn" | awk '$1 ~ /ld-linux/ { print $1 }')
n=0
for f in "$libc" "$ldso" /usr/bin/gdb /usr/bin/python3 /usr/bin/sqlite3 \
	 "$TARGETS/plt_dyn" "$work/ibt"; do
	[ -e "$f" ] || continue
	objdump_plt "$f" >"$work/want"
	btrace_plt "$f" >"$work/got"
	diff -u "$work/want" "$work/got" | head -20
	cmp -s "$work/want" "$work/got" || fail "PLT names of $f differ from objdump's"
	echo "$f: $(wc -l <"$work/want") stubs named as objdump names them"
	n=$((n + $(wc -l <"$work/want")))
done
[ "$n" -gt 100 ] || fail "only $n stubs compared"
grep -q ' <puts@plt>' "$work/got" || fail "no puts@plt in the IBT program"

# btrace run: the call to puts@plt, and the stub's jump through the GOT.
check() {	# JSON, stripped (1) or not
	python3 - "$1" "$2" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
stripped = sys.argv[2] == "1"
br = c.stopped_thread(doc)
calls = [b for b in br if b["kind"] == "call" and b["to_sym"] == "puts@plt"]
assert calls, br[-60:]
if not stripped:
    assert c.func(calls[-1]["from_sym"]) == "work", calls[-1]
# The second call: the stub jumps through its bound GOT slot to puts.
stub = [b for b in br if b["from_sym"] == "puts@plt"]
assert stub and stub[-1]["kind"] == "indirect jump", stub
assert stub[-1]["insn"].startswith("jmp qword ptr [rip"), stub[-1]
assert stub[-1]["from"] == calls[-1]["to"], (calls[-1], stub[-1])
assert c.func(stub[-1]["to_sym"]) in ("puts", "_IO_puts"), stub[-1]
# The first: into the stub's lazy part, and on to PLT0.
lazy = [b for b in br if (b["from_sym"] or "").startswith("puts@plt+")]
assert lazy and lazy[0]["kind"] == "jump", lazy
PY
}
btrace_json --last 100000 -- "$TARGETS/plt_dyn"
expect_rc 139
check "$work/out.json" 0
split_debug "$TARGETS/plt_dyn" "$work/stripped"
btrace_json --last 100000 -- "$work/stripped"
expect_rc 139
check "$work/out.json" 1

"$BTRACE" run --no-color --last 100000 -- "$TARGETS/plt_dyn" >"$work/out.txt" 2>&1
grep -E 'work\+0x[0-9a-f]+ .*call .*-> 0x[0-9a-f]+ +puts@plt' "$work/out.txt" ||
	fail "no call to puts@plt in the text"
grep -E '^ +-[0-9]+ +0x[0-9a-f]+ +puts@plt +jmp qword ptr' "$work/out.txt" ||
	fail "no jump from puts@plt in the text"

# show: from the ELF file, and from the names saved in the trace when the
# file is gone.
cp "$TARGETS/plt_dyn" "$work/saved"
"$BTRACE" run --save "$work/t.trace" --last 1 -- "$work/saved" >/dev/null 2>&1
"$BTRACE" show --json --last 100000 "$work/t.trace" >"$work/show.json" || fail show
check "$work/show.json" 0
rm "$work/saved"
"$BTRACE" show --json --last 100000 "$work/t.trace" >"$work/show.json" || fail show
check "$work/show.json" 0

# A static program: the C library calls its IFUNCs through stubs that
# IRELATIVE relocations fill; each is named by its IFUNC symbol (nm's "i")
# and jumps to one of its implementations (strlen@plt -> __strlen_avx2).
btrace_json --last 100000 -- "$TARGETS/recursion"
expect_rc 139
nm "$TARGETS/recursion" | awk '$2 == "i" { print $3 }' >"$work/ifuncs"
python3 - "$work/out.json" "$work/ifuncs" <<'PY' || exit 1
import sys, btcheck as c
br = c.stopped_thread(c.load(sys.argv[1]))
ifuncs = set(open(sys.argv[2]).read().split())
stubs = [b for b in br if (b["from_sym"] or "").endswith("@plt")]
assert stubs, "no IFUNC stub taken"
for b in stubs:
    assert b["from_sym"][:-4] in ifuncs, b
    assert b["kind"] == "indirect jump", b
    assert b["to_sym"] and "@plt" not in b["to_sym"], b
print("static stubs:", sorted({b["from_sym"] for b in stubs}))
PY
echo ok
