// _strait: strait's simulator, planner and sweeps for Python (python/README.md). The package
// strait/ imports it; its parts are bound in the files bindings.hpp lists.

#include "python/bindings.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"

namespace strait::python {

std::string default_profiles_dir() { return bundled_profiles_dir().string(); }

}  // namespace strait::python

PYBIND11_MODULE(_strait, m) {
  m.doc() = "strait's C++ core; import strait instead (python/README.md)";
  // None where the bundled configs are not beside the module (simulate then says where it
  // looked); an installation and the build tree have them.
  try {
    m.attr("default_profiles_dir") = strait::python::default_profiles_dir();
  } catch (const strait::Error&) {
    m.attr("default_profiles_dir") = pybind11::none();
  }
  strait::python::bind_errors(m);
  strait::python::bind_scenario(m);
  strait::python::bind_simulate(m);
  strait::python::bind_plan(m);
  strait::python::bind_sweep(m);
  strait::python::bind_torchrec(m);
}
