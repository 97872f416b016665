// Stand-in for PyTorch's ATen/cuda/Exceptions.h, for bench/peer only.
//
// PyTorch's DeviceThreadHandlePool (ATen/cuda/detail/DeviceThreadHandles.h)
// is header-only, but the header includes ATen/cuda/Exceptions.h, which needs
// the CUDA toolkit (cuBLAS, cuSOLVER headers) that Debian's libtorch-dev does
// not ship. The pool itself uses only TORCH_CHECK from it; this folder comes
// first on the include path, so the real pool header compiles unchanged.
#pragma once

#include <c10/util/Exception.h>
