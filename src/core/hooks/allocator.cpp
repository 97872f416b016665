#include "accel/allocator.h"

namespace accel {

Allocator::~Allocator() = default;

}  // namespace accel
