#!/usr/bin/env bash
# btrace decode on synthesized BTS: intel_bts records (with the kernel's,
# joined into syscalls) and perf samples give the walk's branches back.
. "$TESTDIR/e2e/lib/common.sh"
set -e
dir=$work

"$TOOLS/ptsynth" "$dir" 3 2000 >/dev/null
raw="--raw $dir/code.bin:0x400000"

# intel_bts: every entry the walk has; BTS has no gaps of its own here but
# the walk's overflows lose records without a trace: compare up to the
# first one.  (truth.txt is what PT can tell: BTS may have a few more.)
"$BTRACE" decode --bts "$dir/trace.bts" $raw --all | branch_pairs >"$dir/got.txt"
n=$(grep -n '^\[gap\]' "$dir/truth.txt" | head -1 | cut -d: -f1)
n=$(( ${n:-$(( $(wc -l <"$dir/truth.txt") + 1 ))} - 1 ))
[ "$n" -gt 20 ]
head -n "$n" "$dir/truth.txt" >"$dir/want.txt"
head -n "$n" "$dir/got.txt" | cmp -s - "$dir/want.txt"

# Kinds come from the code; kernel records join into interrupts.
"$BTRACE" decode --bts "$dir/trace.bts" $raw --all >"$dir/out.txt"
for k in call return conditional interrupt; do
	grep -q " $k *-> " "$dir/out.txt"
done

# perf samples: the same branches; the last 5 are the tail.
"$BTRACE" decode --perf-bts "$dir/trace.perfbts" $raw --last 5 | branch_pairs >"$dir/p.txt"
[ "$(wc -l <"$dir/p.txt")" = 5 ]

# Instructions between branches, walked through the code.
"$BTRACE" decode --bts "$dir/trace.bts" $raw --insn --last 3 >"$dir/i.txt"
[ "$(grep -c '^  0x' "$dir/i.txt")" -ge 3 ]
echo ok
