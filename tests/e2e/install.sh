#!/usr/bin/env bash
# make install into a temporary DESTDIR (PREFIX=/usr), then use what it
# installed as a user would: a C program built through pkg-config against
# the installed headers and libraries (shared, then static) decodes a
# synthesized PT trace; the installed btrace runs a crashing program; the
# installed GDB plugin runs in gdb's batch mode; make uninstall leaves
# nothing behind.
. "$TESTDIR/e2e/lib/common.sh"
root=$TESTDIR/..
dest=$work/dest
command -v pkg-config >/dev/null || { echo "pkg-config is not installed"; exit 77; }

make --no-print-directory -C "$root" install DESTDIR="$dest" PREFIX=/usr \
	NO_DEPS=1 >"$work/make.out" 2>&1 || { cat "$work/make.out"; fail "make install"; }

# What is where, the shared libraries under their sonames.
for f in bin/btrace share/man/man1/btrace.1 share/gdb/python/btrace.py \
	include/btrace/btrace.h include/btrace/decode.h lib/libbtrace.a \
	lib/libbtdecode.a lib/pkgconfig/libbtrace.pc lib/pkgconfig/libbtdecode.pc; do
	[ -f "$dest/usr/$f" ] || fail "not installed: /usr/$f"
done
for l in libbtrace libbtdecode; do
	[ "$(readlink "$dest/usr/lib/$l.so")" = $l.so.0 ] || fail "$l.so link"
	readelf -d "$dest/usr/lib/$l.so.0" | grep -q "SONAME.*\[$l\.so\.0\]" ||
		fail "$l.so.0 has no soname $l.so.0"
done
readelf -d "$dest/usr/lib/libbtdecode.so.0" | grep -q "NEEDED.*\[libbtrace\.so\.0\]" ||
	fail "libbtdecode does not name libbtrace"
cmp -s "$dest/usr/share/man/man1/btrace.1" "$root/docs/btrace.1" || fail "man page"

# 1. A program against the installed headers and libraries, found by
#    pkg-config in the DESTDIR (the sysroot prefixes -I and -L).
export PKG_CONFIG_LIBDIR=$dest/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
[ "$(pkg-config --modversion libbtdecode)" = "$("$BTRACE" version | cut -d' ' -f2)" ] ||
	fail "pkg-config version"
mkdir "$work/synth" && "$TOOLS/ptsynth" "$work/synth" 11 2000 2048 >/dev/null || fail "ptsynth"
prog=$work/install_decode
cc -o "$prog" "$TESTDIR/e2e/install_decode.c" $(pkg-config --cflags --libs libbtdecode) ||
	fail "cannot build against the installed shared libraries"
readelf -d "$prog" | grep -q "NEEDED.*\[libbtdecode\.so\.0\]" || fail "not linked shared"
LD_LIBRARY_PATH=$dest/usr/lib "$prog" "$work/synth/trace.pt" "$work/synth/code.bin" 0x400000 \
	>"$work/shared.txt" || fail "the shared build does not run"
diff -u "$work/synth/truth.txt" "$work/shared.txt" | head -20
cmp -s "$work/synth/truth.txt" "$work/shared.txt" || fail "shared: decoded branches differ"
cc -o "$prog.static" "$TESTDIR/e2e/install_decode.c" $(pkg-config --cflags libbtdecode) \
	$(pkg-config --libs-only-L libbtdecode) -Wl,-Bstatic -lbtdecode -lbtrace -Wl,-Bdynamic \
	$(pkg-config --static --libs-only-l libbtdecode | sed 's/-lbtdecode\|-lbtrace//g') ||
	fail "cannot build against the installed static libraries"
readelf -d "$prog.static" | grep -q "libbt" && fail "the static build needs a shared libbt*"
"$prog.static" "$work/synth/trace.pt" "$work/synth/code.bin" 0x400000 >"$work/static.txt" ||
	fail "the static build does not run"
cmp -s "$work/synth/truth.txt" "$work/static.txt" || fail "static: decoded branches differ"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

# 2. The installed btrace on a crashing program.
"$dest/usr/bin/btrace" run --no-color --last 4 -- "$TARGETS/crash_null" >"$work/run.out" 2>&1
rc=$?
[ $rc = 139 ] || { cat "$work/run.out"; fail "installed btrace run exited $rc"; }
grep -Eq "call +-> 0x[0-9a-f]+ +store_value" "$work/run.out" ||
	{ cat "$work/run.out"; fail "installed btrace run: no call of store_value"; }

# 3. The installed GDB plugin knows the installed program, and works.
if command -v gdb >/dev/null && gdb -nx -batch -ex 'python import gdb' >/dev/null 2>&1; then
	plugin=$dest/usr/share/gdb/python/btrace.py
	grep -q '^_INSTALLED_PROGRAM = "/usr/bin/btrace"$' "$plugin" ||
		fail "the plugin does not name the installed btrace"
	timeout 120 gdb -nx -batch -ex "source $plugin" \
		-ex "set btrace-program $dest/usr/bin/btrace" -ex "show btrace-program" \
		-ex "file $TARGETS/crash_null" -ex start -ex "btrace continue" \
		-ex "btrace last 4" -ex kill >"$work/gdb.out" 2>&1
	grep -q "btrace program: $dest/usr/bin/btrace" "$work/gdb.out" &&
	grep -q "Program received signal SIGSEGV" "$work/gdb.out" &&
	grep -Eq "^ *-1 .* call +-> 0x[0-9a-f]+ +store_value" "$work/gdb.out" ||
		{ sed 's/^/    /' "$work/gdb.out"; fail "the installed plugin in gdb"; }
	no_leftovers "$TARGETS/crash_null"
	# On GDB's Python path (with PREFIX=/usr: its data directory's), an
	# import loads it too.
	gdb -nx -batch -ex "python import sys; sys.path.insert(0, '${plugin%/*}')" \
		-ex "python import btrace" -ex "show btrace-program" >"$work/gdb.out" 2>&1
	grep -q "btrace program: /usr/bin/btrace\|btrace program: .*btrace" "$work/gdb.out" ||
		{ sed 's/^/    /' "$work/gdb.out"; fail "python import btrace"; }
else
	echo "note: no gdb with Python: the plugin was not run"
fi

# 4. make uninstall removes every file.
make --no-print-directory -C "$root" uninstall DESTDIR="$dest" PREFIX=/usr \
	NO_DEPS=1 >"$work/make.out" 2>&1 || { cat "$work/make.out"; fail "make uninstall"; }
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || fail "left after make uninstall: $left"
echo ok
