// SPDX-License-Identifier: MIT
/*
 * ptenc: Intel PT packets written as text (the notation of libipt's pttc)
 * encoded into a stream by libipt's encoder, for golden decoder tests.
 *
 *   ptenc OUT.pt < PACKETS
 *
 * One packet a line; blank lines and lines starting with '#' are skipped:
 *   psb()  psbend()  pad()  ovf()  mode.exec(64bit)
 *   fup(IPC: ADDR)  tip(IPC: ADDR)  tip.pge(IPC: ADDR)  tip.pgd(IPC: ADDR)
 *   tnt(t.n.t)  tnt64(t.n)          (oldest branch first)
 * IPC is libipt's IP compression: 0 suppressed, 1-3 and 4, 6 full.
 */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_ip(const char *args, struct pt_packet_ip *ip)
{
	unsigned ipc;
	uint64_t addr = 0;

	if (sscanf(args, "%u: %" SCNx64, &ipc, &addr) < 1 || ipc > 6)
		return -1;
	ip->ipc = (enum pt_ip_compression)ipc;
	ip->ip = addr;
	return 0;
}

static int parse_tnt(const char *args, struct pt_packet_tnt *tnt)
{
	memset(tnt, 0, sizeof(*tnt));
	for (; *args && *args != ')'; args++) {
		if (*args == '.' || *args == ' ')
			continue;
		if ((*args != 't' && *args != 'n') || tnt->bit_size >= 47)
			return -1;
		tnt->payload = tnt->payload << 1 | (*args == 't');
		tnt->bit_size++;
	}
	return tnt->bit_size ? 0 : -1;
}

static const struct {
	const char *name;
	enum pt_packet_type type;
} packets[] = {
	{ "psb", ppt_psb }, { "psbend", ppt_psbend }, { "pad", ppt_pad },
	{ "ovf", ppt_ovf }, { "mode.exec", ppt_mode }, { "fup", ppt_fup },
	{ "tip", ppt_tip }, { "tip.pge", ppt_tip_pge },
	{ "tip.pgd", ppt_tip_pgd }, { "tnt", ppt_tnt_8 },
	{ "tnt64", ppt_tnt_64 },
};

static int parse_line(const char *line, struct pt_packet *pkt)
{
	const char *paren = strchr(line, '(');
	size_t i, len;

	if (!paren)
		return -1;
	len = paren - line;
	memset(pkt, 0, sizeof(*pkt));
	for (i = 0; i < sizeof(packets) / sizeof(packets[0]); i++) {
		if (strlen(packets[i].name) != len ||
		    strncmp(line, packets[i].name, len))
			continue;
		pkt->type = packets[i].type;
		switch (pkt->type) {
		case ppt_mode:
			pkt->payload.mode.leaf = pt_mol_exec;
			pkt->payload.mode.bits.exec.csl =
				!strncmp(paren + 1, "64bit", 5);
			return 0;
		case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
			return parse_ip(paren + 1, &pkt->payload.ip);
		case ppt_tnt_8: case ppt_tnt_64:
			return parse_tnt(paren + 1, &pkt->payload.tnt);
		default:
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 16];
	struct pt_encoder *enc;
	struct pt_config cfg;
	char line[256];
	uint64_t off = 0;
	int lineno = 0;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: ptenc OUT.pt < PACKETS\n");
		return 2;
	}
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	if (!enc)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		struct pt_packet pkt;
		char *s = line + strspn(line, " \t");

		lineno++;
		if (*s == '#' || *s == '\n' || !*s)
			continue;
		if (parse_line(s, &pkt) < 0 || pt_enc_next(enc, &pkt) < 0) {
			fprintf(stderr, "ptenc: line %d: bad packet: %s", lineno,
				s);
			return 1;
		}
	}
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	out = fopen(argv[1], "wb");
	if (!out || fwrite(buf, 1, off, out) != off || fclose(out)) {
		fprintf(stderr, "ptenc: cannot write '%s'\n", argv[1]);
		return 1;
	}
	return 0;
}
