#include "accel/kit/fill_generator.h"

#include <utility>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/hooks_table.h"

namespace accel::kit {

Generator fillGenerator(std::string_view api, Stream stream, Generator generator) {
  const DeviceType type = stream.device.type();
  if (!generator.defined()) {
    return getHooks(type).getDefaultGenerator(stream.device.index());
  }
  ACCEL_CHECK(generator.device().type() == type, InvalidArgument, api,
              "(): the generator is on ", generator.device(), "; a fill on ",
              stream.device, " needs a generator of ", type, " (",
              hookInfo(HookId::getDefaultGenerator).name, " or ",
              hookInfo(HookId::getNewGenerator).name, " of ", type,
              "), or none for the device's default");
  return generator;
}

}  // namespace accel::kit
