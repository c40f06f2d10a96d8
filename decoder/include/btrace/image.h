/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_IMAGE_H
#define BTRACE_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "btrace/maps.h"

/*
 * The code image of a process: which bytes sit at which address.  The PT
 * decoder follows the program through it; the BTS and software decoders use
 * it to classify and disassemble branch instructions.
 *
 * Sections come from ELF files at their load addresses, flat binaries, or
 * copies of memory (vDSO, JIT code).  A fallback reader (a live process)
 * answers for addresses no section covers.  Later sections win on overlap.
 * File contents are read once and cached, and so is libipt's view of the
 * image, across decodes.  One image serves one thread at a time.
 */

struct bt_image;

/* Returns bytes read into @buf from @addr, 0 if unknown, or < 0. */
typedef ssize_t (*bt_image_read_fn)(void *ctx, uint64_t addr, void *buf,
				    size_t len);

struct bt_image *bt_image_alloc(void);
void bt_image_free(struct bt_image *image);

/* The loadable segments of ELF @path, relocated by @bias (0 for non-PIE). */
int bt_image_add_elf(struct bt_image *image, const char *path, uint64_t bias);

/* @size bytes of @path from @offset, at @vaddr. */
int bt_image_add_file(struct bt_image *image, const char *path,
		      uint64_t offset, uint64_t size, uint64_t vaddr);

/* A copy of @size bytes at @vaddr (copied; @bytes may be freed after). */
int bt_image_add_mem(struct bt_image *image, const void *bytes, size_t size,
		     uint64_t vaddr);

/*
 * The executable mappings of @maps: file-backed ones from their files,
 * the others (vDSO, anonymous) read through @read now.
 */
int bt_image_add_maps(struct bt_image *image, const struct bt_maps *maps,
		      bt_image_read_fn read, void *ctx);

/* Ask @read for addresses no section covers (e.g. a live process). */
void bt_image_set_fallback(struct bt_image *image, bt_image_read_fn read,
			   void *ctx);

/* Read up to @len bytes at @addr; returns the count (0: unknown) or < 0. */
ssize_t bt_image_read(struct bt_image *image, uint64_t addr, void *buf,
		      size_t len);

#endif /* BTRACE_IMAGE_H */
