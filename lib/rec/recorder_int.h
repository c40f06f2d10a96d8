/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_RECORDER_INT_H
#define BTRACE_RECORDER_INT_H

/*
 * What the recorder's files share (recorder.h lists them); rc_ functions
 * are internal to them.
 *
 * Memory the recorder maps into the process (through system calls run in
 * a stopped thread): zones of translated code near the code they copy (a
 * copy's rip-relative operands and rel32 jumps must reach), written
 * through /proc/PID/mem; the two lookup tables; and one slot per thread,
 * [guard page][ring][control block], the control block at the thread's gs
 * base.  All of it is unmapped at detach (rec_room.c).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "rec/recorder.h"
#include "rec/rec_drain.h"
#include "rec/rec_time.h"
#include "rec/rec_xlate.h"

#define ZONE_SIZE	(16u << 20)
#define ZONE_MAX	64
#define ZONE_ROOM	(24u << 10)	/* free space a block may need */
#define ZONE_MARKS	(1u << 20)	/* then a byte per translation */
#define SLOT_MAX	256
#define GUEST_MAX	8	/* vfork children in its memory at once */
#define NEAR		(1ll << 31)	/* what a rel32 reaches */
#define SPAN_MAX	64
#define CODE_PAGES	256
#define PT_AT_MAX	8	/* points at one address, at most */

/* A zone of translations, and the points of its code (rx_point). */
/*
 * A point as a zone keeps it: rx_point in 16 bytes instead of 32 (points
 * are most of the memory the tracer fills as it translates; zpt_get,
 * zpt_put).  An aux
 * that is an address (a direct exit's or a cache's rel32, a lookup's
 * probe) is always in the point's own zone: kept from its base, plus 1
 * (0: none).  orig in bits 0-47 (sign-extended back), kind 48-50, mask
 * 51-55 (RX_LINKED as 0x10), pend 56-63.
 */
struct zpt {
	uint32_t trans;			/* from the zone's base */
	uint32_t aux;
	uint64_t w;
};

struct zone {
	uint64_t base;
	size_t used;
	size_t flushed;			/* bytes written to the process */
	uint8_t *pend;			/* [flushed, used) not yet written */
	struct zpt *pts;		/* by trans, ascending */
	size_t npts, ptcap;
	/* ZONE_MARKS bytes after the code, the program's to write: mark i
	 * set when the translation of mark_of[i] ran (a block's start, the
	 * variant's pend in bits 56-63: rec_profile.c) */
	uint64_t *mark_of;
	size_t nmark, markcap;
};

static inline int zpt_aux_addr(int kind)
{
	return kind == RX_POINT_EXIT_DIRECT || kind == RX_POINT_EXIT_IBL ||
	       kind == RX_POINT_IC;
}

static inline uint64_t zpt_trans(const struct zone *z, size_t i)
{
	return z->base + z->pts[i].trans;
}

/* Point @i of @z into *@p. */
static inline void zpt_get(const struct zone *z, size_t i,
			   struct rx_point *p)
{
	const struct zpt *q = &z->pts[i];
	unsigned mask = (unsigned)(q->w >> 51) & 0x1f;

	p->trans = z->base + q->trans;
	p->orig = (uint64_t)((int64_t)(q->w << 16) >> 16);
	p->kind = (uint8_t)((q->w >> 48) & 7);
	p->mask = (uint8_t)((mask & 0xf) | (mask & 0x10 ? RX_LINKED : 0));
	p->pend = (uint8_t)(q->w >> 56);
	p->aux = zpt_aux_addr(p->kind) && q->aux ? z->base + q->aux - 1 :
						   q->aux;
}

