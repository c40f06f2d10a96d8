// SPDX-License-Identifier: MIT
/*
 * A program of a user of the installed libraries (tests/e2e/install.sh
 * builds it through pkg-config): decode a raw PT file against flat code
 * and print every entry as "FROM -> TO", gaps as "[gap]", as ptsynth's
 * truth.txt has them.
 *
 *   install_decode TRACE.pt CODE.bin ADDR
 */
#include <btrace/btrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int read_all(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0)
		return -1;
	*size = st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data || fread(*data, 1, *size, f) != *size)
		return -1;
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct bt_capture cap = { .format = BT_FMT_PT };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_history *hist;
	struct stat st;
	size_t i;
	int err;

	if (argc != 4 || read_all(argv[1], &cap.data, &cap.size) < 0 ||
	    stat(argv[2], &st) < 0) {
		fprintf(stderr, "usage: install_decode TRACE.pt CODE.bin ADDR\n");
		return 2;
	}
	opts.image = bt_image_alloc();
	err = opts.image ? bt_image_add_file(opts.image, argv[2], 0,
					     st.st_size,
					     strtoull(argv[3], NULL, 0))
			 : -bte_nomem;
	if (err >= 0)
		err = bt_decode(&cap, &opts, &hist);
	if (err < 0) {
		fprintf(stderr, "install_decode: %s\n", bt_errstr(err));
		return 1;
	}
	for (i = 0; i < hist->count; i++) {
		const struct bt_branch *b = &hist->branch[i];

		if (b->kind == BT_BR_GAP)
			printf("[gap]\n");
		else
			printf("%#" PRIx64 " -> %#" PRIx64 "\n", b->from, b->to);
	}
	bt_history_free(hist);
	bt_image_free(opts.image);
	bt_capture_release(&cap);
	return 0;
}
