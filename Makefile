# btrace — plain Makefile.  `make`, `make check`, `make demo`, `make bench`, `make fuzz`.
# Options: V=1 (show commands), SANITIZE=address,undefined, CFLAGS=..., NO_DEPS=1
# (skip the Debian package check).  `make web-deps` installs what the browser
# tests need (make check does).  `make install` / `make uninstall` take
# PREFIX (/usr/local), DESTDIR and the directories below.

CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Werror=implicit-function-declaration
CPPFLAGS += -D_GNU_SOURCE -Ilib/include -Idecoder/include -Ilib -Idecoder \
            -Igdbserver
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif
LIBS     := -lipt -lcapstone -lZydis -ldw -lelf -lreadline -lpthread
TESTLIBS := -lcmocka

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Debian packages the build and the tests need, and the files that prove
# each one is there (checked without running dpkg on every make).
DEB_PKGS := libipt-dev libcapstone-dev libreadline-dev libdw-dev libelf-dev \
            libcmocka-dev pkg-config gdb python3 libzydis-dev sqlite3 \
            xz-utils libdebuginfod-dev debuginfod nodejs
DEB_FILES := /usr/include/intel-pt.h /usr/include/capstone/capstone.h \
             /usr/include/readline/readline.h /usr/include/elfutils/libdwfl.h \
             /usr/include/libelf.h /usr/include/cmocka.h /usr/bin/pkg-config \
             /usr/bin/gdb /usr/bin/python3 /usr/include/Zydis/Zydis.h \
             /usr/bin/sqlite3 /usr/bin/xz /usr/include/elfutils/debuginfod.h \
             /usr/bin/debuginfod /usr/bin/node

