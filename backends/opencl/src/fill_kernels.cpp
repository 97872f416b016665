#include "fill_kernels.h"

#include <array>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "accel/philox.h"
#include "accel/random_fill_elements.h"
#include "devices.h"
#include "fill_cl_source.h"
#include "fill_lanes_cl_source.h"
#include "loader.h"
#include "opencl_error.h"
#include "programs.h"

namespace accel::opencl::detail {
namespace {

constexpr const char* kKernelNames[] = {
    "fill_bits32",     "fill_bits64",     "fill_uniform_f32",  "fill_uniform_f64",
    "fill_normal_f32", "fill_normal_f64", "fill_bernoulli_u8", "fill_bernoulli_f32"};
static_assert(std::size(kKernelNames) == static_cast<std::size_t>(FillKernel::kCount));

bool isDoubleKernel(int k) {
  return k == static_cast<int>(FillKernel::UniformDouble) ||
         k == static_cast<int>(FillKernel::NormalDouble);
}

void define(std::string& out, const char* name, float value) {
  char text[96];
  std::snprintf(text, sizeof text, "#define %s %af\n", name, static_cast<double>(value));
  out += text;
}
void define(std::string& out, const char* name, double value) {
  char text[96];
  std::snprintf(text, sizeof text, "#define %s %a\n", name, value);
  out += text;
}
template <typename T, std::size_t N>
void defineAll(std::string& out, const char* prefix, const T (&values)[N]) {
  for (std::size_t k = 0; k < N; ++k) {
    define(out, (std::string(prefix) + std::to_string(k)).c_str(), values[k]);
  }
}

// Makes and releases one set of the device's kernels.
struct KernelSets {
  static FillKernels* create(DeviceIndex device) {
    const bool fp64 = deviceRecord(device).info.fp64;
    const cl_program program =
        programFor(device, fillProgramSource(), fillProgramOptions(fp64));
    auto kernels = std::make_unique<FillKernels>();
    kernels->fp64 = fp64;
    for (int k = 0; k < static_cast<int>(FillKernel::kCount); ++k) {
      if (isDoubleKernel(k) && !fp64) continue;
      const std::string name = kKernelNames[k];
      for (auto [slot, entry] : {std::pair{&kernels->kernels[k], name},
                                 std::pair{&kernels->captured[k], name + "_captured"}}) {
        cl_int status = CL_SUCCESS;
        *slot = loader().clCreateKernel(program, entry.c_str(), &status);
        if (status != CL_SUCCESS) {
          *slot = nullptr;
          destroy(kernels.release());
          checkCl(status, "clCreateKernel(" + entry + ")", device);
        }
      }
    }
    return kernels.release();
  }

  static void destroy(FillKernels* handle) noexcept {
    for (cl_kernel kernel : handle->kernels) {
      if (kernel != nullptr) (void)loader().clReleaseKernel(kernel);
    }
    for (cl_kernel kernel : handle->captured) {
      if (kernel != nullptr) (void)loader().clReleaseKernel(kernel);
    }
    delete handle;
  }
};

}  // namespace

std::string fillProgramSource() {
  std::string prelude = "// Constants written by fill_kernels.cpp\n";
  prelude += "#define ACCEL_PHILOX_ROUNDS " + std::to_string(kPhiloxRounds) + "\n";
  prelude += "#define ACCEL_PHILOX_M0 " + std::to_string(kPhiloxMultiplier0) + "u\n";
  prelude += "#define ACCEL_PHILOX_M1 " + std::to_string(kPhiloxMultiplier1) + "u\n";
  prelude += "#define ACCEL_PHILOX_W0 " + std::to_string(kPhiloxWeyl0) + "u\n";
  prelude += "#define ACCEL_PHILOX_W1 " + std::to_string(kPhiloxWeyl1) + "u\n";
  constexpr accel::detail::FloatNormalConstants f = accel::detail::floatNormalConstants();
  define(prelude, "ACCEL_SQRT2_F", f.sqrt2);
  define(prelude, "ACCEL_LN2_F", f.ln2);
  defineAll(prelude, "ACCEL_LOG_F", f.log);
  defineAll(prelude, "ACCEL_SIN_F", f.sin);
  defineAll(prelude, "ACCEL_COS_F", f.cos);
  constexpr accel::detail::DoubleNormalConstants d =
      accel::detail::doubleNormalConstants();
  define(prelude, "ACCEL_SQRT2_D", d.sqrt2);
  define(prelude, "ACCEL_LN2_D", d.ln2);
  defineAll(prelude, "ACCEL_LOG_D", d.log);
  defineAll(prelude, "ACCEL_SIN_D", d.sin);
  defineAll(prelude, "ACCEL_COS_D", d.cos);
  return prelude + kFillSource + kFillLanesSource;
}

std::string fillProgramOptions(bool fp64) {
  // Correctly rounded float division and sqrt (OpenCL C otherwise allows
  // 2.5 and 3 ulp); denormals kept; no fast-math options.
  std::string options = "-cl-fp32-correctly-rounded-divide-sqrt";
  if (fp64) options += " -DACCEL_HAVE_FP64";
  return options;
}

namespace {

// The sets of a device not borrowed now. Never destroyed: kernels may be
// borrowed during static destruction.
struct FreeSets {
  std::mutex mutex;
  std::vector<FillKernels*> sets;
};

FreeSets& freeSets(DeviceIndex device) {
  static auto* const all = new std::array<FreeSets, kMaxDevices>();
  return (*all)[static_cast<std::size_t>(device)];
}

}  // namespace

BorrowedFillKernels::BorrowedFillKernels(DeviceIndex device)
    : device_(device), kernels_(nullptr) {
  FreeSets& free = freeSets(device);
  {
    std::lock_guard lock(free.mutex);
    if (!free.sets.empty()) {
      kernels_ = free.sets.back();
      free.sets.pop_back();
      return;
    }
  }
  kernels_ = KernelSets::create(device);
}

BorrowedFillKernels::~BorrowedFillKernels() {
  FreeSets& free = freeSets(device_);
  try {
    std::lock_guard lock(free.mutex);
    free.sets.push_back(kernels_);
  } catch (...) {
    KernelSets::destroy(kernels_);  // no room to keep it
  }
}

}  // namespace accel::opencl::detail
