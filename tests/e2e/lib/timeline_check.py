# SPDX-License-Identifier: MIT
"""Checks of btrace's --timeline files (Chrome Trace Event JSON) and --svg
flame charts, for tests/e2e/timeline*.sh.

  timeline_check.py json FILE [TID|stop]      structure, nesting, order
  timeline_check.py crash FILE                the timeline target's calls
  timeline_check.py window FILE               a history that starts inside
                                              main (its start overwritten)
  timeline_check.py same FILE1 FILE2          two files, the same events
  timeline_check.py svg FILE NAME...          well-formed, names shown
                                              (@NAME: the one stopped in)
  timeline_check.py png FILE                  a screenshot, not blank
  timeline_check.py dom FILE NAME...          names on a rendered page
"""
import json
import re
import struct
import sys
import zlib
import xml.etree.ElementTree as ET


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc.get("traceEvents"), list):
        fail("%s: no traceEvents" % path)
    return doc


def threads(doc):
    """{tid: [complete events in file order]}, and the thread names."""
    spans, names = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e["ph"] == "X":
            spans.setdefault(e["tid"], []).append(e)
    return spans, names


def check_nesting(tid, events):
    """In time order, and each event inside the one open around it."""
    stack, last = [], None
    for e in events:
        s, end = e["ts"], e["ts"] + e["dur"]
        if not isinstance(s, int) or not isinstance(e["dur"], int):
            fail("thread %d: %s: ts/dur not integers" % (tid, e["name"]))
        if last is not None and s < last:
            fail("thread %d: %s at %d before %d" % (tid, e["name"], s, last))
        last = s
        while stack and stack[-1][1] <= s:
            stack.pop()
        if stack and end > stack[-1][1]:
            fail("thread %d: %s [%d, %d] overlaps %s [%d, %d]"
                 % (tid, e["name"], s, end, stack[-1][2], stack[-1][0],
                    stack[-1][1]))
        stack.append((s, end, e["name"]))


def children(events, parent):
    """The names of the direct callees of @parent, in order: events come
    in time order, a caller before its callees."""
    end = parent["ts"] + parent["dur"]
    out, child_end = [], -1
    for e in events[events.index(parent) + 1:]:
        if e["ts"] >= end:
            break
        if e["ts"] >= child_end:
            out.append(e["name"])
            child_end = e["ts"] + e["dur"]
    return out


def cmd_json(path, stopped=None):
    doc = load(path)
    other = doc.get("otherData", {})
    if other.get("clock") not in ("instructions", "branches", "us"):
        fail("otherData.clock is %r" % other.get("clock"))
    if other.get("clock") != "us" and "no timestamps" not in other.get("note", ""):
        fail("the file does not say that time is not time")
    spans, names = threads(doc)
    if not spans:
        fail("no complete events")
    for tid, events in spans.items():
        check_nesting(tid, events)
        if tid not in names:
            fail("thread %d has no thread_name" % tid)
    stops = [e for e in doc["traceEvents"] if e.get("cat") == "stop"]
    if stopped == "stop" and stops:
        stopped = stops[0]["tid"]
    if stopped is not None:
        stopped = int(stopped)
        if stopped not in spans:
            fail("no events of the stopped thread %d" % stopped)
        if len(stops) != 1 or stops[0]["tid"] != stopped:
            fail("the stop: %r" % stops)
        end = max(e["ts"] + e["dur"] for e in spans[stopped])
        if stops[0]["ts"] != end:
            fail("the stop at %d, the history ends at %d"
                 % (stops[0]["ts"], end))
    return doc


def by_name(events, name):
    return [e for e in events if e["name"] == name]


