#include "accel/stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "accel/error.h"

namespace accel {
namespace {

using ::testing::HasSubstr;

// Edge values of the 64-bit id space: both ends, around 0, around the 32-bit
// limits, and every power of two with its negation and neighbours.
std::vector<StreamId> edgeStreamIds() {
  constexpr StreamId kMin = std::numeric_limits<StreamId>::min();
  constexpr StreamId kMax = std::numeric_limits<StreamId>::max();
  std::vector<StreamId> ids = {kMin,
                               kMin + 1,
                               kMax - 1,
                               kMax,
                               -1,
                               0,
                               1,
                               INT32_MIN,
                               INT32_MAX,
                               std::int64_t{INT32_MIN} - 1,
                               std::int64_t{INT32_MAX} + 1,
                               std::int64_t{UINT32_MAX}};
  for (int bit = 0; bit < 63; ++bit) {
    StreamId p = StreamId{1} << bit;
    for (StreamId v : {p, p - 1, p + 1, -p, -p - 1, -p + 1}) ids.push_back(v);
  }
  return ids;
}

TEST(StreamTest, DefaultStreamIdIsZero) {
  Stream stream;
  EXPECT_EQ(stream.id, kDefaultStreamId);
  EXPECT_EQ(kDefaultStreamId, 0);
}

TEST(StreamTest, Pack3HoldsIdIndexAndType) {
  Stream stream(Device(DeviceType::CUDA, 3), -42);
  StreamData3 data = stream.pack3();
  EXPECT_EQ(data.stream_id, -42);
  EXPECT_EQ(data.device_index, 3);
  EXPECT_EQ(data.device_type, toIndex(DeviceType::CUDA));
}

TEST(StreamTest, Pack3RoundTripsOverTheWholeIdRangeAndEveryDeviceIndex) {
  std::vector<DeviceType> types = {DeviceType::CPU, DeviceType::CUDA, DeviceType::HPU,
                                   registerDeviceType("stream_rt")};
  std::vector<StreamId> ids = edgeStreamIds();
  std::size_t checked = 0;
  for (DeviceType type : types) {
    for (int index = kCurrentDevice; index < kMaxDevicesPerType; ++index) {
      for (StreamId id : ids) {
        Stream stream(Device(type, static_cast<DeviceIndex>(index)), id);
        StreamData3 packed = stream.pack3();
        Stream back = Stream::unpack3(packed);
        ASSERT_EQ(back, stream) << stream;
        ASSERT_EQ(
            Stream::unpack3(packed.stream_id, packed.device_index, packed.device_type),
            stream);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, types.size() * (kMaxDevicesPerType + 1) * ids.size());
}

TEST(StreamTest, Unpack3RejectsUnknownDeviceType) {
  for (std::int64_t type : {std::int64_t{-1}, std::int64_t{kMaxDeviceTypes},
                            std::int64_t{kMaxDeviceTypes - 1}, std::int64_t{256},
                            std::numeric_limits<std::int64_t>::min()}) {
    try {
      (void)Stream::unpack3(0, 0, type);
      ADD_FAILURE() << "accepted device type " << type;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.message(), HasSubstr("is not a registered device type"));
    }
  }
}

TEST(StreamTest, Unpack3RejectsDeviceIndexOutsideMinusOneTo127) {
  for (std::int64_t index :
       {std::int64_t{-2}, std::int64_t{128}, std::int64_t{255}, std::int64_t{-129},
        std::numeric_limits<std::int64_t>::max()}) {
    try {
      (void)Stream::unpack3(0, index, toIndex(DeviceType::CUDA));
      ADD_FAILURE() << "accepted device index " << index;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.message(), HasSubstr("out of range [-1, 128)"));
    }
  }
}

TEST(StreamTest, PrintsIdAndDevice) {
  std::ostringstream out;
  out << Stream(Device(DeviceType::CUDA, 1), 7);
  EXPECT_EQ(out.str(), "stream 7 on cuda:1");
}

TEST(StreamTest, EqualityAndHashSeeAllFields) {
  Stream a(Device(DeviceType::CUDA, 0), 1);
  EXPECT_NE(a, Stream(Device(DeviceType::CUDA, 0), 2));
  EXPECT_NE(a, Stream(Device(DeviceType::CUDA, 1), 1));
  EXPECT_NE(a, Stream(Device(DeviceType::HIP, 0), 1));
  std::unordered_set<Stream> streams;
  for (int index = 0; index < 8; ++index) {
    for (StreamId id = 0; id < 8; ++id) {
      streams.insert(
          Stream(Device(DeviceType::CUDA, static_cast<DeviceIndex>(index)), id));
    }
  }
  EXPECT_EQ(streams.size(), 64u);
}

}  // namespace
}  // namespace accel
