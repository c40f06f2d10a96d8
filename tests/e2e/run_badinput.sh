#!/usr/bin/env bash
# btrace run on bad input: a one-line error, exit 2 for usage and 1 for the
# rest, no crash and no process left behind.
. "$TESTDIR/e2e/lib/common.sh"

check() {		# expected status, args...
	local want=$1 lines
	shift
	"$BTRACE" run "$@" >"$work/out" 2>"$work/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || fail "btrace run $*: exit $rc, expected $want: $(cat "$work/err")"
	lines=$(wc -l <"$work/err")
	[ "$lines" = 1 ] || fail "btrace run $*: $lines lines of error: $(cat "$work/err")"
	grep -q '^btrace' "$work/err" || fail "btrace run $*: $(cat "$work/err")"
	[ -s "$work/out" ] && fail "btrace run $*: output on stdout: $(cat "$work/out")"
	return 0
}

check 2
check 2 --
check 2 --frobnicate -- /bin/true
check 2 --last
check 2 --last 0 -- /bin/true
check 2 --last -3 -- /bin/true
check 2 --last abc -- /bin/true
check 2 --last 12x -- /bin/true
check 2 --last 10000001 -- /bin/true
check 2 --last 99999999999999999999999 -- /bin/true
check 2 --backend quantum -- /bin/true
check 2 --buffer-size 1000 -- /bin/true
check 2 --buffer-size 64Q -- /bin/true
check 2 --insn --calls -- /bin/true
check 2 -o '' -- /bin/true
check 2 --batch=yes -- /bin/true
check 2 -ex
check 1 -o "$work/no/such/dir/report" -- /bin/true
check 1 --output "$work" -- /bin/true
check 1 -- "$work/does-not-exist"
check 1 -- no-such-program-in-path-btrace
printf '\x7fELF' >"$work/notexec" && chmod 644 "$work/notexec"
check 1 -- "$work/notexec"
head -c 4096 /dev/urandom >"$work/garbage" && printf 'xx' | dd of="$work/garbage" conv=notrunc 2>/dev/null
chmod 755 "$work/garbage"
check 1 -- "$work/garbage"
check 1 -- "$work"
grep -q 'not found' <(check 1 -- "$work/does-not-exist"; cat "$work/err") ||
	fail "no 'not found' in: $(cat "$work/err")"
no_leftovers "$work/garbage"
no_leftovers "$work/notexec"

# --help is not an error.
"$BTRACE" run --help >"$work/out" 2>&1 || fail "run --help failed"
grep -q -- '--last N' "$work/out" || fail "run --help: $(cat "$work/out")"
