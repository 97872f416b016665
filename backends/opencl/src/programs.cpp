#include "programs.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "devices.h"
#include "loader.h"
#include "opencl_error.h"

namespace accel::opencl::detail {
namespace {

struct DevicePrograms {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, cl_program> built;
};

DevicePrograms& programsOf(DeviceIndex device) {
  static std::array<DevicePrograms, kMaxDevices>* const all =
      new std::array<DevicePrograms, kMaxDevices>();  // never destroyed
  return (*all)[device];
}

std::string buildLog(cl_program program, cl_device_id device) {
  const Loader& l = loader();
  std::size_t size = 0;
  if (l.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  if (l.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(),
                              nullptr) != CL_SUCCESS) {
    return "(no build log)";
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

cl_program programFor(DeviceIndex device, std::string_view source,
                      std::string_view options) {
  DeviceRecord& record = deviceRecord(device);
  const cl_context context = deviceContext(device);
  DevicePrograms& programs = programsOf(device);
  std::lock_guard lock(programs.mutex);
  auto key = std::make_pair(std::string(source), std::string(options));
  if (auto found = programs.built.find(key); found != programs.built.end()) {
    return found->second;
  }
  const Loader& l = loader();
  const char* text = source.data();
  const std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  cl_program program = l.clCreateProgramWithSource(context, 1, &text, &length, &status);
  checkCl(status, "clCreateProgramWithSource", device);
  const std::string build_options(options);
  status = l.clBuildProgram(program, 1, &record.device, build_options.c_str(), nullptr,
                            nullptr);
  if (status != CL_SUCCESS) {
    std::string log = buildLog(program, record.device);
    (void)l.clReleaseProgram(program);
    throw DeviceError("clBuildProgram failed on " + deviceLabel(device) + ": " +
                      errorName(status) + " (options: '" + build_options +
                      "'); build log:\n" + log);
  }
  try {
    programs.built.emplace(std::move(key), program);
  } catch (...) {
    (void)l.clReleaseProgram(program);
    throw;
  }
  return program;
}

int builtProgramCount(DeviceIndex device) noexcept {
  if (device < 0 || static_cast<std::size_t>(device) >= std::size_t{kMaxDevices})
    return 0;
  DevicePrograms& programs = programsOf(device);
  std::lock_guard lock(programs.mutex);
  return static_cast<int>(programs.built.size());
}

}  // namespace accel::opencl::detail
