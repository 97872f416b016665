// Events, stream capture and graphs of the runtime double.
#include <utility>

#include "cuda_double.h"
#include "double_runtime.h"

using namespace cuda_double;

namespace {

std::shared_ptr<Capture> liveCapture(State& s, std::uint64_t id) {
  for (const auto& capture : s.captures) {
    if (capture->id == id) return capture;
  }
  return nullptr;
}

// Lock held. CUDA: Runtime API, cudaEventQuery / cudaEventSynchronize and
// cudaThreadExchangeStreamCaptureMode ("Relaxed"): querying or waiting for
// an event last recorded inside a capture is prohibited in every mode; the
// capture, if still open, is invalidated. The error is
// cudaErrorCapturedEvent ("not permitted on an event which was last
// recorded in a capturing stream", Runtime API, cudaError).
cudaError_t refuseCapturedEvent(State& s, CUevent_st* event, const char* call) {
  if (event->capture_id == 0) return cudaSuccess;
  if (auto capture = liveCapture(s, event->capture_id)) {
    s.invalidate(*capture, std::string(call) + " of an event recorded in the capture");
  }
  return cudaErrorCapturedEvent;
}

}  // namespace

extern "C" {

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  constexpr unsigned int kKnown =
      cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  // CUDA: Runtime API, cudaEventCreateWithFlags: cudaEventInterprocess needs
  // cudaEventDisableTiming.
  if (event == nullptr || (flags & ~kKnown) != 0 ||
      ((flags & cudaEventInterprocess) != 0 && (flags & cudaEventDisableTiming) == 0)) {
    return record(cudaErrorInvalidValue);
  }
  auto* created = new CUevent_st();
  created->device = runtimeContext(s)->device;
  created->flags = flags;
  s.events.insert(created);
  *event = created;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  (void)runtimeContext(s);  // like every runtime call that needs a context
  // CUDA: Runtime API, cudaEventDestroy: legal while a record is pending
  // (resources are released once it completes) and from any context.
  if (s.events.erase(event) == 0) return record(cudaErrorInvalidResourceHandle);
  delete event;  // queued records hold the marker, not the event
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (s.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Runtime API, cudaEventRecord: event and stream must belong to the
  // same device (context).
  if (event->device != native->device) return record(cudaErrorInvalidResourceHandle);
  if (native->capture) {
    // CUDA: Programming Guide, "Cross-stream Dependencies and Events": a
    // record in a capturing stream is a capture node, not a real record.
    if (native->capture->invalidated) return record(cudaErrorStreamCaptureInvalidated);
    event->capture_id = native->capture->id;
    event->capture_stream = native;
    event->capture_seq = native->capture_seq;
    return cudaSuccess;
  }
  event->capture_id = 0;
  event->marker = std::make_shared<Marker>();
  Item item;
  item.record = event->marker;
  native->queue.push_back(std::move(item));
  ++native->enqueued;
  s.changed.notify_all();
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (s.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  if (event->capture_id != 0) {
    std::shared_ptr<Capture> capture = liveCapture(s, event->capture_id);
    if (!capture) return cudaSuccess;  // that capture ended: nothing to wait for
    if (native->capture && native->capture != capture) {
      // CUDA: Programming Guide, "Cross-stream Dependencies and Events": a
      // dependency may not join two capture sequences.
      return record(cudaErrorStreamCaptureIsolation);
    }
    if (!native->capture) {
      // The fork: the stream joins the capture.
      native->capture = capture;
      native->capture_seq = 0;
      capture->streams.insert(native);
    } else if (event->capture_stream != native) {
      std::uint64_t& joined = capture->joined[event->capture_stream];
      joined = std::max(joined, event->capture_seq);
    }
    return cudaSuccess;
  }
  if (native->capture || !event->marker)
    return cudaSuccess;  // nothing captured / to wait
  Item item;
  item.wait_for = event->marker;
  native->queue.push_back(std::move(item));
  ++native->enqueued;
  s.changed.notify_all();
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  (void)runtimeContext(s);  // like every runtime call that needs a context
  if (s.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = refuseCapturedEvent(s, event, "cudaEventQuery");
      e != cudaSuccess) {
    return record(e);
  }
  return !event->marker || event->marker->done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  (void)runtimeContext(s);  // like every runtime call that needs a context
  if (s.events.count(event) == 0) return record(cudaErrorInvalidResourceHandle);
  if (const cudaError_t e = refuseCapturedEvent(s, event, "cudaEventSynchronize");
      e != cudaSuccess) {
    return record(e);
  }
  if (std::shared_ptr<Marker> marker = event->marker) {
    ++s.waiting;
    s.changed.wait(lock, [&] { return marker->done; });
    --s.waiting;
  }
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  (void)runtimeContext(s);  // like every runtime call that needs a context
  if (s.events.count(start) == 0 || s.events.count(end) == 0) {
    return record(cudaErrorInvalidResourceHandle);
  }
  // CUDA: Runtime API, cudaEventElapsedTime: both events need timing and a
  // record (cudaErrorInvalidResourceHandle), both records must have
  // completed (cudaErrorNotReady).
  for (CUevent_st* event : {start, end}) {
    if ((event->flags & cudaEventDisableTiming) != 0 || !event->marker) {
      return record(cudaErrorInvalidResourceHandle);
    }
    if (const cudaError_t e = refuseCapturedEvent(s, event, "cudaEventElapsedTime");
        e != cudaSuccess) {
      return record(e);
    }
    if (!event->marker->done) return record(cudaErrorNotReady);
  }
  *ms = std::chrono::duration<float, std::milli>(end->marker->at - start->marker->at)
            .count();
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr || *mode < cudaStreamCaptureModeGlobal ||
      *mode > cudaStreamCaptureModeRelaxed) {
    return record(cudaErrorInvalidValue);
  }
  std::swap(thread().mode, *mode);
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  State& s = State::get();
  std::unique_lock lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Runtime API, cudaStreamBeginCapture: the legacy NULL stream cannot
  // be captured; a stream already capturing cannot begin again.
  if (native->legacy) return record(cudaErrorStreamCaptureUnsupported);
  if (native->capture) return record(cudaErrorIllegalState);
  auto capture = std::make_shared<Capture>();
  capture->id = s.next_capture_id++;
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->device = native->device;
  capture->origin = native;
  capture->streams.insert(native);
  native->capture = capture;
  native->capture_seq = 0;
  s.captures.insert(capture);
  if (void (*after)(void*) = std::exchange(s.after_capture_begins, nullptr)) {
    void* arg = s.after_capture_begins_arg;
    lock.unlock();
    after(arg);
  }
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Runtime API, cudaStreamEndCapture: only the stream that began the
  // capture ends it (cudaErrorStreamCaptureUnmatched), and outside Relaxed
  // mode only on the thread that began it (cudaErrorStreamCaptureWrongThread);
  // an invalidated capture ends with cudaErrorStreamCaptureInvalidated and no
  // graph; every joined stream must have been joined back into the origin
  // stream (cudaErrorStreamCaptureUnjoined).
  std::shared_ptr<Capture> capture = native->capture;
  if (!capture) return record(cudaErrorIllegalState);
  if (capture->origin != native) return record(cudaErrorStreamCaptureUnmatched);
  if (capture->mode != cudaStreamCaptureModeRelaxed &&
      capture->thread != std::this_thread::get_id()) {
    return record(cudaErrorStreamCaptureWrongThread);
  }
  bool unjoined = false;
  for (CUstream_st* member : capture->streams) {
    if (member != native && member->capture_seq > capture->joined[member])
      unjoined = true;
    member->capture.reset();
    member->capture_seq = 0;
  }
  s.captures.erase(capture);
  *graph = nullptr;
  if (capture->invalidated) return record(cudaErrorStreamCaptureInvalidated);
  if (unjoined) return record(cudaErrorStreamCaptureUnjoined);
  auto* made = new CUgraph_st();
  made->nodes = std::move(capture->nodes);
  made->device = capture->device;
  s.graphs.insert(made);
  *graph = made;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  return cudaStreamGetCaptureInfo(stream, status, nullptr, nullptr, nullptr, nullptr,
                                  nullptr);
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** dependencies,
                                     const cudaGraphEdgeData** edges, size_t* count) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  if (graph != nullptr || dependencies != nullptr || edges != nullptr ||
      count != nullptr) {
    return record(cudaErrorInvalidValue);  // not modelled by the double
  }
  const std::shared_ptr<Capture>& capture = native->capture;
  *status = !capture               ? cudaStreamCaptureStatusNone
            : capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                   : cudaStreamCaptureStatusActive;
  if (id != nullptr && capture) *id = capture->id;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (exec == nullptr || s.graphs.count(graph) == 0) return record(cudaErrorInvalidValue);
  auto* made = new CUgraphExec_st();
  made->nodes = graph->nodes;
  made->device = graph->device;
  s.execs.insert(made);
  *exec = made;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (s.graphs.erase(graph) == 0) return record(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  if (s.execs.erase(exec) == 0) return record(cudaErrorInvalidValue);
  delete exec;  // queued launches hold copies of the nodes
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  CUstream_st* native = nullptr;
  if (s.execs.count(exec) == 0) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = resolveStream(s, stream, &native); e != cudaSuccess) {
    return record(e);
  }
  // CUDA: Runtime API, cudaGraphLaunch: the stream must be of the device the
  // graph was instantiated for (its context).
  if (native->device != exec->device) return record(cudaErrorInvalidValue);
  for (const Work& node : exec->nodes) {
    if (const cudaError_t e = s.submit(native, node); e != cudaSuccess) return record(e);
  }
  return cudaSuccess;
}

void cuda_double_after_next_capture_begins(void (*fn)(void*), void* arg) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  s.after_capture_begins = fn;
  s.after_capture_begins_arg = arg;
}

void cuda_double_before_next_free(void (*fn)(void*), void* arg) {
  State& s = State::get();
  std::lock_guard lock(s.mutex);
  s.before_free = fn;
  s.before_free_arg = arg;
}

}  // extern "C"
