// Philox4x32-10 against Random123's published known-answer vectors, and the
// stream layout of DESIGN.md.
#include "accel/philox.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace accel {
namespace {

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

// Random123 tests/kat_vectors, the "philox4x32 10" lines.
constexpr KnownAnswer kKnownAnswers[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// Also pinned at compile time: the engine is usable in constant expressions.
static_assert(philox4x32(kKnownAnswers[0].counter, kKnownAnswers[0].key) ==
              kKnownAnswers[0].expected);
static_assert(philox4x32(kKnownAnswers[2].counter, kKnownAnswers[2].key) ==
              kKnownAnswers[2].expected);

TEST(Philox, MatchesRandom123KnownAnswerVectors) {
  for (const KnownAnswer& kat : kKnownAnswers) {
    // Through a volatile copy, so the run-time path is exercised too.
    volatile std::uint32_t first = kat.counter[0];
    PhiloxCounter counter = kat.counter;
    counter[0] = first;
    EXPECT_EQ(philox4x32(counter, kat.key), kat.expected);
  }
}

TEST(Philox, OutputNIsWordNMod4OfTheBlockAtCounterNDiv4) {
  const std::uint64_t seed = 0x0123456789ABCDEFull;
  const std::uint64_t subsequence = 0xFEDCBA9876543210ull;
  // Positions whose block index needs both counter words.
  for (std::uint64_t n :
       {0ull, 1ull, 2ull, 3ull, 4ull, 4097ull, (1ull << 34) + 6, 0xFFFFFFFFFFFFFFFFull}) {
    const std::uint64_t block = n / 4;
    const PhiloxCounter words =
        philox4x32({static_cast<std::uint32_t>(block),
                    static_cast<std::uint32_t>(block >> 32), 0x76543210u, 0xFEDCBA98u},
                   {0x89ABCDEFu, 0x01234567u});
    EXPECT_EQ(philoxOutput(seed, subsequence, n), words[n % 4]) << "n = " << n;
  }
}

TEST(Philox, BlockIsTheFourConsecutiveOutputs) {
  const PhiloxCounter block = philoxBlock(42, 0, 1000);
  for (std::uint64_t w = 0; w < 4; ++w) {
    EXPECT_EQ(block[w], philoxOutput(42, 0, 4000 + w));
  }
}

TEST(Philox, SeedAndSubsequenceSelectDifferentStreams) {
  const PhiloxCounter base = philoxBlock(1, 0, 0);
  EXPECT_NE(base, philoxBlock(2, 0, 0));
  EXPECT_NE(base, philoxBlock(1u | (1ull << 32), 0, 0));  // the key's high word counts
  EXPECT_NE(base, philoxBlock(1, 1, 0));
  EXPECT_NE(base, philoxBlock(1, 1ull << 32, 0));
  EXPECT_NE(base, philoxBlock(1, 0, 1ull << 32));
}

}  // namespace
}  // namespace accel
