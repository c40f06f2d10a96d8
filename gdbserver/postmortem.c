// SPDX-License-Identifier: MIT
/*
 * The post-mortem target: a btrace trace file (btrace run --save,
 * --save-on-crash, monitor save) served as a stopped process, with its
 * core file if there is one.  Memory comes from the core's segments, then
 * from the copy of the code the trace file keeps; registers from the
 * core's notes, else only the pc (the stop's, or where each other thread
 * went after its last branch); the branch trace from the file.  It never
 * runs and is never written: GDB's record btrace replays it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/decode.h"
#include "btrace/error.h"
#include "btrace/tracefile.h"
#include "gdbserver.h"

#define PM_MAX_THREADS 4096
#define PRSTATUS_PID 32		/* offset of pr_pid in struct elf_prstatus */
#define PRSTATUS_REG 112	/* offset of pr_reg */

struct pm_thread {
	pid_t tid;
	struct gs_regs regs;
};

struct gs_pm {
	struct bt_trace *trace;
	uint8_t *core;		/* the core file, mapped */
	size_t core_size;
	const Elf64_Phdr *load;	/* its PT_LOAD headers */
	size_t nload;
	const uint8_t *auxv;
	size_t auxv_size;
	const uint8_t *siginfo;	/* NT_SIGINFO: the dumping thread's */
	pid_t siginfo_tid;
	pid_t core_pid;
	struct pm_thread *threads;
	size_t nthreads;
	struct bt_stop stop;
};

/* ---- the core file ---- */

static int core_map(struct gs_pm *pm, const char *path)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -(errno == ENOENT ? bte_noent :
			 errno == EACCES ? bte_perm : bte_io);
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -bte_format;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -bte_io;
	pm->core = p;
	pm->core_size = (size_t)st.st_size;
	return 0;
}

static struct pm_thread *thread_add(struct gs_pm *pm, pid_t tid)
{
	struct pm_thread *grown;

	if (pm->nthreads >= PM_MAX_THREADS)
		return NULL;
	grown = realloc(pm->threads, (pm->nthreads + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	pm->threads = grown;
	memset(&grown[pm->nthreads], 0, sizeof(*grown));
	grown[pm->nthreads].tid = tid;
	return &grown[pm->nthreads++];
}

/* One note: registers go to the thread of the last NT_PRSTATUS. */
static int core_note(struct gs_pm *pm, uint32_t type, const uint8_t *desc,
		     size_t size, struct pm_thread **th)
{
	int32_t pid;

	switch (type) {
	case NT_PRSTATUS:
		if (size < PRSTATUS_REG + sizeof((*th)->regs.gp))
			return -bte_corrupt;
		memcpy(&pid, desc + PRSTATUS_PID, 4);
		*th = thread_add(pm, pid);
		if (!*th)
			return -bte_nomem;
		memcpy(&(*th)->regs.gp, desc + PRSTATUS_REG,
		       sizeof((*th)->regs.gp));
		if (!pm->core_pid)
			pm->core_pid = pid;
		return 0;
	case NT_FPREGSET:
		if (*th && size >= sizeof((*th)->regs.fp)) {
			memcpy(&(*th)->regs.fp, desc, sizeof((*th)->regs.fp));
			(*th)->regs.have_fp = 1;
		}
		return 0;
	case NT_X86_XSTATE:
		if (*th && size >= GS_XSAVE_YMM_OFFSET + 256) {
			uint64_t bv;

			memcpy(&bv, desc + GS_XSAVE_BV_OFFSET, 8);
			(*th)->regs.have_ymm = 1;
			if (bv & GS_XSAVE_AVX_BIT)
				memcpy((*th)->regs.ymmh,
				       desc + GS_XSAVE_YMM_OFFSET, 256);
		}
		return 0;
	case NT_AUXV:
		pm->auxv = desc;
		pm->auxv_size = size;
		return 0;
	case NT_SIGINFO:	/* after the dumping thread's NT_PRSTATUS */
		if (*th && !pm->siginfo && size >= sizeof(siginfo_t)) {
			pm->siginfo = desc;
			pm->siginfo_tid = (*th)->tid;
		}
		return 0;
	default:
		return 0;
	}
}

static int core_notes(struct gs_pm *pm, const Elf64_Phdr *ph)
{
	const uint8_t *p = pm->core + ph->p_offset;
	size_t left = ph->p_filesz, nsz, dsz;
	struct pm_thread *th = NULL;
	Elf64_Nhdr n;
	int ret;

	while (left >= sizeof(n)) {
		memcpy(&n, p, sizeof(n));
		nsz = (n.n_namesz + 3) & ~3u;
		dsz = (n.n_descsz + 3ull) & ~3ull;
		if (nsz > left - sizeof(n) || dsz > left - sizeof(n) - nsz)
			return -bte_corrupt;
		ret = core_note(pm, n.n_type, p + sizeof(n) + nsz, n.n_descsz,
				&th);
		if (ret < 0)
			return ret;
		p += sizeof(n) + nsz + dsz;
		left -= sizeof(n) + nsz + dsz;
	}
	return 0;
}

/* Check the ELF core's headers and take its segments and notes. */
static int core_parse(struct gs_pm *pm)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)pm->core;
	const Elf64_Phdr *ph;
	size_t i;
	int ret;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_CORE ||
	    eh->e_machine != EM_X86_64 || eh->e_phentsize != sizeof(*ph))
		return -bte_format;
	if (eh->e_phoff > pm->core_size ||
	    eh->e_phnum > (pm->core_size - eh->e_phoff) / sizeof(*ph))
		return -bte_corrupt;
	ph = (const Elf64_Phdr *)(pm->core + eh->e_phoff);
	pm->load = ph;
	pm->nload = eh->e_phnum;
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_offset > pm->core_size ||
		    ph[i].p_filesz > pm->core_size - ph[i].p_offset)
			return -bte_corrupt;
		if (ph[i].p_type == PT_NOTE) {
			ret = core_notes(pm, &ph[i]);
			if (ret < 0)
				return ret;
		}
	}
	return pm->nthreads ? 0 : -bte_format;
}

