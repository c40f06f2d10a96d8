// SPDX-License-Identifier: MIT
/*
 * PT's timing packets into branch times: a loop of four instructions
 * (nop; nop; nop; jne back) traced with TSC, TMA and MTC packets encoded
 * by libipt's encoder, decoded back.  The expected times are computed here
 * from the packets as the SDM defines them (TSC at an MTC = TSC at the TMA
 * - its fast counter + CTC ticks since the TMA * CPUID.15H EBX/EAX) and
 * perf's conversion; branches between two timed ones are interpolated over
 * instructions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/btrace.h"
#include "decode_internal.h"
#include "../tools/synth/ptsynth.h"

#define BASE 0x1000ull
#define NBR 8		/* taken branches in the stream */

static const uint8_t loop[] = { 0x90, 0x90, 0x90, 0x75, 0xfb };

/* The clock of the stream, and perf's conversion of it. */
#define T0 0x100000ull		/* TSC in PSB+ */
#define T7 0x120000ull		/* a TSC later, with its own TMA */
#define TMA_CTC 0x0123u
#define TMA_FC 0x50u
#define MTC1 0x30u
#define MTC2 0x40u
#define MTC_FREQ 3
#define EAX 2u
#define EBX 0x11cu

static const struct bt_tsc_conv conv = {
	.time_zero = 5000, .time_mult = 0x2aaaaaab, .time_shift = 30,
	.mono_offset = 1000000,
};

struct stream {
	uint8_t buf[512];
	size_t size;
	struct pt_encoder *enc;
};

static void put(struct stream *s, struct pt_packet *pkt)
{
	int n = pt_enc_next(s->enc, pkt);

	assert_true(n > 0);
	s->size += n;
}

static void put_type(struct stream *s, enum pt_packet_type type)
{
	struct pt_packet pkt = { .type = type };

	put(s, &pkt);
}

