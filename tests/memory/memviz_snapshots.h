// Snapshots for the memviz tests, taken from the real caching allocator over
// a fake device:
// - sevenBlockSnapshot: a few allocations whose picture is known exactly;
// - trainingSnapshot: a long, training-like run with the stacks a PyTorch
//   program records (Python frames mixed with native ones, long names), for
//   the page's size and drawing time at scale.
//
// Thread-safety: each call builds its own allocator.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/fake_segment_source.h"

namespace accel::memory::testing {

inline Stream memvizStream(StreamId id) {
  return Stream(Device::unchecked(DeviceType::CUDA, 0), id);
}

// 7 blocks at the end, which is also the peak: small segment [free A][C][E]
// [free rest], large segment [B][D][free rest].
inline MemorySnapshot sevenBlockSnapshot(bool with_trace) {
  constexpr std::size_t kKiB = 1 << 10;
  constexpr std::size_t kMiB = 1 << 20;
  FakeSegmentSource source(std::size_t{1} << 30);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  MemoryHistoryOptions history;
  history.max_entries = 1000;
  allocator.recordHistory(history);
  DataPtr a = allocator.allocate(0, 1000, memvizStream(0));
  DataPtr b = allocator.allocate(0, 3 * kMiB, memvizStream(0));
  DataPtr c = allocator.allocate(0, 4 * kKiB, memvizStream(0));
  a.reset();
  DataPtr d = allocator.allocate(0, 2 * kMiB, memvizStream(0));
  DataPtr e = allocator.allocate(0, 8 * kKiB, memvizStream(0));
  MemorySnapshot snapshot =
      allocator.snapshot({.device = 0, .include_trace = with_trace});
  std::size_t blocks = 0;
  for (const MemorySegment& segment : snapshot.segments) blocks += segment.blocks.size();
  EXPECT_EQ(blocks, 7u);
  return snapshot;
}

// `stacks` distinct stacks of `python_frames` Python frames over
// `native_frames` native ones, innermost first as recorded.
inline std::vector<std::vector<MemoryFrame>> trainingStacks(int stacks, int python_frames,
                                                            int native_frames) {
  std::vector<std::vector<MemoryFrame>> out;
  for (int s = 0; s < stacks; ++s) {
    std::vector<MemoryFrame> frames;
    for (int f = 0; f < native_frames; ++f) {
      frames.push_back({"at::native::(anonymous namespace)::launch_kernel_variant_" +
                            std::to_string(f) + "<float, at::native::ReduceOp<float, " +
                            std::to_string(s % 7) + ">>",
                        "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so", 0});
      if (f == native_frames / 2 && python_frames > 0) {
        for (int p = 0; p < python_frames; ++p) {
          frames.push_back(
              {"forward_block_" + std::to_string((s + p) % 23),
               "/home/user/project/model/layers_" + std::to_string(p) + ".py",
               100 + s * 3 + p});
        }
      }
    }
    out.push_back(std::move(frames));
  }
  return out;
}

// About `events` trace events (the ring keeps the last ones) of a training-like
// run: long-lived parameters, per-step activations and short temporaries of
// varied sizes, with `stacks` distinct stacks.
inline MemorySnapshot trainingSnapshot(std::size_t events, int stacks = 300) {
  FakeSegmentSource source(std::size_t{1} << 40);
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  MemoryHistoryOptions history;  // every event kind
  history.max_entries = events;
  allocator.recordHistory(history);
  std::mt19937 random(7);
  std::vector<DataPtr> parameters;
  std::deque<DataPtr> activations;
  for (int i = 0; i < 40; ++i) {
    parameters.push_back(allocator.allocate(
        0, (std::size_t{1} << 20) * (1 + random() % 16), memvizStream(0)));
  }
  // Each allocation and free leaves 3 events (alloc, free_requested,
  // free_completed) and occasionally segment events.
  for (std::size_t step = 0; step < events / 3 + 200; ++step) {
    const unsigned kind = random() % 10;
    const std::size_t size = kind < 6   ? 512 * (1 + random() % 512)  // small
                             : kind < 9 ? (std::size_t{1} << 20) * (1 + random() % 8)
                                        : (std::size_t{1} << 20) * (16 + random() % 64);
    activations.push_back(allocator.allocate(0, size, memvizStream(0)));
    if (activations.size() > 60 + random() % 40) {
      activations.erase(activations.begin() +
                        static_cast<std::ptrdiff_t>(random() % activations.size()));
    }
  }
  MemorySnapshot snapshot = allocator.snapshot({.device = 0, .include_trace = true});
  const auto pool = trainingStacks(stacks, 4, 8);
  std::size_t next = 0;
  for (MemoryTraceEntry& entry : snapshot.device_traces[0]) {
    entry.frame_details = pool[(next++ * 7919) % pool.size()];
  }
  for (MemorySegment& segment : snapshot.segments) {
    for (MemoryBlock& block : segment.blocks) {
      if (block.state != MemoryBlock::State::Free) {
        block.frames = pool[(next++ * 7919) % pool.size()];
      }
    }
  }
  activations.clear();
  parameters.clear();
  return snapshot;
}

}  // namespace accel::memory::testing