/* ---- without a core: what the trace file knows ---- */

/* Where the thread went after its last branch: the best pc there is. */
static uint64_t last_target(const struct bt_capture *cap)
{
	struct bt_decode_opts o = { sizeof(o), 1, NULL };
	struct bt_history *h;
	uint64_t pc = 0;

	if (bt_decode(cap, &o, &h) < 0)
		return 0;
	if (h->count)
		pc = h->branch[h->count - 1].to;
	bt_history_free(h);
	return pc;
}

static int threads_from_trace(struct gs_pm *pm)
{
	const struct bt_trace *t = pm->trace;
	struct pm_thread *th;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		th = thread_add(pm, t->thread[i].tid);
		if (!th)
			return -bte_nomem;
		th->regs.gp.rip = t->thread[i].tid == t->stop.tid && t->stop.pc ?
			t->stop.pc : last_target(&t->thread[i]);
	}
	return 0;
}

int gs_pm_open(struct gs_pm **out, const char *trace, const char *core)
{
	struct gs_pm *pm = calloc(1, sizeof(*pm));
	int ret;

	if (!pm)
		return -bte_nomem;
	ret = bt_trace_read(&pm->trace, trace);
	if (ret == 0 && core) {
		ret = core_map(pm, core);
		if (ret == 0)
			ret = core_parse(pm);
	} else if (ret == 0) {
		ret = threads_from_trace(pm);
	}
	if (ret < 0) {
		gs_pm_free(pm);
		return ret;
	}
	pm->stop = pm->trace->stop;
	if (!pm->stop.tid)
		pm->stop.tid = pm->threads ? pm->threads[0].tid : 0;
	*out = pm;
	return 0;
}

void gs_pm_free(struct gs_pm *pm)
{
	if (!pm)
		return;
	if (pm->core)
		munmap(pm->core, pm->core_size);
	bt_trace_free(pm->trace);
	free(pm->threads);
	free(pm);
}

const struct bt_stop *gs_pm_stop(const struct gs_pm *pm)
{
	return &pm->stop;
}

