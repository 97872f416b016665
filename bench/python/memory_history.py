"""Cost per allocation of memory history from Python: accel.empty(4096) on
openreg and its free, with history off, on without stacks, with Python
stacks, and with Python + C++ stacks, all in one run.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/memory_history.py

Prints the median ns per allocate+free pair over --repeats timing runs and
each mode's ratio to history off. The call is made from a few Python frames
deep, as model code would be.
"""

import argparse
import statistics
import timeit

import accel


def deep(n, fn):
    if n == 0:
        return fn()
    return deep(n - 1, fn)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--depth", type=int, default=10)
    args = parser.parse_args()

    accel.openreg.init()

    def pair():
        accel.empty(4096, device="openreg:0")  # allocated and freed at once

    stmt = lambda: deep(args.depth, pair)  # noqa: E731
    modes = [
        ("history off", dict(enabled=None)),
        ("history on, no stacks", dict(enabled="all", context=None)),
        ("history on, stacks='python'", dict(enabled="all", stacks="python")),
        ("history on, stacks='all'", dict(enabled="all", stacks="all")),
        ("state, stacks='python'", dict(enabled="state", stacks="python")),
    ]
    results = {}
    for name, options in modes:
        accel.openreg._record_memory_history(**options)
        stmt()  # warm
        runs = timeit.repeat(stmt, number=args.number, repeat=args.repeats)
        results[name] = statistics.median(runs) / args.number * 1e9
    accel.openreg._record_memory_history(enabled=None)
    # The Python frames of the recursion itself, without any allocation.
    empty = statistics.median(timeit.repeat(lambda: deep(args.depth, lambda: None),
                                            number=args.number, repeat=args.repeats))
    empty_ns = empty / args.number * 1e9
    base = results["history off"]
    print(f"call depth {args.depth} Python frames; frames alone: {empty_ns:.0f} ns")
    print(f"{'mode':32s} {'ns/pair':>9s} {'x off':>7s} {'+ns':>8s}")
    for name, _ in modes:
        ns = results[name]
        print(f"{name:32s} {ns:9.0f} {ns / base:7.2f} {ns - base:8.0f}")


if __name__ == "__main__":
    main()
