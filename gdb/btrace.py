# SPDX-License-Identifier: MIT
"""btrace inside gdb: branch history of the debugged process.

Load with `source /path/to/btrace/gdb/btrace.py`, then:

  btrace continue [--backend NAME]  run the inferior under branch tracing
                                    until it stops (breakpoint, signal, crash)
  btrace last [-i] [N]              the last N branches (default 32), as
                                    btrace show prints them; -i: their
                                    instructions
  btrace calls [N]                  the call history, the last N segments
  btrace load FILE                  use a saved trace (btrace run --save ...),
                                    beside a core file or the live program
  btrace save FILE                  copy the current trace to FILE
  btrace info                       where the current trace comes from

For scripts: `import btrace` (or the `btrace` global after `source`), then
btrace.branches(n=None) returns the last n branches (all if None) as a list
of dicts, oldest first; btrace.stop() the stop as a dict.

How gdb and btrace share the inferior is described in docs/gdb.md: with the
software backend, `btrace continue` hands the stopped inferior over to
`btrace handoff`, which traces it until the next stop, saves the
trace, and hands it back stopped, so that gdb re-attaches and sees the stop
as if it had continued the program itself.
"""

import atexit
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types

import gdb

_HERE = os.path.dirname(os.path.abspath(__file__))
# make install writes the installed btrace program here.
_INSTALLED_PROGRAM = None
_DEFAULT_LAST = 32
_ALL = 10000000


class BtraceError(gdb.GdbError):
    """A user-facing error: gdb prints it without a traceback."""

    def __init__(self, msg):
        super().__init__("btrace: " + msg)


class _State:
    path = None         # the trace file in use
    origin = None       # "continue" or "load"
    stop = None         # the stop, as btrace show --json gives it
    tmpdir = None       # private directory for traces of `btrace continue`
    cache = {}          # (path, last) -> parsed JSON


_state = _State()


class _ProgramParam(gdb.Parameter):
    """The btrace program the plugin runs (default: $BTRACE, the build
    tree next to this plugin, the one installed with it, then btrace in
    PATH)."""

    set_doc = "Set the btrace program used by the btrace commands."
    show_doc = "Show the btrace program used by the btrace commands."

    def __init__(self):
        super().__init__("btrace-program", gdb.COMMAND_SUPPORT,
                         gdb.PARAM_OPTIONAL_FILENAME)
        self.value = ""

    def get_show_string(self, svalue):
        return "btrace program: " + (svalue or _btrace_program())


_program_param = _ProgramParam()


def _btrace_program():
    if _program_param.value:
        return _program_param.value
    env = os.environ.get("BTRACE")
    if env:
        return env
    built = os.path.join(os.path.dirname(_HERE), "build", "btrace")
    if os.access(built, os.X_OK):
        return built
    if _INSTALLED_PROGRAM and os.access(_INSTALLED_PROGRAM, os.X_OK):
        return _INSTALLED_PROGRAM
    found = shutil.which("btrace")
    if found:
        return found
    raise BtraceError("cannot find the btrace program: set btrace-program "
                      "PATH, or put btrace in PATH")


def _run_btrace(args, check=True):
    cmd = [_btrace_program()] + args
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
    except OSError as e:
        raise BtraceError("cannot run %s: %s" % (cmd[0], e.strerror))
    if check and proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        msg = msg[-1] if msg else "%s failed (exit %d)" % (cmd[1],
                                                           proc.returncode)
        if msg.startswith("btrace: "):
            msg = msg[len("btrace: "):]
        raise BtraceError(msg)
    return proc


def _show(last):
    """The saved trace decoded by btrace show, as a dict (cached)."""
    if not _state.path:
        raise BtraceError("no trace: run 'btrace continue' or "
                          "'btrace load FILE' first")
    key = (_state.path, last)
    if key not in _state.cache:
        out = _run_btrace(["show", "--json", "--no-color", "--last",
                           str(last), _state.path]).stdout
        try:
            _state.cache[key] = json.loads(out)
        except ValueError:
            raise BtraceError("btrace show gave output that is not JSON")
    return _state.cache[key]