pid_t gs_pm_core_pid(const struct gs_pm *pm)
{
	return pm->core_pid;
}

pid_t gs_pm_trace_pid(const struct gs_pm *pm)
{
	return pm->trace->pid;
}

/* ---- the target ---- */

static pid_t pm_pid(void *ctx)
{
	return ((struct gs_pm *)ctx)->trace->pid;
}

static int pm_launched(void *ctx)
{
	return 0;	/* nothing to kill: GDB detaches */
}

static size_t pm_threads(void *ctx, pid_t *tids, size_t max)
{
	struct gs_pm *pm = ctx;
	size_t i;

	for (i = 0; i < pm->nthreads && i < max; i++)
		tids[i] = pm->threads[i].tid;
	return pm->nthreads;
}

static int pm_get_regs(void *ctx, pid_t tid, struct gs_regs *r)
{
	struct gs_pm *pm = ctx;
	size_t i;

	for (i = 0; i < pm->nthreads; i++)
		if (pm->threads[i].tid == tid) {
			*r = pm->threads[i].regs;
			return 0;
		}
	return -bte_noent;
}

/* Bytes at @addr from the core's dumped part of a segment. */
static size_t core_read(struct gs_pm *pm, uint64_t addr, uint8_t *buf,
			size_t len)
{
	size_t i, n;

	for (i = 0; i < pm->nload; i++) {
		const Elf64_Phdr *ph = &pm->load[i];

		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr ||
		    addr - ph->p_vaddr >= ph->p_filesz)
			continue;
		n = ph->p_filesz - (addr - ph->p_vaddr);
		n = n < len ? n : len;
		memcpy(buf, pm->core + ph->p_offset + (addr - ph->p_vaddr), n);
		return n;
	}
	return 0;
}

/* Bytes at @addr from the trace file's copy of the code. */
static size_t code_read(struct gs_pm *pm, uint64_t addr, uint8_t *buf,
			size_t len)
{
	const struct bt_trace *t = pm->trace;
	size_t i, n;

	for (i = 0; i < t->ncode; i++) {
		const struct bt_trace_code *c = &t->code[i];

		if (addr < c->vaddr || addr - c->vaddr >= c->size)
			continue;
		n = c->size - (addr - c->vaddr);
		n = n < len ? n : len;
		memcpy(buf, c->bytes + (addr - c->vaddr), n);
		return n;
	}
	return 0;
}

static ssize_t pm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct gs_pm *pm = ctx;
	uint8_t *p = buf;
	size_t done = 0, n;

	while (done < len) {
		n = core_read(pm, addr + done, p + done, len - done);
		if (!n)
			n = code_read(pm, addr + done, p + done, len - done);
		if (!n)
			break;
		done += n;
	}
	return done ? (ssize_t)done : -bte_io;
}

static int auxv_made_up(struct gs_pm *pm, struct gs_buf *out);

/*
 * The siginfo of the stop as the trace file keeps it (no core): the
 * signal, si_code, a fault's address, a sent signal's sender and value.
 */
static int siginfo_from_stop(const struct bt_stop *st, siginfo_t *si)
{
	const char *words, *name;
	int kind;

	if (st->reason != BT_STOP_SIGNAL || !st->signal)
		return -1;
	memset(si, 0, sizeof(*si));
	si->si_signo = st->signal;
	si->si_code = st->si_code;
	kind = bt_sigcode_describe(st->signal, st->si_code, &words, &name);
	if (kind == 2) {
		si->si_addr = (void *)(uintptr_t)st->addr;
	} else if (kind == 1) {
		si->si_pid = st->sender;
		si->si_uid = st->sender_uid;
		if (st->si_code == SI_QUEUE)
			si->si_value.sival_ptr = (void *)(intptr_t)st->value;
	}
	return 0;
}

static int pm_siginfo(void *ctx, pid_t tid, struct gs_buf *out)
{
	struct gs_pm *pm = ctx;
	siginfo_t si;

	if (pm->siginfo && tid == pm->siginfo_tid) {
		gs_buf_add(out, pm->siginfo, sizeof(siginfo_t));
		return 0;
	}
	if (pm->siginfo || tid != pm->stop.tid ||
	    siginfo_from_stop(&pm->stop, &si) < 0)
		return -1;
	gs_buf_add(out, &si, sizeof(si));
	return 0;
}

