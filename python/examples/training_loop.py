"""A training loop's shape on an accelhooks device, from Python: a loader
stream copies each batch from pinned memory while the compute stream works,
activations are allocated and freed each step, the step's fills are
captured once into a graph and replayed, and the allocator's cache is
emptied at the end. No numbers are learnt: what it exercises is the traffic
a framework's training loop sends through the hooks.

    python3 training_loop.py [--backend openreg] [--steps 8] [--trace trace.json]

With --trace it runs under accel.profiler, writes the Chrome trace there and
prints the hooks by total time (docs/tracing.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import List

import accel
import accel.profiler

BATCH_BYTES = 256 * 1024
PARAMETER_BYTES = 1 << 20


def train(backend_name: str, steps: int) -> None:
    be = accel.backend(backend_name)
    device = f"{backend_name}:0"
    be.manual_seed(0)
    weights = accel.empty(PARAMETER_BYTES, device=device)
    be.fill_normal(weights, 0.0, 0.02)
    loader = be.Stream()
    compute = be.Stream()
    be.set_stream(compute)  # graphs capture a stream of its own, not the default one
    pinned = [accel.empty(BATCH_BYTES, device=backend_name, pinned=True) for _ in range(2)]
    batches = [accel.empty(BATCH_BYTES, device=device) for _ in range(2)]
    graph = be.Graph()
    noise = accel.empty(BATCH_BYTES, device=device)
    for step in range(steps):
        slot = step % 2
        # The loader copies the batch on its own stream; compute waits for it.
        with be.stream(loader):
            batches[slot].copy_(pinned[slot])
            ready = loader.record_event()
        compute.wait_event(ready)
        # Activations of a size that changes with the step, freed at its end.
        activations: List[accel.Buffer] = [
            accel.empty(BATCH_BYTES * (1 + (step + layer) % 3), device=device)
            for layer in range(4)
        ]
        for buffer in activations:
            be.fill_uniform(buffer, -1.0, 1.0)
        if step == 0:
            with be.graph(graph):  # the step's noise, captured once
                be.fill_normal(noise, 0.0, 1.0)
        graph.replay()
        # The step's output back to the host, as a loss would be.
        output = accel.empty(activations[-1].nbytes, device=backend_name, pinned=True)
        output.copy_(activations[-1])
        del activations
        compute.synchronize()
    be.synchronize()
    be.empty_cache()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="openreg")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--trace", help="profile the loop and write its trace here")
    args = parser.parse_args(argv)
    if not args.trace:
        train(args.backend, args.steps)
        return 0
    with accel.profiler.profile() as prof:
        train(args.backend, args.steps)
    prof.export_chrome_trace(args.trace)
    print(prof.key_averages().table(row_limit=12), end="")
    print(f"wrote {args.trace}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
