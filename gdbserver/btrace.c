// SPDX-License-Identifier: MIT
/*
 * Branch trace for GDB's `record btrace`, as the remote protocol defines
 * it: Qbtrace:bts/pt/off per thread (the Hg one), qXfer:btrace:read with
 * the annex all, new or delta, qXfer:btrace-conf:read.
 *
 * BTS format: blocks of sequential instructions [begin, end], newest
 * first, as GDB's linux-btrace.c makes them from BTS from/to pairs: the
 * newest block ends at the thread's pc and begins where the last branch
 * went; each older one ends at a branch instruction.  A full read drops
 * the oldest block (its start is unknown); a delta read keeps it with
 * begin 0 and GDB stitches it to the end of what it has.  Delta reads
 * take only the records written since the last read (their cost follows
 * what is new); if some of those were overwritten the answer is
 * E.Overflow. and GDB reads everything again.
 *
 * Qbtrace-conf:bts:size sets the buffer of the threads enabled after it,
 * as gdbserver does: rounded up to a power-of-two number of pages, and
 * never more than the ring the target records into (what the thread
 * got is what qXfer:btrace-conf:read reports).  The ring itself keeps
 * its size (bt_target has no per-thread resize): a thread's answers hold
 * as many branches as a BTS buffer of its size would, the newest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/decode.h"
#include "btrace/error.h"
#include "cmds.h"

#define BTS_HEAD "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n" \
		 "<btrace version=\"1.0\">\n"
#define BTS_TAIL "</btrace>\n"

/* Bytes of a BTS buffer per branch: perf's sample, header, from, to. */
#define BTS_RECORD 24
#define PAGE 4096

static void put_block(struct gs_buf *out, uint64_t begin, uint64_t end)
{
	gs_buf_addf(out, "<block begin=\"0x%llx\" end=\"0x%llx\"/>\n",
		    (unsigned long long)begin, (unsigned long long)end);
}

int gs_btrace_bts_xml(const struct bt_branch *br, size_t n, uint64_t pc,
		      int delta, struct gs_buf *out)
{
	uint64_t end = pc;
	size_t i;

	gs_buf_adds(out, BTS_HEAD);
	for (i = n; i > 0; i--) {
		const struct bt_branch *b = &br[i - 1];

		if (b->kind == BT_BR_GAP) {
			if (delta)
				return -bte_torn;
			break;
		}
		put_block(out, b->to, end);
		end = b->from;
	}
	if (delta && i == 0)
		put_block(out, 0, end);
	gs_buf_adds(out, BTS_TAIL);
	return out->oom ? -bte_nomem : 0;
}

int gs_btrace_pt_xml(const struct bt_capture *cap, struct gs_buf *out)
{
	gs_buf_adds(out, BTS_HEAD "<pt>\n<pt-config>\n");
	if (cap->cpu.vendor == BT_CPU_INTEL)
		gs_buf_addf(out, "<cpu vendor=\"GenuineIntel\" family=\"%u\" "
			    "model=\"%u\" stepping=\"%u\"/>\n",
			    cap->cpu.family, cap->cpu.model, cap->cpu.stepping);
	gs_buf_adds(out, "</pt-config>\n<raw>\n");
	gs_buf_hex(out, cap->data, cap->size);
	gs_buf_adds(out, "\n</raw>\n</pt>\n" BTS_TAIL);
	return out->oom ? -bte_nomem : 0;
}

/* ---- per-thread state ---- */

static struct gs_bt_thread *bt_find(struct gs_server *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->nbt; i++)
		if (s->bt[i].tid == tid)
			return &s->bt[i];
	return NULL;
}

static void reply_text(struct gs_server *s, const char *text)
{
	gs_buf_reset(&s->reply);
	gs_buf_adds(&s->reply, text);
}

/*
 * The buffer a thread enabled now gets: the size asked for, rounded up
 * to a power-of-two number of pages, at most the target's ring; the
 * ring's when none was asked for.
 */
static uint64_t bt_buffer_size(struct gs_server *s, int format)
{
	uint64_t ring = s->ops->trace_size ? s->ops->trace_size(s->ctx) : 0;
	uint64_t want = s->bts_size, got = PAGE;

	if (format != GS_BT_BTS || !want)
		return ring;
	while (got < want && got < ((uint64_t)1 << 62))
		got <<= 1;
	return ring && got > ring ? ring : got;
}

