// SPDX-License-Identifier: MIT
/*
 * Where native code may come back into a traced module without a symbol
 * saying so (backend_native.h): the program's entry point, which the
 * dynamic loader jumps to, and the start of every function that has
 * unwind information (.eh_frame_hdr's table, which stripped programs and
 * libraries keep), so that callbacks into a stripped program (main called
 * by libc, qsort's comparator) are caught as its symbols' entries are; and
 * the constructors and destructors the dynamic section lists (DT_INIT,
 * DT_FINI and their arrays, as the file has them: link-time addresses).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "backend/soft/fast.h"
#include "rec/backend_native.h"
#include "rec/recorder.h"
#include "tracer/tracer.h"

#define EH_PCREL_SDATA4		0x1b
#define EH_UDATA4		0x03
#define EH_DATAREL_SDATA4	0x3b

struct entries_ctx {
	struct bt_target *t;
	struct bt_recorder *r;
};

static void entry_at(struct entries_ctx *c, uint64_t addr)
{
	if (rec_native_reentry_ok(c->t, addr))
		bt_recorder_reentry_add(c->r, addr);
}

/* The binary search table of the .eh_frame_hdr at @hdr (@len bytes),
 * loaded at @at: each entry's initial location. */
static void eh_table(struct entries_ctx *c, const uint8_t *hdr, size_t len,
		     uint64_t at)
{
	uint32_t count, i;
	int32_t loc;

	if (len < 12 || hdr[0] != 1 || hdr[1] != EH_PCREL_SDATA4 ||
	    hdr[2] != EH_UDATA4 || hdr[3] != EH_DATAREL_SDATA4)
		return;
	memcpy(&count, hdr + 8, 4);
	if (count > (len - 12) / 8)
		return;
	for (i = 0; i < count; i++) {
		memcpy(&loc, hdr + 12 + (size_t)i * 8, 4);
		entry_at(c, at + (uint64_t)(int64_t)loc);
	}
}

/* @n bytes of the file at link-time address @vaddr, or NULL. */
static const uint8_t *file_at(Elf *elf, size_t nph, uint64_t vaddr, size_t n)
{
	size_t i;

	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    vaddr < ph.p_vaddr || vaddr + n > ph.p_vaddr + ph.p_filesz)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + vaddr -
					 ph.p_vaddr), n, ELF_T_BYTE);
		return d && d->d_size == n ? d->d_buf : NULL;
	}
	return NULL;
}

/* The functions of one DT_INIT_ARRAY-like array (@arr, @size bytes). */
static void dyn_array(struct entries_ctx *c, Elf *elf, size_t nph,
		      uint64_t arr, uint64_t size, uint64_t bias)
{
	const uint8_t *p = size <= 1u << 16 ? file_at(elf, nph, arr, size) : NULL;
	uint64_t i, fn;

	for (i = 0; p && i + 8 <= size; i += 8) {
		memcpy(&fn, p + i, 8);
		if (fn && fn != ~0ull)
			entry_at(c, fn + bias);
	}
}

static void dyn_entries(struct entries_ctx *c, Elf *elf, size_t nph,
			const GElf_Phdr *dyn, uint64_t bias)
{
	uint64_t tag[DT_FINI_ARRAYSZ + 1] = { 0 };
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)dyn->p_offset,
					   dyn->p_filesz, ELF_T_BYTE);
	size_t i;

	for (i = 0; d && d->d_buf && (i + 1) * 16 <= d->d_size; i++) {
		uint64_t kv[2];

		memcpy(kv, (const uint8_t *)d->d_buf + i * 16, 16);
		if (kv[0] == DT_NULL)
			break;
		if (kv[0] <= DT_FINI_ARRAYSZ)
			tag[kv[0]] = kv[1];
	}
	if (tag[DT_INIT])
		entry_at(c, tag[DT_INIT] + bias);
	if (tag[DT_FINI])
		entry_at(c, tag[DT_FINI] + bias);
	dyn_array(c, elf, nph, tag[DT_INIT_ARRAY], tag[DT_INIT_ARRAYSZ], bias);
	dyn_array(c, elf, nph, tag[DT_FINI_ARRAY], tag[DT_FINI_ARRAYSZ], bias);
}

static int module_entries(Dwfl_Module *mod, void **userdata, const char *name,
			  Dwarf_Addr base, void *arg)
{
	struct entries_ctx *c = arg;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t i, n;

	(void)userdata, (void)name, (void)base;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return DWARF_CB_OK;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_DYNAMIC)
			dyn_entries(c, elf, n, &ph, bias);
		if (ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
					 ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf)
			eh_table(c, d->d_buf, d->d_size, ph.p_vaddr + bias);
	}
	return DWARF_CB_OK;
}

uint64_t rec_auxv_entry(pid_t pid)
{
	char path[64];
	uint64_t av[2], entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = bt_open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0])
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	return entry;
}

void rec_native_entries(struct bt_target *t, struct bt_recorder *r)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	struct entries_ctx c = { t, r };
	uint64_t entry;
	Dwfl *d;

	entry = rec_auxv_entry(bt_recorder_pid(r));
	if (entry)
		entry_at(&c, entry);
	d = dwfl_begin(&cb);
	if (!d)
		return;
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, bt_recorder_pid(r)) == 0) {
		dwfl_report_end(d, NULL, NULL);
		dwfl_getmodules(d, module_entries, &c, 0);
	}
	dwfl_end(d);
}