BUILD    := build
LIB_SRC  := $(sort $(shell find lib -name "*.c"))
DEC_SRC  := $(sort $(wildcard decoder/*.c))
CMD_SRC  := $(sort $(wildcard cmd/*.c))
# btrace gdbserver's protocol engine: linked into btrace, not installed.
GS_SRC   := $(sort $(wildcard gdbserver/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
TGT_SRC  := $(sort $(wildcard tests/targets/*.c))
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
BENCH_SRC:= $(sort $(wildcard bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
DEC_OBJ  := $(DEC_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/%.o)
GS_OBJ   := $(GS_SRC:%.c=$(BUILD)/%.o)
LIBBT    := $(BUILD)/libbtrace.a
LIBDEC   := $(BUILD)/libbtdecode.a
LIBGS    := $(BUILD)/libbtgdbserver.a
BTRACE   := $(BUILD)/btrace
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TGT_BIN  := $(TGT_SRC:tests/targets/%.c=$(BUILD)/targets/%)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# Test support linked into unit tests, tools, benchmarks and fuzz targets:
# the trace synthesizer (tests/tools/synth/).
SYNTH_OBJ:= $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/tools/synth/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CHECK:= $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-check/%.o)

.PHONY: all deps web-deps bench-deps check unit e2e demo bench fuzz clean format \
        install uninstall shared
# The synthesizer object is reached only through pattern rules: keep it.
.SECONDARY: $(SYNTH_OBJ)
all: deps $(BTRACE) $(TGT_BIN) $(TOOL_BIN)

# Install what is missing: as root through apt-get, otherwise say the command.
# Everything compiled waits for it (order-only), so that make -j does not
# race the install.
deps:
ifneq ($(NO_DEPS),1)
	@missing=""; set -- $(DEB_FILES); \
	for p in $(DEB_PKGS); do [ -e "$$1" ] || missing="$$missing $$p"; shift; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "btrace: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null \
	      || { echo "btrace: apt-get install$$missing failed" >&2; exit 1; }; \
	  else \
	    echo "btrace: missing packages; run: sudo apt-get install$$missing" >&2; exit 1; \
	  fi; \
	fi
endif

# What bench/translators.c compares the recorder with (QEMU's user mode,
# Valgrind), installed by make bench only; without them it leaves them out.
BENCH_PKGS  := qemu-user valgrind
BENCH_FILES := /usr/bin/qemu-x86_64 /usr/bin/valgrind

bench-deps:
ifneq ($(NO_DEPS),1)
	@missing=""; set -- $(BENCH_FILES); \
	for p in $(BENCH_PKGS); do [ -e "$$1" ] || missing="$$missing $$p"; shift; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
	  echo "btrace: installing$$missing (bench)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; } \
	    || echo "btrace: warning: apt-get install$$missing failed; the bench leaves them out" >&2; \
	fi
endif

# What the browser tests need (tests/e2e/timeline_browser.sh: speedscope
# opens a --timeline file, the --svg picture renders), installed by
# make check only, never by make: Debian's chromium and npm, then
# speedscope from npm into $(WEB) (under build/, git-ignored), run from
# there offline.  A failure is a warning: that test then skips.
WEB_PKGS   := chromium nodejs npm fonts-dejavu-core
WEB_FILES  := /usr/bin/chromium /usr/bin/node /usr/bin/npm \
              /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
WEB        := $(BUILD)/web
SPEEDSCOPE := speedscope@1.25.0

web-deps:
ifneq ($(NO_DEPS),1)
	@missing=""; set -- $(WEB_FILES); \
	for p in $(WEB_PKGS); do [ -e "$$1" ] || missing="$$missing $$p"; shift; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
	  echo "btrace: installing$$missing (browser tests)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; } \
	    || echo "btrace: warning: apt-get install$$missing failed; the browser tests will skip" >&2; \
	fi
	@if [ ! -e $(WEB)/node_modules/speedscope/dist/release/index.html ] && command -v npm >/dev/null; then \
	  echo "btrace: installing $(SPEEDSCOPE) into $(WEB) (browser tests)"; \
	  mkdir -p $(WEB) && npm install --prefix $(WEB) --no-audit --no-fund --save-exact --silent $(SPEEDSCOPE) >/dev/null \
	    || echo "btrace: warning: npm install $(SPEEDSCOPE) failed; the browser tests will skip" >&2; \
	fi
endif

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c -o $@ $<

$(LIBBT): $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
$(LIBDEC): $(DEC_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
$(LIBGS): $(GS_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BTRACE): $(CMD_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) $(LIBS) $(TESTLIBS)

$(BUILD)/tools/%: tests/tools/%.c $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) $(LIBS)

$(BUILD)/bench/%: bench/%.c bench/bench.h $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $< $(SYNTH_OBJ) $(LIBGS) $(LIBDEC) $(LIBBT) $(LIBS)

# Test targets: real programs with known control flow, built without
# optimisation so their branches match the source, with debug info.
# Linked statically: single-stepping the dynamic loader costs ~75k steps
# (~6 s here) per run, a static start-up ~33k.  Targets named *_dyn are
# dynamically linked PIEs, for what needs shared libraries.
TGT_CFLAGS := -O0 -g -fno-omit-frame-pointer -pthread
$(BUILD)/targets/%: tests/targets/%.c | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TGT_CFLAGS) -static -o $@ $<
$(BUILD)/targets/%_dyn: tests/targets/%_dyn.c | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TGT_CFLAGS) -pie -fPIE -o $@ $<

# ---- shared libraries and make install ----
# The same sources compiled position-independent; sonames carry the major
# version.  libbtdecode needs libbtrace (errors, disassembly, rings), not
# the other way round.
VERSION   := $(shell sed -n 's/^\#define BTRACE_VERSION "\(.*\)"/\1/p' lib/include/btrace/btrace.h)
SOMAJOR   := $(firstword $(subst ., ,$(VERSION)))
PIC_LIB   := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
PIC_DEC   := $(DEC_SRC:%.c=$(BUILD)/pic/%.o)
SOBT      := $(BUILD)/libbtrace.so.$(VERSION)
SODEC     := $(BUILD)/libbtdecode.so.$(VERSION)
LIBBT_LIBS  := -lcapstone -lZydis -ldw -lelf -lpthread
LIBDEC_LIBS := -lipt -lcapstone -ldw -lelf

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
# On the Python path of a GDB whose data directory is $(PREFIX)/share/gdb
# (Debian's: /usr/share/gdb): `python import btrace`, or `source` the file.
GDBPYDIR   ?= $(PREFIX)/share/gdb/python
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
HEADERS    := $(sort $(wildcard lib/include/btrace/*.h decoder/include/btrace/*.h))

$(BUILD)/pic/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC -fPIC $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fPIC -MMD -MP -c -o $@ $<

$(SOBT): $(PIC_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libbtrace.so.$(SOMAJOR) -Wl,--no-undefined \
		$(LDFLAGS) -o $@ $^ $(LIBBT_LIBS)
$(SODEC): $(PIC_DEC) $(SOBT)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libbtdecode.so.$(SOMAJOR) -Wl,--no-undefined \
		$(LDFLAGS) -o $@ $(PIC_DEC) $(SOBT) $(LIBDEC_LIBS)

shared: $(SOBT) $(SODEC)

# name, description, requires, libs, private libs
, := ,
define pc_file
prefix=$(PREFIX)
exec_prefix=$${prefix}
libdir=$(LIBDIR)
includedir=$(INCLUDEDIR)

Name: $(1)
Description: $(2)
Version: $(VERSION)
Requires: $(3)
Cflags: -I$${includedir}
Libs: -L$${libdir} $(4)
Libs.private: $(5)
endef
export PC_BT  := $(call pc_file,libbtrace,btrace capture: process control$(,) rings$(,) PT/BTS/software backends$(,) trace files,,-lbtrace,$(LIBBT_LIBS))
export PC_DEC := $(call pc_file,libbtdecode,btrace decoder: PT$(,) BTS and software traces into branches$(,) symbols$(,) disassembly,libbtrace,-lbtdecode,$(LIBDEC_LIBS))

install: $(BTRACE) $(LIBBT) $(LIBDEC) $(SOBT) $(SODEC)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/btrace $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(GDBPYDIR)
	install -m 755 $(BTRACE) $(DESTDIR)$(BINDIR)/btrace
	install -m 644 docs/btrace.1 $(DESTDIR)$(MANDIR)/man1/btrace.1
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/btrace/
	install -m 644 $(LIBBT) $(LIBDEC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SOBT) $(SODEC) $(DESTDIR)$(LIBDIR)/
	for l in libbtrace libbtdecode; do \
	  ln -sf $$l.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOMAJOR) && \
	  ln -sf $$l.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; \
	done
	printf '%s\n' "$$PC_BT" >$(DESTDIR)$(PKGCONFIGDIR)/libbtrace.pc
	printf '%s\n' "$$PC_DEC" >$(DESTDIR)$(PKGCONFIGDIR)/libbtdecode.pc
	sed 's|^_INSTALLED_PROGRAM = None$$|_INSTALLED_PROGRAM = "$(BINDIR)/btrace"|' \
		gdb/btrace.py >$(DESTDIR)$(GDBPYDIR)/btrace.py
	chmod 644 $(DESTDIR)$(GDBPYDIR)/btrace.py

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/btrace $(DESTDIR)$(MANDIR)/man1/btrace.1 \
		$(DESTDIR)$(GDBPYDIR)/btrace.py \
		$(DESTDIR)$(PKGCONFIGDIR)/libbtrace.pc $(DESTDIR)$(PKGCONFIGDIR)/libbtdecode.pc \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/btrace/,$(notdir $(HEADERS)))
	for l in libbtrace libbtdecode; do \
	  rm -f $(DESTDIR)$(LIBDIR)/$$l.a $(DESTDIR)$(LIBDIR)/$$l.so \
	    $(DESTDIR)$(LIBDIR)/$$l.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/$$l.so.$(VERSION); \
	done
	-rmdir $(DESTDIR)$(INCLUDEDIR)/btrace 2>/dev/null

check: all $(UNIT_BIN) $(FUZZ_CHECK) shared web-deps
	$(Q)tests/run-tests $(UNIT_BIN)

unit: all $(UNIT_BIN)
	$(Q)tests/run-tests --unit-only $(UNIT_BIN)

demo: all
	$(Q)tests/demo

bench: all $(BENCH_BIN) bench-deps
	$(Q)bench/run $(BENCH_BIN)

# libFuzzer targets (tests/fuzz/fuzz_*.c) over a sanitized copy of the
# libraries, seeded from synthesized traces, FUZZ_TIME seconds each.
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_SAN   := -fsanitize=address,undefined
# The libFuzzer convention: checksums (trace files) are not enforced, so
# that the fuzzer gets past them into the parsers.
FUZZ_SAN   += -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_OBJ   := $(patsubst %.c,$(BUILD)/fuzz/%.o,$(GS_SRC) $(DEC_SRC) $(LIB_SRC) \
              $(wildcard tests/tools/synth/*.c))
FUZZ_LIB   := $(BUILD)/fuzz/libfuzzbt.a

$(BUILD)/fuzz/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	@$(if $(Q),echo "  FUZZ    $<")
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LIBS)

# make check compiles the fuzz targets with the normal compiler, so that
# they keep building without clang's sanitizers.
$(BUILD)/fuzz-check/%.o: tests/fuzz/%.c | deps
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

fuzz: all $(FUZZ_BIN)
	$(Q)tests/fuzz/run $(FUZZ_TIME) $(FUZZ_BIN)

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $(LIB_SRC) $(DEC_SRC) $(CMD_SRC) lib/include/btrace/*.h decoder/include/btrace/*.h

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
