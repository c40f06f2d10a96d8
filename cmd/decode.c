// SPDX-License-Identifier: MIT
/*
 * btrace decode: raw PT or BTS streams decoded offline, against code given
 * as ELF files or flat binaries (the inputs ptxed takes).
 *
 *   btrace decode (--pt|--bts|--perf-bts) FILE [--elf FILE[:BASE]]...
 *                 [--raw FILE:ADDR]... [--last N | --all] [--insn] [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "debuginfo.h"
#include "print.h"

#define DECODE_MAX_ELF 64

struct decode_args {
	int format;
	const char *trace;
	size_t last;
	int insn, json;
	struct bt_image *image;
	/* --elf files, for symbols once every option is known */
	char *elf[DECODE_MAX_ELF];
	uint64_t elf_bias[DECODE_MAX_ELF];
	size_t nelf;
};

static void decode_usage(FILE *f)
{
	fprintf(f,
		"usage: btrace decode (--pt|--bts|--perf-bts) FILE [options]\n"
		"  --elf FILE[:BASE]   ELF code, loaded at BASE (0: as linked)\n"
		"  --raw FILE:ADDR     a flat binary at ADDR (repeatable)\n"
		"  --last N            the last N branches (default 32)\n"
		"  --all               every branch\n"
		"  --insn              every instruction, one per line\n"
		"  --json              JSON output\n"
		"  --debug-dir DIR     separate debug files of the --elf files under\n"
		"                      DIR (':' between several), not /usr/lib/debug\n"
		"  --no-debuginfod     fetch nothing from DEBUGINFOD_URLS' servers\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* "FILE:ADDR" (or "FILE" when @optional) into a copy of FILE and ADDR. */
static char *split_addr(const char *arg, uint64_t *addr, int optional)
{
	const char *colon = strrchr(arg, ':');
	char *path;

	*addr = 0;
	if (!colon) {
		if (!optional)
			return NULL;
		return strdup(arg);
	}
	if (parse_u64(colon + 1, addr) < 0)
		return NULL;
	path = strndup(arg, colon - arg);
	return path;
}

/* Keep --elf @path (taken) for symbols. */
static int keep_elf(struct decode_args *a, char *path, uint64_t bias)
{
	if (a->nelf == DECODE_MAX_ELF) {
		fprintf(stderr, "btrace: at most %d --elf files\n",
			DECODE_MAX_ELF);
		free(path);
		return EXIT_USAGE;
	}
	a->elf[a->nelf] = path;
	a->elf_bias[a->nelf++] = bias;
	return 0;
}

static int add_code(struct decode_args *a, const char *arg, int elf)
{
	uint64_t addr;
	char *path = split_addr(arg, &addr, elf);
	struct stat st;
	int err;

	if (!path) {
		fprintf(stderr, "btrace: bad %s argument '%s'\n",
			elf ? "--elf" : "--raw", arg);
		return EXIT_USAGE;
	}
	if (!elf && stat(path, &st) < 0) {
		fprintf(stderr, "btrace: cannot load '%s': %s\n", path,
			strerror(errno));
		free(path);
		return EXIT_FAIL;
	}
	err = elf ? bt_image_add_elf(a->image, path, addr)
		  : bt_image_add_file(a->image, path, 0, st.st_size, addr);
	if (err < 0) {
		fprintf(stderr, "btrace: cannot load '%s': %s\n", path,
			bt_errstr(err));
		free(path);
		return EXIT_FAIL;
	}
	if (elf)
		return keep_elf(a, path, addr);
	free(path);
	return 0;
}

/* Symbols and lines of the --elf files; NULL if none. */
static struct bt_symtab *elf_symbols(const struct decode_args *a)
{
	struct bt_symtab *st = NULL;
	size_t i;

	if (!a->nelf || bt_symtab_alloc(&st, debuginfo_opts()) < 0)
		return NULL;
	for (i = 0; i < a->nelf; i++)
		bt_symtab_add_elf(st, a->elf[i], a->elf_bias[i]);
	return st;
}

/*
 * Map the trace rather than read it: decoding the last N touches only the
 * stretches after the PSBs it starts from, so the cost and the resident
 * memory follow N, not the size of the file.
 */
static int map_file(const char *path, uint8_t **data, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *p = NULL;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "btrace: cannot read '%s': %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "btrace: cannot read '%s': not a regular file\n",
			path);
		close(fd);
		return -1;
	}
	if (st.st_size)
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "btrace: cannot map '%s': %s\n", path,
			strerror(errno));
		return -1;
	}
	*data = p;
	*size = st.st_size;
	return 0;
}

static ssize_t image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return bt_image_read(ctx, addr, buf, len);
}

/* The history as btrace run shows it: one thread, no process. */
static int print_branches(const struct bt_capture *cap,
			  const struct decode_args *a)
{
	struct bt_decode_opts opts = { sizeof(opts), a->last, a->image };
	struct print_ctx pc = { .read = image_read, .read_ctx = a->image };
	struct print_report r = { .backend = bt_format_name(cap->format) };
	struct print_thread th = { 0 };
	struct bt_history *hist;
	int err = bt_decode(cap, &opts, &hist);

	if (err < 0) {
		fprintf(stderr, "btrace: cannot decode '%s': %s\n", a->trace,
			bt_errstr(err));
		return EXIT_FAIL;
	}
	if (bt_disasm_alloc(&pc.dis) < 0)
		pc.dis = NULL;
	pc.symtab = elf_symbols(a);
	pc.color = !a->json && print_want_color(stdout, 0);
	th.hist = hist;
	r.threads = &th;
	r.nthreads = 1;
	if (a->json)
		print_report_json(stdout, &r, &pc);
	else
		print_report_text(stdout, &r, &pc);
	bt_symtab_free(pc.symtab);
	bt_disasm_free(pc.dis);
	bt_history_free(hist);
	return 0;
}

