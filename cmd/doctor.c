// SPDX-License-Identifier: MIT
/*
 * btrace doctor [--json]: what can trace on this machine, and why not.
 * Exit status 0 if a hardware backend (pt, bts) is usable, 1 if not.
 */
#include <stdio.h>
#include <string.h>

#include "btrace/btrace.h"
#include "btrace/doctor.h"
#include "cmd.h"

/* The backends, in the order auto tries them (the registry's). */
static size_t backends(int *ids)
{
	size_t n = bt_backend_auto_order(ids, BT_BACKEND_MAX);

	return n < BT_BACKEND_MAX ? n : BT_BACKEND_MAX;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/*
 * @backend's rows of the registry:
 * [{"mode":"record","about":"...","honours":["filters",...]},...]
 */
static void json_modes(int backend)
{
	const struct bt_backend_info *b;
	unsigned cap;
	size_t i, n = 0;

	putchar('[');
	for (i = 0; (b = bt_backend_info(i)); i++) {
		if (b->backend != backend)
			continue;
		printf("%s{\"mode\":", n++ ? "," : "");
		if (b->mode)
			json_str(b->mode);
		else
			printf("null");
		printf(",\"about\":");
		json_str(b->about);
		printf(",\"honours\":[");
		for (cap = 1; cap && cap <= b->caps; cap <<= 1)
			if (b->caps & cap)
				printf("%s\"%s\"", (b->caps & (cap - 1)) ? "," : "",
				       bt_backend_cap_name(cap));
		printf("]}");
	}
	putchar(']');
}

static void print_json(const struct bt_doctor *d)
{
	int ids[BT_BACKEND_MAX];
	size_t i, n = backends(ids);

	printf("{\"checks\":[");
	for (i = 0; i < d->count; i++) {
		const struct bt_check *c = &d->check[i];

		printf("%s{\"name\":", i ? "," : "");
		json_str(c->name);
		printf(",\"state\":");
		json_str(bt_check_state_name(c->state));
		printf(",\"value\":");
		json_str(c->value);
		printf(",\"remedy\":");
		json_str(c->remedy);
		putchar('}');
	}
	printf("],\"backends\":{");
	for (i = 0; i < n; i++) {
		printf("%s", i ? "," : "");
		json_str(bt_backend_name(ids[i]));
		printf(":{\"usable\":%s,\"why\":",
		       d->usable[ids[i]] ? "true" : "false");
		json_str(d->why[ids[i]]);
		printf(",\"modes\":");
		json_modes(ids[i]);
		putchar('}');
	}
	printf("},\"hardware\":%s}\n", bt_doctor_hw_usable(d) ? "true" : "false");
}

static void print_text(const struct bt_doctor *d)
{
	int ids[BT_BACKEND_MAX];
	size_t i, n = backends(ids);

	for (i = 0; i < d->count; i++) {
		const struct bt_check *c = &d->check[i];

		printf("%-20s %-4s %s\n", c->name,
		       c->state == BT_CHECK_INFO ? "" :
						   bt_check_state_name(c->state),
		       c->value);
		if (c->remedy[0])
			printf("%-20s      remedy: %s\n", "", c->remedy);
	}
	printf("\nbackends:");
	for (i = 0; i < n; i++)
		printf(" %s %s", bt_backend_name(ids[i]),
		       d->usable[ids[i]] ? "yes" : "no");
	printf("\n%s\n", bt_doctor_hw_usable(d) ?
	       "hardware tracing is usable here (--backend auto picks it)" :
	       "no hardware backend is usable here: --backend auto uses soft "
	       "(the recorder: slower than hardware, far faster than stepping)");
}

int cmd_doctor(int argc, char **argv)
{
	struct bt_doctor doc;
	struct bt_host host;
	int json = 0, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: btrace doctor [--json]\n\n"
			       "Say which backends can trace on this machine and, "
			       "for each that cannot, why\nand the remedy.  Exit "
			       "status 0 if a hardware backend (pt, bts) is usable,\n"
			       "1 if only soft (or nothing) is.\n");
			return 0;
		} else {
			fprintf(stderr, "btrace: doctor: unknown option '%s'\n",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	bt_host_read(&host);
	bt_doctor_eval(&host, &doc);
	if (json)
		print_json(&doc);
	else
		print_text(&doc);
	return bt_doctor_hw_usable(&doc) ? 0 : EXIT_FAIL;
}