def _int(s):
    return int(s, 16) if isinstance(s, str) else s


# ---- symbols through gdb -------------------------------------------------

def _gdb_function(addr):
    """(name, offset) from gdb's symbols, or (None, 0)."""
    try:
        block = gdb.block_for_pc(addr)
    except RuntimeError:
        block = None
    while block is not None and block.function is None:
        block = block.superblock
    if block is not None and block.function is not None:
        return block.function.print_name, addr - block.start
    try:
        out = gdb.execute("info symbol 0x%x" % addr, to_string=True)
    except gdb.error:
        return None, 0
    m = re.match(r"(\S+)(?: \+ (\d+))? in section", out)
    if not m:
        return None, 0
    return m.group(1), int(m.group(2) or 0)


def _gdb_line(addr):
    try:
        sal = gdb.find_pc_line(addr)
    except RuntimeError:
        return None
    if sal is None or sal.symtab is None or not sal.line:
        return None
    return "%s:%d" % (os.path.basename(sal.symtab.filename), sal.line)


def _describe(addr, fallback_sym=None, fallback_src=None):
    """An address as "name+0xoff" and "file:line", gdb's view first."""
    if not addr:
        return None, None, None
    name, off = _gdb_function(addr)
    if name is None:
        sym = fallback_sym
        name = fallback_sym.split("+")[0] if fallback_sym else None
    else:
        sym = name if not off else "%s+0x%x" % (name, off)
    return sym, name, _gdb_line(addr) or fallback_src


# ---- the history as data --------------------------------------------------

def _thread_of(doc):
    threads = doc.get("threads") or []
    if not threads:
        raise BtraceError("no trace data in %s" % _state.path)
    return threads[0]


def branches(n=None):
    """The last n branches (all if None) of the thread that stopped, oldest
    first: dicts with from, to (ints), kind, gap, from_sym, to_sym,
    from_func, to_func, from_src, to_src (gdb's symbols first, btrace's
    when gdb knows nothing)."""
    doc = _show(n or _ALL)
    out = []
    for b in _thread_of(doc).get("branches", []):
        frm, to = _int(b["from"]), _int(b["to"])
        fsym, ffunc, fsrc = _describe(frm, b.get("from_sym"),
                                      b.get("from_src"))
        tsym, tfunc, tsrc = _describe(to, b.get("to_sym"), b.get("to_src"))
        out.append({"from": frm, "to": to, "kind": b["kind"],
                    "gap": b.get("gap"), "from_sym": fsym, "to_sym": tsym,
                    "from_func": ffunc, "to_func": tfunc,
                    "from_src": fsrc, "to_src": tsrc,
                    "insn": b.get("insn")})
    return out


def stop():
    """The stop of the current trace as a dict (see btrace show --json)."""
    return _show(1).get("stop")


def trace_file():
    """The trace file in use, or None."""
    return _state.path


# ---- commands ---------------------------------------------------------------

def _parse_count(arg, default):
    if not arg:
        return default
    try:
        n = int(arg, 0)
    except ValueError:
        n = 0
    if n <= 0:
        raise BtraceError("'%s' is not a positive count" % arg)
    return n


def _fmt_addr(addr):
    return "0x%x" % addr if addr else "-"


def _print_show(args):
    """What `btrace show ARGS FILE` prints for the current trace: btrace's
    one printer, the same text as btrace run, show and the session."""
    if not _state.path:
        raise BtraceError("no trace: run 'btrace continue' or "
                          "'btrace load FILE' first")
    gdb.write(_run_btrace(["show", "--no-color"] + args +
                          [_state.path]).stdout)


def _print_last(n, insn):
    _print_show(["--last", str(n)] + (["--insn"] if insn else []))


def _print_calls(n):
    """Function segments, indented by call depth (like gdb's
    record function-call-history)."""
    _print_show(["--calls", "--last", str(n)])