static int pm_auxv(void *ctx, struct gs_buf *out)
{
	struct gs_pm *pm = ctx;

	if (!pm->auxv)
		return auxv_made_up(pm, out);
	gs_buf_add(out, pm->auxv, pm->auxv_size);
	return 0;
}

static int pm_exe(void *ctx, struct gs_buf *out)
{
	struct gs_pm *pm = ctx;

	if (!pm->trace->exe)
		return -bte_noent;
	gs_buf_adds(out, pm->trace->exe);
	return 0;
}

/* Intel PT goes to GDB raw; BTS and software records as blocks. */
static int pm_trace_formats(void *ctx)
{
	const struct bt_trace *t = ((struct gs_pm *)ctx)->trace;

	return t->nthreads && t->thread[0].format == BT_FMT_PT ? GS_BT_PT :
								 GS_BT_BTS;
}

/* The whole saved trace of @tid; it has no positions (nothing is new). */
static int pm_trace_read(void *ctx, pid_t tid, uint64_t *pos,
			 struct bt_capture *cap)
{
	struct gs_pm *pm = ctx;
	const struct bt_capture *c;

	if (pos)
		return -bte_nosys;
	c = bt_trace_thread(pm->trace, tid);
	if (!c)
		return -bte_noent;
	*cap = *c;
	cap->data = malloc(c->size ? c->size : 1);
	if (!cap->data)
		return -bte_nomem;
	memcpy(cap->data, c->data, c->size);
	return 0;
}

static size_t pm_trace_size(void *ctx)
{
	return ((struct gs_pm *)ctx)->trace->buffer_size;
}

/* /proc/PID/maps and task/TID/maps, as the kernel wrote them: the trace's. */
static int pm_proc_file(void *ctx, const char *name, struct gs_buf *out)
{
	const struct bt_maps *m = &((struct gs_pm *)ctx)->trace->maps;
	size_t i;

	if (strcmp(name, "maps") &&
	    (strncmp(name, "task/", 5) || !strstr(name, "/maps") ||
	     strcmp(strstr(name, "/maps"), "/maps")))
		return -bte_noent;
	for (i = 0; i < m->count; i++) {
		const struct bt_map *e = &m->map[i];

		gs_buf_addf(out, "%08llx-%08llx %c%c%cp %08llx 00:00 0",
			    (unsigned long long)e->start,
			    (unsigned long long)e->end,
			    e->prot & BT_MAP_R ? 'r' : '-',
			    e->prot & BT_MAP_W ? 'w' : '-',
			    e->prot & BT_MAP_X ? 'x' : '-',
			    (unsigned long long)e->offset);
		if (e->path)
			gs_buf_addf(out, "%*s%s", 20, "", e->path);
		gs_buf_adds(out, "\n");
	}
	return 0;
}

/* ---- without a core: the auxiliary vector and libraries from the maps ---- */

/* The first mapping of file @path (its ELF header), or NULL. */
static const struct bt_map *map_of(const struct bt_maps *m, const char *path)
{
	size_t i;

	for (i = 0; path && i < m->count; i++)
		if (m->map[i].path && !strcmp(m->map[i].path, path) &&
		    m->map[i].offset == 0)
			return &m->map[i];
	return NULL;
}

