"""LDP collection on a local Ray cluster with dpfair.ray (bench/ldp_ray.sh runs it).

Prints the wall time, the CPU time of every process of the cluster (the driver and all its
descendants: GCS, raylet, workers) spent by the collection, and the ledger.

    python bench/ldp_ray.py TREE.json REPORTS_DIR [CPUS]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import dpfair.ray as dray
import ray


def _descendants_cpu() -> float:
    """User + system CPU seconds of this process and every live descendant (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d.name)] = int(fields[1])
        cpu[int(d.name)] = (int(fields[11]) + int(fields[12])) / tick
    me, total = os.getpid(), 0.0
    for pid in cpu:
        p = pid
        while p > 1 and p != me:
            p = parent.get(p, 0)
        if p == me:
            total += cpu[pid]
    return total


def main() -> None:
    """Collect the reports twice (workers cold, then warm) and print the costs."""
    tree, reports = sys.argv[1], sys.argv[2]
    cpus = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    t0 = time.time()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    t1 = time.time()
    print(f"ray.init ({cpus} CPUs): {t1 - t0:.1f} s wall; load average {os.getloadavg()}")
    for run in ("cold: first job, workers start", "warm", "warm again"):
        c0, w0 = _descendants_cpu(), time.time()
        clf = dray.collect_ldp(reports, tree)
        w1, c1 = time.time(), _descendants_cpu()
        print(f"collect_ldp ({run}): {w1 - w0:.2f} s wall, {c1 - c0:.2f} s CPU in the cluster")
    parts = dray.ldp_parts(reports, tree)
    workers = len({p["worker"] for p in parts})
    print(f"ldp_parts: {len(parts)} parts folded by {workers} worker processes")
    print(f"ledger: {clf.ledger_!r}; {clf.ledger_['entries'][0]['note']}")
    print(str(clf.ledger_))
    print(f"load average {os.getloadavg()}")
    ray.shutdown()


if __name__ == "__main__":
    main()