def _breakpoint_addrs(skip_pc):
    """Addresses of gdb's enabled breakpoint locations, but @skip_pc: gdb
    itself steps over a breakpoint at the pc it continues from."""
    addrs = {}
    for bp in gdb.breakpoints() or ():
        if not bp.enabled or bp.type != gdb.BP_BREAKPOINT or bp.pending:
            continue
        for loc in getattr(bp, "locations", ()):
            if loc.enabled and loc.address and loc.address != skip_pc:
                addrs.setdefault(loc.address, bp.number)
    return addrs


def _proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _parse_handoff(text):
    """The 'btrace-stop: key=value ...' line of btrace handoff."""
    for line in text.splitlines():
        if line.startswith("btrace-stop:"):
            return dict(kv.split("=", 1) for kv in line.split()[1:]
                        if "=" in kv)
    return None


def _tgkill(pid, tid, sig):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.tgkill(pid, tid, sig) != 0:
        raise BtraceError("cannot re-send %s to thread %d: %s" % (
            signal.Signals(sig).name, tid,
            os.strerror(ctypes.get_errno())))


# gdb's PTRACE_ATTACH of the group-stopped process leaves one SIGSTOP
# pending: it would be reported at the next resume.  It is passed over
# silently until it has been consumed, then gdb's own setting comes back.
_sigstop_saved = None


def _sigstop_pending(pid):
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    key, _, val = line.partition(":")
                    if key in ("SigPnd", "ShdPnd") and \
                            int(val, 16) & (1 << (signal.SIGSTOP - 1)):
                        return True
        except (OSError, ValueError):
            pass
    return False


def _hide_sigstop():
    global _sigstop_saved
    if _sigstop_saved is None:
        out = gdb.execute("info signals SIGSTOP", to_string=True)
        m = re.search(r"^SIGSTOP\s+(Yes|No)\s+(Yes|No)\s+(Yes|No)", out, re.M)
        yes = lambda v, a, b: a if v == "Yes" else b
        _sigstop_saved = " ".join((yes(m.group(1), "stop", "nostop"),
                                   yes(m.group(2), "print", "noprint"),
                                   yes(m.group(3), "pass", "nopass"))) \
            if m else "stop print pass"
        gdb.events.stop.connect(_restore_sigstop)
    gdb.execute("handle SIGSTOP nostop noprint nopass", to_string=True)


def _restore_sigstop(event=None):
    global _sigstop_saved
    inf = gdb.selected_inferior()
    if _sigstop_saved is None or (inf.pid and _sigstop_pending(inf.pid)):
        return
    gdb.execute("handle SIGSTOP " + _sigstop_saved, to_string=True)
    _sigstop_saved = None
    gdb.events.stop.disconnect(_restore_sigstop)


def _reap(pid):
    """gdb started the program, so its exit leaves a zombie child of gdb
    that gdb, detached, no longer waits for."""
    for _ in range(50):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            return
        time.sleep(0.02)


def _select_thread(inf, tid):
    for th in inf.threads():
        if th.ptid[1] == tid:
            th.switch()
            return


def _handoff_path():
    if _state.tmpdir is None:
        _state.tmpdir = tempfile.mkdtemp(prefix="btrace-gdb-")
        # gdb finalizes Python as it exits: the directory goes with it
        atexit.register(shutil.rmtree, _state.tmpdir, True)
    return os.path.join(_state.tmpdir, "continue-%d.trace" % os.getpid())


