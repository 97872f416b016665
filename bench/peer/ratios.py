#!/usr/bin/python3
"""Prints ours/PyTorch ratios from a bench_peer JSON report.

    build/release/bin/bench_peer --benchmark_repetitions=3 \
        --benchmark_report_aggregates_only=true --benchmark_out=peer.json
    bench/peer/ratios.py peer.json

Pairs are BM_<Path>_accel[_variant] and BM_<Path>_pytorch; the median of
each is compared (a ratio below 1 means ours is faster).
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
        medians[name] = (b["real_time"], b["time_unit"])
    print(f"{'path':<34} {'accel':>12} {'pytorch':>12} {'ratio':>7}")
    for name, (ours, unit) in sorted(medians.items()):
        if "_accel" not in name:
            continue
        path = name[: name.index("_accel")]
        peer = medians.get(path + "_pytorch")
        if peer is None:
            continue
        label = name.removeprefix("BM_")
        print(f"{label:<34} {ours:>9.2f} {unit:<2} {peer[0]:>9.2f} {peer[1]:<2} {ours / peer[0]:>7.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
