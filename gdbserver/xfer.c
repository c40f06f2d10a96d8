// SPDX-License-Identifier: MIT
/*
 * The documents of qXfer:...:read: the target description, the threads,
 * the auxiliary vector, the stop's siginfo, the executable, the shared
 * libraries (read from the dynamic linker's r_debug list in the target's
 * memory, as gdbserver does) and the branch trace (btrace.c).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "cmds.h"

#define MAX_LIBS 4096

/* Text for an XML attribute value. */
static void put_xml(struct gs_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': gs_buf_adds(b, "&lt;"); break;
		case '>': gs_buf_adds(b, "&gt;"); break;
		case '&': gs_buf_adds(b, "&amp;"); break;
		case '"': gs_buf_adds(b, "&quot;"); break;
		case '\'': gs_buf_adds(b, "&apos;"); break;
		default:
			if ((unsigned char)*s < 0x20)
				gs_buf_addf(b, "&#%d;", *s);
			else
				gs_buf_add(b, s, 1);
		}
	}
}

/* The threads of the process served, as <thread/> lines into @arg. */
static void doc_proc_threads(struct gs_server *s, void *arg)
{
	pid_t *tids = calloc(GS_MAX_THREADS, sizeof(*tids));
	struct gs_buf name, *out = arg;
	size_t i, n = 0;

	if (!tids) {
		out->oom = 1;
		return;
	}
	if (!s->gone && s->ops->threads)
		n = s->ops->threads(s->ctx, tids, GS_MAX_THREADS);
	if (n > GS_MAX_THREADS)
		n = GS_MAX_THREADS;
	gs_buf_init(&name);
	for (i = 0; i < n; i++) {
		gs_buf_adds(out, "<thread id=\"");
		gs_put_tid(s, out, tids[i]);
		gs_buf_adds(out, "\"");
		gs_buf_reset(&name);
		if (s->ops->thread_name &&
		    s->ops->thread_name(s->ctx, tids[i], &name) == 0 && name.len) {
			gs_buf_adds(out, " name=\"");
			put_xml(out, name.data);
			gs_buf_adds(out, "\"");
		}
		gs_buf_adds(out, "/>\n");
	}
	gs_buf_release(&name);
	free(tids);
}

/* Every process's threads. */
static int doc_threads(struct gs_server *s, struct gs_buf *out)
{
	gs_buf_adds(out, "<?xml version=\"1.0\"?>\n<threads>\n");
	gs_procs_each(s, doc_proc_threads, out);
	gs_buf_adds(out, "</threads>\n");
	return out->oom ? -bte_nomem : 0;
}

/* The annex names the process (hex), or none: the one served. */
static int doc_exec_file(struct gs_server *s, const char *annex,
			 struct gs_buf *out)
{
	pid_t served = gs_proc_pid(s);
	uint64_t pid = 0;
	int ret = 0;

	if (*annex && (!gs_parse_hex(&annex, &pid) || *annex ||
		       pid > 0x7fffffff || gs_proc_switch(s, (pid_t)pid) < 0))
		ret = -bte_noent;
	if (ret == 0 && (!s->ops->exe || s->ops->exe(s->ctx, out) < 0))
		ret = -bte_noent;
	gs_proc_switch(s, served);
	if (ret < 0) {
		gs_buf_reset(out);
		gs_buf_adds(out, "E01");
	}
	return ret;
}

/* The current thread's (Hg) signal: no annex. */
static int doc_siginfo(struct gs_server *s, const char *annex,
		       struct gs_buf *out)
{
	pid_t tid = s->gthread > 0 ? s->gthread : gs_current(s);

	if (*annex || s->gone || !s->ops->siginfo ||
	    s->ops->siginfo(s->ctx, tid, out) < 0) {
		gs_buf_reset(out);
		gs_buf_adds(out, "E01");
		return -bte_noent;
	}
	return 0;
}

