#include "python/json_value.hpp"

#include <cmath>
#include <cstdint>

namespace strait::python {

py::object to_python(const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::object: {
      py::dict out;
      for (const auto& [key, item] : value.items()) out[py::str(key)] = to_python(item);
      return out;
    }
    case Type::array: {
      py::list out;
      for (const auto& item : value) out.append(to_python(item));
      return out;
    }
    case Type::string:
      return py::str(value.get_ref<const std::string&>());
    case Type::boolean:
      return py::bool_(value.get<bool>());
    case Type::number_integer:
      return py::int_(value.get<std::int64_t>());
    case Type::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case Type::number_float:
      return py::float_(value.get<double>());
    case Type::null:
    case Type::discarded:
    case Type::binary:
      break;
  }
  return py::none();
}

nlohmann::json from_python(py::handle value, const std::string& what) {
  if (value.is_none()) return nullptr;
  // bool before int: True is an int in Python.
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw py::type_error(what + ": expected str keys, got " +
                             py::repr(key).cast<std::string>());
      const auto name = key.cast<std::string>();
      out[name] = from_python(item, what + "/" + name);
    }
    return out;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json out = nlohmann::json::array();
    std::size_t i = 0;
    for (const auto& item : value)
      out.push_back(from_python(item, what + "/" + std::to_string(i++)));
    return out;
  }
  if (PyIndex_Check(value.ptr())) {
    const py::int_ number = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
    if (number.ptr() == nullptr) throw py::error_already_set();
    if (number < py::int_(0)) return number.cast<std::int64_t>();
    return number.cast<std::uint64_t>();
  }
  if (py::isinstance<py::float_>(value) || PyObject_HasAttrString(value.ptr(), "__float__")) {
    const double number = py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
    if (!std::isfinite(number))
      throw py::value_error(what + ": expected a finite number, got " +
                            py::repr(value).cast<std::string>());
    return number;
  }
  throw py::type_error(what +
                       ": expected a JSON value (dict, list, str, int, float, bool, None), "
                       "got " +
                       py::repr(value).cast<std::string>());
}

}  // namespace strait::python
