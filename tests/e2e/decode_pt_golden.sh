#!/usr/bin/env bash
# Golden PT decoder tests (tests/golden/pt/*.ptt): each fixture holds the
# code (GNU as, Intel syntax, loaded at 0x1000), the packets of its trace
# ("# @pt", pttc's notation, encoded by libipt's encoder through ptenc) and
# what btrace decode must print: "# @insn" every instruction of --insn,
# "# @branch" every branch of --all ("FROM -> TO  KIND").  "%label" is the
# label's address.
. "$TESTDIR/e2e/lib/common.sh"
dir=$work
org=0x1000
command -v as >/dev/null && command -v objcopy >/dev/null ||
	skip "GNU as and objcopy (binutils) are needed"

# The fixture's lines tagged @TAG, %labels replaced by their addresses.
tagged() {	# tag fixture
	sed -n "s/^# @$1 //p" "$2" | sed -f "$dir/labels.sed"
}

run_one() {	# fixture
	local f=$1
	{ echo ".intel_syntax noprefix"; grep -v '^#' "$f"; } >"$dir/code.s"
	as --64 -o "$dir/code.o" "$dir/code.s" &&
		objcopy -O binary -j .text "$dir/code.o" "$dir/code.bin" ||
		return 1
	# Longest names first, so that %l1 does not eat %l10.
	nm "$dir/code.o" | while read -r addr _ name; do
		printf '%d s/%%%s\\b/%#x/g\n' ${#name} "$name" $((0x$addr + org))
	done | sort -rn | cut -d' ' -f2- >"$dir/labels.sed"
	tagged pt "$f" | "$TOOLS/ptenc" "$dir/trace.pt" || return 1
	tagged insn "$f" >"$dir/want.insn"
	tagged branch "$f" >"$dir/want.branch"
	# The instruction rows, columns joined by two spaces as the fixture's.
	"$BTRACE" decode --pt "$dir/trace.pt" --raw "$dir/code.bin:$org" \
		--all --insn >"$dir/insn.out" || return 1
	sed -En 's/^  (0x[0-9a-f]+) +/\1  /p' "$dir/insn.out" >"$dir/got.insn"
	"$BTRACE" decode --pt "$dir/trace.pt" --raw "$dir/code.bin:$org" \
		--all --json >"$dir/got.json" || return 1
	python3 -c '
import json, sys
for b in json.load(open(sys.argv[1]))["threads"][0]["branches"]:
    print("%s -> %s  %s" % (b["from"], b["to"], b["kind"]))
' "$dir/got.json" >"$dir/got.branch" || return 1
	# The last 32 (stretches decoded from the last PSB back) are the same.
	"$BTRACE" decode --pt "$dir/trace.pt" --raw "$dir/code.bin:$org" \
		--json >"$dir/last.json" || return 1
	python3 -c '
import json, sys
a, b = (json.load(open(f))["threads"][0]["branches"] for f in sys.argv[1:])
assert a == b, "--last differs from --all"
' "$dir/got.json" "$dir/last.json" || return 1
	diff -u "$dir/want.insn" "$dir/got.insn" &&
		diff -u "$dir/want.branch" "$dir/got.branch"
}

status=0 n=0
for f in "$TESTDIR"/golden/pt/*.ptt; do
	n=$((n + 1))
	if run_one "$f"; then
		echo "ok    $(basename "$f")"
	else
		echo "FAIL  $(basename "$f")"
		status=1
	fi
done
[ $n -gt 0 ] || { echo "no fixtures in $TESTDIR/golden/pt"; exit 1; }
exit $status
