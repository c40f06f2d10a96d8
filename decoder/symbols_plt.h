/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SYMBOLS_PLT_H
#define BTRACE_SYMBOLS_PLT_H

/*
 * The PLT stubs of a module of symbols.c's libdwfl session, internal to
 * the decoder library.
 */

#include <elfutils/libdwfl.h>

#include "image/plt.h"

/*
 * Read @mod's PLT stubs into @plt (file addresses; bt_plt_read), naming
 * each IRELATIVE one after its module's IFUNC symbol; *@bias: the
 * module's load bias.  Returns 0 (also for a module without an ELF file)
 * or bt_plt_read's error.
 */
int bt_sym_plt_load(Dwfl *dwfl, Dwfl_Module *mod, Dwarf_Addr *bias,
		    struct bt_plt *plt);

#endif /* BTRACE_SYMBOLS_PLT_H */
