#pragma once
// JSON values to Python objects and back: objects are dicts, arrays lists, numbers int or
// float as JSON holds them (so a float is the double strait computed, bit for bit).

#include <string>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace strait::python {

namespace py = pybind11;

/// `value` as a Python object (dict, list, str, int, float, bool or None).
py::object to_python(const nlohmann::json& value);

/// A Python value (dict with str keys, list, tuple, str, int, float, bool, None, or a number
/// type with __index__ or __float__) as JSON; TypeError naming `what` for anything else.
nlohmann::json from_python(py::handle value, const std::string& what);

}  // namespace strait::python
