/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_IMAGE_INTERNAL_H
#define BTRACE_IMAGE_INTERNAL_H

/* The parts of struct bt_image the decoders use; not public. */

#include <stdint.h>

#include "btrace/image.h"

struct pt_image;

/*
 * The libipt view of @image: every section as a cached libipt section (file
 * sections from their files, memory copies through memfds), and a read
 * callback for the fallback reader.  Owned by @image; valid until the next
 * bt_image_add_*() or bt_image_free().
 */
struct pt_image *bt_image_pt(struct bt_image *image);

/*
 * A pointer to the bytes at @addr and how many follow in the same section
 * (sections only, no fallback): the fast path for classifying branches.
 * Returns NULL if no section covers @addr.
 */
const uint8_t *bt_image_peek(struct bt_image *image, uint64_t addr,
			     size_t *avail);

#endif /* BTRACE_IMAGE_INTERNAL_H */
