// opencl_gemm: what a framework author does with the OpenCL backend, end to
// end. A CLBlast SGEMM (C = A * B, row-major) runs on an accelhooks stream's
// own cl_command_queue, on memory from the backend's caching allocator (SVM)
// filled by the backend's Philox fills, and the result is checked against a
// GEMM on the host, in double precision, of the same inputs.
//
//   opencl_gemm [M N K]      (default 257 190 311: sizes CLBlast must pad)
//
// Exit status: 0 when the result matches, 1 when it does not or something
// failed, 77 when there is no usable OpenCL device (ctest reports a skip).
//
// The one step that is not obvious: CLBlast takes cl_mem buffers and offsets,
// the backend hands out SVM pointers. OpenCL defines a buffer created with
// CL_MEM_USE_HOST_PTR over a pointer that clSVMAlloc returned as using that
// SVM memory itself, so accel::opencl::svmAllocation(ptr) says which
// clSVMAlloc allocation (an allocator segment) holds ptr and where; the
// buffer wraps the whole allocation and ptr becomes an offset.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <clblast.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "accel/stream_guard.h"

namespace {

constexpr int kSkipped = 77;  // ctest's SKIP_RETURN_CODE

// A cl_mem over the allocator segment that holds `ptr`, and ptr's offset in
// floats: what CLBlast takes. Owns the cl_mem (not the memory).
class SvmView {
 public:
  explicit SvmView(const void* ptr) {
    const accel::opencl::SvmAllocation a = accel::opencl::svmAllocation(ptr);
    cl_int status = CL_SUCCESS;
    buffer_ =
        clCreateBuffer(accel::opencl::nativeContext(a.device),
                       CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, a.bytes, a.base, &status);
    if (status != CL_SUCCESS) {
      throw std::runtime_error(
          "clCreateBuffer(CL_MEM_USE_HOST_PTR) over an SVM "
          "allocation failed: " +
          std::to_string(status));
    }
    offset_ = a.offset / sizeof(float);
  }
  SvmView(const SvmView&) = delete;
  SvmView& operator=(const SvmView&) = delete;
  ~SvmView() { clReleaseMemObject(buffer_); }

  [[nodiscard]] cl_mem buffer() const { return buffer_; }
  [[nodiscard]] std::size_t offset() const { return offset_; }

 private:
  cl_mem buffer_ = nullptr;
  std::size_t offset_ = 0;
};

// C = A * B on the host, in double, row-major.
std::vector<double> hostGemm(const std::vector<float>& a, const std::vector<float>& b,
                             std::size_t m, std::size_t n, std::size_t k) {
  std::vector<double> c(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += aip * b[p * n + j];
    }
  }
  return c;
}

std::size_t parseSize(const char* text) {
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || value == 0 || value > 8192) {
    throw std::invalid_argument(std::string("bad size '") + text +
                                "': give M N K as integers in [1, 8192]");
  }
  return value;
}

int run(int argc, char** argv) {
  std::size_t m = 257, n = 190, k = 311;
  if (argc == 4) {
    m = parseSize(argv[1]);
    n = parseSize(argv[2]);
    k = parseSize(argv[3]);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return 1;
  }

  accel::AcceleratorHooks& hooks = accel::opencl::registerBackend();
  if (!hooks.isAvailable()) {
    std::printf("opencl_gemm: skipped: no OpenCL device: %s\n",
                accel::opencl::availability().reason.c_str());
    return kSkipped;
  }
  const accel::opencl::DeviceInfo info = accel::opencl::deviceInfo(0);
  std::printf("opencl:0 = %s (%s)\n", info.name.c_str(), info.version.c_str());

  // A stream of our own, current for this scope: the allocator hands out
  // memory for it and everything below is enqueued on its queue.
  const accel::Stream stream = hooks.getNewStream(0);
  accel::StreamGuard guard(stream);
  accel::Allocator& allocator = hooks.getDeviceAllocator(0);
  accel::DataPtr a = allocator.allocate(m * k * sizeof(float));
  accel::DataPtr b = allocator.allocate(k * n * sizeof(float));
  accel::DataPtr c = allocator.allocate(m * n * sizeof(float));

  // Inputs from the backend's Philox fills, on the stream.
  accel::Generator generator =
      accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0), 2026);
  accel::fillUniform(stream, static_cast<float*>(a.get()), m * k, -1.0f, 1.0f, generator);
  accel::fillUniform(stream, static_cast<float*>(b.get()), k * n, -1.0f, 1.0f, generator);

  // CLBlast's indirect GEMM needs scratch memory; it comes from our
  // allocator too, rather than from a clCreateBuffer inside CLBlast.
  std::size_t temp_bytes = 0;
  cl_command_queue queue = accel::opencl::nativeQueue(stream);
  if (clblast::GemmTempBufferSize<float>(
          clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m,
          n, k, 0, k, 0, n, 0, n, &queue, temp_bytes) != clblast::StatusCode::kSuccess) {
    temp_bytes = 0;  // let CLBlast allocate it
  }
  accel::DataPtr temp = allocator.allocate(temp_bytes);

  {
    const SvmView va(a.get()), vb(b.get()), vc(c.get());
    std::optional<SvmView> vt;
    if (temp_bytes > 0) vt.emplace(temp.get());
    const clblast::StatusCode status = clblast::Gemm(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m,
        n, k, 1.0f, va.buffer(), va.offset(), k, vb.buffer(), vb.offset(), n, 0.0f,
        vc.buffer(), vc.offset(), n, &queue, nullptr, vt ? vt->buffer() : nullptr);
    if (status != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "opencl_gemm: clblast::Gemm failed with status %d\n",
                   static_cast<int>(status));
      return 1;
    }
    // The buffers may be released once the GEMM is done with them.
    hooks.synchronizeStream(stream);
  }

  // Read inputs and result back through the copies group (the stream is in
  // order: the copies see the fills and the GEMM).
  std::vector<float> ha(m * k), hb(k * n), hc(m * n);
  hooks.copyDeviceToHost(ha.data(), a.get(), ha.size() * sizeof(float), stream);
  hooks.copyDeviceToHost(hb.data(), b.get(), hb.size() * sizeof(float), stream);
  hooks.copyDeviceToHost(hc.data(), c.get(), hc.size() * sizeof(float), stream);
  hooks.synchronizeStream(stream);

  const std::vector<double> expected = hostGemm(ha, hb, m, n, k);
  double max_error = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    max_error = std::max(max_error, std::abs(expected[i] - double(hc[i])));
  }
  // Inputs in [-1, 1): the rounding error of a k-term float dot product
  // grows like sqrt(k) * 2^-24 in practice (1e-5 here), while a wrong element
  // is off by about 1; k * 2^-20 lies far from both (and NaN fails).
  const double tolerance = double(k) * std::ldexp(1.0, -20);
  std::printf(
      "SGEMM %zux%zux%zu on stream %lld of opencl:0: max |error| vs host "
      "double GEMM = %.3g (tolerance %.3g)\n",
      m, n, k, static_cast<long long>(stream.id), max_error, tolerance);
  if (!(max_error <= tolerance)) {
    std::printf("opencl_gemm: FAILED\n");
    return 1;
  }
  std::printf("opencl_gemm: OK\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opencl_gemm: %s\n", e.what());
    return 1;
  }
}
