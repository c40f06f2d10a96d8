#!/usr/bin/env bash
# The --timeline file opens in speedscope (npm's package, installed by make
# web-deps into build/web and run offline from there) in headless Chromium:
# the page lists the functions of the crashing thread, and a screenshot is
# taken; the --svg picture renders in headless Chromium and is not blank.
# SHOTS=DIR keeps the screenshots there (docs/timeline-*.png are made so).
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
command -v chromium >/dev/null || skip "chromium is not installed (make web-deps)"
ss=$TESTDIR/../build/web/node_modules/speedscope/dist/release/index.html
[ -e "$ss" ] || skip "speedscope is not installed in build/web (make web-deps)"
ss=$(realpath "$ss")
check="python3 $TESTDIR/e2e/lib/timeline_check.py"

# (on instructions: in real time main's wait for its worker dwarfs a, b, c)
"$BTRACE" run --backend soft --timeline "$work/t.json" --svg "$work/t.svg" \
	--timeline-clock instructions \
	--last 12 -- "$TARGETS/timeline" >/dev/null 2>"$work/err"
rc=$?
expect_rc 139

# What the page is to show is in the file: the target's calls, main's
# among them.
$check crash "$work/t.json" || exit 1

# Headless Chromium, without the sandbox (root), a profile of its own,
# a few seconds of virtual time for the page's scripts ($budget ms).
budget=5000
browse() {
	timeout 50 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$work/chromium" --allow-file-access-from-files \
		--hide-scrollbars --virtual-time-budget=$budget "$@" \
		2>>"$work/chromium.log"
}

# speedscope's own way to open a file from the command line (its cli.mjs):
# a script that hands the file to the page, named in the URL.
python3 - "$work/t.json" "$work/load.js" <<'PY'
import base64, json, sys
data = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
open(sys.argv[2], "w").write("speedscope.loadFileFromBase64(%s, %s)"
                             % (json.dumps("timeline.json"), json.dumps(data)))
PY
url="file://$ss#localProfilePath=$work/load.js"
# The sandwich view lists every function as text; tall, so that it lists
# them all.  On a loaded machine the page's scripts may not have run to
# the end in the virtual time given (a full make check once found no main
# on the page, and the same test passed alone each time after): twice
# more, with more.  The file itself was checked above.
for budget in 5000 15000 30000; do
	browse --window-size=1200,8000 --dump-dom "$url&view=sandwich" \
		>"$work/dom.html" ||
		{ tail -5 "$work/chromium.log"; fail "chromium --dump-dom failed"; }
	$check dom "$work/dom.html" main a b c >"$work/dom.out" && break
	cat "$work/dom.out"
	[ $budget = 30000 ] && exit 1
done
grep -q "stopped: SIGSEGV" "$work/dom.html" || fail "no thread name on the page"
browse --window-size=1200,500 --screenshot="$work/speedscope.png" "$url" >/dev/null ||
	{ tail -5 "$work/chromium.log"; fail "chromium --screenshot failed"; }
$check png "$work/speedscope.png" || exit 1

# The SVG as it is, in a window its size.
h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$work/t.svg")
browse --window-size="1200,$h" --screenshot="$work/svg.png" "file://$work/t.svg" >/dev/null ||
	{ tail -5 "$work/chromium.log"; fail "chromium --screenshot of the SVG failed"; }
$check png "$work/svg.png" || exit 1

if [ -n "${SHOTS-}" ]; then
	cp "$work/speedscope.png" "$SHOTS/timeline-speedscope.png"
	cp "$work/svg.png" "$SHOTS/timeline-svg.png"
fi
exit 0
