/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_DEBUGCACHE_H
#define BTRACE_DEBUGCACHE_H

/*
 * The cache of inflated debug files (debugcache.c): copies of debug files
 * whose DWARF sections are compressed, with those sections inflated, in
 * $BTRACE_DEBUG_CACHE (a directory), or $XDG_CACHE_HOME/btrace/debug, or
 * ~/.cache/btrace/debug; BTRACE_DEBUG_CACHE=0 turns it off.  Internal to
 * libbtdecode.
 */

#include <elfutils/libdwfl.h>

/*
 * The cached copy of @mod's debug file, by its build-id, if the file it
 * was made from is there unchanged: its descriptor (*@path its name, the
 * old one freed), or -1.
 */
int bt_debugcache_find(Dwfl_Module *mod, char **path);

/*
 * @fd is the debug file libdwfl found for @mod, @path its name: if its
 * DWARF is compressed, a copy with it inflated goes into the cache for
 * the runs after, used while @path is there unchanged (@fd is left as it
 * is).
 */
void bt_debugcache_add(Dwfl_Module *mod, int fd, const char *path);

#endif /* BTRACE_DEBUGCACHE_H */