def _continue(args):
    inf = gdb.selected_inferior()
    if not inf or inf.pid == 0:
        raise BtraceError("no inferior: start the program first "
                          "(start, run or attach)")
    if not gdb.selected_thread() or gdb.selected_thread().is_running():
        raise BtraceError("the inferior is running: stop it first")
    pid = inf.pid
    pc = int(gdb.parse_and_eval("$pc"))
    bps = _breakpoint_addrs(pc)
    path = _handoff_path()
    cmd = ["handoff", "--save", path]
    if args.backend:
        cmd += ["--backend", args.backend]
    for addr in sorted(bps):
        cmd += ["--break", "0x%x" % addr]
    cmd.append(str(pid))

    # Hand over: a pending SIGSTOP keeps the process stopped once gdb has
    # let go of it, until btrace attaches (docs/gdb.md).
    os.kill(pid, signal.SIGSTOP)
    gdb.execute("detach", to_string=True)
    try:
        proc = _run_btrace(cmd, check=False)
    finally:
        alive = _proc_state(pid) not in (None, "Z", "X")
        if alive:
            try:
                gdb.execute("attach %d" % pid, to_string=True)
            except gdb.error as e:
                raise BtraceError("cannot attach gdb to %d again: %s"
                                  % (pid, e))
            if _sigstop_pending(pid):
                _hide_sigstop()
    info = _parse_handoff(proc.stdout)
    if proc.returncode != 0 or info is None:
        msg = proc.stderr.strip().splitlines()
        raise BtraceError((msg[-1][8:] if msg and msg[-1].startswith(
            "btrace: ") else "tracing failed") + (
            "" if alive else " (the process is gone)"))
    _use_trace(path, "continue")
    _report_handoff(inf, pid, info, bps, alive)


def _report_handoff(inf, pid, info, bps, alive):
    reason = info.get("reason")
    tid = int(info.get("tid", pid))
    if reason == "exit" or not alive:
        _reap(pid)
        gdb.write("btrace: process %d exited with status %s; the trace "
                  "is kept: btrace last, btrace calls\n"
                  % (pid, info.get("status", "?")))
        return
    _select_thread(inf, tid)
    if reason == "signal":
        sig = int(info.get("signal", 0))
        # A fault re-executes and faults again; a sent signal (abort, kill)
        # is sent again.  Either way gdb sees it as it would have.
        if int(info.get("si_code", 0)) <= 0:
            _tgkill(pid, tid, sig)
        gdb.execute("continue")
        return
    if reason == "break":
        addr = int(info.get("pc", "0"), 16)
        num = bps.get(addr)
        gdb.write("\nBreakpoint %s, %s" % (num if num else "?", _frame()))
        return
    gdb.write("\nbtrace: stopped (%s)\n%s" % (reason, _frame()))


def _frame():
    """The selected frame as gdb shows it at a stop, without the "#0"."""
    return re.sub(r"^#\d+\s+", "", gdb.execute("frame", to_string=True))


def _use_trace(path, origin):
    _state.path = path
    _state.origin = origin
    _state.cache = {}
    _state.stop = _show(1).get("stop")


def _load(path):
    path = os.path.expanduser(path)
    old = (_state.path, _state.origin, _state.cache)
    _state.path, _state.cache = path, {}
    try:
        doc = _show(1)
    except BtraceError:
        _state.path, _state.origin, _state.cache = old
        raise
    _state.origin = "load"
    _state.stop = doc.get("stop")
    gdb.write("btrace: loaded %s: %s backend, process %s\n"
              % (path, doc.get("backend"), doc.get("pid")))
    inf = gdb.selected_inferior()
    if inf and inf.pid and inf.pid != doc.get("pid"):
        gdb.write("btrace: note: gdb's process is %d, the trace's %s\n"
                  % (inf.pid, doc.get("pid")))
    _print_stop(_state.stop)


def _print_stop(st):
    if not st:
        return
    pc = _int(st.get("pc") or "0x0")
    sym, _, src = _describe(pc, st.get("sym"), st.get("src"))
    what = st.get("signal") or st.get("reason")
    if st.get("reason") == "exit":
        what = "exit, status %s" % st.get("status")
    gdb.write("btrace: thread %s stopped by %s at %s %s%s\n"
              % (st.get("tid"), what, _fmt_addr(pc), sym or "",
                 " (%s)" % src if src else ""))


class _Args:
    backend = None


