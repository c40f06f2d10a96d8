#!/usr/bin/env bash
# The fast software backend's module filters and triggers, on real programs:
# --only/--exclude let untraced code run natively, mark it with gaps and
# still record callbacks into traced code; --from starts tracing at a
# symbol, --until stops there.
. "$TESTDIR/e2e/lib/common.sh"
FT="$TOOLS/fasttrace"
# a symbol as fasttrace shows it: the file offset (non-PIE: from 0x400000)
addr() {
	local v=$((0x$(nm "$1" | awk -v s="$2" '$3 == s { print $1 }')))
	[ $v -ge $((0x400000)) ] && v=$((v - 0x400000))
	printf '0x%x' $v
}

# qsort in libc calls back into the program, whose comparison crashes.
q="$TARGETS/qsort_dyn"
cmp=$(addr "$q" compare)
for filt in "-o qsort_dyn" "-x libc.so*"; do
	out=$("$FT" $filt -- "$q") || fail "fasttrace $filt"
	echo "$out" | head -1 | grep -q '^stop 1 11$' || fail "$filt: not a SIGSEGV stop: $(echo "$out" | head -1)"
	body=$(echo "$out" | sed -n '3,$p')
	echo "$body" | grep -q 'gap untraced code' || fail "$filt: no untraced gap"
	# nothing recorded from inside libc
	echo "$body" | grep -v '^gap' | awk '{print $(NF-1)}' | grep -q '^libc' &&
		fail "$filt: a branch recorded from libc"
	# the callback: control came back from libc into compare
	echo "$body" | tail -1 | grep -q "^gap [^ ]* qsort_dyn+$cmp gap untraced code$" ||
		fail "$filt: last entry is not the callback into compare: $(echo "$body" | tail -1)"
done
# without a filter, libc's branches are there
"$FT" -- "$q" | grep -v '^gap' | awk '{print $(NF-1)}' | grep -q '^libc' ||
	fail "unfiltered: no branch from libc"

# --from: nothing before fib; --until: stops at sieve, called last.
c="$TARGETS/compute"
fib=$(addr "$c" fib) sieve=$(addr "$c" sieve)
out=$("$FT" -F fib -- "$c" 5) || fail "fasttrace -F"
echo "$out" | sed -n 3p | grep -q "^gap 0x0 compute+$fib gap trace disabled$" ||
	fail "--from: first entry $(echo "$out" | sed -n 3p)"
[ "$(echo "$out" | grep -c 'gap')" = 1 ] || fail "--from: more than one gap"
out=$("$FT" -U sieve -l 2 -- "$c" 5) || fail "fasttrace -U"
echo "$out" | head -1 | grep -q '^stop 4 ' || fail "--until: not a breakpoint stop"
echo "$out" | tail -1 | grep -q "^call compute+0x[0-9a-f]* compute+$sieve$" ||
	fail "--until: last branch $(echo "$out" | tail -1)"
# Triggers in a library, which a dynamically linked program has not mapped
# at its first instruction: they wait for the dynamic loader (pending).
libc=$(ldd "$q" | awk '/libc\.so/ { print $3 }')
qs=$(nm -D --defined-only "$libc" | awk '$3 ~ /^qsort(@|$)/ { print $1; exit }')
[ -n "$qs" ] || fail "no qsort in $libc"
qs=$(printf '0x%x' $((0x$qs)))
out=$("$FT" -F qsort -- "$q") || fail "fasttrace -F qsort"
echo "$out" | sed -n 3p | grep -q "^gap 0x0 libc.so.6+$qs gap trace disabled$" ||
	fail "--from qsort: first entry $(echo "$out" | sed -n 3p)"
[ "$(echo "$out" | grep -c 'gap')" = 1 ] || fail "--from qsort: more than one gap"
out=$("$FT" -U qsort -l 2 -- "$q") || fail "fasttrace -U qsort"
echo "$out" | head -1 | grep -q '^stop 4 ' || fail "--until qsort: not a breakpoint stop"
echo "$out" | tail -1 | grep -q " libc.so.6+$qs$" ||
	fail "--until qsort: last branch $(echo "$out" | tail -1)"
echo "filters and triggers ok"
