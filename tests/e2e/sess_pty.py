#!/usr/bin/env python3
"""Drive `btrace attach` through a pseudo-terminal, every session command.

Usage: sess_pty.py  (BTRACE, TARGETS, TESTDIR from the environment)
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

BTRACE = os.environ["BTRACE"]
TARGETS = os.environ["TARGETS"]
TESTDIR = os.environ["TESTDIR"]
PROMPT = "(btrace) "
ROW = re.compile(r"^\s*(-\d+)\s", re.M)


class Fail(Exception):
    pass


def check(cond, what, out=""):
    if not cond:
        raise Fail(f"{what}\n--- output:\n{out}")
    print(f"ok: {what}")


class Session:
    live = []

    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(argv[0], argv, env)
        self.buf = ""
        Session.live.append(self.pid)

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            raise EOFError
        self.buf += data.decode(errors="replace").replace("\r", "")
        return True

    def expect(self, pattern, timeout=20):
        """Wait for @pattern; return the text up to and including it."""
        rx = re.compile(pattern)
        end = time.time() + timeout
        while True:
            m = rx.search(self.buf)
            if m:
                out = self.buf[:m.end()]
                self.buf = self.buf[m.end():]
                return out
            left = end - time.time()
            try:
                if left <= 0 or not self.read(left):
                    raise Fail(f"timeout waiting for {pattern!r}; "
                               f"have:\n{self.buf}")
            except EOFError:
                raise Fail(f"btrace ended waiting for {pattern!r}; "
                           f"have:\n{self.buf}")

    def send(self, text):
        os.write(self.fd, text.encode())

    def cmd(self, line, timeout=20):
        """Run one command; its output (echo dropped) up to the prompt."""
        self.send(line + "\n")
        out = self.expect(re.escape(PROMPT), timeout)
        out = out[:-len(PROMPT)]
        first = out.find("\n")
        return out[first + 1:] if first >= 0 else ""

    def wait(self, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            try:
                self.read(0.1)
            except EOFError:
                pass
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(st)
        raise Fail("btrace did not exit")


def traced(pid):
    with open(f"/proc/{pid}/status") as f:
        return re.search(r"^TracerPid:\s*(\d+)", f.read(), re.M).group(1) != "0"


def rows(out):
    return [int(x) for x in ROW.findall(out)]


def source_line(text):
    with open(os.path.join(TESTDIR, "targets", "sess_checksum.c")) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise Fail(f"no {text!r} in sess_checksum.c")


def first_session(target, env, home):
    s = Session([BTRACE, "attach", "--break", "sess_round_end",
                 str(target.pid)], env)
    out = s.expect(re.escape(PROMPT))
    check("breakpoint 1" in out and "sess_round_end" in out,
          "attach stops at the breakpoint and shows it", out)

    out = s.cmd("help")
    check(all(c in out for c in ("last", "insn", "calls", "threads",
                                 "thread", "continue", "break", "delete",
                                 "info", "detach", "kill", "quit", "help")),
          "help lists every command", out)
    out = s.cmd("help last")
    check("-A,-B" in out and "/d" in out, "help last explains it", out)

    out = s.cmd("last")
    check(rows(out) == list(range(-32, 0)), "last: the last 32", out)
    check(re.search(r"^\s*-1\s.*\bcall +-> 0x[0-9a-f]+ +sess_round_end\b",
                    out, re.M) is not None,
          "last: the newest branch is the call of sess_round_end", out)
    out = s.cmd("last 5")
    check(rows(out) == list(range(-5, 0)), "last 5", out)
    out = s.cmd("last -20,-10")
    check(rows(out) == list(range(-20, -9)), "last -20,-10: a window", out)
    out = s.cmd("last/s 3")
    check(rows(out) == [-3, -2, -1] and "sess_checksum.c:" in out,
          "last/s: source lines", out)
    out = s.cmd("last /d 2")
    check(rows(out) == [-2, -1] and
          re.search(r"^ {6,}0x[0-9a-f]+ .*\bcall\b", out, re.M) is not None,
          "last /d: the disassembly of each block", out)

    out = s.cmd("insn 10")
    ins = re.findall(r"^  0x[0-9a-f]+ .*$", out, re.M)
    check(len(ins) == 10, "insn 10: ten instructions", out)
    check(re.search(r"\bcall\b", ins[-1]) is not None,
          "insn: the newest is the call", out)

    out = s.cmd("calls")
    lines = [l for l in out.splitlines() if ROW.match(l)]
    check(lines and "sess_round_end" in lines[-1], "calls: ends in sess_round_end", out)

    def indent(name):
        for l in reversed(lines):
            m = re.match(r"^\s*-\d+  ( *)" + name + r"\b", l)
            if m:
                return len(m.group(1))
        return None
    im, ir, ix = indent("main"), indent("sess_round"), indent("sess_mix")
    check(None not in (im, ir, ix) and im < ir < ix,
          "calls: main > sess_round > sess_mix nest", out)

    out = s.cmd("threads")
    check(re.search(rf"^\* {target.pid}\b", out, re.M) is not None,
          "threads: the one thread, current", out)
    out = s.cmd(f"thread {target.pid}")
    check(f"current thread is {target.pid}" in out, "thread TID", out)
    out = s.cmd("thread 1")
    check("no thread 1" in out, "thread: an unknown TID is refused", out)

    out = s.cmd("break sess_round")
    m = re.search(r"breakpoint (\d+) at (0x[0-9a-f]+)  sess_round\b", out)
    check(m is not None, "break SYMBOL", out)
    addr = m.group(2)
    out = s.cmd(f"delete {m.group(1)}")
    check(f"deleted breakpoint {m.group(1)}" in out, "delete N", out)
    out = s.cmd(f"break {addr}")
    check(re.search(rf"breakpoint \d+ at {addr}  sess_round\b", out)
          is not None,
          "break ADDR", out)
    line = source_line("sum = sess_mix(sum, i + r);")
    out = s.cmd(f"break sess_checksum.c:{line}")
    check(re.search(rf"breakpoint \d+ at 0x[0-9a-f]+  sess_round\+0x[0-9a-f]+  sess_checksum.c:{line}", out)
          is not None, "break FILE:LINE", out)

    out = s.cmd("info")
    check("backend" in out and "buffer" in out and "records lost" in out or
          "lost" in out, "info: backend, buffer, lost", out)
    check(len(re.findall(r"^breakpoint \d+ at", out, re.M)) == 3,
          "info: three breakpoints", out)

    out = s.cmd("continue")
    check(re.search(r"breakpoint \d+", out) and "sess_round" in out,
          "continue: to the next breakpoint", out)
    out = s.cmd("delete")
    check(len(re.findall("deleted breakpoint", out)) == 3, "delete: all", out)

    # Ctrl-C during continue stops the target, not btrace.
    s.send("continue\n")
    time.sleep(0.5)
    s.send("\x03")
    out = s.expect(re.escape(PROMPT))
    check("interrupted" in out, "Ctrl-C during continue interrupts", out)
    # Ctrl-C at the prompt discards the line.
    s.send("bogus words")
    time.sleep(0.2)
    s.send("\x03")
    s.expect(re.escape(PROMPT))
    out = s.cmd("threads")
    check("unknown command" not in out and str(target.pid) in out,
          "Ctrl-C at the prompt discards the line", out)

    # Completion: commands, then symbols.
    s.send("inf\t")
    s.expect("info ")
    out = s.cmd("")
    check("backend" in out, "tab completes a command", out)
    s.send("break sess_round_e\t")
    s.expect("sess_round_end ")
    out = s.cmd("")
    check(re.search(r"breakpoint \d+ at 0x[0-9a-f]+  sess_round_end\b", out)
          is not None, "tab completes a symbol", out)

    s.send("detach\n")
    out = s.expect(r"detached from process \d+")
    st = s.wait()
    check(st == 0, f"detach: btrace exits 0 (got {st})", out)
    check(not traced(target.pid), "detach: the target is not traced")

    with open(os.path.join(home, ".btrace_history")) as f:
        hist = f.read()
    check("last -20,-10" in hist and "threads" in hist,
          "history saved in ~/.btrace_history", hist)


def quit_session(target, env, how):
    s = Session([BTRACE, "attach", "--break", "sess_round_end",
                 str(target.pid)], env)
    s.expect(re.escape(PROMPT))
    out = s.cmd("last 1")
    check(rows(out) == [-1], f"{how}: history after re-attaching", out)
    if how == "ctrl-d":
        s.send("\x04")
    else:
        s.send(how + "\n")
    st = s.wait()
    check(st == 0, f"{how}: btrace exits 0 (got {st})")


def main():
    home = tempfile.mkdtemp()
    with open(os.path.join(home, "inputrc"), "w") as f:
        f.write("set enable-bracketed-paste off\n")
    env = dict(os.environ, HOME=home, TERM="dumb",
               INPUTRC=os.path.join(home, "inputrc"))
    target = subprocess.Popen([os.path.join(TARGETS, "sess_checksum"),
                               "100000", "2000"], stdout=subprocess.PIPE)
    try:
        target.stdout.readline()
        first_session(target, env, home)
        for how in ("quit", "ctrl-d"):
            quit_session(target, env, how)
            check(not traced(target.pid), f"{how}: the target is not traced")
        quit_session(target, env, "kill")
        check(target.wait(10) == -signal.SIGKILL, "kill: the target is killed")
    except Fail as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        for pid in Session.live:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        if target.poll() is None:
            target.kill()
            target.wait()
    return 0


sys.exit(main())
