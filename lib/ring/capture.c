// SPDX-License-Identifier: MIT
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/capture.h"

void bt_capture_release(struct bt_capture *cap)
{
	if (!cap)
		return;
	free(cap->data);
	cap->data = NULL;
	cap->size = 0;
}

uint64_t bt_tsc_conv_ns(const struct bt_tsc_conv *conv, uint64_t tsc)
{
	uint64_t quot, rem, ns;

	if (!conv->time_mult || conv->time_shift > 63)
		return 0;
	quot = tsc >> conv->time_shift;
	rem = tsc & ((1ull << conv->time_shift) - 1);
	ns = conv->time_zero + quot * conv->time_mult +
	     ((rem * conv->time_mult) >> conv->time_shift);
	return ns + (uint64_t)conv->mono_offset;
}

const char *bt_format_name(int format)
{
	static const char *const names[BT_FMT_MAX] = {
		[BT_FMT_NONE] = "none", [BT_FMT_SOFT] = "soft",
		[BT_FMT_BTS] = "bts",	[BT_FMT_PERF_BTS] = "perf-bts",
		[BT_FMT_PT] = "pt",
	};

	if (format < 0 || format >= BT_FMT_MAX)
		return "?";
	return names[format];
}

void bt_cpu_read(struct bt_cpu *cpu)
{
	unsigned int eax, ebx, ecx, edx;
	char vendor[13];

	memset(cpu, 0, sizeof(*cpu));
	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = '\0';
	if (!strcmp(vendor, "GenuineIntel"))
		cpu->vendor = BT_CPU_INTEL;
	else if (!strcmp(vendor, "AuthenticAMD"))
		cpu->vendor = BT_CPU_AMD;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return;
	/* Family and model with their extended fields, as the SDM says. */
	cpu->family = (eax >> 8) & 0xf;
	cpu->model = (eax >> 4) & 0xf;
	cpu->stepping = eax & 0xf;
	if (cpu->family == 0xf)
		cpu->family += (eax >> 20) & 0xff;
	if (cpu->family == 0x6 || cpu->family >= 0xf)
		cpu->model += ((eax >> 16) & 0xf) << 4;
}
