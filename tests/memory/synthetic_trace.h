// A synthetic, training-like allocation trace in the memreplay text format
// (docs/memory.md): parameters, gradients and optimizer state that live for
// the whole run, and per iteration a forward pass that keeps one activation
// per layer plus short-lived temporaries, then a backward pass that frees
// activations in reverse while gradients come and go. The batch size changes
// between iterations (varying shapes), which is what fragments a cache.
//
// Used by the memreplay tests and bench/memory. Deterministic for a seed.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace accel::memory::testing {

struct SyntheticTraceOptions {
  unsigned seed = 1;
  int iterations = 20;
  int layers = 24;
  std::vector<int> batch_sizes{16, 24, 32, 48, 64};
};

inline std::string syntheticTrainingTrace(const SyntheticTraceOptions& options = {}) {
  std::mt19937 random(options.seed);
  std::string out = "# synthetic training trace: alloc ID SIZE [STREAM] / free ID\n";
  int next_id = 0;
  auto alloc = [&](std::size_t size) {
    const int id = next_id++;
    out += "alloc t" + std::to_string(id) + ' ' + std::to_string(size) + '\n';
    return id;
  };
  auto release = [&](int id) { out += "free t" + std::to_string(id) + '\n'; };

  std::vector<std::size_t> width(static_cast<std::size_t>(options.layers));
  std::vector<int> params;
  for (std::size_t& w : width) {
    w = std::size_t{256} << (random() % 5);  // 256 .. 4096 features
  }
  for (int l = 0; l < options.layers; ++l) {
    const std::size_t in = width[static_cast<std::size_t>(l)];
    const std::size_t out_width =
        width[static_cast<std::size_t>((l + 1) % options.layers)];
    params.push_back(alloc(in * out_width * 4));  // weight
    params.push_back(alloc(out_width * 4));       // bias (small pool)
  }
  std::vector<int> grads, optimizer_state;
  for (int i = 0; i < options.iterations; ++i) {
    const std::size_t batch = static_cast<std::size_t>(
        options.batch_sizes[random() % options.batch_sizes.size()]);
    std::vector<int> activations;
    // forward
    for (int l = 0; l < options.layers; ++l) {
      const std::size_t w = width[static_cast<std::size_t>(l)];
      const int temp = alloc(batch * w * 4 * 2);  // workspace, freed at once
      activations.push_back(alloc(batch * w * 4));
      release(temp);
      if (random() % 3 == 0) release(alloc(64));  // a scalar
    }
    const int loss = alloc(4);
    // backward
    int upstream = alloc(batch * width.back() * 4);
    for (int l = options.layers - 1; l >= 0; --l) {
      const std::size_t w = width[static_cast<std::size_t>(l)];
      const int grad_in = alloc(batch * w * 4);
      release(upstream);
      release(activations[static_cast<std::size_t>(l)]);
      upstream = grad_in;
      if (i == 0) {
        // parameter gradients persist (like .grad) once created
        const std::size_t in = w;
        const std::size_t o = width[static_cast<std::size_t>((l + 1) % options.layers)];
        grads.push_back(alloc(in * o * 4));
        grads.push_back(alloc(o * 4));
      }
    }
    release(upstream);
    release(loss);
    // optimizer step: state created on the first step, temporaries each step
    if (i == 0) {
      for (int l = 0; l < options.layers; ++l) {
        const std::size_t in = width[static_cast<std::size_t>(l)];
        const std::size_t o = width[static_cast<std::size_t>((l + 1) % options.layers)];
        optimizer_state.push_back(alloc(in * o * 4));
        optimizer_state.push_back(alloc(in * o * 4));
      }
    }
    for (int l = 0; l < options.layers; ++l) {
      const std::size_t in = width[static_cast<std::size_t>(l)];
      release(alloc(in * 4 * 16));
    }
  }
  for (int id : optimizer_state) release(id);
  for (int id : grads) release(id);
  for (int id : params) release(id);
  return out;
}

}  // namespace accel::memory::testing
