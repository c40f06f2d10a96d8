/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BTRACE_H
#define BTRACE_BTRACE_H

/* The whole public API, for front ends. */

#include "btrace/error.h"
#include "btrace/branch.h"
#include "btrace/capture.h"
#include "btrace/insn.h"
#include "btrace/maps.h"
#include "btrace/ring.h"
#include "btrace/target.h"
#include "btrace/image.h"
#include "btrace/decode.h"
#include "btrace/calls.h"
#include "btrace/symbols.h"
#include "btrace/tracefile.h"

#define BTRACE_VERSION "0.1.0"

#endif /* BTRACE_BTRACE_H */
