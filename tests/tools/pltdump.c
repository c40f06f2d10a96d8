// SPDX-License-Identifier: MIT
/*
 * pltdump: the PLT stub names btrace computes for ELF files, one line per
 * stub in objdump -d's label format, for comparison with binutils.
 *
 *   pltdump [-r] FILE...
 *
 * -r names IRELATIVE stubs by their resolver, as btrace shows them;
 * without it they read "*ABS*+0xADDEND@plt", as in binutils.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image/plt.h"

static int dump(const char *path, int named)
{
	struct bt_plt plt;
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t i;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || bt_plt_read(elf, named ? bt_plt_elf_namer : NULL, elf, &plt) < 0) {
		fprintf(stderr, "pltdump: %s: cannot read\n", path);
		close(fd);
		return 1;
	}
	for (i = 0; i < plt.count; i++)
		printf("%016" PRIx64 " <%s>: %" PRIu64 "\n", plt.sym[i].addr,
		       plt.sym[i].name, plt.sym[i].size);
	bt_plt_release(&plt);
	elf_end(elf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, named = 0, ret = 0;

	if (argc > 1 && !strcmp(argv[1], "-r")) {
		named = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: pltdump [-r] FILE...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (; i < argc; i++)
		ret |= dump(argv[i], named);
	return ret;
}
