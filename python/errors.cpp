// strait.Error (every strait error: bad input, unreadable files, runs refused) and its
// subclass strait.ConfigError (a config file's error, with .file, .pointer and .expectation).
// Their text is the C++ error's what(): what the CLI prints after "strait: error: ".

#include "python/bindings.hpp"
#include "sim/core/error.hpp"

namespace strait::python {
namespace {

// Owned by the module (its attributes), which outlives every call that raises them.
PyObject* g_error = nullptr;
PyObject* g_config_error = nullptr;

void raise_config_error(const ConfigError& e) {
  py::object exc = py::reinterpret_borrow<py::object>(g_config_error)(e.what());
  exc.attr("file") = e.file();
  exc.attr("pointer") = e.pointer();
  exc.attr("expectation") = e.expectation();
  PyErr_SetObject(g_config_error, exc.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  const py::exception<Error> error(m, "Error");
  const py::exception<ConfigError> config_error(m, "ConfigError", error);
  g_error = error.ptr();
  g_config_error = config_error.ptr();
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ConfigError& e) {
      raise_config_error(e);
    } catch (const Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });
}

}  // namespace strait::python