static int elf_header(const char *path, Elf64_Ehdr *eh)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = read(fd, eh, sizeof(*eh)) == (ssize_t)sizeof(*eh) &&
	     !memcmp(eh->e_ident, ELFMAG, SELFMAG) &&
	     eh->e_ident[EI_CLASS] == ELFCLASS64;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Where shared object @path, mapped from @start, has its dynamic section
 * (what the dynamic linker's l_ld says): its PT_DYNAMIC, placed as its
 * first PT_LOAD is at @start.  0 if the file cannot tell.
 */
static uint64_t dynamic_of(const char *path, uint64_t start)
{
	uint64_t first = ~0ull, dyn = 0;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, i;

	if (elf_header(path, &eh) < 0 || eh.e_phentsize != sizeof(ph))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (i = 0; i < eh.e_phnum && i < 256; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && first == ~0ull)
			first = ph.p_vaddr & ~0xfffull;
		if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	close(fd);
	return dyn && first != ~0ull ? start - first + dyn : 0;
}

/* The dynamic linker: a mapped file named ld-*.so*. */
static const struct bt_map *interp_of(const struct bt_maps *m)
{
	size_t i;

	for (i = 0; i < m->count; i++) {
		const char *p = m->map[i].path, *base;

		if (!p || m->map[i].offset)
			continue;
		base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		if (!strncmp(base, "ld-", 3) && strstr(base, ".so"))
			return &m->map[i];
	}
	return NULL;
}

static void auxv_put(struct gs_buf *out, uint64_t type, uint64_t val)
{
	gs_buf_add(out, &type, 8);
	gs_buf_add(out, &val, 8);
}

/*
 * What GDB takes from the auxiliary vector to place the program (AT_ENTRY
 * and AT_PHDR: where a PIE was loaded) and the dynamic linker (AT_BASE),
 * from the mappings saved in the trace and the program's ELF header.
 */
static int auxv_made_up(struct gs_pm *pm, struct gs_buf *out)
{
	const struct bt_maps *m = &pm->trace->maps;
	const struct bt_map *exe = map_of(m, pm->trace->exe), *ld;
	uint64_t bias;
	Elf64_Ehdr eh;

	if (!exe || elf_header(pm->trace->exe, &eh) < 0)
		return -bte_noent;
	bias = eh.e_type == ET_DYN ? exe->start : 0;
	auxv_put(out, AT_PHDR, bias + eh.e_phoff);
	auxv_put(out, AT_PHENT, eh.e_phentsize);
	auxv_put(out, AT_PHNUM, eh.e_phnum);
	auxv_put(out, AT_PAGESZ, 4096);
	ld = interp_of(m);
	if (ld)
		auxv_put(out, AT_BASE, ld->start);
	auxv_put(out, AT_ENTRY, bias + eh.e_entry);
	auxv_put(out, AT_NULL, 0);
	return 0;
}

/*
 * The shared objects of the maps, as the dynamic linker's list would
 * have them: l_addr is where each was mapped (shared objects are linked
 * at 0), l_ld where its dynamic section is (GDB checks l_addr by it).
 */
static int pm_libraries(void *ctx, struct gs_buf *out)
{
	struct gs_pm *pm = ctx;
	const struct bt_maps *m = &pm->trace->maps;
	size_t i;

	if (pm->core)
		return 1;	/* the core has the real list */
	gs_buf_adds(out, "<library-list-svr4 version=\"1.0\">\n");
	for (i = 0; i < m->count; i++) {
		const struct bt_map *e = &m->map[i];

		if (!e->path || e->offset || e->path[0] != '/' ||
		    (pm->trace->exe && !strcmp(e->path, pm->trace->exe)) ||
		    !strstr(e->path, ".so"))
			continue;
		gs_buf_addf(out, "<library name=\"%s\" lm=\"0x%zx\" "
			    "l_addr=\"0x%llx\" l_ld=\"0x%llx\" lmid=\"0x0\"/>\n",
			    e->path, 0x1000 + 0x100 * i,
			    (unsigned long long)e->start,
			    (unsigned long long)dynamic_of(e->path, e->start));
	}
	gs_buf_adds(out, "</library-list-svr4>\n");
	return 0;
}

const struct gs_target_ops gs_pm_ops = {
	.pid = pm_pid,
	.launched = pm_launched,
	.threads = pm_threads,
	.get_regs = pm_get_regs,
	.read = pm_read,
	.auxv = pm_auxv,
	.siginfo = pm_siginfo,
	.exe = pm_exe,
	.trace_formats = pm_trace_formats,
	.trace_read = pm_trace_read,
	.trace_size = pm_trace_size,
	.proc_file = pm_proc_file,
	.libraries = pm_libraries,
};