static void bt_enable(struct gs_server *s, pid_t tid, int format)
{
	int formats = s->ops->trace_formats ? s->ops->trace_formats(s->ctx) : 0;
	struct gs_bt_thread *bt, *grown;
	uint64_t pos = 0;

	if (!(formats & format)) {
		reply_text(s, "E.Target does not support branch tracing.");
		return;
	}
	if (bt_find(s, tid)) {
		reply_text(s, "E.Btrace already enabled.");
		return;
	}
	/* a trace without positions starts at its beginning */
	if (s->ops->trace_read(s->ctx, tid, &pos, NULL) < 0)
		pos = 0;
	grown = realloc(s->bt, (s->nbt + 1) * sizeof(*grown));
	if (!grown) {
		reply_text(s, "E.Out of memory.");
		return;
	}
	s->bt = grown;
	bt = &s->bt[s->nbt++];
	memset(bt, 0, sizeof(*bt));
	bt->tid = tid;
	bt->format = format;
	bt->start = bt->pos = pos;
	bt->size = bt_buffer_size(s, format);
	if (format == GS_BT_BTS && s->bts_size)
		bt->keep = bt->size / BTS_RECORD;
	reply_text(s, "OK");
}

static void bt_disable(struct gs_server *s, pid_t tid)
{
	struct gs_bt_thread *bt = bt_find(s, tid);

	if (!bt) {
		reply_text(s, "E.Btrace not enabled.");
		return;
	}
	*bt = s->bt[--s->nbt];
	reply_text(s, "OK");
}

void gs_cmd_btrace(struct gs_server *s, char *pkt)
{
	pid_t tid = gs_current(s);
	const char *p;
	uint64_t size;

	if (!strncmp(pkt, "Qbtrace-conf:", 13)) {
		p = strchr(pkt + 13, '=');
		if (p && !strncmp(p, "=0x", 3))
			p += 3;
		else if (p)
			p++;
		if ((strncmp(pkt + 13, "bts:size=", 9) &&
		     strncmp(pkt + 13, "pt:size=", 8)) || !p ||
		    !gs_parse_hex(&p, &size) || *p) {
			reply_text(s, "E.Bad configuration packet.");
			return;
		}
		if (!strncmp(pkt + 13, "bts:", 4))
			s->bts_size = size;
		reply_text(s, "OK");
		return;
	}
	if (!tid || !s->ops->trace_read) {
		reply_text(s, "E.No such thread.");
		return;
	}
	if (!strcmp(pkt, "Qbtrace:bts"))
		bt_enable(s, tid, GS_BT_BTS);
	else if (!strcmp(pkt, "Qbtrace:pt"))
		bt_enable(s, tid, GS_BT_PT);
	else if (!strcmp(pkt, "Qbtrace:off"))
		bt_disable(s, tid);
	else
		reply_text(s, "E.Bad Qbtrace operation.");
}

/* ---- reading ---- */

static int bts_doc(struct gs_server *s, struct gs_bt_thread *bt,
		   struct bt_capture *cap, uint64_t pc, int delta,
		   struct gs_buf *out)
{
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct bt_history *h = NULL;
	size_t n = 0, keep = bt->keep ? bt->keep : SIZE_MAX;
	int ret;

	if (cap->size) {
		ret = bt_decode(cap, &opts, &h);
		if (ret < 0)
			return ret;
		n = h->count;
	}
	/* a buffer of bt->size bytes holds only the newest keep branches */
	if (n > keep && delta) {
		bt_history_free(h);
		return -bte_torn;
	}
	if (n > keep)
		n = keep;
	ret = gs_btrace_bts_xml(h ? h->branch + (h->count - n) : NULL, n, pc,
				delta, out);
	bt_history_free(h);
	return ret;
}

enum { READ_ALL, READ_NEW, READ_DELTA };

/*
 * What to show: a delta, everything since the trace was enabled, or
 * nothing for a "new" read that has nothing new.
 */
