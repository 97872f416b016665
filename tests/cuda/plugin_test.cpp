// libaccel_cuda.so loaded as a plugin, as a framework would: through
// accel::loadBackend, in a program that does not link it.
//
// Without a GPU (CI, and every machine this project is built on so far) the
// plugin must load, say it is unavailable and why, create nothing and throw
// nothing from its probes, and refuse every hook that needs a device with
// NotAvailable naming the reason. On a machine with a GPU these tests skip:
// the GPU tests (gpu_test.cpp) take over.
#include <elf.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/hook_catalogue.h"
#include "accel/plugin.h"

namespace {

using accel::DeviceType;

accel::AcceleratorHooks& loadCuda() {
  static const accel::PluginRecord record = accel::loadBackend(ACCEL_CUDA_PLUGIN_PATH);
  (void)record;
  return accel::getHooks(DeviceType::CUDA);
}

// The reason the plugin reports, from the error every device hook raises.
std::string reasonFromInit(accel::AcceleratorHooks& hooks) {
  try {
    (void)hooks.getCurrentDevice();
  } catch (const accel::NotAvailable& e) {
    return e.what();
  }
  return {};
}

class CudaWithoutGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    hooks_ = &loadCuda();
    if (hooks_->isAvailable()) {
      GTEST_SKIP() << "a CUDA device is available here (" << hooks_->deviceCount()
                   << "); the no-GPU behaviour is not observable, see the GPU tests";
    }
  }
  accel::AcceleratorHooks* hooks_ = nullptr;
};

// The names the plugin's dynamic symbol table defines (its exports), read
// from the ELF file itself.
std::vector<std::string> definedDynamicSymbols(const char* path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  std::vector<std::string> names;
  if (bytes.size() < sizeof(Elf64_Ehdr)) return names;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  const auto* sections =
      reinterpret_cast<const Elf64_Shdr*>(bytes.data() + header->e_shoff);
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const char* strings = bytes.data() + sections[sections[i].sh_link].sh_offset;
    const auto* symbols =
        reinterpret_cast<const Elf64_Sym*>(bytes.data() + sections[i].sh_offset);
    const std::size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
    for (std::size_t s = 0; s < count; ++s) {
      if (symbols[s].st_shndx != SHN_UNDEF)
        names.emplace_back(strings + symbols[s].st_name);
    }
  }
  return names;
}

// The plugin exports its entry and its extension interface (the functions
// the program-side API, the accel_cuda library, calls), nothing else: the
// public C++ API (accel::cuda::registerBackend, the fills, the handle pools)
// is compiled into the programs that use it.
TEST(CudaPlugin, ExportsOnlyItsEntryAndExtension) {
  const std::vector<std::string> exported = definedDynamicSymbols(ACCEL_CUDA_PLUGIN_PATH);
  ASSERT_FALSE(exported.empty())
      << "no dynamic symbols read from " << ACCEL_CUDA_PLUGIN_PATH;
  bool extension = false;
  for (const std::string& name : exported) {
    // Nothing of accel::cuda::detail (the kernel launchers included: .cu
    // sources need CUDA's own visibility setting).
    EXPECT_EQ(name.find("accel4cuda6detail"), std::string::npos)
        << name << " is exported";
    EXPECT_NE(name, "_ZN5accel4cuda15registerBackendEv")
        << "the public API belongs to the accel_cuda library, not the plugin";
    extension = extension || name.rfind("_ZN5accel4cuda9extension", 0) == 0;
  }
  EXPECT_TRUE(extension) << "the extension interface (accel::cuda::extension) is not "
                            "exported";
}

TEST(CudaPlugin, LoadsAndRegistersTheCudaType) {
  const accel::PluginRecord record = accel::loadBackend(ACCEL_CUDA_PLUGIN_PATH);
  EXPECT_TRUE(accel::pluginStatusIsSuccess(record.status))
      << accel::describePluginRecord(record);
  EXPECT_EQ(record.plugin_name, "cuda");
  auto& hooks = loadCuda();
  EXPECT_TRUE(hooks.isBuilt());
  EXPECT_EQ(hooks.deviceType(), DeviceType::CUDA);
  EXPECT_EQ(hooks.name(), "cuda");
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Streams));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Events));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Graphs));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Device));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::Memory));
  EXPECT_TRUE(hooks.supports(accel::HookGroup::MemoryHistory));
}

TEST_F(CudaWithoutGpu, ProbesAnswerNoDevicesWithoutThrowing) {
  EXPECT_FALSE(hooks_->isAvailable());
  EXPECT_EQ(hooks_->deviceCount(), 0);
  EXPECT_FALSE(hooks_->hasPrimaryContext(0));
  int local = 0;
  EXPECT_FALSE(hooks_->isPinnedPtr(&local));
  EXPECT_FALSE(hooks_->isPinnedPtr(nullptr));
}

