#include "accel/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "accel/error.h"

namespace accel {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of the InvalidArgument that parsing `text` throws.
std::string parseError(std::string_view text) {
  try {
    Device device = Device::parse(text);
    ADD_FAILURE() << "'" << text << "' parsed as " << device;
  } catch (const InvalidArgument& e) {
    return e.message();
  }
  return {};
}

// Checks that the parse error of `text` quotes the text and says `why`.
void expectParseErrorQuoting(std::string_view text, const std::string& why) {
  EXPECT_THAT(parseError(text),
              AllOf(HasSubstr("'" + std::string(text) + "'"), HasSubstr(why)));
}

TEST(DeviceTest, DefaultIsCurrentCpu) {
  Device device;
  EXPECT_EQ(device.type(), DeviceType::CPU);
  EXPECT_EQ(device.index(), kCurrentDevice);
  EXPECT_FALSE(device.hasIndex());
  EXPECT_TRUE(device.isCpu());
}

TEST(DeviceTest, ParsesTypeAlone) {
  Device device = Device::parse("cuda");
  EXPECT_EQ(device, Device(DeviceType::CUDA, kCurrentDevice));
  EXPECT_EQ(device.str(), "cuda");
}

TEST(DeviceTest, ParseAndPrintRoundTripForEveryIndex) {
  DeviceType runtime = registerDeviceType("openreg");
  for (DeviceType type : {DeviceType::CPU, DeviceType::CUDA, DeviceType::HPU, runtime}) {
    for (int i = 0; i < kMaxDevicesPerType; ++i) {
      Device device(type, static_cast<DeviceIndex>(i));
      std::string text = std::string(deviceTypeName(type)) + ":" + std::to_string(i);
      EXPECT_EQ(device.str(), text);
      EXPECT_EQ(Device::parse(text), device);
    }
  }
  EXPECT_EQ(Device::parse("openreg:1"), Device(runtime, 1));
}

TEST(DeviceTest, StreamsLikeStr) {
  std::ostringstream out;
  out << Device(DeviceType::XPU, 3) << ' ' << Device(DeviceType::MPS);
  EXPECT_EQ(out.str(), "xpu:3 mps");
}

TEST(DeviceTest, RejectsNegativeIndex) {
  registerDeviceType("openreg");  // so that the index, not the type, is what is wrong
  expectParseErrorQuoting("openreg:-2", "negative");
}

TEST(DeviceTest, RejectsNonNumericIndex) {
  expectParseErrorQuoting("cuda:abc", "not a decimal number");
}

TEST(DeviceTest, RejectsMissingType) {
  EXPECT_THAT(parseError(":1"), HasSubstr("device type before ':' is missing"));
}

TEST(DeviceTest, RejectsEmptyString) {
  EXPECT_THAT(parseError(""), HasSubstr("it is empty"));
}

TEST(DeviceTest, RejectsUnknownTypeListingKnownOnes) {
  expectParseErrorQuoting("nosuch:0", "unknown device type 'nosuch'");
  EXPECT_THAT(parseError("nosuch:0"), HasSubstr("cuda"));
}

TEST(DeviceTest, RejectsIndexAtTheMaximum) {
  expectParseErrorQuoting("cuda:128", "out of range [0, 128)");
  EXPECT_THAT(parseError("cuda:99999999999999999999"), HasSubstr("out of range"));
}

TEST(DeviceTest, RejectsWhiteSpace) {
  EXPECT_THAT(parseError(" cuda:0"), HasSubstr("white space"));
  EXPECT_THAT(parseError("cuda:0 "), HasSubstr("white space"));
  EXPECT_THAT(parseError("cuda: 0"), HasSubstr("white space"));
}

TEST(DeviceTest, RejectsUpperCaseWithLowerCaseHint) {
  std::string message = parseError("CUDA:0");
  EXPECT_THAT(message, HasSubstr("did you mean 'cuda:0'"));
  EXPECT_THAT(parseError("Cuda"), HasSubstr("did you mean 'cuda'"));
}

TEST(DeviceTest, RejectsOtherMalformedText) {
  EXPECT_THAT(parseError("cuda:"), HasSubstr("index after ':' is missing"));
  EXPECT_THAT(parseError("cuda:+1"), HasSubstr("not a decimal number"));
  EXPECT_THAT(parseError("cuda:0:1"), HasSubstr("not a decimal number"));
  EXPECT_THAT(parseError("cuda:1x"), HasSubstr("not a decimal number"));
}

TEST(DeviceTest, EveryParseErrorShowsTheExpectedForm) {
  for (std::string_view text : {"openreg:-2", "cuda:abc", ":1", "", "nosuch:0",
                                "cuda:128", " cuda:0", "CUDA:0"}) {
    EXPECT_THAT(parseError(text), HasSubstr("Expected 'type' or 'type:index'")) << text;
  }
}

TEST(DeviceTest, ConstructorRejectsIndexBelowMinusOne) {
  EXPECT_THROW(Device(DeviceType::CUDA, -2), InvalidArgument);
  EXPECT_NO_THROW(Device(DeviceType::CUDA, -1));
}

TEST(DeviceTest, HashTellsDevicesApart) {
  std::unordered_set<Device> devices;
  for (DeviceType type : {DeviceType::CPU, DeviceType::CUDA, DeviceType::HIP}) {
    for (int i = -1; i < kMaxDevicesPerType; ++i) {
      devices.insert(Device(type, static_cast<DeviceIndex>(i)));
    }
  }
  EXPECT_EQ(devices.size(), 3u * (kMaxDevicesPerType + 1));
  std::hash<Device> hash;
  EXPECT_NE(hash(Device(DeviceType::CUDA, 0)), hash(Device(DeviceType::CUDA, 1)));
  EXPECT_NE(hash(Device(DeviceType::CUDA, 0)), hash(Device(DeviceType::HIP, 0)));
}

}  // namespace
}  // namespace accel
