#!/usr/bin/env python3
"""Compare the code a process has in memory with its files.

Every executable file mapping of PID (/proc/PID/maps) is read from
/proc/PID/mem and compared with the same range of the file: no byte that
btrace wrote (an int3) may be left behind.  Prints what differs; exit 1.
"""
import sys


def main():
    pid = int(sys.argv[1])
    checked = 0
    bad = []
    with open(f"/proc/{pid}/maps") as maps, \
            open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            f = line.split()
            if len(f) < 6 or "x" not in f[1] or not f[5].startswith("/"):
                continue
            start, end = (int(x, 16) for x in f[0].split("-"))
            offset = int(f[2], 16)
            mem.seek(start)
            live = mem.read(end - start)
            with open(f[5], "rb") as fh:
                fh.seek(offset)
                disk = fh.read(end - start)
            # A mapping can run past the end of the file (zero-filled).
            live_cmp = live[:len(disk)]
            if live_cmp != disk:
                at = next(i for i in range(len(disk)) if live_cmp[i] != disk[i])
                bad.append(f"{f[5]}: byte at {start + at:#x} is "
                           f"{live_cmp[at]:#04x}, file has {disk[at]:#04x}")
            checked += len(disk)
    for b in bad:
        print(b)
    print(f"checked {checked} code bytes of pid {pid}: "
          f"{'differ' if bad else 'equal to the files'}")
    sys.exit(1 if bad or not checked else 0)


main()
