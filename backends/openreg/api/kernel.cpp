// openreg's kernels (accel/openreg/kernel.h): the plugin checks the buffers
// against the core's blocks and runs the body on the stream's worker; the
// body sees the buffers through a KernelContext made here.
#include "accel/openreg/kernel.h"

#include <memory>
#include <utility>

#include "plugin_calls.h"

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
  throw InvalidArgument(detail::concat("kernel '", kernel_, "' has no buffer '", name,
                                       "'; it was launched with ",
                                       names.empty() ? std::string("no buffers") : names,
                                       ": name the buffer in launchKernel's list"));
}

void launchKernel(Stream stream, std::string_view name, std::vector<KernelBuffer> buffers,
                  KernelFunction body) {
  api::ensureInitialized();
  const accel_stream s = api::pluginStream(stream, "launchKernel");
  std::vector<extension::KernelBuffer> checked;
  std::vector<KernelContext::Binding> bindings;
  checked.reserve(buffers.size());
  bindings.reserve(buffers.size());
  for (KernelBuffer& buffer : buffers) {
    checked.push_back({buffer.name, buffer.data, buffer.bytes});
    bindings.push_back(
        {std::move(buffer.name),
         std::span<std::byte>(static_cast<std::byte*>(buffer.data), buffer.bytes)});
  }
  std::function<void()> run;
  if (body) {
    auto context =
        std::make_shared<const KernelContext>(name, stream, std::move(bindings));
    run = [context = std::move(context), body = std::move(body)] { body(*context); };
  }
  api::check(extension::launchKernel(s, name, std::move(checked), std::move(run)),
             "launchKernel");
}

}  // namespace accel::openreg
