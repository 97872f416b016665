#include "accel/openreg/kernel.h"

#include <memory>
#include <utility>

#include "runtime.h"

namespace accel::openreg {

std::span<std::byte> KernelContext::bytes(std::string_view name) const {
  for (const Binding& binding : buffers_) {
    if (binding.name == name) return binding.bytes;
  }
  std::string names;
  for (const Binding& binding : buffers_) {
    names += names.empty() ? "'" : ", '";
    names += binding.name + "'";
  }
  throw InvalidArgument(accel::detail::concat(
      "kernel '", kernel_, "' has no buffer '", name, "'; it was launched with ",
      names.empty() ? std::string("no buffers") : names,
      ": name the buffer in launchKernel's list"));
}

void launchKernel(Stream stream, std::string_view name, std::vector<KernelBuffer> buffers,
                  KernelFunction body) {
  detail::Runtime& rt = detail::readyRuntime("launchKernel");
  ACCEL_CHECK(static_cast<bool>(body), InvalidArgument, "launchKernel('", name,
              "'): the kernel body is empty");
  detail::StreamQueue& queue = rt.queue(stream, "launchKernel");
  detail::DeviceState& device = rt.device(stream.device.index(), "launchKernel");
  detail::Operation operation;
  operation.name = accel::detail::concat("kernel '", name, "'");
  std::vector<KernelContext::Binding> bindings;
  bindings.reserve(buffers.size());
  operation.buffers.reserve(buffers.size());
  for (KernelBuffer& buffer : buffers) {
    for (const KernelContext::Binding& earlier : bindings) {
      ACCEL_CHECK(earlier.name != buffer.name, InvalidArgument, "launchKernel('", name,
                  "'): two buffers are named '", buffer.name,
                  "'; give each its own name");
    }
    operation.buffers.push_back(rt.resolveOn(
        device, buffer.data, buffer.bytes,
        accel::detail::concat("launchKernel('", name, "'), buffer '", buffer.name, "'")));
    bindings.push_back(
        {std::move(buffer.name),
         std::span<std::byte>(static_cast<std::byte*>(buffer.data), buffer.bytes)});
  }
  device.faults.beginOperation("launchKernel");
  auto context = std::make_shared<const KernelContext>(name, stream, std::move(bindings));
  operation.body = [context = std::move(context), body = std::move(body)] {
    body(*context);
  };
  queue.enqueue(std::move(operation));
}

}  // namespace accel::openreg