struct insn_out {
	int json, n;
	struct bt_image *image;
	struct bt_disasm *dis;		/* NULL: addresses only */
};

/* "mnemonic operands" of the instruction at @addr, or "" if unknown. */
static const char *insn_text(struct insn_out *o, uint64_t addr, char *buf,
			     size_t size)
{
	uint8_t code[BT_INSN_MAX_LEN];
	ssize_t n;

	buf[0] = '\0';
	if (!o->dis)
		return buf;
	n = bt_image_read(o->image, addr, code, sizeof(code));
	if (n <= 0 || bt_insn_format(o->dis, code, n, addr, buf, size) < 0)
		buf[0] = '\0';
	return buf;
}

static int print_insn(uint64_t addr, int gap, void *ctx)
{
	struct insn_out *o = ctx;
	char text[128];

	if (gap) {
		printf(o->json ? "%s{\"gap\":true}" : "[gap]\n",
		       o->n++ ? "," : "");
		return 0;
	}
	insn_text(o, addr, text, sizeof(text));
	if (o->json)
		printf("%s{\"addr\":\"%#" PRIx64 "\",\"insn\":\"%s\"}",
		       o->n++ ? "," : "", addr, text);
	else
		printf("%#" PRIx64 "  %s\n", addr, text);
	return 0;
}

static int print_insns(const struct bt_capture *cap,
		       const struct decode_args *a)
{
	struct bt_decode_opts opts = { sizeof(opts), a->last, a->image };
	struct insn_out o = { a->json, 0, a->image, NULL };
	int err;

	if (bt_disasm_alloc(&o.dis) < 0)
		o.dis = NULL;
	if (a->json)
		printf("{\"btrace\":1,\"backend\":\"%s\",\"insns\":[",
		       bt_format_name(cap->format));
	err = bt_decode_insns(cap, &opts, print_insn, &o);
	if (a->json)
		printf("]}\n");
	bt_disasm_free(o.dis);
	if (err < 0) {
		fflush(stdout);
		fprintf(stderr, "btrace: cannot decode '%s': %s\n", a->trace,
			bt_errstr(err));
		return EXIT_FAIL;
	}
	return 0;
}

static int set_input(struct decode_args *a, int format, const char *path)
{
	if (a->trace) {
		fprintf(stderr, "btrace: decode takes one trace\n");
		return EXIT_USAGE;
	}
	a->format = format;
	a->trace = path;
	return 0;
}

static const struct option decode_opts[] = {
	{ "pt", required_argument, NULL, 'p' },
	{ "bts", required_argument, NULL, 'b' },
	{ "perf-bts", required_argument, NULL, 'P' },
	{ "elf", required_argument, NULL, 'e' },
	{ "raw", required_argument, NULL, 'r' },
	{ "last", required_argument, NULL, 'n' },
	{ "all", no_argument, NULL, 'a' },
	{ "insn", no_argument, NULL, 'i' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	DEBUGINFO_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static int parse_opt(struct decode_args *a, int c)
{

	switch (c) {
	case 'p':
		return set_input(a, BT_FMT_PT, optarg);
	case 'b':
		return set_input(a, BT_FMT_BTS, optarg);
	case 'P':
		return set_input(a, BT_FMT_PERF_BTS, optarg);
	case 'e':
	case 'r':
		return add_code(a, optarg, c == 'e');
	case 'n':
		a->last = cmd_parse_count(optarg, CMD_MAX_LAST);
		if (!a->last) {
			fprintf(stderr, "btrace: --last wants a number from 1 to "
				"%u, not '%s'\n", CMD_MAX_LAST, optarg);
			return EXIT_USAGE;
		}
		return 0;
	case 'a':
		a->last = 0;
		return 0;
	case 'i':
		a->insn = 1;
		return 0;
	case 'j':
		a->json = 1;
		return 0;
	case 'h':
		decode_usage(stdout);
		return -1;
	case OPT_DEBUG_DIR:
	case OPT_NO_DEBUGINFOD:
		return debuginfo_option(c, optarg);
	}
	decode_usage(stderr);
	return EXIT_USAGE;
}

static int decode_run(struct decode_args *a)
{
	struct bt_capture cap = { .format = a->format };
	int ret;

	if (map_file(a->trace, &cap.data, &cap.size) < 0)
		return EXIT_FAIL;
	ret = a->insn ? print_insns(&cap, a) : print_branches(&cap, a);
	if (cap.size)
		munmap(cap.data, cap.size);
	return ret;
}

int cmd_decode(int argc, char **argv)
{
	struct decode_args a = { .last = 32 };
	int c, ret = 0;

	a.image = bt_image_alloc();
	if (!a.image) {
		fprintf(stderr, "btrace: out of memory\n");
		return EXIT_FAIL;
	}
	optind = 1;
	while (!ret && (c = getopt_long(argc, argv, "", decode_opts,
					NULL)) != -1)
		ret = parse_opt(&a, c);
	if (ret < 0) {
		ret = 0;
	} else if (!ret && (optind < argc || !a.trace)) {
		fprintf(stderr, optind < argc ?
			"btrace: decode: unexpected '%s'\n" :
			"btrace: decode needs --pt, --bts or --perf-bts%s\n",
			optind < argc ? argv[optind] : "");
		ret = EXIT_USAGE;
	} else if (!ret) {
		ret = decode_run(&a);
	}
	while (a.nelf)
		free(a.elf[--a.nelf]);
	bt_image_free(a.image);
	return ret;
}
