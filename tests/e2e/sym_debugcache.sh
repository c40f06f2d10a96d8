#!/usr/bin/env bash
# The cache of inflated debug files (decoder/debugcache.c), on libc's debug
# file, compressed as Debian ships it:
# - the first run copies it with its DWARF inflated into the cache, named
#   by build-id, with what it was made from beside it (.src); the runs
#   after read the copy (its time touched) and name the same source lines
#   as a run without the cache (BTRACE_DEBUG_CACHE=0, which writes
#   nothing);
# - a damaged copy, or one whose source changed, is not used and is made
#   again; copies unused for 30 days go when one is written, and what a
#   killed run left half written after a day;
# - the directory: BTRACE_DEBUG_CACHE, else $XDG_CACHE_HOME/btrace/debug,
#   else ~/.cache/btrace/debug.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd readelf setarch ldd
libc=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
[ -n "$libc" ] || skip "/bin/true is not linked with libc"
id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -e "$dbg" ] || skip "no debug file for $libc ($dbg; Debian: libc6-dbg)"
readelf -SW "$dbg" 2>/dev/null | grep -q '\.debug_info .* C ' ||
	skip "$dbg: its DWARF is not compressed"
cache=$work/cache
copy=$cache/$id.debug

# The source lines of a run of /bin/true (env: what run needs set).
lines() {
	env "$@" setarch -R "$BTRACE" run -- /bin/true 2>/dev/null |
		grep -o '[A-Za-z0-9_-]*\.[ch]:[0-9]*'
}

want=$(lines BTRACE_DEBUG_CACHE="$cache")
echo "$want" | grep -q '^exit\.c:' || fail "no line of libc's exit.c: $want"
[ -s "$copy" ] && [ -s "$cache/$id.src" ] || fail "no copy in $cache: $(ls -la "$cache")"
readelf -SW "$copy" 2>/dev/null | grep -q '\.debug_[a-z_]* .* C ' &&
	fail "the copy is still compressed"
grep -q " $dbg\$" "$cache/$id.src" ||
	grep -q " $(readlink -f "$dbg")\$" "$cache/$id.src" ||
	fail "the copy's source: $(cat "$cache/$id.src")"
size=$(stat -c %s "$copy")
src=$(cat "$cache/$id.src")
echo "first run: $(echo "$want" | wc -l) lines, copy of $size bytes"

# Read from the cache: the same lines, the copy's time touched.
touch -d '2 days ago' "$copy"
[ "$(lines BTRACE_DEBUG_CACHE="$cache")" = "$want" ] || fail "other lines from the copy"
[ -n "$(find "$copy" -mmin -60)" ] || fail "the copy was not used"

# Without the cache: the same lines, nothing written.
[ "$(lines BTRACE_DEBUG_CACHE=0 HOME="$work/home" XDG_CACHE_HOME=)" = "$want" ] ||
	fail "other lines without the cache"
[ ! -e "$work/home" ] || fail "BTRACE_DEBUG_CACHE=0 wrote $(find "$work/home")"

# A damaged copy: not used, made again.
truncate -s 4096 "$copy"
[ "$(lines BTRACE_DEBUG_CACHE="$cache")" = "$want" ] || fail "other lines with a damaged copy"
[ "$(stat -c %s "$copy")" = "$size" ] || fail "the damaged copy was not made again"

# A copy whose source changed (its size, as an upgrade would): made again.
echo "1 2 3 4.5 $dbg" >"$cache/$id.src"
touch -d '2 days ago' "$copy"
[ "$(lines BTRACE_DEBUG_CACHE="$cache")" = "$want" ] || fail "other lines after the source changed"
[ "$(cat "$cache/$id.src")" = "$src" ] || fail "the source was not written again: $(cat "$cache/$id.src")"

# Copies unused for 30 days go when one is written.
: >"$cache/0123.debug"
: >"$cache/0123.src"
: >"$cache/0124.debug"
: >"$cache/0125.debug.99.tmp"
: >"$cache/0126.debug.98.tmp"
touch -d '40 days ago' "$cache/0123.debug" "$cache/0123.src"
touch -d '2 days ago' "$cache/0125.debug.99.tmp"
rm "$copy"
lines BTRACE_DEBUG_CACHE="$cache" >/dev/null
[ -s "$copy" ] || fail "no copy made again"
[ ! -e "$cache/0123.debug" ] && [ ! -e "$cache/0123.src" ] || fail "an old copy is left"
[ ! -e "$cache/0125.debug.99.tmp" ] || fail "a killed run's temporary file is left"
[ -e "$cache/0124.debug" ] && [ -e "$cache/0126.debug.98.tmp" ] ||
	fail "a copy in use, or one being written, was removed"

# Where it goes without BTRACE_DEBUG_CACHE.
lines BTRACE_DEBUG_CACHE= XDG_CACHE_HOME="$work/xdg" >/dev/null
[ -s "$work/xdg/btrace/debug/$id.debug" ] || fail "nothing in \$XDG_CACHE_HOME/btrace/debug"
lines BTRACE_DEBUG_CACHE= XDG_CACHE_HOME= HOME="$work/home2" >/dev/null
[ -s "$work/home2/.cache/btrace/debug/$id.debug" ] || fail "nothing in ~/.cache/btrace/debug"
echo "ok: read from the copy, made again when damaged or stale, old ones swept"
