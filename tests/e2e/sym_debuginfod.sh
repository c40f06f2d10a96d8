#!/usr/bin/env bash
# debuginfod: a real server (Debian's debuginfod) on 127.0.0.1 serves the
# debug file of a stripped program that nothing on this machine has.  With
# DEBUGINFOD_URLS naming it, btrace fetches it as gdb does (into a fresh
# DEBUGINFOD_CACHE_PATH), names the functions and lines, and says the
# download on stderr, never in the JSON on stdout; the next run uses the
# cache.  --no-debuginfod and an empty DEBUGINFOD_URLS fetch nothing and
# read no cache: the server sees no request.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/debuginfo.sh"
command -v debuginfod >/dev/null ||
	{ echo "debuginfod is not installed (Debian: apt-get install debuginfod)"; exit 77; }
debuginfod --version >/dev/null 2>&1 ||
	{ echo "the debuginfod server cannot run here: $(debuginfod --version 2>&1 | tail -n 1)"; exit 77; }
src=$TESTDIR/targets/plt_dyn.c
l_work=$(src_line "$src" 'puts("work")')
prog=$work/bin/prog
mkdir -p "$work/bin" "$work/srv"
split_debug "$TARGETS/plt_dyn" "$prog"
mv "$prog.debug" "$work/srv/"
id=$(build_id "$prog")

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$work/srv" -p "$port" -d "$work/index.sqlite" -t 0 -g 0 \
	>"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
url=http://127.0.0.1:$port
# Ready once it has indexed the debug file (asked without the client).
python3 - "$url/buildid/$id/debuginfo" <<'PY' || { cat "$work/server.log"; fail "the server never served $id"; }
import sys, time, urllib.request
for _ in range(300):
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
requests() { grep -c "GET /buildid/$id/" "$work/server.log"; }

check() {	# JSON, 1: named from the server's debug file
	python3 - "$1" "$2" "$l_work" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
named, l_work = sys.argv[2] == "1", sys.argv[3]
br = c.stopped_thread(doc)
calls = [b for b in br if b["kind"] == "call" and b["to_sym"] == "puts@plt"]
assert len(calls) == 2, br[-60:]
if named:
    c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="work")
    assert c.func(calls[-1]["from_sym"]) == "work", calls[-1]
    assert calls[-1]["from_src"] == "plt_dyn.c:" + l_work, calls[-1]
else:
    assert doc["stop"]["sym"] is None and calls[-1]["from_sym"] is None, calls[-1]
    assert calls[-1]["from_src"] is None, calls[-1]
PY
}

# Fetched: names, lines, the download said on stderr only.
before=$(requests)
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$work/cache btrace_json --last 400 -- "$prog"
expect_rc 139
cat "$work/err"
check "$work/out.json" 1
grep -qx "btrace: downloading separate debug info for $prog\.\.\." "$work/err" ||
	fail "the download was not said on stderr"
[ "$(requests)" -gt "$before" ] || fail "the server saw no request"
ls "$work/cache/$id/debuginfo" >/dev/null || fail "not in the cache"

# From the cache: the same, without a download.
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$work/cache \
	"$BTRACE" run --no-color --last 400 -- "$prog" >"$work/out.txt" 2>"$work/err"
grep -E "work\+0x[0-9a-f]+ +plt_dyn.c:$l_work +call .*puts@plt" "$work/out.txt" ||
	fail "text: work and its line not named from the cache"
grep -q "downloading separate debug info for $prog" "$work/err" &&
	fail "downloaded again despite the cache"

# Off: --no-debuginfod, or an empty DEBUGINFOD_URLS; not even the cache.
before=$(requests)
for cache in "$work/cache2" "$work/cache"; do
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$cache \
		btrace_json --last 400 --no-debuginfod -- "$prog"
	expect_rc 139
	check "$work/out.json" 0
	[ -s "$work/err" ] && grep -q downloading "$work/err" && fail "--no-debuginfod downloaded"
	DEBUGINFOD_URLS= DEBUGINFOD_CACHE_PATH=$cache btrace_json --last 400 -- "$prog"
	expect_rc 139
	check "$work/out.json" 0
done
[ "$(requests)" = "$before" ] || fail "the server was asked while off"
[ -e "$work/cache2" ] && fail "a cache was made while off"
echo ok
