#!/usr/bin/env bash
# A real program's branches, recorded by the single-step backend, encoded
# as the PT stream user-only tracing would leave (tests/tools/ptreal), then
# decoded by btrace decode against the program's ELF: the same branches.
# glibc is kept off its AVX/EVEX string functions, which capstone 4 (the
# software backend's and ptreal's disassembler) cannot all decode.
. "$TESTDIR/e2e/lib/common.sh"
set -e
dir=$work
prog=$TARGETS/recursion

GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX,-BMI2,-EVEX \
	"$TOOLS/captrace" -- "$prog" >"$dir/records.txt"
"$TOOLS/ptreal" "$prog" "$dir/records.txt" "$dir/trace.pt" "$dir/want.txt"
[ "$(wc -l <"$dir/want.txt")" -gt 1000 ]
"$BTRACE" decode --pt "$dir/trace.pt" --elf "$prog" --all | branch_pairs >"$dir/got.txt"
diff -u "$dir/want.txt" "$dir/got.txt" | head -20
cmp -s "$dir/want.txt" "$dir/got.txt"
# The last 32 are the tail.
"$BTRACE" decode --pt "$dir/trace.pt" --elf "$prog" | branch_pairs >"$dir/last.txt"
tail -n 32 "$dir/want.txt" | cmp -s - "$dir/last.txt"
echo ok
