// The core library's thread-local storage stays small. libaccel reads some
// of it with one %fs-relative load (initial-exec), which makes glibc place
// the library's whole TLS block in static TLS; a library loaded by dlopen
// (Python's import of the package does so) takes that from a surplus of
// about 1.6 KiB shared by every library loaded after the program started.
// At 1.5 KiB, torch's libgomp, imported after accel, failed to load
// ("cannot allocate memory in static TLS block"). Large per-thread tables
// go on the heap instead (accel/kit/thread_current.h).
#include <gtest/gtest.h>
#include <link.h>

#include <cstddef>
#include <string>

#include "accel/device_type.h"

namespace {

// A budget well inside the surplus, leaving most of it to other libraries.
constexpr std::size_t kStaticTlsBudget = 640;

struct Search {
  const void* inside = nullptr;  // an address of libaccel's code
  bool found = false;
  std::string name;
  std::size_t tls_bytes = 0;
};

int visit(dl_phdr_info* info, std::size_t, void* data) {
  auto& search = *static_cast<Search*>(data);
  const auto address = reinterpret_cast<ElfW(Addr)>(search.inside);
  bool contains = false;
  std::size_t tls = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const ElfW(Addr) begin = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && address >= begin && address < begin + header.p_memsz)
      contains = true;
    if (header.p_type == PT_TLS) tls = header.p_memsz;
  }
  if (!contains) return 0;
  search.found = true;
  search.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  search.tls_bytes = tls;
  return 1;
}

TEST(StaticTls, TheCoreLibrarysThreadLocalBlockStaysWithinItsBudget) {
  Search search;
  search.inside = reinterpret_cast<const void*>(&accel::registerDeviceType);
  ASSERT_EQ(dl_iterate_phdr(&visit, &search), 1) << "libaccel's module was not found";
  ASSERT_NE(search.name.find("libaccel"), std::string::npos) << search.name;
  EXPECT_LE(search.tls_bytes, kStaticTlsBudget)
      << search.name << " has " << search.tls_bytes
      << " bytes of thread-local storage; move large per-thread tables to the heap";
}

}  // namespace