static int doc_auxv(struct gs_server *s, struct gs_buf *out)
{
	if (s->gone || !s->ops->auxv || s->ops->auxv(s->ctx, out) < 0) {
		gs_buf_reset(out);
		gs_buf_adds(out, "E01");
		return -bte_noent;
	}
	return 0;
}

/* ---- libraries-svr4 ---- */

static int rd(struct gs_server *s, uint64_t addr, void *buf, size_t len)
{
	return s->ops->read(s->ctx, addr, buf, len) == (ssize_t)len ? 0 : -1;
}

/* An AT_* value of the auxiliary vector, 0 if absent. */
static uint64_t auxv_get(const struct gs_buf *auxv, uint64_t type)
{
	size_t i;

	for (i = 0; i + 16 <= auxv->len; i += 16) {
		uint64_t t, v;

		memcpy(&t, auxv->data + i, 8);
		memcpy(&v, auxv->data + i + 8, 8);
		if (t == type)
			return v;
		if (t == AT_NULL)
			break;
	}
	return 0;
}

/*
 * r_debug of the dynamic linker: DT_DEBUG of the program's dynamic
 * section, found through its program headers (AT_PHDR, AT_PHNUM) and the
 * load bias they give.  0 before the dynamic linker has filled it in (at
 * the first instruction), and for a static program.
 */
static uint64_t r_debug_addr(struct gs_server *s)
{
	uint64_t phdr, phnum, bias = 0, dyn = 0, i;
	struct gs_buf auxv;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	gs_buf_init(&auxv);
	if (!s->ops->auxv || s->ops->auxv(s->ctx, &auxv) < 0) {
		gs_buf_release(&auxv);
		return 0;
	}
	phdr = auxv_get(&auxv, AT_PHDR);
	phnum = auxv_get(&auxv, AT_PHNUM);
	gs_buf_release(&auxv);
	for (i = 0; i < phnum && i < 256; i++) {
		if (rd(s, phdr + i * sizeof(ph), &ph, sizeof(ph)) < 0)
			return 0;
		if (ph.p_type == PT_PHDR)
			bias = phdr - ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	if (!dyn)
		return 0;
	for (i = 0; i < 512; i++) {
		if (rd(s, dyn + bias + i * sizeof(d), &d, sizeof(d)) < 0 ||
		    d.d_tag == DT_NULL)
			return 0;
		if (d.d_tag == DT_DEBUG)
			return d.d_un.d_ptr;
	}
	return 0;
}

/* A NUL-terminated string of the target at @addr into @out. */
static int read_string(struct gs_server *s, uint64_t addr, char *out,
		       size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size; i++) {
		if (rd(s, addr + i, out + i, 1) < 0)
			return -1;
		if (!out[i])
			return 0;
	}
	out[i] = '\0';
	return 0;
}

int gs_svr4_doc(struct gs_server *s, struct gs_buf *out)
{
	uint64_t dbg = s->gone ? 0 : r_debug_addr(s), lm = 0, first;
	struct link_map m;
	char name[4096];
	size_t n;

	gs_buf_adds(out, "<library-list-svr4 version=\"1.0\"");
	if (dbg && rd(s, dbg + offsetof(struct r_debug, r_map), &lm, 8) < 0)
		lm = 0;
	if (!lm) {
		gs_buf_adds(out, "/>\n");
		return 0;
	}
	gs_buf_addf(out, " main-lm=\"0x%llx\">\n", (unsigned long long)lm);
	first = lm;
	for (n = 0; lm && n < MAX_LIBS; n++, lm = (uint64_t)m.l_next) {
		if (rd(s, lm, &m, sizeof(m)) < 0)
			break;
		if (lm == first || !m.l_name ||
		    read_string(s, (uint64_t)m.l_name, name, sizeof(name)) < 0 ||
		    !name[0])
			continue;
		gs_buf_adds(out, "<library name=\"");
		put_xml(out, name);
		gs_buf_addf(out, "\" lm=\"0x%llx\" l_addr=\"0x%llx\" "
			    "l_ld=\"0x%llx\" lmid=\"0x0\"/>\n", (unsigned long long)lm,
			    (unsigned long long)m.l_addr,
			    (unsigned long long)(uint64_t)m.l_ld);
	}
	gs_buf_adds(out, "</library-list-svr4>\n");
	return 0;
}

