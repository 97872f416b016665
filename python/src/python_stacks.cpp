// Python call stacks for memory history: what `_record_memory_history(
// stacks="python")` hands the allocator as its HostStackCapture.
//
// Capturing keeps each frame's code object and instruction offset (a
// reference and an int, no strings); the line, file and function name are
// looked up only when a snapshot resolves the stack (frames()). This is the
// approach of PyTorch's CapturedTraceback, written for the public C API of
// CPython 3.11+.
//
// Thread-safety: capture and frames() take the GIL themselves (the allocator
// calls them without its lock and, from the binding, without the GIL). A
// stack may be destroyed under the allocator's lock, where taking the GIL
// could deadlock, so its code objects are queued and released by the next
// capture or resolution, which holds the GIL.
#include <Python.h>
#include <frameobject.h>

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "bindings.h"

namespace accel::python {
namespace {

constexpr int kMaxPythonFrames = 64;

// Code objects whose stacks were destroyed, waiting for the GIL. Leaked on
// purpose: stacks may outlive the interpreter.
struct DeferredRelease {
  std::mutex mutex;
  std::vector<PyObject*> codes;
};
DeferredRelease& deferred() {
  static auto* queue = new DeferredRelease();
  return *queue;
}

bool interpreterUsable() noexcept {
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
}

// Needs the GIL.
void releaseDeferred() {
  std::vector<PyObject*> codes;
  {
    std::lock_guard<std::mutex> lock(deferred().mutex);
    codes.swap(deferred().codes);
  }
  for (PyObject* code : codes) Py_DECREF(code);
}

std::string utf8(PyObject* text) {
  if (text == nullptr || !PyUnicode_Check(text)) return {};
  const char* data = PyUnicode_AsUTF8(text);
  if (data == nullptr) {
    PyErr_Clear();
    return {};
  }
  return data;
}

class PythonStack final : public HostStack {
 public:
  struct Frame {
    PyCodeObject* code;  // owned reference
    int lasti;           // instruction offset in bytes
  };
  std::vector<Frame> frames_;

  ~PythonStack() override {
    if (frames_.empty()) return;
    std::lock_guard<std::mutex> lock(deferred().mutex);
    for (const Frame& frame : frames_)
      deferred().codes.push_back(reinterpret_cast<PyObject*>(frame.code));
  }

  [[nodiscard]] std::vector<MemoryFrame> frames() const override {
    std::vector<MemoryFrame> out;
    if (!interpreterUsable()) return out;
    const PyGILState_STATE gil = PyGILState_Ensure();
    releaseDeferred();
    out.reserve(frames_.size());
    for (const Frame& frame : frames_) {
      MemoryFrame resolved;
      resolved.filename = utf8(frame.code->co_filename);
      resolved.name = utf8(frame.code->co_name);
      resolved.line = PyCode_Addr2Line(frame.code, frame.lasti);
      out.push_back(std::move(resolved));
    }
    PyGILState_Release(gil);
    return out;
  }
};

}  // namespace

std::shared_ptr<const HostStack> capturePythonStack() {
  if (!interpreterUsable()) return nullptr;
  const PyGILState_STATE gil = PyGILState_Ensure();
  releaseDeferred();
  auto stack = std::make_shared<PythonStack>();
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  for (int depth = 0; frame != nullptr && depth < kMaxPythonFrames; ++depth) {
    stack->frames_.push_back({PyFrame_GetCode(frame), PyFrame_GetLasti(frame)});
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyGILState_Release(gil);
  if (stack->frames_.empty()) return nullptr;  // a thread outside Python
  return stack;
}

}  // namespace accel::python
