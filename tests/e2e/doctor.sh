#!/usr/bin/env bash
# btrace doctor: its verdicts and exit status agree with what this host's
# sysfs and CPU say, in text and in JSON.
. "$TESTDIR/e2e/lib/common.sh"

out=$("$BTRACE" doctor); rc=$?
json=$("$BTRACE" doctor --json); jrc=$?
[ "$rc" = "$jrc" ] || fail "exit $rc in text, $jrc in json"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "exit status $rc"

# Ground truth the host gives without btrace.
dev=/sys/bus/event_source/devices
vendor=$(awk -F': ' '/^vendor_id/ {print $2; exit}' /proc/cpuinfo)
[ "$vendor" = GenuineIntel ] && v=Intel || { [ "$vendor" = AuthenticAMD ] && v=AMD || v=unknown; }
echo "$out" | grep -q "^cpu  *$v family" || fail "cpu line: $(echo "$out" | head -1)"
pmus=$(LC_ALL=C ls "$dev" 2>/dev/null | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
echo "$out" | grep -qx "perf PMUs  *$pmus" || fail "PMU line, want '$pmus'"

python3 - "$json" "$rc" "$dev" "$vendor" <<'PY' || exit 1
import json, os, sys
d = json.loads(sys.argv[1]); rc = int(sys.argv[2]); dev = sys.argv[3]
b = d["backends"]
assert d["hardware"] == (rc == 0), "exit status does not follow hardware"
assert d["hardware"] == (b["pt"]["usable"] or b["bts"]["usable"])
if not os.path.exists(dev + "/intel_pt"):
    assert not b["pt"]["usable"], "pt usable without an intel_pt PMU"
if sys.argv[4] != "GenuineIntel" or not (os.path.exists(dev + "/cpu") or
                                         os.path.exists(dev + "/cpu_core")):
    assert not b["bts"]["usable"], "bts usable without an Intel core PMU"
for c in d["checks"]:
    if c["state"] in ("no", "warn"):
        assert c["remedy"], c["name"] + " has no remedy"
for name in ("pt", "bts"):
    if not b[name]["usable"]:
        assert b[name]["why"], name + " unusable without a reason"
# What each backend honours, from the registry: filters and triggers in
# the soft backend's record and fast modes only.
honours = {(n, m["mode"]): m["honours"] for n in b for m in b[n]["modes"]}
assert set(honours) == {("pt", None), ("bts", None), ("soft", "record"),
                        ("soft", "fast"), ("soft", "step")}, honours
for k, caps in honours.items():
    want = k in (("soft", "record"), ("soft", "fast"))
    for c in ("filters", "from", "until"):
        assert (c in caps) == want, (k, caps)
par = int(open("/proc/sys/kernel/perf_event_paranoid").read())
row = [c for c in d["checks"] if c["name"] == "perf_event_paranoid"][0]
assert row["value"].startswith(str(par)), row
PY

"$BTRACE" doctor --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "bad option not a usage error"
echo ok