int gs_xfer_doc(struct gs_server *s, const char *object, const char *annex,
		struct gs_buf *out)
{
	if (!strcmp(object, "features")) {
		if (strcmp(annex, "target.xml")) {
			gs_buf_adds(out, "E00");
			return -bte_noent;
		}
		gs_buf_adds(out, gs_tdesc(s->avx));
		return 0;
	}
	if (!strcmp(object, "threads"))
		return doc_threads(s, out);
	if (!strcmp(object, "auxv"))
		return doc_auxv(s, out);
	if (!strcmp(object, "siginfo"))
		return doc_siginfo(s, annex, out);
	if (!strcmp(object, "exec-file"))
		return doc_exec_file(s, annex, out);
	if (!strcmp(object, "libraries-svr4")) {
		if (s->ops->libraries && s->ops->libraries(s->ctx, out) == 0)
			return 0;
		gs_buf_reset(out);
		return gs_svr4_doc(s, out);
	}
	if (!strcmp(object, "btrace"))
		return gs_btrace_doc(s, annex, out);
	if (!strcmp(object, "btrace-conf"))
		return gs_btrace_conf_doc(s, out);
	return 1;
}

/*
 * qXfer:object:read:annex:offset,length.  The document is made at offset
 * 0 and kept for the reads that follow (as gdbserver does).
 */
void gs_cmd_xfer(struct gs_server *s, char *pkt)
{
	char *object = pkt + 6, *op, *annex, *range;
	char key[sizeof(s->xfer_key)];
	const char *p;
	uint64_t off, len;
	size_t take, room;
	int ret;

	op = strchr(object, ':');
	if (!op)
		goto bad;
	*op++ = '\0';
	annex = strchr(op, ':');
	if (!annex)
		goto bad;
	*annex++ = '\0';
	if (strcmp(op, "read"))
		return;		/* writes: not supported */
	range = strrchr(annex, ':');
	if (!range)
		goto bad;
	*range++ = '\0';
	p = range;
	if (gs_parse_addr_len(&p, '\0', &off, &len) < 0)
		goto bad;
	snprintf(key, sizeof(key), "%s:%s", object, annex);
	if (off == 0 || strcmp(s->xfer_key, key)) {
		gs_buf_reset(&s->xfer);
		s->xfer_key[0] = '\0';
		ret = gs_xfer_doc(s, object, annex, &s->xfer);
		if (ret == 1)
			return;		/* unknown object: empty reply */
		if (ret < 0 || s->xfer.oom) {
			gs_buf_reset(&s->reply);
			if (s->xfer.len && s->xfer.data[0] == 'E')
				gs_buf_add(&s->reply, s->xfer.data, s->xfer.len);
			else
				gs_reply_err(s, ret == -bte_nomem ? ENOMEM : EIO);
			gs_buf_reset(&s->xfer);
			return;
		}
		snprintf(s->xfer_key, sizeof(s->xfer_key), "%s", key);
	}
	if (off > s->xfer.len) {
		gs_reply_err(s, EINVAL);
		return;
	}
	room = len < GS_PACKET_MAX - 8 ? (size_t)len : GS_PACKET_MAX - 8;
	take = gs_bin_fit(s->xfer.data + off, s->xfer.len - off, room);
	gs_buf_adds(&s->reply, off + take < s->xfer.len ? "m" : "l");
	gs_buf_bin(&s->reply, s->xfer.data + off, take);
	return;
bad:
	gs_reply_err(s, EINVAL);
}