static int bts_read(struct gs_server *s, struct gs_bt_thread *bt, int type,
		    uint64_t pc, struct gs_buf *out)
{
	struct bt_capture cap;
	uint64_t pos = bt->pos;
	int ret, positions = 1;

	memset(&cap, 0, sizeof(cap));
	if (type != READ_ALL) {
		ret = s->ops->trace_read(s->ctx, bt->tid, &pos, &cap);
		if (ret == -bte_nosys)
			positions = 0;
		else if (ret < 0)
			return ret;
		if (type == READ_DELTA && (ret == 1 || !positions)) {
			bt_capture_release(&cap);
			gs_buf_adds(out, ret == 1 ? "E.Overflow." : "E.Generic Error.");
			return -bte_torn;
		}
		if (type == READ_DELTA) {
			ret = bts_doc(s, bt, &cap, pc, 1, out);
			bt_capture_release(&cap);
			if (ret == -bte_torn) {
				gs_buf_reset(out);
				gs_buf_adds(out, "E.Overflow.");
			} else if (ret == 0) {
				bt->pos = pos;
				bt->read = 1;
			}
			return ret;
		}
		if (type == READ_NEW && bt->read && positions && !cap.size) {
			bt_capture_release(&cap);
			gs_buf_adds(out, BTS_HEAD BTS_TAIL);
			return 0;
		}
		bt_capture_release(&cap);
	}
	/* everything since the trace was enabled (or all there is) */
	pos = bt->start;
	ret = s->ops->trace_read(s->ctx, bt->tid, positions ? &pos : NULL, &cap);
	if (ret == -bte_nosys) {
		positions = 0;
		ret = s->ops->trace_read(s->ctx, bt->tid, NULL, &cap);
	}
	if (ret < 0)
		return ret;
	ret = bts_doc(s, bt, &cap, pc, 0, out);
	bt_capture_release(&cap);
	if (ret == 0) {
		if (positions)
			bt->pos = pos;
		bt->read = 1;
	}
	return ret;
}

static int pt_read(struct gs_server *s, struct gs_bt_thread *bt, int type,
		   struct gs_buf *out)
{
	struct bt_capture cap;
	int ret;

	if (type == READ_DELTA) {	/* as GDB's own: no delta for PT */
		gs_buf_adds(out, "E.Generic Error.");
		return -bte_nosys;
	}
	memset(&cap, 0, sizeof(cap));
	ret = s->ops->trace_read(s->ctx, bt->tid, NULL, &cap);
	if (ret < 0)
		return ret;
	if (cap.format != BT_FMT_PT)
		ret = -bte_format;
	else
		ret = gs_btrace_pt_xml(&cap, out);
	bt_capture_release(&cap);
	return ret;
}

int gs_btrace_doc(struct gs_server *s, const char *annex, struct gs_buf *out)
{
	pid_t tid = s->gthread > 0 ? s->gthread : gs_current(s);
	struct gs_bt_thread *bt = tid ? bt_find(s, tid) : NULL;
	struct gs_regs r;
	int type, ret;

	if (!tid) {
		gs_buf_adds(out, "E.Must select a single thread.");
		return -bte_invalid;
	}
	if (!bt) {
		gs_buf_adds(out, "E.Btrace not enabled.");
		return -bte_invalid;
	}
	if (!strcmp(annex, "all"))
		type = READ_ALL;
	else if (!strcmp(annex, "new"))
		type = READ_NEW;
	else if (!strcmp(annex, "delta"))
		type = READ_DELTA;
	else {
		gs_buf_adds(out, "E.Bad annex.");
		return -bte_invalid;
	}
	if (bt->format == GS_BT_PT)
		ret = pt_read(s, bt, type, out);
	else {
		memset(&r, 0, sizeof(r));
		if (s->ops->get_regs(s->ctx, tid, &r) < 0) {
			gs_buf_adds(out, "E.No such thread.");
			return -bte_noent;
		}
		ret = bts_read(s, bt, type, r.gp.rip, out);
	}
	if (ret < 0 && !(out->len && out->data[0] == 'E')) {
		gs_buf_reset(out);
		gs_buf_adds(out, "E.Generic Error.");
	}
	return ret;
}

int gs_btrace_conf_doc(struct gs_server *s, struct gs_buf *out)
{
	pid_t tid = s->gthread > 0 ? s->gthread : gs_current(s);
	struct gs_bt_thread *bt = tid ? bt_find(s, tid) : NULL;

	if (!bt) {
		gs_buf_adds(out, "E.Btrace not enabled.");
		return -bte_invalid;
	}
	gs_buf_adds(out, "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n"
			 "<btrace-conf version=\"1.0\">\n");
	gs_buf_addf(out, "<%s size=\"0x%llx\"/>\n",
		    bt->format == GS_BT_PT ? "pt" : "bts",
		    (unsigned long long)bt->size);
	gs_buf_adds(out, "</btrace-conf>\n");
	return 0;
}
