// The README's example: how a framework uses accelhooks without knowing which
// backends exist. Run it with ACCEL_PLUGIN_PATH pointing at a folder of
// plugins (the build tree's lib/ holds libaccel_openreg.so).
#include <accel/accel.h>
#include <accel/plugin.h>

#include <cstdio>

int main() {
  accel::autoloadPlugins();  // ACCEL_PLUGINS, ACCEL_PLUGIN_PATH
  auto& ctx = accel::globalContext();
  auto type = ctx.currentAccelerator();  // e.g. openreg, cuda
  if (!type) return std::puts("no accelerator: CPU only"), 0;
  ctx.lazyInitDevice(*type);  // once per process, thread-safe
  ctx.manualSeed(42);         // every device's default generator

  accel::AcceleratorHooks& hooks = accel::getHooks(*type);
  for (int i = 0; i < hooks.deviceCount(); ++i) {
    accel::DeviceGuard guard(accel::Device(*type, i));  // restored at scope exit
    accel::DataPtr buffer = hooks.getDeviceAllocator().allocate(1 << 20);
    std::printf("%s holds %p\n", guard.currentDevice().str().c_str(), buffer.get());
  }
  accel::DataPtr host = hooks.getPinnedMemoryAllocator().allocate(4096);
  std::printf("pinned: %s\n",
              ctx.isPinnedPtr(host.get()) ? "yes" : "no");  // never throws
}
