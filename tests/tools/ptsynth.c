// SPDX-License-Identifier: MIT
/*
 * ptsynth: write a synthesized trace and its ground truth into a directory,
 * for end-to-end tests of btrace decode and for fuzz corpora.
 *
 *   ptsynth DIR [SEED [BRANCHES [PSB_PERIOD]]]
 *
 * DIR/code.bin      the generated code, to load at 0x400000 (--raw)
 * DIR/trace.pt      its PT stream             DIR/trace.bts  intel_bts records
 * DIR/trace.perfbts perf BTS samples (user only)
 * DIR/truth.txt     "FROM -> TO" per entry PT can tell (gaps as "[gap]")
 * DIR/insns.txt     every instruction address, in order
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "synth/ptsynth.h"

#define BASE 0x400000ull

static int write_file(const char *dir, const char *name, const void *buf,
		      size_t size)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	ok = fwrite(buf, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static FILE *open_text(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "w");
}

static void write_truth(FILE *f, const struct bt_branch *br, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (br[i].kind == BT_BR_GAP)
			fprintf(f, "[gap]\n");
		else
			fprintf(f, "%#" PRIx64 " -> %#" PRIx64 "\n",
				br[i].from, br[i].to);
	}
}

static void write_insns(FILE *f, const struct ps_prog *p,
			const struct bt_branch *br, size_t n)
{
	uint64_t cur = p->entry;
	size_t i;

	for (i = 0; i < n; i++) {
		if (br[i].kind == BT_BR_GAP) {
			fprintf(f, "[gap]\n");
		} else {
			while (cur != br[i].from) {
				fprintf(f, "%#" PRIx64 "\n", cur);
				cur += ps_prog_insn(p, cur)->len;
			}
			if (br[i].kind != BT_BR_INTR)
				fprintf(f, "%#" PRIx64 "\n", cur);
		}
		cur = br[i].to;
	}
}

int main(int argc, char **argv)
{
	struct ps_walk_opts wo = { .seed = 1, .nbranch = 1000, .p_taken = 0.5,
				   .p_intr = 0.01, .p_ovf = 0.005 };
	struct ps_pt_opts po = { .seed = 1, .psb_period = 2048, .retcomp = 2,
				 .p_irq = 0.01, .tnt_mix = 1 };
	struct ps_stream st;
	struct bt_branch *br;
	struct ps_prog *p;
	uint8_t *bts, *perf;
	size_t n, btsize, perfsize;
	FILE *truth, *insns;

	if (argc < 2) {
		fprintf(stderr, "usage: ptsynth DIR [SEED [BRANCHES [PSB]]]\n");
		return 2;
	}
	if (argc > 2)
		wo.seed = po.seed = strtoull(argv[2], NULL, 0);
	if (argc > 3)
		wo.nbranch = strtoull(argv[3], NULL, 0);
	if (argc > 4)
		po.psb_period = strtoull(argv[4], NULL, 0);
	p = ps_prog_gen(wo.seed, 16, BASE);
	if (!p || ps_walk(p, &wo, &br, &n) < 0 ||
	    ps_pt_encode(&po, ps_prog_insn_fn, p, p->entry, br, n, &st) < 0 ||
	    ps_bts_encode(br, n, 0, 0, 1, &bts, &btsize) < 0 ||
	    ps_bts_encode(br, n, 1, 0, 0, &perf, &perfsize) < 0) {
		fprintf(stderr, "ptsynth: cannot synthesize\n");
		return 1;
	}
	n = ps_pt_visible(br, n);
	truth = open_text(argv[1], "truth.txt");
	insns = open_text(argv[1], "insns.txt");
	if (!truth || !insns ||
	    write_file(argv[1], "code.bin", p->code, p->size) < 0 ||
	    write_file(argv[1], "trace.pt", st.buf, st.size) < 0 ||
	    write_file(argv[1], "trace.bts", bts, btsize) < 0 ||
	    write_file(argv[1], "trace.perfbts", perf, perfsize) < 0) {
		fprintf(stderr, "ptsynth: cannot write to %s\n", argv[1]);
		return 1;
	}
	write_truth(truth, br, n);
	write_insns(insns, p, br, n);
	fclose(truth);
	fclose(insns);
	printf("%zu entries, %zu bytes of PT, %zu of BTS\n", n, st.size,
	       btsize);
	free(bts);
	free(perf);
	free(br);
	ps_stream_release(&st);
	ps_prog_free(p);
	return 0;
}
