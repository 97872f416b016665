#include "layers/layered_allocator.h"

#include <memory>
#include <utility>

#include "accel/context.h"
#include "layers/layered_hooks.h"

namespace accel::detail {

// What a layered DataPtr owns: the backend's DataPtr, and what the layers
// are told at the free.
struct LayeredBlock {
  DataPtr backend;
  const LayeredAllocator* owner;
  std::size_t bytes;

  // The layered DataPtr's deleter: tells every layer, then frees now unless
  // a layer holds the free back (it calls releaseHeldFree later).
  static void free(void* context) noexcept {
    auto* block = static_cast<LayeredBlock*>(context);
    const LayeredAllocator& owner = *block->owner;
    bool held = false;
    if (const LayerList* list = currentLayers()) {
      for (HookLayer* layer : list->layers) {
        layer->freed(owner.type_, owner.device(), block->backend.get(), block->bytes,
                     owner.pinned_);
      }
      for (HookLayer* layer : list->layers) {
        if (!held && layer->holdsFree(block->backend.get(), block)) held = true;
      }
    }
    if (!held) delete block;
  }
};

DataPtr LayeredAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return inner_.allocate(0);
  // In a fork child of a process that had started the backend, as the
  // backend's own pinned cache would (fork.cpp remembers that one, not this).
  if (pinned_) refuseIfPoisonedByFork(type_, "pinned allocate()");
  const LayerList* list = currentLayers();
  if (list != nullptr) {
    for (HookLayer* layer : list->layers)
      layer->allocating(type_, device(), bytes, pinned_);
  }
  auto block =
      std::make_unique<LayeredBlock>(LayeredBlock{inner_.allocate(bytes), this, bytes});
  void* data = block->backend.get();
  const Device where = block->backend.device();
  if (list != nullptr) {
    for (HookLayer* layer : list->layers)
      layer->allocated(type_, where, data, bytes, pinned_);
  }
  return DataPtr(data, block.release(), &LayeredBlock::free, where);
}

DataPtrView innerView(const DataPtr& data) noexcept {
  if (data.deleter() == &LayeredBlock::free && data.context() != nullptr) {
    const DataPtr& backend = static_cast<const LayeredBlock*>(data.context())->backend;
    return DataPtrView{backend.context(), backend.deleter()};
  }
  return DataPtrView{data.context(), data.deleter()};
}

void releaseHeldFree(const void* token) noexcept {
  delete static_cast<const LayeredBlock*>(token);
}

}  // namespace accel::detail
