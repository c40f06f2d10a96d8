// SPDX-License-Identifier: MIT
/*
 * ptreal: the PT stream a real program's branches would leave.  Reads the
 * branch records captrace prints for a statically linked, non-PIE PROGRAM
 * (the software backend's ground truth), encodes them with the synthesizer
 * over the program's own code, and writes the stream and the branches PT
 * can tell ("FROM -> TO" per line).
 *
 *	ptreal PROGRAM RECORDS OUT.pt OUT.txt
 */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "synth/ptsynth.h"

struct code {
	struct bt_image *image;
	struct bt_disasm *dis;
};

static const uint8_t classes[] = {
	[BT_INSN_OTHER] = PS_OTHER,	[BT_INSN_COND] = PS_COND,
	[BT_INSN_JUMP] = PS_JUMP,	[BT_INSN_CALL] = PS_CALL,
	[BT_INSN_RET] = PS_RET,		[BT_INSN_IJUMP] = PS_IJUMP,
	[BT_INSN_ICALL] = PS_ICALL,	[BT_INSN_SYSCALL] = PS_SYSCALL,
	[BT_INSN_INT3] = 0xff,		[BT_INSN_FAR] = 0xff,
};

static int code_insn(void *ctx, uint64_t addr, uint8_t *len, uint8_t *cls,
		     uint64_t *target)
{
	struct code *c = ctx;
	uint8_t buf[BT_INSN_MAX_LEN];
	struct bt_insn insn;
	ssize_t n = bt_image_read(c->image, addr, buf, sizeof(buf));

	if (n <= 0 || bt_insn_decode(c->dis, buf, n, addr, &insn) < 0 ||
	    classes[insn.iclass] == 0xff)
		return -1;
	*len = insn.len;
	*cls = classes[insn.iclass];
	/* capstone 4 misreads some EVEX (AVX-512) instructions as branches. */
	if (buf[0] == 0x62)
		*cls = PS_OTHER;
	*target = insn.target;
	return 0;
}

/* "conditional 20 0" -> BT_BR_COND: the longest kind name that fits. */
static int parse_kind(const char *s)
{
	int k, best = -1;
	size_t best_len = 0;

	for (k = 0; k < BT_BR_MAX; k++) {
		const char *name = bt_branch_kind_name(k);
		size_t len = strlen(name);

		if (!strncmp(s, name, len) && s[len] == ' ' && len > best_len) {
			best = k;
			best_len = len;
		}
	}
	return best;
}

static int read_records(const char *path, struct bt_branch **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct bt_branch *v = NULL;
	size_t alloc = 0;
	char line[256];

	*n = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t from, to;
		int pos, kind;

		if (sscanf(line, "0x%" SCNx64 " 0x%" SCNx64 " %n", &from, &to,
			   &pos) != 2 || (kind = parse_kind(line + pos)) < 0)
			continue;
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			v = realloc(v, alloc * sizeof(*v));
			if (!v)
				return -1;
		}
		memset(&v[*n], 0, sizeof(*v));
		v[*n].from = from;
		v[*n].to = to;
		v[(*n)++].kind = kind;
	}
	fclose(f);
	*out = v;
	return 0;
}

static int grow(struct bt_branch **v, size_t *alloc, size_t k)
{
	if (k + 1 < *alloc)
		return 0;
	*alloc = *alloc ? 2 * *alloc : 1024;
	*v = realloc(*v, *alloc * sizeof(**v));
	return *v ? 0 : -1;
}

static int is_branch(struct code *c, uint64_t addr)
{
	uint8_t len, cls;
	uint64_t target;

	return code_insn(c, addr, &len, &cls, &target) == 0 &&
	       cls != PS_OTHER;
}

/*
 * The software backend steps over syscalls; user-only PT shows each as
 * tracing off and on again, which the decoder reports as a syscall entry.
 * Put those into the truth, walking each block through the code.
 */
static int add_syscalls(struct code *c, uint64_t entry, struct bt_branch **v,
			size_t *n)
{
	struct bt_branch *out = NULL;
	size_t i, k = 0, alloc = 0;
	uint64_t cur = entry;

	for (i = 0; i < *n; i++) {
		const struct bt_branch *br = &(*v)[i];

		/*
		 * Not branches for PT: the software backend records each
		 * iteration of a rep string instruction, and what capstone 4
		 * misreads in EVEX code.
		 */
		if (!is_branch(c, br->from))
			continue;
		while (cur != br->from) {
			uint8_t len, cls;
			uint64_t target;

			if (code_insn(c, cur, &len, &cls, &target) < 0)
				return -1;
			if (grow(&out, &alloc, k) < 0)
				return -1;
			if (cls == PS_SYSCALL) {
				memset(&out[k], 0, sizeof(*out));
				out[k].from = cur;
				out[k].to = cur + len;
				out[k++].kind = BT_BR_SYSCALL;
			}
			cur += len;
		}
		if (grow(&out, &alloc, k) < 0)
			return -1;
		out[k++] = *br;
		cur = br->to;
	}
	free(*v);
	*v = out;
	*n = k;
	return 0;
}

static uint64_t elf_entry(const char *path)
{
	Elf64_Ehdr eh;
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(&eh, sizeof(eh), 1, f) : 0;

	if (f)
		fclose(f);
	return n == 1 && eh.e_type == ET_EXEC ? eh.e_entry : 0;
}

int main(int argc, char **argv)
{
	struct ps_pt_opts po = { .seed = 1, .psb_period = 512, .retcomp = 2,
				 .tnt_mix = 1 };
	struct code c = { bt_image_alloc(), NULL };
	struct ps_stream st;
	struct bt_branch *br;
	uint64_t entry;
	size_t n, i;
	FILE *out;

	if (argc != 5) {
		fprintf(stderr, "usage: ptreal PROGRAM RECORDS OUT.pt OUT.txt\n");
		return 2;
	}
	entry = elf_entry(argv[1]);
	if (!entry || bt_image_add_elf(c.image, argv[1], 0) < 0 ||
	    bt_disasm_alloc(&c.dis) < 0 || read_records(argv[2], &br, &n) < 0 ||
	    !n) {
		fprintf(stderr, "ptreal: cannot load %s or %s\n", argv[1],
			argv[2]);
		return 1;
	}
	if (add_syscalls(&c, entry, &br, &n) < 0 ||
	    ps_pt_encode(&po, code_insn, &c, entry, br, n, &st) < 0) {
		fprintf(stderr, "ptreal: the records do not fit the code\n");
		return 1;
	}
	out = fopen(argv[4], "w");
	if (!out) {
		fprintf(stderr, "ptreal: cannot write %s\n", argv[4]);
		return 1;
	}
	n = ps_pt_visible(br, n);
	for (i = 0; i < n; i++)
		fprintf(out, "%#" PRIx64 " -> %#" PRIx64 "\n", br[i].from,
			br[i].to);
	fclose(out);
	out = fopen(argv[3], "wb");
	if (!out || fwrite(st.buf, 1, st.size, out) != st.size) {
		fprintf(stderr, "ptreal: cannot write %s\n", argv[3]);
		return 1;
	}
	fclose(out);
	ps_stream_release(&st);
	free(br);
	bt_disasm_free(c.dis);
	bt_image_free(c.image);
	return 0;
}
