#pragma once
// The parts of the Python module `_strait` (strait_module.cpp puts them together), one file
// each. The pure-Python package strait/ wraps them (results, DataFrames, docstrings).

#include <string>

#include <pybind11/pybind11.h>

#include "sim/core/enum_names.hpp"

namespace strait::python {

namespace py = pybind11;

/// strait.Error and strait.ConfigError, and the translation of strait's C++ errors to them.
void bind_errors(py::module_& m);
/// The Scenario class: load, from a dict, override by JSON pointer, to a dict.
void bind_scenario(py::module_& m);
/// simulate(): a training or collectives scenario to its `strait simulate --json` object.
void bind_simulate(py::module_& m);
/// plan(): the planner's report, plan, TorchRec plan and launch plan.
void bind_plan(py::module_& m);
/// sweep(): a sweep file's CSV and JSON Lines.
void bind_sweep(py::module_& m);
/// read_torchrec_file(): a TorchRec sharding plan file checked on its own, as dicts and lists.
void bind_torchrec(py::module_& m);

/// Argument `argument` of `function` as an E, by the enum's name table (enum_names.hpp);
/// else a ValueError: "FUNCTION: ARGUMENT: expected 'a' or 'b', got 'TEXT'" (more names:
/// "expected one of 'a', 'b', 'c', ...").
template <NamedEnum E>
E enum_argument(const std::string& function, const std::string& argument, const std::string& text) {
  if (const auto value = parse_enum<E>(text)) return *value;
  const bool two = enum_name_vector<E>().size() == 2;
  throw py::value_error(
      function + ": " + argument + ": expected " +
      (two ? enum_name_list<E>("'", " or ") : "one of " + enum_name_list<E>("'")) + ", got '" +
      text + "'");
}

/// The calibration profiles of a scenario that names none (the CLI's default): the bundled
/// ones of the installation or build tree that holds the module (sim/core/bundled_configs.hpp).
std::string default_profiles_dir();

}  // namespace strait::python
