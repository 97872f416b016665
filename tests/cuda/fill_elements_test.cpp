// The CUDA fill kernel's per-thread code, compiled as host code: every chunk
// of fill_mapping.h (the kernel's index mapping), run in reverse order on the
// host, must write exactly what the host fills write for the same (seed,
// offset); so must every group of the block-aligned fast path, whose output
// is also tried at an address that is not 16-byte aligned. fillElements and the mapping
// are the code nvcc compiles for the GPU, so this pins the GPU's numbers down wherever
// the host and device arithmetic agree (IEEE, no contraction: see
// accel/random_fill_elements.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "accel/error.h"
#include "accel/random_fill.h"
#include "accel/random_fill_elements.h"
#include "fill_mapping.h"

namespace {

using accel::PhiloxPosition;
using accel::detail::FillJob;

constexpr std::uint64_t kSeed = 0x0123456789ABCDEFull;
constexpr std::uint64_t kOffsets[] = {0, 1, 2, 3, 4, 5, 8, 1000003, 1000004};
// Counts around a chunk (8 or 16 elements) and a tile (256 chunks).
constexpr std::size_t kCounts[] = {0, 1, 15, 16, 17, 33, 1001, 2047, 4096, 4097, 9001};

// Runs the kernel's steps on the host: tile by tile, last tile first; in
// each, every thread stages its chunk (last thread first), then every thread
// stores its elements.
void runMapped(FillJob job, PhiloxPosition from) {
  using namespace accel::cuda::detail;
  job.seed = from.seed;
  job.offset = from.offset;
  std::vector<unsigned char> staging(kFillStagingBytes);
  for (std::size_t tile = fillTileCount(job); tile-- > 0;) {
    for (unsigned thread = kFillThreads; thread-- > 0;) {
      stageFillChunk(job, tile, thread, staging.data());
    }
    for (unsigned thread = kFillThreads; thread-- > 0;) {
      storeFillTile(job, tile, thread, staging.data());
    }
  }
}

// Runs the fast path's groups on the host, last first, as the kernel
// would for a block-aligned job (the caller checks the alignment).
void runGrouped(FillJob job, PhiloxPosition from) {
  using namespace accel::cuda::detail;
  job.seed = from.seed;
  job.offset = from.offset;
  const bool vectors = fillGroupsStoreVectors(job);
  for (std::size_t group = fillGroupCount(job); group-- > 0;) {
    storeFillGroupOfKind(job, group, vectors);
  }
}

template <typename T>
void expectSameBits(const std::vector<T>& host, const std::vector<T>& mapped,
                    const char* what, std::uint64_t offset) {
  ASSERT_EQ(host.size(), mapped.size());
  if (host.empty()) return;  // memcmp must not see the null data() of an empty vector
  EXPECT_EQ(std::memcmp(host.data(), mapped.data(), host.size() * sizeof(T)), 0)
      << what << ": count " << host.size() << ", offset " << offset;
}

// For every offset and count: host(out, from) vs the mapped job.
template <typename T, typename HostFill, typename MakeJob>
void compare(const char* what, HostFill hostFill, MakeJob makeJob) {
  for (std::uint64_t offset : kOffsets) {
    for (std::size_t count : kCounts) {
      const PhiloxPosition from{kSeed, offset};
      std::vector<T> host(count, T{}), mapped(count, T{});
      hostFill(std::span<T>(host), from);
      runMapped(makeJob(mapped.data(), count), from);
      expectSameBits(host, mapped, what, offset);
      if (offset % 4 != 0) continue;
      // The fast path, at an aligned address and at one that is not 16-byte
      // aligned (one element further into a larger buffer).
      for (std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
        std::vector<T> buffer(count + shift, T{});
        const FillJob job = makeJob(buffer.data() + shift, count);
        runGrouped(job, from);
        const std::vector<T> grouped(buffer.begin() + static_cast<std::ptrdiff_t>(shift),
                                     buffer.end());
        expectSameBits(host, grouped, what, offset);
      }
    }
  }
}

TEST(CudaFillElements, BitsMatchTheHostFill) {
  compare<std::uint32_t>(
      "uint32", [](auto out, auto from) { accel::fillBits(out, from); },
      [](auto* data, std::size_t n) { return accel::detail::bitsFillJob(data, n); });
  compare<std::uint64_t>(
      "uint64", [](auto out, auto from) { accel::fillBits(out, from); },
      [](auto* data, std::size_t n) { return accel::detail::bitsFillJob(data, n); });
}

TEST(CudaFillElements, UniformMatchesTheHostFill) {
  compare<float>(
      "uniform float", [](auto out, auto from) { accel::fillUniform(out, from); },
      [](auto* data, std::size_t n) { return accel::detail::uniformFillJob(data, n); });
  compare<double>(
      "uniform double", [](auto out, auto from) { accel::fillUniform(out, from); },
      [](auto* data, std::size_t n) { return accel::detail::uniformFillJob(data, n); });
  compare<float>(
      "uniform float [-3, 7)",
      [](auto out, auto from) { accel::fillUniform(out, -3.0f, 7.0f, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::uniformFillJob("test", data, n, -3.0f, 7.0f);
      });
  compare<double>(
      "uniform double [1, 1.5)",
      [](auto out, auto from) { accel::fillUniform(out, 1.0, 1.5, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::uniformFillJob("test", data, n, 1.0, 1.5);
      });
}

TEST(CudaFillElements, NormalMatchesTheHostFill) {
  compare<float>(
      "normal float",
      [](auto out, auto from) { accel::fillNormal(out, 2.0f, 0.5f, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::normalFillJob("test", data, n, 2.0f, 0.5f);
      });
  compare<double>(
      "normal double",
      [](auto out, auto from) { accel::fillNormal(out, -1.0, 3.0, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::normalFillJob("test", data, n, -1.0, 3.0);
      });
}

TEST(CudaFillElements, BernoulliMatchesTheHostFill) {
  compare<std::uint8_t>(
      "bernoulli bytes",
      [](auto out, auto from) { accel::fillBernoulli(out, 0.3, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::bernoulliFillJob("test", data, n, 0.3);
      });
  compare<float>(
      "bernoulli floats",
      [](auto out, auto from) { accel::fillBernoulli(out, 0.7, from); },
      [](auto* data, std::size_t n) {
        return accel::detail::bernoulliFillJob("test", data, n, 0.7);
      });
}

// The kernel's reader (one block at a time, in registers) gives the host
// reader's outputs from every position within and across blocks.
TEST(CudaFillElements, BlockStreamReaderReadsTheHostReadersOutputs) {
  // The last: block 2^32 - 1, whose successor carries into the counter's
  // high word within the 70 outputs read.
  for (std::uint64_t position :
       {0ull, 1ull, 2ull, 3ull, 4ull, 15ull, 17ull, 1000003ull, (1ull << 34) - 3}) {
    accel::detail::StreamReader host(kSeed, position);
    accel::detail::BlockStreamReader kernel(kSeed, position);
    for (int i = 0; i < 70; ++i) {
      ASSERT_EQ(kernel.next(), host.next())
          << "position " << position << ", output " << i;
    }
  }
}

// The kernel's stores are coalesced: in every store round, consecutive
// threads write consecutive elements, and the rounds cover the tile once.
TEST(CudaFillElements, ConsecutiveThreadsStoreConsecutiveElements) {
  using namespace accel::cuda::detail;
  for (accel::FillKind kind : {accel::FillKind::Uint32, accel::FillKind::Uint64,
                               accel::FillKind::NormalDouble}) {
    const auto rounds = static_cast<unsigned>(fillChunkElements(kind));
    std::vector<int> stored(kFillThreads * rounds, 0);
    for (unsigned round = 0; round < rounds; ++round) {
      for (unsigned thread = 0; thread < kFillThreads; ++thread) {
        const std::size_t element = storedTileElement(round, thread);
        ASSERT_LT(element, stored.size());
        ++stored[element];
        if (thread > 0) {
          EXPECT_EQ(element, storedTileElement(round, thread - 1) + 1)
              << "round " << round << ", thread " << thread;
        }
      }
    }
    for (int times : stored) EXPECT_EQ(times, 1);
  }
}

// The host fills themselves are pinned to Random123's vectors and to the
// SIMD paths by tests/random; this checks the shared code at one known value
// too, so a change to fillElements cannot pass by changing both sides.
TEST(CudaFillElements, FirstOutputIsPhiloxOfCounterZero) {
  std::uint32_t word = 0;
  FillJob job = accel::detail::bitsFillJob(&word, 1);
  runMapped(job, {0, 0});
  EXPECT_EQ(word, accel::philox4x32({0, 0, 0, 0}, {0, 0})[0]);
  EXPECT_EQ(word, 0x6627e8d5u);  // Random123 kat_vectors: philox4x32_10, zero key/counter
}

TEST(CudaFillElements, ParameterChecksAreTheHostFills) {
  float out[4];
  EXPECT_THROW((void)accel::detail::uniformFillJob("fillUniform", out, 4, 1.0f, 1.0f),
               accel::InvalidArgument);
  EXPECT_THROW((void)accel::detail::normalFillJob("fillNormal", out, 4, 0.0f, -1.0f),
               accel::InvalidArgument);
  EXPECT_THROW((void)accel::detail::bernoulliFillJob("fillBernoulli", out, 4, 1.5),
               accel::InvalidArgument);
}

}  // namespace
