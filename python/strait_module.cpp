// _strait: strait's simulator, planner and sweeps for Python (python/README.md). The package
// strait/ imports it; its parts are bound in the files bindings.hpp lists.

#include "python/bindings.hpp"

namespace strait::python {

std::string default_profiles_dir() { return STRAIT_DEFAULT_PROFILES_DIR; }

}  // namespace strait::python

PYBIND11_MODULE(_strait, m) {
  m.doc() = "strait's C++ core; import strait instead (python/README.md)";
  m.attr("default_profiles_dir") = strait::python::default_profiles_dir();
  strait::python::bind_errors(m);
  strait::python::bind_scenario(m);
  strait::python::bind_simulate(m);
  strait::python::bind_plan(m);
  strait::python::bind_sweep(m);
  strait::python::bind_json(m);
}
