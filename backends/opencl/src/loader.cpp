#include "loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>

#include "accel/adapter/fork_safe_lazy.h"
#include "accel/kit/library_file.h"
#include "icd_vendors.h"

namespace accel::opencl::detail {
namespace {

constexpr const char* kLoaderLibrary = "libOpenCL.so.1";

void open(Loader& l) {
  const char* configured = std::getenv("ACCEL_OPENCL_LIBRARY");
  l.library = configured != nullptr && *configured != '\0' ? configured : kLoaderLibrary;
  // Nothing is opened that could block or kill the process: the loader
  // library itself (a path, or the file dlopen finds for a bare name), then
  // what the loader will read and open.
  if (std::string problem = kit::libraryFileProblem(l.library); !problem.empty()) {
    l.reason =
        "the OpenCL loader cannot be loaded safely: " + problem +
        (configured != nullptr && *configured != '\0' ? " (ACCEL_OPENCL_LIBRARY)" : "");
    return;
  }
  if (std::string problem = icdConfigurationProblem(); !problem.empty()) {
    l.reason = "OpenCL is not used: " + problem;
    return;
  }
  // RTLD_LOCAL: the symbols stay ours; a framework that links libOpenCL
  // itself gets the same library (dlopen of a loaded soname shares it).
  void* library = dlopen(l.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    const std::string why = error != nullptr ? error : "dlopen failed";
    // A file that is there but not a library (empty, text, an executable)
    // is not a missing loader: installing one would not help.
    const std::string found = kit::libraryFileDlopenFinds(l.library);
    struct stat st {};
    if (!found.empty() && ::stat(found.c_str(), &st) == 0) {
      l.reason = "the OpenCL loader " + found + " is not a loadable library (" + why +
                 ")" +
                 (configured != nullptr && *configured != '\0'
                      ? "; point ACCEL_OPENCL_LIBRARY at an OpenCL ICD loader "
                        "(libOpenCL.so.1), or unset it"
                      : "; reinstall the ICD loader (Debian: ocl-icd-libopencl1)");
      return;
    }
    l.reason = "no OpenCL loader: " + l.library + " not found (" + why +
               "); install an ICD loader and a driver (Debian: ocl-icd-libopencl1 and "
               "pocl-opencl-icd, or your GPU vendor's OpenCL package)";
    return;
  }
  std::string missing;
  const auto resolve = [&](const char* name, auto& fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(library, name));
    if (fn != nullptr) return;
    if (!missing.empty()) missing += ", ";
    missing += name;
  };
#define ACCEL_OPENCL_RESOLVE(name) resolve(#name, l.name);
  ACCEL_OPENCL_FUNCTIONS(ACCEL_OPENCL_RESOLVE)
#undef ACCEL_OPENCL_RESOLVE
  if (!missing.empty()) {
    l.reason =
        l.library + " lacks " + missing + ": an OpenCL 2.0 loader or newer is needed";
    return;
  }
  l.loaded = true;
}

// Stands in when there is no memory for a loader record.
const Loader kOutOfMemory{};

const Loader* openLoader() noexcept {
  auto* l = new (std::nothrow) Loader();  // never destroyed
  if (l == nullptr) return &kOutOfMemory;
  try {
    open(*l);
  } catch (...) {
    l->loaded = false;
    l->reason = "opening the OpenCL loader failed (out of memory)";
  }
  return l;
}

// What a fork child gets when another thread of its parent was opening the
// loader at the fork: the library may be half-initialised in the child.
const Loader* loaderAbandonedByFork() noexcept {
  auto* l = new (std::nothrow) Loader();  // never destroyed
  if (l == nullptr) return &kOutOfMemory;
  try {
    l->reason =
        "the OpenCL loader was being opened on another thread when this process forked; "
        "a fork child cannot finish that. Use OpenCL in the parent, or start workers "
        "with fork+exec (spawn)";
  } catch (...) {
  }
  return l;
}

// Not a function-local static: a fork child must never inherit its guard in
// progress (adapter/fork_safe_lazy.h).
constinit adapter::ForkSafeLazy<Loader> g_loader;

}  // namespace

const Loader& loader() noexcept {
  return g_loader.get<&openLoader, &loaderAbandonedByFork>();
}

std::string errorName(cl_int status) {
  const char* name = nullptr;
  switch (status) {
#define ACCEL_OPENCL_ERROR(code) \
  case code:                     \
    name = #code;                \
    break;
    ACCEL_OPENCL_ERROR(CL_SUCCESS)
    ACCEL_OPENCL_ERROR(CL_DEVICE_NOT_FOUND)
    ACCEL_OPENCL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ACCEL_OPENCL_ERROR(CL_OUT_OF_RESOURCES)
    ACCEL_OPENCL_ERROR(CL_OUT_OF_HOST_MEMORY)
    ACCEL_OPENCL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_MEM_COPY_OVERLAP)
    ACCEL_OPENCL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    ACCEL_OPENCL_ERROR(CL_MAP_FAILURE)
    ACCEL_OPENCL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    ACCEL_OPENCL_ERROR(CL_INVALID_VALUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_DEVICE_TYPE)
    ACCEL_OPENCL_ERROR(CL_INVALID_PLATFORM)
    ACCEL_OPENCL_ERROR(CL_INVALID_DEVICE)
    ACCEL_OPENCL_ERROR(CL_INVALID_CONTEXT)
    ACCEL_OPENCL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    ACCEL_OPENCL_ERROR(CL_INVALID_COMMAND_QUEUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_HOST_PTR)
    ACCEL_OPENCL_ERROR(CL_INVALID_MEM_OBJECT)
    ACCEL_OPENCL_ERROR(CL_INVALID_BUILD_OPTIONS)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROGRAM)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL_NAME)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_INDEX)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_VALUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL_ARGS)
    ACCEL_OPENCL_ERROR(CL_INVALID_WORK_DIMENSION)
    ACCEL_OPENCL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    ACCEL_OPENCL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    ACCEL_OPENCL_ERROR(CL_INVALID_EVENT)
    ACCEL_OPENCL_ERROR(CL_INVALID_OPERATION)
    ACCEL_OPENCL_ERROR(CL_INVALID_BUFFER_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROPERTY)
#undef ACCEL_OPENCL_ERROR
    case -1001:  // CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd)
      name = "CL_PLATFORM_NOT_FOUND_KHR";
      break;
    default:
      break;
  }
  const std::string code = "(" + std::to_string(status) + ")";
  return name != nullptr ? std::string(name) + " " + code : "OpenCL error " + code;
}

}  // namespace accel::opencl::detail
