#!/usr/bin/python3
"""Records a real PyTorch training allocation trace for `accel memreplay`.

Trains a small model on random data on the CPU with alloc_shim.so preloaded:
every tensor storage PyTorch allocates and frees from model creation to the
last step becomes one line of the memreplay text format (docs/memory.md).
Parameters and optimizer state are still live at the end and have no free
line; a replay frees them. The models differ in how they allocate:

  cnn_transformer (default) -> tools/traces/pytorch_cpu_training.trace
      a CNN with a transformer head, Adam, CIFAR-shaped batches of varying
      size: mid-sized activations, a few large ones, one shape per batch size.
  lstm_lm -> tools/traces/pytorch_cpu_lstm_lm.trace
      an LSTM language model, SGD with momentum, sentences of varying length:
      many small per-time-step tensors whose count follows the length.
  resnet_multiscale -> tools/traces/pytorch_cpu_resnet_multiscale.trace
      a small residual CNN, AdamW, batches and image sides both varying each
      step: every activation changes size from one step to the next.

    /usr/bin/python3 scripts/training_trace/record_training_trace.py \
        [--model NAME] OUT.trace

Needs python3-torch and a C compiler. Deterministic up to PyTorch's own
choices (seeded data, one intra-op thread).
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class CnnTransformer:
    """The first trace: its header and steps must stay as they were recorded."""
    iterations = 6
    batches = [48, 64, 32, 56, 64, 40]

    def header(self, version):
        return (
            "# A real PyTorch training allocation trace (memreplay format, docs/memory.md):\n"
            f"# every CPU tensor storage of {self.iterations} Adam steps of a small CNN with a\n"
            f"# transformer head on batches of {self.batches}, PyTorch {version},\n"
            "# from model creation on. Regenerate: scripts/training_trace/record_training_trace.py\n")

    def train(self, torch, nn):
        """Trains; returns the model and optimizer, whose memory stays live."""
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

        model = Net()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(self.iterations):
            batch = self.batches[step % len(self.batches)]
            images = torch.randn(batch, 3, 32, 32)
            labels = torch.randint(0, 10, (batch,))
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            del images, labels, loss
        return model, optimizer


class LstmLanguageModel:
    """Small tensors in numbers that follow each batch's sentence length."""
    iterations = 8
    batch = 16
    lengths = [35, 12, 50, 20, 42, 8, 28, 45]
    vocabulary = 4000

    def header(self, version):
        return (
            "# A real PyTorch training allocation trace (memreplay format, docs/memory.md):\n"
            f"# every CPU tensor storage of {self.iterations} SGD-with-momentum steps of a\n"
            f"# 2-layer LSTM language model (vocabulary {self.vocabulary}, embedding 128,\n"
            f"# hidden 256, a linear softmax head, gradient clipping) on {self.batch} sentences\n"
            f"# of lengths {self.lengths} per step, PyTorch {version},\n"
            "# from model creation on. Regenerate:\n"
            "# scripts/training_trace/record_training_trace.py --model lstm_lm\n")

    def train(self, torch, nn):
        class Net(nn.Module):
            def __init__(self, vocabulary):
                super().__init__()
                self.embed = nn.Embedding(vocabulary, 128)
                self.lstm = nn.LSTM(128, 256, num_layers=2, dropout=0.2)
                self.head = nn.Linear(256, vocabulary)

            def forward(self, tokens):  # (length, batch)
                out, _ = self.lstm(self.embed(tokens))
                return self.head(out)

        model = Net(self.vocabulary)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(self.iterations):
            length = self.lengths[step % len(self.lengths)]
            tokens = torch.randint(0, self.vocabulary, (length + 1, self.batch))
            logits = model(tokens[:-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, self.vocabulary),
                                               tokens[1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            del tokens, logits, loss
        return model, optimizer


class ResNetMultiScale:
    """Every activation changes size each step (batch and image side vary)."""
    iterations = 5
    shapes = [(24, 32), (8, 64), (40, 24), (16, 48), (32, 40)]

    def header(self, version):
        return (
            "# A real PyTorch training allocation trace (memreplay format, docs/memory.md):\n"
            f"# every CPU tensor storage of {self.iterations} AdamW steps of a small residual CNN\n"
            "# (4 stages of 2 basic blocks, 32-256 channels, global pooling) on batches of\n"
            f"# (images, side) {self.shapes},\n"
            f"# PyTorch {version}, from model creation on. Regenerate:\n"
            "# scripts/training_trace/record_training_trace.py --model resnet_multiscale\n")

    def train(self, torch, nn):
        class Basic(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.body = nn.Sequential(
                    nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(), nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
                self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                return nn.functional.relu(self.body(x) + self.skip(x))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers = [nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()]
                cin = 32
                for cout, stride in [(32, 1), (64, 2), (128, 2), (256, 2)]:
                    layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
                    cin = cout
                self.features = nn.Sequential(*layers)
                self.head = nn.Linear(256, 100)

            def forward(self, x):
                return self.head(self.features(x).mean((2, 3)))

        model = Net()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
        for step in range(self.iterations):
            batch, side = self.shapes[step % len(self.shapes)]
            images = torch.randn(batch, 3, side, side)
            labels = torch.randint(0, 100, (batch,))
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            del images, labels, loss
        return model, optimizer


MODELS = {
    "cnn_transformer": CnnTransformer,
    "lstm_lm": LstmLanguageModel,
    "resnet_multiscale": ResNetMultiScale,
}


def build_shim(directory):
    shim = os.path.join(directory, "alloc_shim.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", shim,
                    os.path.join(HERE, "alloc_shim.c"), "-ldl"], check=True)
    return shim


def train(model_name, shim_path, raw_path):
    import torch
    from torch import nn

    torch.manual_seed(0)
    torch.set_num_threads(1)
    shim = ctypes.CDLL(shim_path)
    shim.trace_start.argtypes = [ctypes.c_char_p]
    shim.trace_stop.restype = ctypes.c_uint
    recipe = MODELS[model_name]()
    if shim.trace_start(raw_path.encode()) != 0:
        sys.exit(f"cannot write {raw_path}")
    # The model and its optimizer state stay alive until recording stops, as
    # they would between training steps: the trace has no free for them.
    state = recipe.train(torch, nn)
    count = shim.trace_stop()
    del state
    print(f"recorded {count} allocations", file=sys.stderr)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        train(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="cnn_transformer",
                        help="what to train (default: cnn_transformer)")
    parser.add_argument("out", help="the trace file to write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        shim = build_shim(directory)
        raw = os.path.join(directory, "raw.trace")
        env = dict(os.environ, LD_PRELOAD=shim)
        subprocess.run([sys.executable, __file__, "--child", args.model, shim, raw], env=env,
                       check=True)
        with open(raw) as f:
            events = f.read()
    import torch
    with open(args.out, "w") as f:
        f.write(MODELS[args.model]().header(torch.__version__) + events)


if __name__ == "__main__":
    main()
