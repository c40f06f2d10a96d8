#!/usr/bin/env bash
# btrace run on a dynamically linked PIE: symbols and lines of the PIE at
# its load address, a callback from the C library into the program
# (indirect call) that crashes.  The library's side of the callback is a
# static function (msort_with_tmp) that only the C library's debug symbols
# name (Debian: libc6-dbg, Ubuntu: libc6-dbg too): asserted when they are
# there; a second run with /usr/lib/debug hidden (a private mount
# namespace, as root) checks what holds on a machine without them.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/qsort_dyn

# The C library's detached debug file, found by build-id as elfutils does.
libc=$(ldd "$prog" | awk '$1 == "libc.so.6" { print $3 }')
id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
libc_dbg=0
[ -n "$id" ] && [ -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
	libc_dbg=1

check() {	# 1: the C library has debug symbols
	python3 - "$work/out.json" "$1" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
libc_dbg = sys.argv[2] == "1"
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="compare",
              src="qsort_dyn.c:15")
br = c.stopped_thread(doc)
# The C library (a shared object) calls back into the PIE.
icalls = [b for b in br if b["kind"] == "indirect call" and
          c.func(b["to_sym"]) == "compare"]
assert icalls, br
cb = icalls[-1]
assert cb["to_src"] == "qsort_dyn.c:11", cb
assert cb["insn"].startswith("call "), cb
# Named only with the C library's debug symbols, never as compare.
if libc_dbg:
    assert cb["from_sym"] and c.func(cb["from_sym"]) != "compare", cb
else:
    assert cb["from_sym"] is None or c.func(cb["from_sym"]) != "compare", cb
# From the library, mapped apart from the PIE (both loaded high).
frm, to = int(cb["from"], 16), int(cb["to"], 16)
assert to > 0x500000000000 and abs(frm - to) > 1 << 32, cb
# Each comparison is an indirect call from the library into compare.
assert all(c.func(b["to_sym"]) == "compare" for b in br
           if b["kind"] == "indirect call"), br
PY
}

btrace_json --last 50 -- "$prog"
expect_rc 139
no_leftovers "$prog"
check $libc_dbg

# As on a machine without the C library's debug symbols.
if [ "$(id -u)" = 0 ] && [ -d /usr/lib/debug ] &&
   unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$@"' \
		sh "$BTRACE" run --json --last 50 -- "$prog" \
		>"$work/out.json" 2>"$work/err"
	rc=$?
	expect_rc 139
	check 0
else
	echo "note: not root or no mount namespace: the run without debug symbols was not tried"
fi
echo ok
