// SPDX-License-Identifier: MIT
/*
 * btrace decode: raw PT or BTS streams decoded offline, against code given
 * as ELF files or flat binaries (the inputs ptxed takes).
 *
 *   btrace decode (--pt|--bts|--perf-bts) FILE [--elf FILE[:BASE]]...
 *                 [--raw FILE:ADDR]... [--last N | --all] [--insn | --calls]
 *                 [--json] [-o FILE]
 */
#include <errno.h>
#include <fcntl.h>
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
#include "opts.h"
#include "print.h"
#include "view.h"

#define DECODE_MAX_ELF 64

struct decode_args {
	int format;
	const char *trace;
	struct bt_image *image;
	int err;		/* loading code failed: the exit status */
	/* --elf files, for symbols once every option is known */
	char *elf[DECODE_MAX_ELF];
	uint64_t elf_bias[DECODE_MAX_ELF];
	size_t nelf;
};

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

static int add_code(const struct cmd_opts *o, struct decode_args *a,
		    const char *arg, int elf)
{
	uint64_t addr;
	char *path = split_addr(arg, &addr, elf);
	struct stat st;
	int err;

	if (!path)
		return cmd_usage_error(o, "bad %s argument '%s'",
				       elf ? "--elf" : "--raw", arg);
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
static int decode_print(const struct bt_capture *cap,
			const struct decode_args *a,
			const struct cmd_opts *o, FILE *out)
{
	struct print_ctx pc = { .read = image_read, .read_ctx = a->image };
	struct print_report r = { .view = o->view,
				  .backend = bt_format_name(cap->format),
				  .nthreads = 1 };
	struct view_src src = { .cap = cap, .image = a->image };
	struct view_thread v = { 0 };
	int err = view_thread_init(&v, o->view, 0, &src, o->last);

	if (err == 0)
		err = v.pt.err;
	if (err < 0) {
		fprintf(stderr, "btrace: cannot decode '%s': %s\n", a->trace,
			bt_errstr(err));
		view_thread_release(&v);
		return EXIT_FAIL;
	}
	if (bt_disasm_alloc(&pc.dis) < 0)
		pc.dis = NULL;
	pc.symtab = elf_symbols(a);
	pc.color = !o->json && print_want_color(out, o->no_color);
	r.threads = &v.pt;
	print_report(out, &r, &pc, o->json);
	bt_symtab_free(pc.symtab);
	bt_disasm_free(pc.dis);
	view_thread_release(&v);
	return 0;
}

static int set_input(struct cmd_opts *o, int format, const char *path)
{
	struct decode_args *a = o->own;

	if (a->trace)
		return cmd_usage_error(o, "one trace at a time");
	a->format = format;
	a->trace = path;
	return 0;
}

static int set_pt(struct cmd_opts *o, const char *v)
{
	return set_input(o, BT_FMT_PT, v);
}

static int set_bts(struct cmd_opts *o, const char *v)
{
	return set_input(o, BT_FMT_BTS, v);
}

static int set_perf_bts(struct cmd_opts *o, const char *v)
{
	return set_input(o, BT_FMT_PERF_BTS, v);
}

/* Code is loaded as its option comes: a failure ends the parse. */
static int set_code(struct cmd_opts *o, const char *v, int elf)
{
	struct decode_args *a = o->own;

	a->err = add_code(o, a, v, elf);
	return a->err;
}

static int set_elf(struct cmd_opts *o, const char *v)
{
	return set_code(o, v, 1);
}

static int set_raw(struct cmd_opts *o, const char *v)
{
	return set_code(o, v, 0);
}

static int set_all_branches(struct cmd_opts *o, const char *v)
{
	o->last = 0;
	return 0;
}

static const struct cmd_option decode_options[] = {
	CMD_OPT_FN("pt", 0, "FILE", CMD_DECODE, set_pt, "Intel PT packets"),
	CMD_OPT_FN("bts", 0, "FILE", CMD_DECODE, set_bts, "intel_bts records"),
	CMD_OPT_FN("perf-bts", 0, "FILE", CMD_DECODE, set_perf_bts,
		   "perf BTS samples (branch-instructions, period 1)"),
	CMD_OPT_FN("elf", 0, "FILE[:BASE]", CMD_DECODE, set_elf,
		   "ELF code, loaded at BASE (0: as linked)"),
	CMD_OPT_FN("raw", 0, "FILE:ADDR", CMD_DECODE, set_raw,
		   "a flat binary at ADDR (repeatable)"),
	CMD_OPT_FN("all", 0, NULL, CMD_DECODE, set_all_branches,
		   "every branch"),
	CMD_OPT_END,
};

static const struct cmd_desc decode_desc = {
	.name = "decode",
	.id = CMD_DECODE,
	.usage = "decode (--pt|--bts|--perf-bts) FILE [options]",
	.about = "Decode a raw trace (PT packets, intel_bts records or perf BTS\n"
		 "samples) against code given as ELF files or flat binaries.",
	.own = decode_options,
	.max_args = 0,
};

static int decode_run(struct decode_args *a, const struct cmd_opts *o)
{
	struct bt_capture cap = { .format = a->format };
	FILE *out;
	int ret;

	if (map_file(a->trace, &cap.data, &cap.size) < 0)
		return EXIT_FAIL;
	out = cmd_opts_open(o);
	ret = out ? decode_print(&cap, a, o, out) : EXIT_FAIL;
	if (cmd_opts_close(o, out) < 0 && !ret)
		ret = EXIT_FAIL;
	if (cap.size)
		munmap(cap.data, cap.size);
	return ret;
}

int cmd_decode(int argc, char **argv)
{
	struct decode_args a = { 0 };
	struct cmd_opts o = { .own = &a };
	int ret;

	a.image = bt_image_alloc();
	if (!a.image) {
		fprintf(stderr, "btrace: out of memory\n");
		return EXIT_FAIL;
	}
	ret = cmd_opts_parse(&decode_desc, argc, argv, &o);
	if (ret < 0 && !a.trace)
		ret = cmd_usage_error(&o, "--pt, --bts or --perf-bts is needed");
	if (ret < 0)
		ret = decode_run(&a, &o);
	else if (a.err)
		ret = a.err;
	while (a.nelf)
		free(a.elf[--a.nelf]);
	bt_image_free(a.image);
	return ret;
}
