#!/usr/bin/python3
"""Records a real PyTorch training allocation trace for `accel memreplay`.

Trains a small convolutional network with a transformer head on random
CIFAR-shaped batches of varying size (what fragments a cache) with Adam, on
the CPU, with alloc_shim.so preloaded: every tensor storage PyTorch allocates
and frees from model creation to the last step becomes one line of the
memreplay text format (docs/memory.md). Parameters and optimizer state are
still live at the end and have no free line; a replay frees them.

    /usr/bin/python3 scripts/training_trace/record_training_trace.py \
        tools/traces/pytorch_cpu_training.trace

Needs python3-torch and a C compiler. Deterministic up to PyTorch's own
choices (seeded data, one intra-op thread).
"""
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS = 6
BATCHES = [48, 64, 32, 56, 64, 40]


def build_shim(directory):
    shim = os.path.join(directory, "alloc_shim.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim,
                    os.path.join(HERE, "alloc_shim.c"), "-ldl"], check=True)
    return shim


def train(shim_path, raw_path):
    import torch
    from torch import nn

    torch.manual_seed(0)
    torch.set_num_threads(1)
    shim = ctypes.CDLL(shim_path)
    shim.trace_start.argtypes = [ctypes.c_char_p]
    shim.trace_stop.restype = ctypes.c_uint

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            def block(cin, cout):
                return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                                     nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1),
                                     nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))
            self.features = nn.Sequential(block(3, 64), block(64, 128), block(128, 256))
            layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2)
            self.head = nn.Linear(256, 10)

        def forward(self, x):
            x = self.features(x).flatten(2).transpose(1, 2)  # (batch, 16 tokens, 256)
            return self.head(self.encoder(x).mean(1))

    if shim.trace_start(raw_path.encode()) != 0:
        sys.exit(f"cannot write {raw_path}")
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(ITERATIONS):
        batch = BATCHES[step % len(BATCHES)]
        images = torch.randn(batch, 3, 32, 32)
        labels = torch.randint(0, 10, (batch,))
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        del images, labels, loss
    count = shim.trace_stop()
    print(f"recorded {count} allocations", file=sys.stderr)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with tempfile.TemporaryDirectory() as directory:
        shim = build_shim(directory)
        raw = os.path.join(directory, "raw.trace")
        env = dict(os.environ, LD_PRELOAD=shim)
        subprocess.run([sys.executable, __file__, "--child", shim, raw], env=env, check=True)
        with open(raw) as f:
            events = f.read()
    import torch
    header = (
        "# A real PyTorch training allocation trace (memreplay format, docs/memory.md):\n"
        f"# every CPU tensor storage of {ITERATIONS} Adam steps of a small CNN with a\n"
        f"# transformer head on batches of {BATCHES}, PyTorch {torch.__version__},\n"
        "# from model creation on. Regenerate: scripts/training_trace/record_training_trace.py\n")
    with open(out, "w") as f:
        f.write(header + events)


if __name__ == "__main__":
    main()