class BtraceCommand(gdb.Command):
    """Branch tracing with btrace: btrace continue|last|calls|load|save|info.

btrace continue [--backend soft|pt|bts|auto]
  Run the inferior under branch tracing until it stops (a breakpoint, a
  signal, a crash); gdb then shows the stop as after `continue`.
btrace last [-i] [N]
  The last N taken branches (default 32), oldest first, as btrace run and
  btrace show print them; -i lists the instructions of those branches.
btrace calls [N]
  The call history (the last N segments, default all), indented by depth.
btrace load FILE
  Use the trace saved in FILE (btrace run --save, --save-on-crash, ...).
btrace save FILE
  Copy the current trace to FILE (mode 0600).
btrace info
  Which trace is in use and its stop.

From Python: btrace.branches(n), btrace.stop(), btrace.trace_file()."""

    def __init__(self):
        super().__init__("btrace", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE,
                         True)

    def invoke(self, arg, from_tty):
        raise BtraceError("which one? continue, last, calls, load, save, "
                          "info (see help btrace)")


class _Sub(gdb.Command):
    def __init__(self, name, fn, complete=gdb.COMPLETE_NONE):
        super().__init__("btrace " + name, gdb.COMMAND_RUNNING, complete)
        self.fn = fn
        self.__doc__ = fn.__doc__

    def invoke(self, arg, from_tty):
        self.dont_repeat()
        self.fn(gdb.string_to_argv(arg))


def _cmd_continue(argv):
    """Run the inferior under branch tracing until it stops."""
    args = _Args()
    i = 0
    while i < len(argv):
        if argv[i] in ("--backend", "-b") and i + 1 < len(argv):
            args.backend = argv[i + 1]
            i += 2
        else:
            raise BtraceError("usage: btrace continue [--backend NAME]")
    _continue(args)


def _cmd_last(argv):
    """Show the last N branches (default 32): btrace last [-i] [N]."""
    insn = "-i" in argv
    rest = [a for a in argv if a != "-i"]
    if len(rest) > 1:
        raise BtraceError("usage: btrace last [-i] [N]")
    _print_last(_parse_count(rest[0] if rest else None, _DEFAULT_LAST),
                insn)


def _cmd_calls(argv):
    """Show the last N segments of the call history: btrace calls [N]."""
    if len(argv) > 1:
        raise BtraceError("usage: btrace calls [N]")
    _print_calls(_parse_count(argv[0] if argv else None, _ALL))


def _cmd_load(argv):
    """Use a saved trace file: btrace load FILE."""
    if len(argv) != 1:
        raise BtraceError("usage: btrace load FILE")
    _load(argv[0])


def _cmd_save(argv):
    """Copy the current trace to FILE: btrace save FILE."""
    if len(argv) != 1:
        raise BtraceError("usage: btrace save FILE")
    if not _state.path:
        raise BtraceError("no trace: run 'btrace continue' first")
    dest = os.path.expanduser(argv[0])
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "wb") as out, open(_state.path, "rb") as src:
        shutil.copyfileobj(src, out)
    gdb.write("btrace: trace saved to %s\n" % dest)


def _cmd_info(argv):
    """Which trace is in use: btrace info."""
    if not _state.path:
        gdb.write("btrace: no trace yet\n")
        return
    gdb.write("btrace: trace %s (from %s)\n" % (_state.path, _state.origin))
    _print_stop(_state.stop)


BtraceCommand()
_Sub("continue", _cmd_continue)
_Sub("last", _cmd_last)
_Sub("calls", _cmd_calls)
_Sub("load", _cmd_load, gdb.COMPLETE_FILENAME)
_Sub("save", _cmd_save, gdb.COMPLETE_FILENAME)
_Sub("info", _cmd_info)

# `import btrace` for scripts, and a `btrace` global after `source`.
_module = sys.modules.get(__name__)
if __name__ != "btrace":
    _module = types.ModuleType("btrace", __doc__)
    for _name in ("branches", "stop", "trace_file", "BtraceError"):
        setattr(_module, _name, globals()[_name])
    sys.modules["btrace"] = _module
    btrace = _module
