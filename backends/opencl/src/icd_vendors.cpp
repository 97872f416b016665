#include "icd_vendors.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "accel/kit/library_file.h"

namespace accel::opencl::detail {
namespace {

constexpr const char* kDefaultVendors = "/etc/OpenCL/vendors";

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The *.icd files the loader would read, in the order it reads them.
std::vector<std::string> vendorFiles() {
  const char* configured = std::getenv("OCL_ICD_VENDORS");
  std::string where =
      configured != nullptr && *configured != '\0' ? configured : kDefaultVendors;
  struct stat st {};
  if (::stat(where.c_str(), &st) != 0) {
    // ocl-icd also takes a bare file name inside the default directory.
    if (where.find('/') == std::string::npos)
      return {std::string(kDefaultVendors) + "/" + where};
    return {};
  }
  if (!S_ISDIR(st.st_mode)) return {where};
  std::vector<std::string> files;
  if (DIR* dir = ::opendir(where.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (endsWith(name, ".icd")) files.push_back(where + "/" + name);
    }
    ::closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string icdConfigurationProblem() {
  for (const std::string& icd : vendorFiles()) {
    // Read nothing that is not a regular file (a blocking open of a FIFO
    // would wait for a writer): the file is opened without blocking, and
    // the driver's name read from what was opened.
    const kit::ReadOnlyFile file(icd);
    if (file.opened() && !file.regular()) {
      return "the ICD vendor file " + icd + " is " + file.kind() +
             ", not a regular file: the OpenCL loader would block reading it. Remove "
             "it, or point OCL_ICD_VENDORS at a directory of regular .icd files";
    }
    const std::string driver = file.firstLine();
    if (driver.empty()) continue;  // the loader skips it
    // A bare name is checked where dlopen will find it (Debian's pocl.icd
    // names libpocl.so.2 so): a truncated driver there kills the process.
    if (std::string problem = kit::libraryFileProblem(driver); !problem.empty()) {
      return "the OpenCL driver named by " + icd +
             " cannot be loaded safely: " + problem +
             ". Reinstall the driver, or remove " + icd;
    }
  }
  if (const char* listed = std::getenv("OCL_ICD_FILENAMES")) {
    std::string list = listed;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      std::string driver = list.substr(start, end - start);
      if (!driver.empty()) {
        if (std::string problem = kit::libraryFileProblem(driver); !problem.empty()) {
          return "the OpenCL driver OCL_ICD_FILENAMES lists cannot be loaded safely: " +
                 problem;
        }
      }
      start = end + 1;
    }
  }
  return {};
}

}  // namespace accel::opencl::detail