static void put_tsc(struct stream *s, uint64_t tsc, uint16_t ctc, uint16_t fc)
{
	struct pt_packet pkt = { .type = ppt_tsc };

	pkt.payload.tsc.tsc = tsc;
	put(s, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tma;
	pkt.payload.tma.ctc = ctc;
	pkt.payload.tma.fc = fc;
	put(s, &pkt);
}

static void put_mtc(struct stream *s, uint8_t ctc)
{
	struct pt_packet pkt = { .type = ppt_mtc };

	pkt.payload.mtc.ctc = ctc;
	put(s, &pkt);
}

/* @n taken conditional branches. */
static void put_taken(struct stream *s, int n)
{
	struct pt_packet pkt = { .type = ppt_tnt_8 };

	pkt.payload.tnt.bit_size = (uint8_t)n;
	pkt.payload.tnt.payload = (1ull << n) - 1;
	put(s, &pkt);
}

/*
 * PSB+ (TSC, TMA) at the loop, then branch 1 | MTC | 2 | 3 4 5 | MTC | 6 |
 * TSC TMA | 7 8.  With @timed 0, the same without timing packets.
 */
static void encode(struct stream *s, int timed)
{
	struct pt_config cfg;
	struct pt_packet pkt;

	memset(s, 0, sizeof(*s));
	pt_config_init(&cfg);
	cfg.begin = s->buf;
	cfg.end = s->buf + sizeof(s->buf);
	s->enc = pt_alloc_encoder(&cfg);
	assert_non_null(s->enc);
	put_type(s, ppt_psb);
	if (timed)
		put_tsc(s, T0, TMA_CTC, TMA_FC);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1;
	put(s, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_fup;
	pkt.payload.ip.ipc = pt_ipc_sext_48;
	pkt.payload.ip.ip = BASE;
	put(s, &pkt);
	put_type(s, ppt_psbend);
	put_taken(s, 1);
	if (timed)
		put_mtc(s, MTC1);
	put_taken(s, 1);
	put_taken(s, 3);
	if (timed)
		put_mtc(s, MTC2);
	put_taken(s, 1);
	if (timed)
		put_tsc(s, T7, 0x210, 0);
	put_taken(s, 2);
	pt_free_encoder(s->enc);
}

static uint64_t ns_of(uint64_t tsc)
{
	unsigned __int128 p = (unsigned __int128)tsc * conv.time_mult;

	return conv.time_zero + (uint64_t)(p >> conv.time_shift) +
	       (uint64_t)conv.mono_offset;
}

/* TSC at an MTC whose CTC is @mtc << MTC_FREQ, @base the TSC at the TMA
 * less its fast counter, @from the CTC there (11 bits: MTC_FREQ + 8). */
static uint64_t tsc_at_mtc(uint64_t base, uint32_t from, uint8_t mtc)
{
	uint32_t ctc = (uint32_t)mtc << MTC_FREQ;

	return base + (uint64_t)(ctc - from) * EBX / EAX;
}

/* The time at instruction @pos between (@p0, @t0) and (@p1, @t1). */
static uint64_t between(uint64_t p0, uint64_t t0, uint64_t p1, uint64_t t1,
			uint64_t pos)
{
	return t0 + (pos - p0) * (t1 - t0) / (p1 - p0);
}

/*
 * Branch i (0-based) ends at instruction 4 (i + 1).  The TSC of PSB+ is
 * the time where the trace starts (instruction 0); a timing packet before
 * a TNT, that of the branch its first bit decides.
 */
static void expected(uint64_t *want)
{
	uint64_t t2 = tsc_at_mtc(T0 - TMA_FC, TMA_CTC & 0x7ff, MTC1);
	uint64_t t6 = tsc_at_mtc(t2, MTC1 << MTC_FREQ, MTC2);
	int i;

	want[0] = between(0, ns_of(T0), 8, ns_of(t2), 4);
	want[1] = ns_of(t2);
	want[5] = ns_of(t6);
	want[6] = want[7] = ns_of(T7);
	for (i = 2; i < 5; i++)
		want[i] = between(8, want[1], 24, want[5], 4 * (i + 1));
}

static struct bt_capture capture(struct stream *s, int with_conv)
{
	struct bt_capture cap = { .format = BT_FMT_PT, .data = s->buf,
				  .size = s->size };

	cap.cpu.vendor = BT_CPU_INTEL;
	cap.cpu.family = 6;
	cap.cpu.model = 0x55;
	cap.pt_mtc_freq = MTC_FREQ;
	cap.pt_cpuid_15_eax = EAX;
	cap.pt_cpuid_15_ebx = EBX;
	if (with_conv)
		cap.pt_time = conv;
	return cap;
}

static struct bt_history *decode(const struct bt_capture *cap, size_t last,
				 int full)
{
	struct bt_image *image = bt_image_alloc();
	struct bt_decode_opts opts = { sizeof(opts), last, image };
	struct bt_history *h = calloc(1, sizeof(*h));

	assert_non_null(image);
	assert_non_null(h);
	assert_int_equal(bt_image_add_mem(image, loop, sizeof(loop), BASE), 0);
	if (full)
		assert_int_equal(bt_decode_pt_full(cap, &opts, h), 0);
	else
		assert_int_equal(bt_decode_pt(cap, &opts, h), 0);
	bt_image_free(image);
	return h;
}

/* The branches are the loop's, each with the time @want says (NULL: 0). */
static void check(const struct bt_history *h, size_t n, const uint64_t *want)
{
	size_t i, first = NBR - n;

	assert_int_equal(h->count, n);
	for (i = 0; i < n; i++) {
		const struct bt_branch *b = &h->branch[i];

		assert_int_equal(b->from, BASE + 3);
		assert_int_equal(b->to, BASE);
		assert_int_equal(b->kind, BT_BR_COND);
		if (b->ts != (want ? want[first + i] : 0))
			fail_msg("branch %zu: ts %lu, want %lu", first + i,
				 b->ts, want ? want[first + i] : 0);
	}
	assert_int_equal(h->end_ts, want ? want[NBR - 1] : 0);
}

static void mtc_times(void **state)
{
	struct stream s;
	struct bt_capture cap;
	struct bt_history *h;
	uint64_t want[NBR];

	encode(&s, 1);
	cap = capture(&s, 1);
	expected(want);
	/* The clock moves on: the test means something. */
	assert_true(ns_of(T0) < want[0] && want[0] < want[1] &&
		    want[1] < want[5] && want[5] < want[6]);
	assert_true(want[2] > want[1] && want[4] < want[5]);
	h = decode(&cap, 0, 0);
	check(h, NBR, want);
	bt_history_free(h);
	/* The last N, stretch by stretch from the last PSB: the same. */
	h = decode(&cap, 3, 0);
	check(h, 3, want);
	bt_history_free(h);
	h = decode(&cap, 3, 1);
	check(h, 3, want);
	bt_history_free(h);
}

/* A trace file keeps what the times need: the same times after loading. */
static void file_times(void **state)
{
	struct bt_trace t = { .pid = 1 }, *u;
	struct stream s;
	struct bt_history *h;
	uint64_t want[NBR];
	uint8_t *buf;
	size_t len;

	encode(&s, 1);
	t.nthreads = 1;
	t.thread = calloc(1, sizeof(*t.thread));
	assert_non_null(t.thread);
	t.thread[0] = capture(&s, 1);
	assert_int_equal(bt_trace_encode(&t, &buf, &len), 0);
	free(t.thread);
	assert_int_equal(bt_trace_parse(&u, buf, len), 0);
	expected(want);
	h = decode(&u->thread[0], 0, 0);
	check(h, NBR, want);
	bt_history_free(h);
	bt_trace_free(u);
	free(buf);
}

/* Without perf's conversion (older files), or without timing packets
 * (PT with tsc=0), branches stay untimed. */
static void untimed(void **state)
{
	struct stream s;
	struct bt_capture cap;
	struct bt_history *h;

	encode(&s, 1);
	cap = capture(&s, 0);
	h = decode(&cap, 0, 0);
	check(h, NBR, NULL);
	bt_history_free(h);
	encode(&s, 0);
	cap = capture(&s, 1);
	h = decode(&cap, 0, 0);
	check(h, NBR, NULL);
	bt_history_free(h);
}

/* perf's quotient/remainder formula equals the 128-bit product. */
static void conv_ns(void **state)
{
	static const uint64_t tsc[] = { 0, 1, 0x3fffffff, 0x40000000,
					0x123456789abcull, 0x7fffffffffffull };
	struct bt_tsc_conv none = { 0 };
	size_t i;

	for (i = 0; i < sizeof(tsc) / sizeof(*tsc); i++)
		assert_int_equal(bt_tsc_conv_ns(&conv, tsc[i]), ns_of(tsc[i]));
	assert_int_equal(bt_tsc_conv_ns(&none, 12345), 0);
}

/*
 * Random walks over generated code (tests/tools/synth), their clock
 * running at TPI ticks an instruction, told by TSC packets in PSB+ and
 * before TNT and TIP packets: each branch's time is that clock at its
 * instruction count, up to the last TSC (past it, the last one's).
 */
#define TPI 7
#define SYNTH_BASE 0x400000ull

static const struct bt_tsc_conv unit = { .time_mult = 1,
					 .mono_offset = 5000 };

static void expect_linear(const struct bt_branch *truth, size_t first,
			  size_t n, const struct ps_stream *st,
			  const struct bt_history *h)
{
	uint64_t pos = 0;
	size_t i;

	assert_int_equal(h->count, n - first);
	for (i = 0; i < n; i++) {
		uint64_t p, want;

		pos += truth[i].ninsn;
		if (i < first)
			continue;
		p = pos < st->time_pos ? pos : st->time_pos;
		want = unit.mono_offset + T0 + TPI * p;
		if (h->branch[i - first].from != truth[i].from ||
		    h->branch[i - first].ts != want)
			fail_msg("entry %zu of %zu (tpos %lu pos %lu): %#lx ts %lu, want %#lx ts %lu", i, n, st->time_pos, pos,
				 h->branch[i - first].from,
				 h->branch[i - first].ts, truth[i].from, want);
	}
}

static void synth_one(uint64_t seed, size_t psb_period)
{
	struct ps_walk_opts wo = { .seed = seed, .nbranch = 3000,
				   .p_taken = 0.5, .p_intr = 0.01 };
	struct ps_pt_opts po = { .seed = seed, .psb_period = psb_period,
				 .retcomp = 2, .p_irq = 0.01, .tnt_mix = 1,
				 .tsc0 = T0, .tsc_per_insn = TPI };
	struct bt_capture cap = { .format = BT_FMT_PT, .pt_time = unit };
	struct bt_decode_opts opts = { sizeof(opts), 0, NULL };
	struct ps_prog *prog = ps_prog_gen(seed, 16, SYNTH_BASE);
	struct bt_branch *truth;
	struct ps_stream st;
	struct bt_history *h;
	size_t n;

	assert_non_null(prog);
	assert_int_equal(ps_walk(prog, &wo, &truth, &n), 0);
	assert_int_equal(ps_pt_encode(&po, ps_prog_insn_fn, prog, prog->entry,
				      truth, n, &st), 0);
	n = ps_pt_visible(truth, n);
	opts.image = bt_image_alloc();
	assert_int_equal(bt_image_add_mem(opts.image, prog->code, prog->size,
					  SYNTH_BASE), 0);
	cap.data = st.buf;
	cap.size = st.size;
	h = calloc(1, sizeof(*h));
	assert_int_equal(bt_decode_pt(&cap, &opts, h), 0);
	expect_linear(truth, 0, n, &st, h);
	bt_history_free(h);
	opts.last = 200;	/* stretches from the last PSBs back */
	h = calloc(1, sizeof(*h));
	assert_int_equal(bt_decode_pt(&cap, &opts, h), 0);
	expect_linear(truth, n - 200, n, &st, h);
	bt_history_free(h);
	bt_image_free(opts.image);
	ps_stream_release(&st);
	free(truth);
	ps_prog_free(prog);
}

static void synth_linear(void **state)
{
	uint64_t seed;

	for (seed = 1; seed <= 4; seed++) {
		synth_one(seed, 512);
		synth_one(seed, 4096);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mtc_times),
		cmocka_unit_test(untimed),
		cmocka_unit_test(conv_ns),
		cmocka_unit_test(file_times),
		cmocka_unit_test(synth_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
