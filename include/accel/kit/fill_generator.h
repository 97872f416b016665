// The generator a backend's device fill draws from (accel/<backend>/fill.h):
// the one the caller passed, or the default generator of the stream's device
// when the caller passed none.
//
// A generator belongs to one device type (Generator::device()); a fill that
// drew from another backend's generator would advance that backend's
// sequence, and its numbers would repeat or skip there. Every backend's
// fills therefore take their generator from here:
//
//   generator = kit::fillGenerator(kit::fillApiName(job.kind), stream,
//                                  std::move(generator));
//
// Thread-safety: thread-safe (the default generator is the hooks' own).
#pragma once

#include <string_view>

#include "accel/export.h"
#include "accel/generator.h"
#include "accel/stream.h"

namespace accel::kit {

// `generator`, or the default generator of stream.device when it is not
// defined. Throws InvalidArgument "API(): the generator is on cuda:0; a fill
// on opencl:0 needs an opencl generator (...)" when the generator's device
// type is not the stream's; what getDefaultGenerator throws for a bad device.
[[nodiscard]] ACCEL_API Generator fillGenerator(std::string_view api, Stream stream,
                                                Generator generator);

}  // namespace accel::kit