def cmd_crash(path):
    doc = load(path)
    stop = [e for e in doc["traceEvents"] if e.get("cat") == "stop"][0]
    cmd_json(path, stop["tid"])
    spans, names = threads(doc)
    main = spans[stop["tid"]]
    if "SIGSEGV" not in names[stop["tid"]]:
        fail("stopped thread's name: %s" % names[stop["tid"]])
    last = main[-1]
    if last["name"] != "c" or "open" not in last["cat"]:
        fail("the last event is %s (%s), not c, open" %
             (last["name"], last["cat"]))
    a, c, m = by_name(main, "a"), by_name(main, "c"), by_name(main, "main")
    if len(a) != 1 or len(c) != 1 or len(m) != 1:
        fail("a, c, main: %d, %d, %d events" % (len(a), len(c), len(m)))
    if children(main, a[0]) != ["b", "b"]:
        fail("a calls %s, not b twice" % children(main, a[0]))
    if children(main, m[0])[-2:] != ["a", "c"]:
        fail("main ends calling %s" % children(main, m[0]))
    if "open" not in m[0]["cat"] or "open" in a[0]["cat"]:
        fail("main should be open at the stop, a returned")
    if not a[0].get("args", {}).get("src", "").startswith("timeline.c:"):
        fail("a's source: %r" % a[0].get("args"))
    workers = [t for t in spans if t != stop["tid"]]
    if len(workers) != 1:
        fail("threads: %s" % list(spans))
    w = by_name(spans[workers[0]], "w_outer")
    if len(w) != 1 or children(spans[workers[0]], w[0]) != ["w_inner"] * 3:
        fail("the worker: w_outer %s" %
             (children(spans[workers[0]], w[0]) if w else "missing"))
    # instructions as time: b(400) runs about twice as long as b(200)
    b1, b2 = by_name(main, "b")
    if not 1.6 < b2["dur"] / b1["dur"] < 2.4:
        fail("b's durations %d, %d" % (b1["dur"], b2["dur"]))


def cmd_window(path):
    """The ring lost the start: main was entered before the history
    begins, so its span starts where the history does (after the gap that
    says so) and holds everything after; c is still last."""
    doc = cmd_json(path, "stop")
    stop = [e for e in doc["traceEvents"] if e.get("cat") == "stop"][0]
    spans, _ = threads(doc)
    main = spans[stop["tid"]]
    gaps = [e for e in doc["traceEvents"]
            if e.get("cat") == "gap" and e["tid"] == stop["tid"]]
    if not gaps or gaps[0]["ts"] > main[0]["ts"]:
        fail("no gap before the history: %r" % gaps[:1])
    m = by_name(main, "main")
    if len(m) != 1 or "open" not in m[0]["cat"]:
        fail("main: %r" % m)
    if m[0]["ts"] != main[0]["ts"]:
        fail("main starts at %d, the history at %d" % (m[0]["ts"], main[0]["ts"]))
    if children(main, m[0])[-2:] != ["a", "c"] or main[-1]["name"] != "c":
        fail("main ends calling %s, the last event is %s"
             % (children(main, m[0]), main[-1]["name"]))


def cmd_same(p1, p2):
    e1 = [e for e in load(p1)["traceEvents"] if e["ph"] != "M"]
    e2 = [e for e in load(p2)["traceEvents"] if e["ph"] != "M"]
    if e1 != e2:
        for x, y in zip(e1, e2):
            if x != y:
                fail("first difference:\n%s\n%s" % (x, y))
        fail("%d events, then %d" % (len(e1), len(e2)))


def cmd_svg(path, *names):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    if root.tag != ns + "svg":
        fail("root element %s" % root.tag)
    texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
    titles = [t.text or "" for t in root.iter(ns + "title")]
    rects = [g for g in root.iter(ns + "g") if g.find(ns + "rect") is not None]
    if not rects or any(g.find(ns + "title") is None for g in rects):
        fail("boxes without a <title>")
    for n in names:
        stopped = n.startswith("@")
        n = n.lstrip("@")
        if not any(t.startswith(n + " ") for t in titles):
            fail("no tooltip for %r" % n)
        # the function stopped in: beside the stop (its box may be narrow)
        if stopped and "in " + n not in texts:
            fail("the stop does not say 'in %s' (labels: %s)" % (n, texts))
        if not stopped and n not in texts:
            fail("no label %r in the SVG (labels: %s)" % (n, texts[:40]))
    if not any(t.startswith("stop: ") for t in texts):
        fail("the stop is not marked")


