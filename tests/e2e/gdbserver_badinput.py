# SPDX-License-Identifier: MIT
"""Drive btrace gdbserver with raw bytes: malformed, oversized, truncated
and unknown packets, bad checksums, noise, acks on and off, and a few
thousand random packets.  Every packet gets an answer (an error, or the
empty reply for what is not supported), never a crash; the stub still
works afterwards.  Then a client that goes away in the middle of a run:
a launched process is killed, an attached one runs on untraced.
Extended-remote's packets (!, vRun, vAttach, R, vKill, D;pid) with bad
programs and process ids get errors, and the stub goes on serving.

    gdbserver_badinput.py BTRACE TARGETS"""
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

BTRACE, TARGETS = sys.argv[1], sys.argv[2]
failures = []


def fail(msg):
    print("FAIL:", msg)
    failures.append(msg)


def checksum(payload):
    return b"%02x" % (sum(payload) & 0xff)


def frame(payload):
    return b"$" + payload + b"#" + checksum(payload)


class Stub:
    """The stub over stdio; read() returns acks and packets as they come."""

    def __init__(self, args, opts=()):
        self.p = subprocess.Popen([BTRACE, "gdbserver"] + list(opts) + ["-"] + args,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.buf = b""
        self.acks = True

    def send(self, raw):
        self.p.stdin.write(raw)
        self.p.stdin.flush()

    def _fill(self, timeout):
        import select
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return False
        data = os.read(self.p.stdout.fileno(), 65536)
        if not data:
            raise EOFError("the stub closed its output")
        self.buf += data
        return True

    def event(self, timeout=20):
        """'+', '-' or a packet payload (bytes); None on timeout."""
        deadline = time.time() + timeout
        while True:
            while self.buf[:1] in (b"+", b"-"):
                c, self.buf = self.buf[:1], self.buf[1:]
                return c.decode()
            m = re.match(rb"\$([^#]*)#([0-9a-f]{2})", self.buf, re.S)
            if m:
                self.buf = self.buf[m.end():]
                if checksum(m.group(1)) != m.group(2):
                    fail("a reply with a bad checksum: %r" % m.group(0)[:80])
                if self.acks:
                    self.send(b"+")
                return m.group(1)
            left = deadline - time.time()
            if left <= 0 or not self._fill(left):
                return None

    def ask(self, raw, expect_ack=True):
        """Send raw bytes of one packet; its reply payload."""
        self.send(raw)
        ev = self.event()
        if self.acks and expect_ack:
            if ev != "+":
                fail("no ack for %r: %r" % (raw[:60], ev))
                return None
            ev = self.event()
        if not isinstance(ev, bytes):
            fail("no reply to %r" % raw[:60])
            return None
        return ev

    def alive(self):
        return self.p.poll() is None


def expect(stub, raw, pattern, what):
    reply = stub.ask(raw)
    if reply is None:
        return None
    if not re.fullmatch(pattern, reply, re.S):
        fail("%s: %r -> %r" % (what, raw[:60], reply[:80]))
    return reply


def malformed(stub):
    E = rb"E[0-9a-f]{2}|E\..*"
    expect(stub, frame(b"qSupported:multiprocess+"), rb"PacketSize=.*", "qSupported")
    cases = [
        b"m", b"mzz,zz", b"m1", b"m1,", b"m,4", b"m1,ffffffffffffffffff",
        b"M1,2:zz", b"M1,2:abc", b"M", b"X1,5:ab", b"X", b"X1,1",
        b"Z0", b"Z0,", b"Z0,1", b"Z0,zz,1", b"z0,1,1;X", b"Hx1", b"Hg", b"Hgzz",
        b"Hgp", b"Hgp1.", b"Tzz", b"T", b"p", b"pzz", b"p1000", b"P1", b"P1=zz",
        b"P10=00", b"G00", b"Gzz", b"vCont;Q", b"vCont;C", b"vCont;Czz",
        b"vCont;c:pzz", b"vCont;s:", b"qXfer:features:read:target.xml:zz",
        b"qXfer:features:read:target.xml", b"qXfer:features:read:other.xml:0,10",
        b"qXfer:btrace:read:all", b"qXfer:btrace:read:all:0,10",
        b"qXfer:btrace:read:bad:0,10", b"qXfer", b"qXfer:", b"qXfer:a:read::0,ffffffffff",
        b"qRcmd,zz", b"qRcmd,6", b"QPassSignals:zz", b"QPassSignals:1;;2",
        b"Qbtrace:foo", b"Qbtrace-conf:bts:size=zz", b"Qbtrace-conf:x",
        b"vFile:open:zz,0,0", b"vFile:open:2f,1,0", b"vFile:pread:1",
        b"vFile:pread:1,2,3", b"vFile:close:99", b"vFile:fstat:x",
        b"vFile:readlink:", b"QNonStop:1", b"m1000\x00,4", b"g\x00",
        b"\xff\xfe\x80", b"}", b"}}}}", b"qC\x7f",
    ]
    for c in cases:
        r = stub.ask(frame(c))
        if r is None:
            continue
        if r and not re.fullmatch(E + rb"|OK|F-1,[0-9a-f]+|", r, re.S):
            fail("malformed %r answered %r" % (c, r[:60]))
    # R, vRun and vAttach are extended-remote's: not before "!"
    for c in [b"qBogus", b"vBogus", b"R00", b"vRun;", b"vAttach;1", b"Q",
              b"b", b"qTStatus",
              b"vMustReplyEmpty", b"Z2,1000,4", b"qXfer:bogus:read::0,10"]:
        expect(stub, frame(c), rb"", "unknown %r" % c)


def framing(stub):
    # a bad checksum: '-', and the stub waits for the packet again
    stub.send(b"$g#00")
    if stub.event() != "-":
        fail("no '-' for a bad checksum")
    # a packet cut short by the next one: only the second is answered
    stub.send(b"$qSupp")
    expect(stub, frame(b"qC"), rb"QCp[0-9a-f]+\.[0-9a-f]+", "qC after a cut packet")
    # noise and stray acks between packets, and 0x03 while stopped
    stub.send(b"xyz+-\x03++\r\n")
    expect(stub, frame(b"?"), rb"T05thread:.*", "? after noise")
    # oversized: acked, refused with an error
    big = b"M1000,8000:" + b"00" * 0x8000
    expect(stub, frame(big), rb"E[0-9a-f]{2}", "oversized packet")
    # the largest that fits is answered as itself (a write to nowhere)
    expect(stub, frame(b"M0,7ff0:" + b"00" * 0x7ff0), rb"E[0-9a-f]{2}",
           "a big write to address 0")
    expect(stub, frame(b"m0,ffff"), rb"E[0-9a-f]{2}", "a big read of address 0")


def random_packets(stub, n):
    rng = random.Random(12)
    prefixes = [b"m", b"M", b"X", b"p", b"P", b"g", b"G", b"H", b"T", b"q", b"Q",
                b"qXfer:", b"qXfer:features:read:", b"qXfer:btrace:read:",
                b"qXfer:threads:read::", b"qXfer:libraries-svr4:read::",
                b"qXfer:auxv:read::", b"qXfer:exec-file:read:", b"Qbtrace:",
                b"Qbtrace-conf:", b"vFile:", b"vFile:open:", b"vFile:pread:",
                b"Z", b"z", b"qSupported:", b"QPassSignals:", b"qC", b"?"]
    alphabet = b"0123456789abcdef,:;.-p=x}*#$ \xff\x00"
    for i in range(n):
        body = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        pkt = rng.choice(prefixes) + body
        # '#' and '$' cannot be in a packet unescaped: the peer never sends them
        pkt = pkt.replace(b"#", b"}\x03").replace(b"$", b"}\x04")
        if stub.ask(frame(pkt)) is None:
            fail("random packet %d (%r) got no reply" % (i, pkt))
            return


def noack(stub):
    expect(stub, frame(b"QStartNoAckMode"), rb"OK", "QStartNoAckMode")
    stub.acks = False
    stub.send(b"+")         # GDB acks that OK once more
    expect(stub, frame(b"qC"), rb"QC.*", "qC without acks")
    # a bad checksum without acks: an error reply, nothing resent
    expect(stub, b"$qC#00", rb"E[0-9a-f]{2}", "bad checksum without acks")
    expect(stub, frame(b"?"), rb"T05.*", "? without acks")


def session():
    stub = Stub([os.path.join(TARGETS, "sleeper")])
    stub.send(b"+")
    malformed(stub)
    framing(stub)
    random_packets(stub, int(os.environ.get("GS_RANDOM", "3000")))
    noack(stub)
    if not stub.alive():
        fail("the stub died")
        return
    # random qSupported packets may have turned multiprocess off
    m = re.fullmatch(rb"QC(?:p([0-9a-f]+)\.)?([0-9a-f]+)", stub.ask(frame(b"qC")) or b"")
    if not m:
        fail("no qC reply at the end")
        return
    pid = int(m.group(1) or m.group(2), 16)
    expect(stub, frame(b"vKill;%x" % pid), rb"OK", "vKill")
    stub.p.wait(timeout=20)
    if os.path.exists("/proc/%d" % pid) and not open("/proc/%d/stat" % pid).read().split()[2] == "Z":
        fail("process %d still exists after vKill" % pid)


def tcp_stub(args):
    p = subprocess.Popen([BTRACE, "gdbserver"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    port = None
    pid = None
    for line in p.stderr:
        m = re.match(rb"Process .* created; pid = (\d+)", line)
        if m:
            pid = int(m.group(1))
        m = re.match(rb"Listening on port (\d+)", line)
        if m:
            port = int(m.group(1))
            break
    s = socket.create_connection(("127.0.0.1", port))
    return p, s, pid


def run_and_drop(s):
    s.sendall(b"+" + frame(b"qSupported") + frame(b"vCont;c"))
    time.sleep(0.5)
    s.close()


def traced_by(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("TracerPid:"):
            return int(line.split()[1])
    return -1


def disconnects():
    # --once (without it the stub waits for the next GDB: gdbserver_gdbsem)
    # launched: killed when GDB goes away in the middle of a run
    p, s, pid = tcp_stub(["--once", ":0", os.path.join(TARGETS, "sleeper")])
    run_and_drop(s)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the stub did not exit when the client went away")
    time.sleep(0.2)
    if os.path.exists("/proc/%d" % pid):
        fail("launched process %d survived the disconnect" % pid)
    # attached: left running, untraced
    t = subprocess.Popen([os.path.join(TARGETS, "sleeper")], stderr=subprocess.PIPE)
    t.stderr.readline()
    p, s, _ = tcp_stub(["--once", "--attach", str(t.pid), ":0"])
    run_and_drop(s)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the stub did not exit when the client went away (attached)")
    if t.poll() is not None:
        fail("the attached process died with the disconnect")
    elif traced_by(t.pid) != 0:
        fail("the attached process is still traced by %d" % traced_by(t.pid))
    else:
        for task in os.listdir("/proc/%d/task" % t.pid):
            st = open("/proc/%d/task/%s/stat" % (t.pid, task)).read().split()[2]
            if st in ("t", "T"):
                fail("thread %s left stopped (%s)" % (task, st))
    t.send_signal(signal.SIGKILL)
    t.wait()


def hexs(text):
    return text.encode().hex().encode()


def stub_pid(stub):
    m = re.fullmatch(rb"T05thread:p([0-9a-f]+)\.[0-9a-f]+;.*", stub.ask(frame(b"?")) or b"", re.S)
    if not m:
        fail("no stop with a process id")
        return 0
    return int(m.group(1), 16)


def extended():
    sleeper = os.path.join(TARGETS, "sleeper")
    stub = Stub([], ["--multi"])
    stub.send(b"+")
    expect(stub, frame(b"qSupported:multiprocess+"), rb"PacketSize=.*;Qbtrace:bts\+.*",
           "qSupported without a process")
    expect(stub, frame(b"vRun;" + hexs("/no/such/prog")), rb"", "vRun before !")
    expect(stub, frame(b"!"), rb"OK", "!")
    expect(stub, frame(b"?"), rb"W00", "? without a process")
    expect(stub, frame(b"qAttached"), rb"E01", "qAttached without a process")
    expect(stub, frame(b"vKill;1"), rb"E[0-9a-f]{2}", "vKill without a process")
    bad = [
        (b"vRun;", rb"E\.no program to run.*", "vRun of no program"),
        (b"vRun;" + hexs("/no/such/prog"), rb"E\.cannot run '/no/such/prog': program not found", "vRun of a missing file"),
        (b"vRun;" + hexs("/etc/hostname"), rb"E\.cannot run .*", "vRun of a file that is not a program"),
        (b"vRun;zz", rb"E[0-9a-f]{2}", "vRun of bad hex"),
        (b"vRun;616", rb"E[0-9a-f]{2}", "vRun of odd hex"),
        (b"vRun;6100;62", rb"E[0-9a-f]{2}", "vRun with a NUL inside"),
        (b"vAttach;f423f", rb"E\.cannot attach to 999999: no such process", "vAttach of no such pid"),
        (b"vAttach;0", rb"E[0-9a-f]{2}", "vAttach of 0"),
        (b"vAttach;zz", rb"E[0-9a-f]{2}", "vAttach of garbage"),
        (b"vAttach;ffffffffff", rb"E[0-9a-f]{2}", "vAttach of a huge pid"),
    ]
    for pkt, pat, what in bad:
        expect(stub, frame(pkt), pat, what)
    # a program: its first stop; a second vRun while it lives (multiprocess)
    # starts a second process beside it
    expect(stub, frame(b"vRun;" + hexs(sleeper)), rb"T05thread:p[0-9a-f]+\.[0-9a-f]+;.*", "vRun")
    pid = stub_pid(stub)
    expect(stub, frame(b"qAttached:%x" % pid), rb"0", "qAttached of a launched process")
    expect(stub, frame(b"qAttached:%x" % (pid + 1)), rb"E01", "qAttached of another pid")
    m = re.fullmatch(rb"T05thread:p([0-9a-f]+)\..*", stub.ask(frame(b"vRun;" + hexs(sleeper))) or b"", re.S)
    pidb = int(m.group(1), 16) if m else 0
    if not pidb or pidb == pid:
        fail("a second vRun did not start a second process")
    expect(stub, frame(b"qAttached:%x" % pid), rb"0", "qAttached of the first process")
    expect(stub, frame(b"vKill;%x" % (max(pid, pidb) + 1)), rb"E[0-9a-f]{2}", "vKill of another pid")
    # R: the same program again, no reply; the old processes are gone
    stub.send(frame(b"R00"))
    if stub.event() != "+":
        fail("R not acked")
    pid2 = stub_pid(stub)
    if not pid2 or pid2 == pid or pid2 == pidb:
        fail("R did not start a new process (%d, %d)" % (pid, pid2))
    time.sleep(0.2)
    for old in (pid, pidb):
        if old and os.path.exists("/proc/%d" % old):
            fail("R left the old process %d" % old)
    expect(stub, frame(b"vKill;%x" % pid2), rb"OK", "vKill")
    expect(stub, frame(b"?"), rb"X09;process:%x" % pid2, "? after vKill")
    # attach, D;pid: left running untraced; the stub serves on
    t = subprocess.Popen([sleeper], stderr=subprocess.PIPE)
    t.stderr.readline()
    expect(stub, frame(b"vAttach;%x" % t.pid), rb"T05thread:p%x\..*" % t.pid, "vAttach")
    expect(stub, frame(b"qAttached:%x" % t.pid), rb"1", "qAttached of an attached process")
    expect(stub, frame(b"D;%x" % (t.pid + 1)), rb"E[0-9a-f]{2}", "D of another pid")
    expect(stub, frame(b"D;%x" % t.pid), rb"OK", "D;pid")
    time.sleep(0.1)
    if t.poll() is not None or traced_by(t.pid) != 0:
        fail("the detached process died or is still traced")
    expect(stub, frame(b"qC"), rb"E[0-9a-f]{2}", "qC without a process")
    expect(stub, frame(b"vCont;c"), rb"E[0-9a-f]{2}", "vCont without a process")
    expect(stub, frame(b"g"), rb"E[0-9a-f]{2}", "g without a process")
    expect(stub, frame(b"m1000,4"), rb"E[0-9a-f]{2}", "m without a process")
    t.send_signal(signal.SIGKILL)
    t.wait()
    stub.p.stdin.close()
    stub.p.wait(timeout=20)
    err = stub.p.stderr.read()
    for line in [b"btrace: cannot run '/no/such/prog': program not found",
                 b"btrace: cannot attach to 999999: no such process"]:
        if line not in err:
            fail("stderr lacks %r: %r" % (line, err[-400:]))
    if stub.p.returncode != 0:
        fail("the --multi stub exited %d" % stub.p.returncode)


session()
disconnects()
extended()
if failures:
    sys.exit(1)
print("ok")
