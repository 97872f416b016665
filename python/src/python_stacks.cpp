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

#include <cstring>
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

// The directory of the accel package ("/.../accel/"), whose frames are the
// library's own; empty until the package is imported. Needs the GIL (which
// also guards the cached value).
const std::string& packagePrefix() {
  static std::string prefix;
  if (!prefix.empty()) return prefix;
  PyObject* name = PyUnicode_FromString("accel");
  PyObject* package = name == nullptr ? nullptr : PyImport_GetModule(name);
  Py_XDECREF(name);
  PyObject* file =
      package == nullptr ? nullptr : PyObject_GetAttrString(package, "__file__");
  Py_XDECREF(package);
  const std::string path = utf8(file);
  Py_XDECREF(file);
  PyErr_Clear();
  const std::size_t slash = path.rfind('/');
  if (slash != std::string::npos) prefix = path.substr(0, slash + 1);
  return prefix;
}

bool isPackageFrame(PyCodeObject* code, const std::string& prefix) {
  if (prefix.empty() || code->co_filename == nullptr) return false;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) {
    PyErr_Clear();
    return false;
  }
  return std::strncmp(file, prefix.c_str(), prefix.size()) == 0;
}

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
  // The innermost frames of the accel package (accel.empty calling _C) are
  // the library's, not the line that asked for memory: the stack starts at
  // the caller's frame. A stack of package frames only is kept whole.
  const std::string& prefix = packagePrefix();
  std::size_t own = 0;
  while (own < stack->frames_.size() && isPackageFrame(stack->frames_[own].code, prefix))
    ++own;
  if (own > 0 && own < stack->frames_.size()) {
    for (std::size_t i = 0; i < own; ++i) Py_DECREF(stack->frames_[i].code);
    stack->frames_.erase(stack->frames_.begin(),
                         stack->frames_.begin() + static_cast<std::ptrdiff_t>(own));
  }
  PyGILState_Release(gil);
  if (stack->frames_.empty()) return nullptr;  // a thread outside Python
  return stack;
}

}  // namespace accel::python
