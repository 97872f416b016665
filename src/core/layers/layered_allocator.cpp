#include "layers/layered_allocator.h"

#include <cstdint>
#include <utility>

#include "accel/context.h"
#include "layers/block_note.h"
#include "layers/layered_hooks.h"
#include "layers/validation/validation_layer.h"

namespace accel::detail {

// What a layered DataPtr owns: the backend's DataPtr, what the layers are
// told at the free, and the note-keeping layer's note (block_note.h). On
// cache lines of its own: the blocks two threads use at once are often made
// one after the other, and sharing a line they would slow each other's
// allocations (the note is written at each).
struct alignas(64) LayeredBlock {
  DataPtr backend;
  const LayeredAllocator* owner = nullptr;
  std::size_t bytes = 0;
  LayeredBlock* next_free = nullptr;  // in a thread's cache of blocks
  BlockNote note;

  // The layered DataPtr's deleter: tells every layer, then frees now unless
  // a layer holds the free back (it calls releaseHeldFree later).
  static void free(void* context) noexcept;
  // free() but for the validation layer alone: the layers' loops. Out of
  // line, so that the common free pays no frame for them.
  [[gnu::noinline]] static void freeLayered(LayeredBlock* block,
                                            const LayerList* list) noexcept;
};

namespace {

// Freed blocks kept for the next allocations, per thread: a block made and
// freed per allocation cost a malloc and a free (about 13% of the pair with
// validation on, docs/validation.md). A block freed on another thread than
// the one that made it goes to the freeing thread's cache; each cache holds
// at most kCachedBlocks, past that a block is deleted. Initial-exec TLS (one
// %fs-relative load, as the caching allocator's thread caches). No lock is
// involved: a fork child keeps the forking thread's cache, and the others'
// blocks (a few KiB at most) are never reached again there.
constexpr std::uint32_t kCachedBlocks = 64;

struct BlockCache {
  LayeredBlock* head = nullptr;
  std::uint32_t count = 0;
  bool armed = false;    // the releaser below is registered for this thread
  bool retired = false;  // it ran: blocks freed later are deleted
};
constinit thread_local BlockCache t_blocks
    __attribute__((tls_model("initial-exec"))) = {};

// Deletes the thread's cached blocks when it exits. Constructed when the
// thread first caches a block, so threads that never free one pay nothing.
struct BlockCacheReleaser {
  BlockCacheReleaser() = default;
  BlockCacheReleaser(const BlockCacheReleaser&) = delete;
  BlockCacheReleaser& operator=(const BlockCacheReleaser&) = delete;
  ~BlockCacheReleaser() {
    BlockCache& cache = t_blocks;
    cache.retired = true;
    while (LayeredBlock* block = cache.head) {
      cache.head = block->next_free;
      delete block;
    }
    cache.count = 0;
  }
};

LayeredBlock* takeBlock() {
  BlockCache& cache = t_blocks;
  if (LayeredBlock* block = cache.head) {
    cache.head = block->next_free;
    --cache.count;
    return block;
  }
  return new LayeredBlock();
}

// Gives `block` (its backend memory gone back already, its note empty) to
// the thread's cache. Inlined into the validation layer's free.
[[gnu::always_inline]] inline void cacheBlock(LayeredBlock* block) noexcept {
  BlockCache& cache = t_blocks;
  if (cache.count >= kCachedBlocks || cache.retired) {
    delete block;
    return;
  }
  if (!cache.armed) {
    cache.armed = true;
    thread_local BlockCacheReleaser releaser;
    (void)releaser;
  }
  block->next_free = cache.head;
  cache.head = block;
  ++cache.count;
}

// The same with whatever its note keeps.
void recycle(LayeredBlock* block) noexcept {
  block->note.clear();
  cacheBlock(block);
}

// The backend's memory goes back, and the block to the cache.
void release(LayeredBlock* block) noexcept {
  block->backend.reset();
  recycle(block);
}

}  // namespace

void LayeredBlock::free(void* context) noexcept {
  auto* block = static_cast<LayeredBlock*>(context);
  const LayerList* list = currentLayers();
  if (list != nullptr && list->validation_alone != nullptr) [[likely]] {
    // Called directly, inlined (it has no freed(): hook_layer.h's does
    // nothing), and its record ended in place.
    ValidationLayer* alone = list->validation_alone;
    BlockNote* note = block->note.keeper == alone ? &block->note : nullptr;
    if (alone->holdsFree(block->backend.get(), block, note)) return;
    block->backend.reset();
    if (!ValidationLayer::endRecord(block->note)) block->note.clear();
    cacheBlock(block);
    return;
  }
  freeLayered(block, list);
}

void LayeredBlock::freeLayered(LayeredBlock* block, const LayerList* list) noexcept {
  const LayeredAllocator& owner = *block->owner;
  bool held = false;
  if (list != nullptr) {
    void* data = block->backend.get();
    for (HookLayer* layer : list->layers)
      layer->freed(owner.type_, owner.device_, data, block->bytes, owner.pinned_);
    for (HookLayer* layer : list->layers) {
      BlockNote* note = block->note.keeper == layer ? &block->note : nullptr;
      if (layer->holdsFree(data, block, note)) {
        held = true;
        break;
      }
    }
  }
  if (!held) release(block);
}

DataPtr LayeredAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return inner_.allocate(0);
  // In a fork child of a process that had started the backend, as the
  // backend's own pinned cache would (fork.cpp remembers that one, not this).
  if (pinned_) refuseIfPoisonedByFork(type_, "pinned allocate()");
  const LayerList* list = currentLayers();
  // The validation layer alone (the common case) is called directly, its
  // callbacks inlined: the virtual calls, each with a frame of its own, were
  // about a third of the decorator's cost (docs/validation.md).
  ValidationLayer* const alone = list != nullptr ? list->validation_alone : nullptr;
  if (alone != nullptr) {
    alone->allocating(type_, device_, bytes, pinned_);
  } else if (list != nullptr) {
    for (HookLayer* layer : list->layers)
      layer->allocating(type_, device_, bytes, pinned_);
  }
  LayeredBlock* block = takeBlock();
  // The backend's DataPtr is made in the block (an empty one, released or
  // new), not moved in from a temporary.
  block->backend.~DataPtr();
  try {
    ::new (static_cast<void*>(&block->backend)) DataPtr(inner_.allocate(bytes));
  } catch (...) {
    ::new (static_cast<void*>(&block->backend)) DataPtr();
    recycle(block);
    throw;
  }
  block->owner = this;
  block->bytes = bytes;
  void* data = block->backend.get();
  const Device where = block->backend.device();
  if (alone != nullptr) {
    block->note.keeper = alone;
    alone->allocatedNoted(type_, where, data, bytes, pinned_, block->note);
  } else if (list != nullptr) {
    for (HookLayer* layer : list->layers) {
      if (layer == list->note_keeper) {
        block->note.keeper = layer;
        layer->allocatedNoted(type_, where, data, bytes, pinned_, block->note);
      } else {
        layer->allocated(type_, where, data, bytes, pinned_);
      }
    }
  }
  return DataPtr(data, block, &LayeredBlock::free, where);
}

DataPtrView innerView(const DataPtr& data) noexcept {
  if (data.deleter() == &LayeredBlock::free && data.context() != nullptr) {
    const DataPtr& backend = static_cast<const LayeredBlock*>(data.context())->backend;
    return DataPtrView{backend.context(), backend.deleter()};
  }
  return DataPtrView{data.context(), data.deleter()};
}

void releaseHeldFree(const void* token) noexcept {
  release(static_cast<LayeredBlock*>(const_cast<void*>(token)));
}

}  // namespace accel::detail
