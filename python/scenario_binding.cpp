// strait.Scenario: ScenarioHandle for Python. Loading and checking release the GIL (a large
// cluster takes a while to build).

#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "python/json_value.hpp"
#include "python/scenario_handle.hpp"

namespace strait::python {
namespace {

// The file name of a scenario made from dicts: relative paths in it resolve from the
// working directory, and errors in its inline parts name it.
constexpr const char* kDictsFile = "<dicts>";

ScenarioHandle load(const std::string& path) {
  py::gil_scoped_release release;
  return ScenarioHandle::load(path);
}

ScenarioHandle from_dicts(const py::kwargs& parts) {
  Json document = from_python(parts, "from_dicts");
  py::gil_scoped_release release;
  return ScenarioHandle::from_document(std::move(document), kDictsFile);
}

py::list overrides(const ScenarioHandle& s) {
  py::list out;
  for (const auto& e : s.edits())
    out.append(py::make_tuple("/" + e.part + e.pointer, to_python(e.value)));
  return out;
}

std::string repr(const ScenarioHandle& s) {
  const auto n = s.edits().size();
  return "<strait.Scenario '" + s.file() + "' (" + (s.collectives() ? "collectives" : "training") +
         (n ? ", " + std::to_string(n) + (n == 1 ? " override" : " overrides") : std::string()) +
         ")>";
}

}  // namespace

void bind_scenario(py::module_& m) {
  py::class_<ScenarioHandle>(m, "Scenario")
      .def_static("load", &load, py::arg("path"))
      .def_static("from_dicts", &from_dicts)
      .def(
          "override",
          [](ScenarioHandle& s, const std::string& pointer, const py::handle& value) {
            s.override(pointer, from_python(value, pointer));
          },
          py::arg("pointer"), py::arg("value"))
      .def("to_dict", [](const ScenarioHandle& s) { return to_python(s.to_document()); })
      .def("copy", [](const ScenarioHandle& s) { return ScenarioHandle(s); })
      .def("__copy__", [](const ScenarioHandle& s) { return ScenarioHandle(s); })
      .def("__deepcopy__",
           [](const ScenarioHandle& s, const py::dict&) { return ScenarioHandle(s); })
      .def_property_readonly("file", &ScenarioHandle::file)
      .def_property_readonly(
          "kind",
          [](const ScenarioHandle& s) { return s.collectives() ? "collectives" : "training"; })
      .def_property_readonly("overrides", &overrides)
      .def("__repr__", &repr);
}

}  // namespace strait::python
