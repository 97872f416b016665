#!/usr/bin/python3
"""Prints ours/PyTorch ratios from a bench_peer JSON report.

    build/release/bin/bench_peer --benchmark_repetitions=3 \
        --benchmark_report_aggregates_only=true --benchmark_out=peer.json
    bench/peer/ratios.py peer.json

Pairs are BM_<Path>_accel[_variant] and BM_<Path>_pytorch; the medians of
each are compared (a ratio below 1 means ours is faster): wall time, and CPU
time, which a busy shared machine disturbs less (but which leaves out the
time spent in other threads, as in ThreadLifeOneReserve).
"""
import json
import sys


def main(path):
    with open(path) as f:
        report = json.load(f)
    medians = {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name", "median") != "median" or b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"]).removesuffix("/real_time")
        medians[name] = (b["real_time"], b["cpu_time"], b["time_unit"])
    print(f"{'path':<30} {'accel wall':>12} {'pytorch wall':>13} {'ratio':>6} {'ratio cpu':>9}")
    for name in sorted(medians):
        if "_accel" not in name:
            continue
        path = name[: name.index("_accel")]
        peer = medians.get(path + "_pytorch")
        if peer is None:
            continue
        variant = name[name.index("_accel") + len("_accel"):].lstrip("_")
        label = path.removeprefix("BM_") + (f" ({variant})" if variant else "")
        wall, cpu, unit = medians[name]
        print(f"{label:<30} {wall:>9.2f} {unit:<2} {peer[0]:>10.2f} {peer[2]:<2} "
              f"{wall / peer[0]:>6.2f} {cpu / peer[1]:>9.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