TEST_F(CudaWithoutGpu, DeviceHooksNameOneOfTheDocumentedReasons) {
  const std::string why = reasonFromInit(*hooks_);
  ASSERT_FALSE(why.empty()) << "the current device was read without devices";
  EXPECT_NE(why.find("'cuda' is not available"), std::string::npos) << why;
  // One of the documented reasons (docs/cuda.md).
  const bool known =
      why.find("no NVIDIA driver: libcuda.so.1 not found") != std::string::npos ||
      why.find("driver present, 0 devices") != std::string::npos ||
      why.find("driver too old for CUDA") != std::string::npos ||
      why.find("driver present, but") != std::string::npos;
  EXPECT_TRUE(known) << why;
  // A second attempt says the same: the probe runs once.
  EXPECT_EQ(reasonFromInit(*hooks_), why);
}

// Initialising succeeds without devices, so showConfig answers: with the reason.
TEST_F(CudaWithoutGpu, ShowConfigStatesWhyItIsNotAvailable) {
  const std::string config = hooks_->showConfig();
  EXPECT_NE(config.find("not available: "), std::string::npos) << config;
  EXPECT_NE(config.find("CUDA runtime 13"), std::string::npos) << config;
}

// Every hook that needs a device: NotAvailable, with the reason in the message.
TEST_F(CudaWithoutGpu, DeviceHooksThrowNotAvailableWithTheReason) {
  const std::string why = reasonFromInit(*hooks_);
  ASSERT_FALSE(why.empty());
  const std::string reasonText = why.substr(why.find(": ") + 2, 30);
  auto expectNotAvailable = [&](accel::HookId hook, auto&& call) {
    const std::string_view what = accel::hookInfo(hook).name;
    try {
      call();
      ADD_FAILURE() << what << " did not throw";
    } catch (const accel::NotAvailable& e) {
      EXPECT_NE(std::string(e.what()).find(reasonText), std::string::npos)
          << what << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " threw something else than NotAvailable: " << e.what();
    }
  };
  const accel::Stream stream(accel::Device(DeviceType::CUDA, 0), 0);
  auto& h = *hooks_;
  expectNotAvailable(accel::HookId::getCurrentDevice,
                     [&] { (void)h.getCurrentDevice(); });
  expectNotAvailable(accel::HookId::setCurrentDevice, [&] { h.setCurrentDevice(0); });
  expectNotAvailable(accel::HookId::exchangeDevice, [&] { (void)h.exchangeDevice(0); });
  expectNotAvailable(accel::HookId::getDefaultGenerator,
                     [&] { (void)h.getDefaultGenerator(0); });
  expectNotAvailable(accel::HookId::getNewGenerator, [&] { (void)h.getNewGenerator(0); });
  int local = 0;
  expectNotAvailable(accel::HookId::getDeviceFromPtr,
                     [&] { (void)h.getDeviceFromPtr(&local); });
  // The pinned cache exists without devices; its first segment is refused.
  expectNotAvailable(accel::HookId::getPinnedMemoryAllocator,
                     [&] { (void)h.getPinnedMemoryAllocator().allocate(64); });
  expectNotAvailable(accel::HookId::getDeviceAllocator,
                     [&] { (void)h.getDeviceAllocator(0); });
  expectNotAvailable(accel::HookId::deviceSynchronize, [&] { h.deviceSynchronize(0); });
  expectNotAvailable(accel::HookId::getDeviceProperties,
                     [&] { (void)h.getDeviceProperties(0); });
  expectNotAvailable(accel::HookId::getCurrentStream,
                     [&] { (void)h.getCurrentStream(0); });
  expectNotAvailable(accel::HookId::getNewStream, [&] { (void)h.getNewStream(0); });
  expectNotAvailable(accel::HookId::streamPriorityRange,
                     [&] { (void)h.streamPriorityRange(); });
  expectNotAvailable(accel::HookId::synchronizeStream,
                     [&] { h.synchronizeStream(stream); });
  expectNotAvailable(accel::HookId::createEvent, [&] { (void)h.createEvent(0); });
  expectNotAvailable(accel::HookId::graphCreate, [&] { (void)h.graphCreate(); });
  expectNotAvailable(accel::HookId::memoryStats, [&] { (void)h.memoryStats(0); });
  expectNotAvailable(accel::HookId::memorySnapshot, [&] { (void)h.memorySnapshot(); });
  // destroyEvent never throws, with or without devices; without devices the
  // caches hold nothing, so emptyCache has nothing to do.
  EXPECT_NO_THROW(h.destroyEvent(1));
  EXPECT_NO_THROW(h.emptyCache());
}

// The hooks contract: initialising succeeds without devices; deviceCount()
// says 0 and the device hooks say why.
TEST_F(CudaWithoutGpu, LazyInitSucceedsWithoutDevices) {
  EXPECT_NO_THROW(accel::globalContext().lazyInitDevice(DeviceType::CUDA));
  EXPECT_TRUE(accel::globalContext().isInitialized(DeviceType::CUDA));
  EXPECT_EQ(hooks_->deviceCount(), 0);
  EXPECT_FALSE(reasonFromInit(*hooks_).empty());
}

}  // namespace
