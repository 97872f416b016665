// accel.validate(): the validation layer's switch (accel/validation.h), and
// the Python stack it records with each report, allocation and leak.
#include <optional>
#include <string>

#include "accel/error.h"
#include "accel/validation.h"
#include "bindings.h"

namespace accel::python {

void bindValidation(py::module_& m) {
  // Reports made from Python name the Python line (the stack provider is
  // asked only while the layer is on).
  setValidationHostStack([] { return capturePythonStack(); });
  m.def(
      "_validate",
      [](const std::optional<std::string>& mode) -> std::string {
        if (mode) {
          const std::optional<ValidationMode> parsed = parseValidationMode(*mode);
          ACCEL_CHECK(parsed.has_value(), InvalidArgument, "validate('", *mode,
                      "'): not a validation mode; pass 'off', 'log', 'throw' or 'abort' "
                      "(or True for 'log', False for 'off')");
          GilRelease release;  // turning off gives the quarantined frees back
          setValidationMode(*parsed);
        }
        return std::string(validationModeName(validationMode()));
      },
      py::arg("mode") = py::none(),
      "setValidationMode(mode) when `mode` is given; the mode now ('off', 'log', "
      "'throw', 'abort').");
  m.def(
      "_validation_leak_report", [] { return validationLeakReport(); },
      "What was made while validating and never released, with where; '' when nothing.");
  m.def(
      "_resolve_validation_stacks", [] { resolveValidationHostStacks(); },
      "Resolves the Python stacks of everything tracked, for the leak report at exit "
      "(called from the package's atexit, while the interpreter still runs).");
  m.def(
      "_validation_violations", [] { return validationViolations(); },
      "Violations reported since the layer was last turned on.");
}

}  // namespace accel::python
