// Every header of the plugin adapter compiles alone, as ISO C++17 with every
// warning an error (the adapter promises plugins C++17 and any compiler; the
// out-of-tree example's clang/libc++ build checks the other standard
// library). Each include stands first in a translation unit of its own.
#ifndef ADAPTER_HEADER
#error "build with -DADAPTER_HEADER=<header>"
#endif
#include ADAPTER_HEADER
