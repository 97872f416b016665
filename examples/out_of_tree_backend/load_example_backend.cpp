// Loads a backend plugin by path and checks that its device type answers
// (allocation, pointer lookup, memory statistics, generators):
//
//   load_example_backend <plugin.so> <device type>
//
// Exit status 0 when the plugin loaded and the backend works, 1 otherwise,
// with the loader's explanation on stderr.
#include <cstring>
#include <iostream>

#include "accel/accel.h"
#include "accel/plugin.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <plugin.so> <device type>\n";
    return 2;
  }
  try {
    accel::PluginRecord record = accel::loadBackend(argv[1]);
    std::cout << accel::describePluginRecord(record) << "\n";

    accel::DeviceType type = accel::deviceTypeFromName(argv[2]);
    accel::AcceleratorHooks& hooks = accel::getHooks(type);
    if (!hooks.isAvailable()) {
      std::cerr << "FAILED: '" << argv[2] << "' is not available after loading "
                << argv[1] << "\n";
      return 1;
    }
    accel::globalContext().lazyInitDevice(type);
    accel::DeviceIndex last = static_cast<accel::DeviceIndex>(hooks.deviceCount() - 1);
    accel::DataPtr memory = hooks.getDeviceAllocator(last).allocate(256);
    if (hooks.getDeviceFromPtr(static_cast<char*>(memory.get()) + 100) !=
        accel::Device(type, last)) {
      std::cerr << "FAILED: the pointer's device is not device " << int(last) << "\n";
      return 1;
    }
    const accel::MemoryStats stats = hooks.memoryStats(last);
    if (stats.allocated_bytes.current < 256) {
      std::cerr << "FAILED: the memory statistics of device " << int(last)
                << " do not count the 256 bytes\n";
      return 1;
    }
    accel::Generator generator =
        accel::globalContext().defaultGenerator(accel::Device(type, 0));
    std::cout << "OK: '" << argv[2] << "' has " << hooks.deviceCount()
              << " devices, capabilities: " << hooks.capabilities().str() << "; device "
              << int(last) << " has " << stats.reserved_bytes.current << " bytes reserved"
              << "; generator seed " << generator.currentSeed() << "; registered by "
              << accel::hooksOrigin(type) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "FAILED: " << e.what() << "\n";
    return 1;
  }
}