def png_rows(path):
    """The rows of an 8-bit RGB/RGBA PNG, as bytes, and the pixel size."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", data[pos + 8:pos + 21])
        elif kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    w, h, depth, ctype = hdr[:4]
    if depth != 8 or ctype not in (2, 6):
        fail("%s: PNG of depth %d, colour type %d" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, rows, prev, stride = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows, w, h, bpp


def cmd_png(path):
    """Drawn: many colours (boxes, text), a good part not background."""
    rows, w, h, bpp = png_rows(path)
    colours, inked = set(), 0
    for row in rows[::4]:
        for x in range(0, w * bpp, 4 * bpp):
            px = row[x:x + 3]
            colours.add(px)
            inked += px[0] < 235 or px[1] < 235 or px[2] < 235
    total = len(rows[::4]) * len(range(0, w * bpp, 4 * bpp))
    if len(colours) < 8 or inked < total // 20:
        fail("%s looks blank: %d colours, %d of %d pixels drawn"
             % (path, len(colours), inked, total))


def cmd_dom(path, *names):
    """Each name as the text of an element of the page (alone, or before
    its args as speedscope shows them)."""
    text = re.sub("<[^>]+>", "|", open(path).read())
    for n in names:
        if not re.search(r"\|%s( \{[^|]*\})?\|" % re.escape(n), text):
            fail("%r is not on the page" % n)


def within(what, got, want, tol=0.2):
    if not want or abs(got - want) > tol * want:
        fail("%s: %d us in the timeline, %d us by the program's clock"
             % (what, got, want))


def cmd_durations(path, work_ns, nap_ns):
    """targets/timed: real time (otherData.clock "us"); work() between
    its two clock reads and nap() as long as the program measured them
    (within 20%), the sleep inside nanosleep; each thread in time order
    (cmd_json); the last event the crashing function."""
    doc = cmd_json(path, "stop")
    if doc["otherData"]["clock"] != "us":
        fail("clock %r, not the trace's time" % doc["otherData"]["clock"])
    stop = [e for e in doc["traceEvents"] if e.get("cat") == "stop"][0]
    spans, _ = threads(doc)
    main = spans[stop["tid"]]
    if main[-1]["name"] != "crash":
        fail("the last event is %s" % main[-1]["name"])
    work, nap = by_name(main, "work"), by_name(main, "nap")
    if len(work) != 1 or len(nap) != 1:
        fail("work %r, nap %r" % (work, nap))
    w, n = work[0], nap[0]
    # the program reads its clock as now_ns() returns, twice
    reads = [e["ts"] + e["dur"] for e in by_name(main, "now_ns")
             if w["ts"] <= e["ts"] <= w["ts"] + w["dur"]]
    if len(reads) != 2:
        fail("work calls now_ns %d times" % len(reads))
    within("work", reads[1] - reads[0], int(work_ns) // 1000)
    if w["dur"] < reads[1] - reads[0]:
        fail("work's span is shorter than its work")
    within("nap", n["dur"], int(nap_ns) // 1000)
    sleep = [e for e in main if e["name"] in ("__clock_nanosleep",
                                              "clock_nanosleep")
             and n["ts"] <= e["ts"] < n["ts"] + n["dur"]]
    if not sleep or sleep[0]["dur"] < 0.8 * n["dur"]:
        fail("the sleep is not in clock_nanosleep: %r" % sleep)


if __name__ == "__main__":
    {"json": cmd_json, "crash": cmd_crash, "window": cmd_window,
     "same": cmd_same, "durations": cmd_durations,
     "svg": cmd_svg, "png": cmd_png, "dom": cmd_dom}[sys.argv[1]](*sys.argv[2:])
