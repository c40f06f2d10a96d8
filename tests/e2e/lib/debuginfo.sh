# SPDX-License-Identifier: MIT
# Sourced after common.sh by the symbol tests: a test program stripped, with
# its debug information kept apart as distributions ship it.

# The GNU build-id of ELF file $1, in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID:/ { print $3 }'
}

# Copy ELF file $1 to $2 stripped of everything (no .symtab, no DWARF),
# and its debug information to $2.debug (objcopy --only-keep-debug).
# With $3 = link, $2 also names $2.debug in a .gnu_debuglink.
split_debug() {
	objcopy --only-keep-debug "$1" "$2.debug" || fail "objcopy --only-keep-debug"
	if [ "${3-}" = link ]; then
		objcopy --strip-all --add-gnu-debuglink="$2.debug" "$1" "$2" ||
			fail "objcopy --add-gnu-debuglink"
	else
		objcopy --strip-all "$1" "$2" || fail "objcopy --strip-all"
	fi
	readelf -S "$2" | grep -q debug_info && fail "$2 is not stripped"
	return 0
}

# Put debug file $1 of ELF file $2 under $3/.build-id/xx/yyyy.debug.
by_build_id() {
	local id
	id=$(build_id "$2")
	[ -n "$id" ] || fail "$2 has no build-id"
	mkdir -p "$3/.build-id/${id:0:2}"
	cp "$1" "$3/.build-id/${id:0:2}/${id:2}.debug"
}

# The line of source file $1 holding text $2.
src_line() {
	grep -nF -- "$2" "$1" | head -n 1 | cut -d: -f1
}