/* The first of @z's points at or after @pc (by trans), z->npts if none. */
static inline size_t zpt_from(const struct zone *z, uint64_t pc)
{
	size_t lo = 0, hi = z->npts;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (zpt_trans(z, mid) < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define ZPT_LINKED (1ull << 55)	/* RX_LINKED in zpt.w */

static inline int zpt_linked(const struct zone *z, size_t i)
{
	return !!(z->pts[i].w & ZPT_LINKED);
}

static inline void zpt_set_linked(struct zone *z, size_t i, int on)
{
	if (on)
		z->pts[i].w |= ZPT_LINKED;
	else
		z->pts[i].w &= ~ZPT_LINKED;
}

/* *@p as point @i of @z (@p's addresses in @z). */
static inline void zpt_put(struct zone *z, size_t i,
			   const struct rx_point *p)
{
	struct zpt *q = &z->pts[i];
	unsigned mask = (p->mask & 0xfu) | (p->mask & RX_LINKED ? 0x10u : 0);

	q->trans = (uint32_t)(p->trans - z->base);
	q->aux = zpt_aux_addr(p->kind) && p->aux ?
			 (uint32_t)(p->aux - z->base + 1) : (uint32_t)p->aux;
	uint64_t orig = (uint64_t)((int64_t)(p->orig << 16) >> 16) == p->orig ?
				p->orig : 0;	/* a cache's guess: none */

	q->w = (orig & 0xffffffffffffull) | (uint64_t)(p->kind & 7) << 48 |
	       (uint64_t)mask << 51 | (uint64_t)p->pend << 56;
}

/*
 * An index of the cache by address, so that code going away costs what it
 * takes away: blocks by the pages they cover, linked exits by the
 * original they lead to (a zone's points keep their place until the
 * cache is flushed).
 */
struct inode {
	uint64_t key;
	struct inode *next;
	struct rb *b;			/* by page: the block */
	uint32_t zi, pi;		/* by target: zone and point */
};

/* Nodes come from slabs, so that a cache of 100 k blocks is dropped in
 * a few frees (python3's start-up spent 4% of its time freeing nodes). */
struct bt_slab;

struct index {
	struct inode **bucket;
	size_t nbucket, n;
	unsigned shift;			/* of a key, hashed (rec_cache.c) */
	struct inode *free;		/* unlinked nodes, for reuse */
	struct bt_slab *slabs;
};

/*
 * A module of the process as its block profile knows it (rec_profile.c):
 * an executable mapping of a file with a build-id, and whether the
 * profile's blocks were translated yet.
 */
#define MOD_MAX		128
struct rc_mod {
	uint64_t start, end, offset;	/* [start, end) maps file offset */
	uint8_t id[20];
	uint8_t idlen;
	uint8_t loaded;
	uint8_t unaudited;	/* its profile's blocks translated without
				   marks (rec_profile.c) */
};

/* A thread, its slot and where decoding its ring stands. */
struct rthread {
	struct bt_thread *th;
	int ended;			/* of a thread that ended: for reuse
					   (bt_recorder_thread_end) */
	int in;
	int slot;			/* -1: none */
	uint64_t tcb, base, top;	/* ring [base, top), TCB at top */
	uint64_t prog_gs;		/* the program's gs base */
	uint64_t pass_start;		/* bytes written before this pass */
	uint64_t prev_start;		/* the same for the pass before */
	uint64_t prev_low;		/* where that pass ended, 0: none */
	uint64_t drained;		/* bytes decoded so far */
	uint64_t wpc;			/* where decoding stands, 0: unknown */
	uint64_t whi;			/* its high half of targets, ~0: none */
	uint64_t gone_start, gone_end;	/* code its last syscall may take away */
	int left_step;			/* it left to step the instruction */
	uint64_t lifted;		/* our int3 lifted for its step */
	uint64_t sigmask;		/* its blocked signals while in */
	int sigmask_known;		/* read where it entered (rec_sigs.c) */
	uint32_t hgen;			/* its oldest held part's generation, */
	int hvalid;			/* if it holds one (rec_grave.c) */
	/* its head as rc_tcb_check() read it and the tracer's records
	 * moved it, while head_known: through one trap, where the thread
	 * cannot move it (a system call fewer for each record there) */
	uint64_t head;
	int head_known;
};

/* The kernel's struct sigaction (rt_sigaction's), x86-64. */
struct rc_sigaction {
	uint64_t handler, flags, restorer, mask;
};

struct code_page {
	uint64_t addr;
	int valid;
	uint8_t bytes[4096];
};

struct bt_recorder {
	struct bt_target *t;
	pid_t pid;			/* the process it serves (tgid) */
	/* processes running in its memory (vfork children; recorder.h) */
	pid_t guest[GUEST_MAX];
	size_t nguest;
	/* rc_point_at()'s points, decoded; the first's index in its zone */
	struct rx_point pt_at[PT_AT_MAX];
	size_t pt_at_first;
	uint8_t *mirror;		/* the tables, the tracer's view */
	int mirror_off;			/* forked: /proc/PID/mem now */
	struct bt_recorder_host host;
	struct rx *x;
	int ready;			/* memory mapped in this address space */
	int broken;			/* could not map it: decline from now */
	int trapping;			/* handling a trap of the thread */
	/* The stopped thread the tracer works for now, NULL: not known */
	const struct bt_thread *cur;
	uint64_t syscall_insn;
	uint64_t tables;		/* two RX_TABLE_BYTES tables */
	uint64_t *tab_orig[2];		/* their orig columns, mirrored */
	/* Their entries lead past each translation's check of its orig
	 * (RX_ENTRY_CHECK): no second thread runs translated code, so no
	 * entry is seen half written.  Off for good when one may
	 * (rc_tables_checked). */
	int tab_unchecked;
	uint64_t slots;			/* SLOT_MAX slots, PROT_NONE reserved */
	size_t slot_size;
	uint8_t slot_used[SLOT_MAX];
	uint8_t slot_dirty[SLOT_MAX];
	struct zone zone[ZONE_MAX];
	size_t nzone;
	struct rb **bucket;		/* blocks by start */
	size_t nbucket, nblocks;
	struct bt_slab *rb_slabs;	/* where blocks lie (rc_rb_new) */
	struct rb *rb_free;		/* freed ones, through hnext */
	uint64_t epoch;			/* bumped when a block leaves the hash */
	uint32_t gen;			/* bumped when code goes (rec_grave.c) */
	struct rb **grave, **grave_hash;	/* blocks dead since */
	uint64_t *grave_pages;			/* pages of theirs, a filter */
	size_t ngrave, grave_head, grave_cap;
	struct rb *prev;		/* rc_block_get's last, in prev_epoch */
	uint64_t prev_epoch;
	struct index by_page;		/* blocks by the pages they cover */
	struct index links;		/* linked exits by their original */
	struct index waiting;		/* exits not linked, by the same */
	uint64_t translated;
	uint64_t version;
	unsigned evict;
	/* tests: microseconds between an entry's two stores, so that a
	 * probe meets it half written (BTRACE_TEST_TABLE_STALL_US) */
	unsigned stall_us;
	uint64_t span_lo[SPAN_MAX], span_hi[SPAN_MAX];	/* code translated */
	size_t nspan;
	struct rthread *rt;
	size_t nrt, rtcap;
	struct code_page *pages;	/* CODE_PAGES of them */
	int settling;			/* rc_settle_all() under way */
	struct rec_walker replay_w;	/* the records of a held part, kept */
	/* hot code (rec_hot.c): blocks found hot, to translate again; the
	 * samples' buffer and records; wraps to the next sample */
	uint64_t *hotq;
	size_t nhot, hotcap;
	struct rb **markq;		/* blocks that ran often in the
					   sample: their marks to drop */
	size_t nmarkq, markqcap;
	uint64_t marks_dropped;		/* translations made again without */
	uint64_t threaded;		/* jmps made nops (thread_point) */
	uint64_t threaded_lead;		/* of them, into a conditional's exit */
	uint64_t lead_exits;		/* exits taken at such an int3 */
	uint8_t *hotbuf;
	struct rec_walker hot_w;
	unsigned hot_wraps, hot_every;
	int hot_off;			/* BTRACE_HOT=0 */
	int icbit_off;			/* BTRACE_ICBIT=0: no rb.icbit */
	int hot_test;			/* BTRACE_TEST_HOT=1 */
	uint64_t hot_made;		/* blocks translated again */
	uint64_t hot_insns;		/* instructions walked by a sample */
	uint16_t hot_sample;		/* samples taken, the one being walked */
	size_t hot_cands;		/* its blocks that ran HOT_HITS times */
	unsigned hot_need;		/* samples a block must be hot in */
	unsigned hot_idle;		/* samples in a row that made none */
	int hot_dense;			/* a sample's records were dense */
	uint8_t *emitbuf;
	struct rx_point *emitpts;	/* rc_emit_init()'s points, reused */
	size_t emitptcap;
	struct rnative *nat;		/* untraced code (rec_native.c) */
	struct wp *wp;			/* pages of code the program may write */
	struct rc_clock clock;		/* the rings' TSC to ns (rec_time.c) */
	uint64_t repairs;		/* control blocks the program wrote */
	int unnamed;			/* the kernel cannot name mappings */
	struct rc_sigaction segv;	/* the program's SIGSEGV action */
	int segv_known;			/* segv read since it last changed */
	pid_t segv_pid;			/* whose: pid's, or a guest's */
	/* Block profiles kept across runs (rec_profile.c) */
	char *cache_dir;		/* NULL: none kept */
	struct rc_mod mod[MOD_MAX];
	size_t nmod;
	int mods_stale;			/* mappings changed since read */
	uint64_t prof_new;		/* what it learnt since the last save */
	int prof_nomark;		/* a profile's batch, not an audit: its
					   translations without marks */
};

/* recorder.c: threads and setting up */
struct rthread *rc_rt_find(const struct bt_recorder *r,
			   const struct bt_thread *th);
struct rthread *rc_rt_get(struct bt_recorder *r, struct bt_thread *th);
int rc_others_in(const struct bt_recorder *r, const struct bt_thread *th);
/* Does @th run in @r's memory (its process's, or a guest's)? */
int rc_ours(const struct bt_recorder *r, const struct bt_thread *th);
int rc_alone(const struct bt_recorder *r);
int rc_setup(struct bt_recorder *r, struct bt_thread *th);

/* rec_cache.c: the process's memory, blocks, zones and points, tables */
int rc_mem_open(struct bt_recorder *r);
int rc_mem_write(struct bt_recorder *r, uint64_t addr, const void *buf,
		 size_t len);
int rc_mem_read(struct bt_recorder *r, uint64_t addr, void *buf, size_t len);
int64_t rc_syscall(struct bt_recorder *r, struct bt_thread *th, long nr,
		   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		   uint64_t a4);
size_t rc_block_hash(uint64_t a, size_t n);
struct rb *rc_rb_new(struct bt_recorder *r);
void rc_rb_free(struct bt_recorder *r, struct rb *b);
void rc_rb_slabs_free(struct bt_recorder *r);
struct rb *rc_block_find(const struct bt_recorder *r, uint64_t a);
struct rb *rc_block_get(struct bt_recorder *r, uint64_t a);
/* rc_block_get() for a walk of code known translated: none decoded */
struct rb *rc_block_walk(struct bt_recorder *r, uint64_t a);
void rc_blocks_dropped(struct bt_recorder *r);
struct zone *rc_zone_of(struct bt_recorder *r, uint64_t pc);
struct zone *rc_zone_for(struct bt_recorder *r, struct bt_thread *th,
			 uint64_t a);
struct rx_point *rc_point_at(struct bt_recorder *r, uint64_t pc, size_t *n);
struct rx_point *rc_point_kind(struct bt_recorder *r, uint64_t pc, int kind);
size_t rc_point_index(const struct bt_recorder *r, const struct rx_point *p);
int rc_zones_flush(struct bt_recorder *r);
int rc_code_write(struct bt_recorder *r, uint64_t addr, const void *buf,
		  size_t len);
int rc_zone_commit(struct bt_recorder *r, struct zone *z, struct rx_emit *e);
void rc_emit_init(struct bt_recorder *r, struct rx_emit *e, struct zone *z);
void rc_emit_done(struct bt_recorder *r, struct rx_emit *e);
int rc_tables_alloc(struct bt_recorder *r);
void rc_tables_checked(struct bt_recorder *r, const struct bt_thread *th);
/* @orig's entries, if it has any, made free. */
void rc_table_clear(struct bt_recorder *r, uint64_t orig);
/* @orig's entries, where it has any, lead to @trans now. */
void rc_table_update(struct bt_recorder *r, uint64_t orig, uint64_t trans);
int rc_table_insert(struct bt_recorder *r, uint64_t orig, uint64_t trans,
		    int need);
void rc_blocks_clear(struct bt_recorder *r);
void rc_block_drop(struct bt_recorder *r, struct rb *b);
int rc_index_add(struct index *x, struct inode node);
struct inode **rc_index_head(const struct index *x, uint64_t key);
void rc_index_unlink(struct index *x, struct inode **pp);
void rc_index_clear(struct index *x);
void rc_index_free(struct index *x);
void rc_cache_flush(struct bt_recorder *r);

/* rec_grave.c: blocks whose code went, for the held parts before */
void rc_grave_bury(struct bt_recorder *r, struct rb *b);
void rc_grave_trim(struct bt_recorder *r);
void rc_grave_clear(struct bt_recorder *r);
struct rb *rc_grave_get(struct bt_recorder *r, uint64_t a, uint32_t gen);

/* rec_link.c: translating, linking, code that goes away */
int rc_translate(struct bt_recorder *r, struct bt_thread *th, uint64_t a,
		 uint8_t pend, uint64_t *trans);
int rc_link_patch(struct bt_recorder *r, struct zone *z, uint64_t site,
		  uint64_t dest);
void rc_link_exit(struct bt_recorder *r, struct zone *z, size_t pi,
		  uint64_t dest);
void rc_link_undo(struct bt_recorder *r, struct zone *z, size_t pi);
void rc_code_gone(struct bt_recorder *r, uint64_t lo, uint64_t hi);
void rc_code_drop(struct bt_recorder *r, uint64_t lo, uint64_t hi);
void rc_note_syscall(struct rthread *rt, const struct user_regs_struct *regs);

/* rec_link.c: the blocks at @at (@n of them, a profile's) translated in
 * one batch, each in the variants @how says ran (RB_PROF_VARS; none: the
 * one without pending outcomes), linked among themselves; those with
 * RB_PROF_IBL entered into the lookup tables */
int rc_translate_set(struct bt_recorder *r, struct bt_thread *th,
		     const uint64_t *at, const uint8_t *how, size_t n);

/* rec_profile.c: the blocks a program ran, kept for its next run */
void rc_profile_init(struct bt_recorder *r);
void rc_profile_enter(struct bt_recorder *r, struct bt_thread *th,
		      uint64_t a);
void rc_profile_ran(struct bt_recorder *r, struct rb *b, int how);
/* The mark a translation of @b carrying @pend made now gets (a byte its
 * code sets when it runs), 0: none (no room). */
uint64_t rc_profile_mark(struct bt_recorder *r, struct zone *z,
			 const struct rb *b, uint8_t pend);
/* What the marks of the translations made outside profiles say ran. */
void rc_profile_harvest(struct bt_recorder *r);
/* The variants of @b whose translation's mark is set (RB_PROF_VAR's
 * bits): translated again without it where the code is hot (rec_hot.c). */
unsigned rc_profile_marked(struct bt_recorder *r, struct rb *b);
void rc_profile_save(struct bt_recorder *r);
void rc_profile_reset(struct bt_recorder *r);
void rc_profile_free(struct bt_recorder *r);

/* rec_room.c: room for zones, and the memory given back at detach */
uint64_t rec_room_pick(const uint64_t (*used)[2], size_t n, uint64_t near,
		       uint64_t size);
int64_t rc_room_map(struct bt_recorder *r, struct bt_thread *th,
		    uint64_t near, uint64_t size, int prot);

/* rec_ibl.c: inline caches of indirect jumps and calls */
uint64_t rc_ic_guess(void *ctx, const struct rb *b);
uint64_t rc_icbit_guess(struct bt_recorder *r, const struct rb *b);
int rc_ic_link_batch(struct bt_recorder *r, const size_t *mark);
void rc_ic_learn(struct bt_recorder *r, struct rthread *rt, uint64_t probe,
		 uint64_t target);

/* rec_slot.c: a thread's ring and control block */
int rc_slot_take(struct bt_recorder *r, struct bt_thread *th,
		 struct rthread *rt);
int rc_head_read(struct bt_recorder *r, struct rthread *rt, uint64_t *head);
void rc_ring_wrap(struct rthread *rt, uint64_t head);
int rc_hi_reset(struct bt_recorder *r, struct rthread *rt);
int rc_ring_put(struct bt_recorder *r, struct rthread *rt, const void *rec,
		size_t len);
int rc_ring_sync(struct bt_recorder *r, struct rthread *rt, uint64_t pc);
void rc_drain(struct bt_recorder *r, struct rthread *rt, uint64_t stop);
/* rec_slot.c: the drain of rc_drain(), the walk unknown after it with
 * @reset (1: its pc, 2: also its targets' high half; see rc_walk_reset) */
void rc_drain_as(struct bt_recorder *r, struct rthread *rt, uint64_t stop,
		 int reset);
void rc_walk_reset(struct bt_recorder *r, struct rthread *rt, int how);
/* Every thread's held history written (before blocks it needs go). */
void rc_settle_all(struct bt_recorder *r);

/* rec_sigs.c: what the kernel does at a fault the recorder consumes */
void rc_sigs_enter(struct bt_recorder *r, struct rthread *rt);
void rc_sigs_need(struct bt_recorder *r, struct rthread *rt);
void rc_sigs_syscall(struct bt_recorder *r,
		     const struct user_regs_struct *regs);
void rc_sigs_consumed(struct bt_recorder *r, struct rthread *rt);

/* rec_native.c: untraced code run natively */
int rc_native_exit(struct bt_recorder *r, struct bt_thread *th, uint64_t near,
		   uint64_t target, uint64_t *trans);
int rc_native_out(struct bt_recorder *r, struct rthread *rt,
		  struct user_regs_struct *regs, uint64_t pc);
void rc_native_ret(struct bt_recorder *r, uint64_t site);
void rc_native_flush(struct bt_recorder *r);
void rc_native_gone(struct bt_recorder *r, uint64_t lo, uint64_t hi);
void rc_native_reset(struct bt_recorder *r);
void rc_native_free(struct bt_recorder *r);
int rc_native_fork(struct bt_recorder *c, const struct bt_recorder *p);

/* rec_wp.c: code the program writes (write-protected pages) */
struct rb *rc_wp_block_get(struct bt_recorder *r, struct bt_thread *th,
			   uint64_t a);
void rc_wp_translated(struct bt_recorder *r, const struct rb *b,
		      const struct zone *z, size_t first);
void rc_wp_flush(struct bt_recorder *r);
int rc_wp_fault(struct bt_recorder *r, struct bt_thread *th,
		const siginfo_t *si);
void rc_wp_syscall(struct bt_recorder *r, struct bt_thread *th,
		   const struct user_regs_struct *regs);
void rc_wp_free(struct bt_recorder *r);
int rc_wp_copy(struct bt_recorder *c, const struct bt_recorder *p);
/* rec_time.c: the tracer's time where it held @rt (its stop, now) */
void rc_time_stall(struct bt_recorder *r, struct rthread *rt);
unsigned rc_hot_samples(void);
void rc_hot_wrapped(struct bt_recorder *r, struct rthread *rt,
		    const struct user_regs_struct *regs, uint64_t head);

/*
 * rec_guard.c: the recorder's memory against the program's writes.  The
 * tables' mapping has a page after the tables for the names
 * (RC_NAMES_BYTES).
 */
enum { RC_NAME_TABLES, RC_NAME_RINGS, RC_NAME_CODE, RC_NAME_MAX };
#define RC_NAMES_BYTES 4096
#define RC_NAME_LEN	16
int rc_names_write(struct bt_recorder *r);
int64_t rc_slots_map(struct bt_recorder *r, struct bt_thread *th,
		     uint64_t hint, uint64_t len);
/*
 * A memfd of @len bytes named after @which, made in the process through
 * @th: its descriptor there (the caller closes it), or < 0.
 */
int64_t rc_memfd(struct bt_recorder *r, struct bt_thread *th, int which,
		 uint64_t len);
void rc_name(struct bt_recorder *r, struct bt_thread *th, uint64_t addr,
	     uint64_t len, int which);
int rc_tcb_check(struct bt_recorder *r, struct rthread *rt);

/* rec_mirror.c: the tracer's own writable view of the tables. */
void rc_mirror_map(struct bt_recorder *r, struct bt_thread *th);
/* The tracer's view of [@addr, @addr + @len), NULL: none. */
uint8_t *rc_mirror_at(const struct bt_recorder *r, uint64_t addr, size_t len);
/* Store @len bytes there: a word in one store, in order with the rest. */
void rc_mirror_store(uint8_t *dst, const void *buf, size_t len);
void rc_mirror_drop(struct bt_recorder *r);
int rc_fault_repair(struct bt_recorder *r, struct rthread *rt,
		    struct user_regs_struct *regs, const siginfo_t *si);

#endif /* BTRACE_RECORDER_INT_H */
