// SPDX-License-Identifier: MIT
/*
 * A PMU as sysfs describes it: its type, the config terms of format/
 * ("config:0-7", "config1:0,2-3") and the capabilities of caps/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"

/* Read the first line of @dir/@file into @buf. */
static int read_line(const char *dir, const char *file, char *buf,
		     size_t size)
{
	char path[PATH_MAX];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return bt_fail(bt_errno_to_bte(errno), errno, "%s", path);
	if (!fgets(buf, (int)size, f))
		ret = bt_fail(bte_format, 0, "%s: empty", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

static int parse_u64(const char *s, int base, uint64_t *value)
{
	char *end;

	errno = 0;
	*value = strtoull(s, &end, base);
	if (errno || end == s || (*end && *end != ' '))
		return -bte_format;
	return 0;
}

int bt_pmu_read_u64(const char *pmu_dir, const char *file, uint64_t *value)
{
	char buf[64];
	int ret = read_line(pmu_dir, file, buf, sizeof(buf));

	if (ret)
		return ret;
	if (parse_u64(buf, 10, value))
		return bt_fail(bte_format, 0, "%s/%s: '%s'", pmu_dir, file, buf);
	return 0;
}

int bt_pmu_type(const char *pmu_dir)
{
	uint64_t type;
	int ret = bt_pmu_read_u64(pmu_dir, "type", &type);

	if (ret)
		return ret;
	if (type > INT_MAX)
		return bt_fail(bte_format, 0, "%s/type", pmu_dir);
	return (int)type;
}

int bt_pmu_cap(const char *pmu_dir, const char *cap, uint64_t *value)
{
	char file[128], buf[64];
	int ret;

	snprintf(file, sizeof(file), "caps/%s", cap);
	ret = read_line(pmu_dir, file, buf, sizeof(buf));
	if (ret)
		return ret;
	if (parse_u64(buf, 16, value))
		return bt_fail(bte_format, 0, "%s/%s: '%s'", pmu_dir, file, buf);
	return 0;
}

/* "0-7" or "10" into a mask; returns 0 or -1. */
static int parse_range(const char *s, uint64_t *mask)
{
	unsigned int lo, hi;
	int n = 0;

	if (sscanf(s, "%u-%u%n", &lo, &hi, &n) == 2 && !s[n])
		;
	else if (sscanf(s, "%u%n", &lo, &n) == 1 && !s[n])
		hi = lo;
	else
		return -1;
	if (lo > hi || hi > 63)
		return -1;
	*mask |= (hi - lo == 63 ? ~0ull : ((1ull << (hi - lo + 1)) - 1)) << lo;
	return 0;
}

int bt_pmu_format_parse(const char *s, int *field, uint64_t *mask)
{
	char buf[128], *colon, *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -bte_format;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -bte_format;
	*colon = '\0';
	if (!strcmp(buf, "config"))
		*field = 0;
	else if (!strcmp(buf, "config1"))
		*field = 1;
	else if (!strcmp(buf, "config2"))
		*field = 2;
	else
		return -bte_format;
	*mask = 0;
	for (tok = strtok_r(colon + 1, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (parse_range(tok, mask))
			return -bte_format;
	return *mask ? 0 : -bte_format;
}

/* Spread @value over the set bits of @mask, lowest first (as perf does). */
static int deposit(uint64_t value, uint64_t mask, uint64_t *out)
{
	uint64_t bits = 0;
	int i;

	for (i = 0; i < 64; i++) {
		if (!(mask & (1ull << i)))
			continue;
		if (value & 1)
			bits |= 1ull << i;
		value >>= 1;
	}
	if (value)
		return -1;
	*out = (*out & ~mask) | bits;
	return 0;
}

/* The config field and mask of @term in @pmu_dir's format/. */
static int term_find(const char *pmu_dir, const char *term, int *field,
		     uint64_t *mask, char *buf, size_t size)
{
	char file[128];
	int ret;

	snprintf(file, sizeof(file), "format/%s", term);
	ret = read_line(pmu_dir, file, buf, size);
	if (ret)
		return ret == -bte_nomem ? ret : -bte_noent;
	if (bt_pmu_format_parse(buf, field, mask))
		return bt_fail(bte_format, 0, "%s/%s: '%s'", pmu_dir, file, buf);
	return 0;
}

int bt_pmu_term_get(const char *pmu_dir, const char *term,
		    const struct perf_event_attr *attr, uint64_t *value)
{
	char buf[128];
	uint64_t mask, src;
	int field, ret, i, n = 0;

	ret = term_find(pmu_dir, term, &field, &mask, buf, sizeof(buf));
	if (ret)
		return ret;
	src = field == 0 ? attr->config :
	      field == 1 ? attr->config1 : attr->config2;
	*value = 0;
	for (i = 0; i < 64; i++)	/* the inverse of deposit() */
		if (mask & (1ull << i))
			*value |= ((src >> i) & 1) << n++;
	return 0;
}

int bt_pmu_term_set(const char *pmu_dir, const char *term, uint64_t value,
		    struct perf_event_attr *attr)
{
	char buf[128];
	uint64_t mask, cur;
	__u64 *dst;
	int field, ret;

	ret = term_find(pmu_dir, term, &field, &mask, buf, sizeof(buf));
	if (ret)
		return ret;
	dst = field == 0 ? &attr->config :
	      field == 1 ? &attr->config1 : &attr->config2;
	cur = *dst;
	if (deposit(value, mask, &cur))
		return bt_fail(bte_invalid, 0, "%s=%llu does not fit '%s'",
			       term, (unsigned long long)value, buf);
	*dst = cur;
	return 0;
}
