#!/usr/bin/env python3
"""Where a busy fleet's CPU time and context switches go, per call and thread role.

Usage: fleet_roles.py cpu SHORT.data LONG.data CALLS
       fleet_roles.py switches SHORT.data LONG.data CALLS

SHORT.data and LONG.data are `perf record` files of two runs of one fleet that differ
only in their number of calls (the table bench's `--only "fleet N"`, which also makes
a warm-up of a tenth); CALLS is that difference, warm-up included. Subtracting the
short run from the long one leaves out starting and stopping the fleet.

- `cpu`: files of `perf record -e cpu-clock` (at any frequency: a sample's period is
  its CPU time); prints each role's CPU time per call in µs, user space and kernel
  apart.
- `switches`: files of `perf record -e sched:sched_switch`; prints each role's context
  switches per call, those where the thread went to sleep and those where it was
  preempted or yielded.

A thread's role is read from its name (`octet-dispatcher`, `octet-reader-N`, the SDK's
`octet-sdk-worker`...); the bench's own caller threads keep the bench's name, and the
SDK children's main threads the binary's (`octet-host`). Standard library only; needs
`perf` on the PATH.
"""
import collections
import re
import subprocess
import sys

# Name prefixes (as the kernel keeps them: 15 bytes) and the role each stands for.
ROLES = (
    ("octet-dispatche", "host dispatcher"),
    ("octet-reader", "host readers"),
    ("octet-writer", "host writers"),
    ("octet-stderr", "host stderr drains"),
    ("octet-launcher", "host launcher"),
    ("table-", "callers (the bench)"),
    ("octet-host", "child main threads"),
    ("octet-sdk-worke", "child workers"),
    ("octet-sdk-write", "child writers"),
    ("octet-sdk-growe", "child growers"),
)

def role(comm):
    for prefix, name in ROLES:
        if comm.startswith(prefix):
            return name
    return "other"


def cpu_counts(path):
    report = subprocess.run(
        ["perf", "report", "-i", path, "--stdio", "--sort", "comm,dso",
         "-F", "period,comm,dso"],
        capture_output=True, text=True, check=True,
    ).stdout
    counts = collections.Counter()
    for line in report.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split()
        nanoseconds, comm, dso = int(fields[0]), fields[1], fields[-1]
        side = "kernel" if "kernel" in dso else "user"
        counts[(role(comm), side)] += nanoseconds / 1000
    return counts


def switch_counts(path):
    script = subprocess.run(
        ["perf", "script", "-i", path, "-F", "trace"],
        capture_output=True, text=True, check=True,
    ).stdout
    counts = collections.Counter()
    for line in script.splitlines():
        found = re.search(r"prev_comm=(.*?) prev_pid=\d+ prev_prio=\d+ prev_state=(\S+)", line)
        if found:
            sleeping = found.group(2)[0] in "SDI"
            counts[(role(found.group(1)), "sleep" if sleeping else "preempted")] += 1
    return counts


def main():
    mode, short, long_, calls = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    count, sides, unit = {
        "cpu": (cpu_counts, ("user", "kernel"), "µs of CPU per call"),
        "switches": (switch_counts, ("sleep", "preempted"), "context switches per call"),
    }[mode]
    a, b = count(short), count(long_)
    per_call = {key: (b[key] - a[key]) / calls for key in set(a) | set(b)}
    print(f"{unit}: {sides[0]} + {sides[1]}")
    total = [0.0, 0.0]
    for _, name in ROLES + (("", "other"),):
        values = [per_call.get((name, side), 0.0) for side in sides]
        if all(abs(v) < 0.005 for v in values):
            continue
        total = [t + v for t, v in zip(total, values)]
        print(f"{name:22s} {values[0]:7.2f} + {values[1]:7.2f}")
    print(f"{'all':22s} {total[0]:7.2f} + {total[1]:7.2f}")


if __name__ == "__main__":
    main()
