#pragma once
// Edits of a training scenario by JSON pointers, as a sweep makes them: "/cluster/cross_dc/0/
// bandwidth" sets a key of the scenario's cluster (its file's document, or the inline
// object), "/scenario/mode" a key of the scenario file itself, "/scenario/plan" picks another
// plan file (or an inline plan). Edits are made to copies of the documents in memory, so a
// loader's error still names the part file and its key. SweepSpec reads them from a sweep
// file; the Python module's Scenario.override makes them one at a time.
//
// Limits: only the last key of a pointer may be new; an edit never creates a parent.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sweep {

/// One edit: a value for a JSON pointer of one part of the scenario.
struct Edit {
  std::string part;     // "scenario", "cluster", "model", "data" or "plan"
  std::string pointer;  // inside that part, e.g. "/cross_dc/0/bandwidth"
  Json value;           // what the config receives ("400 Gb/s" for 400 with unit Gb/s)
};

/// A JSON document and the file it came from (relative paths in it resolve from that file's
/// folder).
struct Document {
  Json json;
  std::string file;
};

/// Where an edit was written (a sweep file's key; the scenario file and the pointer given,
/// for the Python module): errors about the edit name it.
struct EditSource {
  std::string file;
  std::string pointer;
  /// Throws ConfigError "FILE: POINTER: expectation".
  [[noreturn]] void fail(std::string_view expectation) const;
};

/// The parts a training scenario is made of.
bool is_scenario_part(std::string_view name);

/// `text` ("/cluster/cross_dc/0/bandwidth") as an edit, its value unset. ConfigError at
/// `source` for a pointer outside /scenario, /cluster, /model, /data and /plan, a part as a
/// whole, a malformed pointer, or a part's key written through /scenario/<part>/...
Edit parse_edit(const std::string& text, const EditSource& source);

/// Whether `edit` picks a part's file or inline object ("/scenario/plan").
bool picks_part(const Edit& edit);

/// The file a part's value names (`value` of the scenario's key `part`, or of an edit that
/// picks it), relative to `scenario_file`'s folder; "" for an inline object. ConfigError at
/// `source` for any other value or a file that does not exist.
std::string part_file_path(std::string_view part, const Json& value,
                           const std::string& scenario_file, const EditSource& source);

/// ConfigError at `source` unless `target`'s pointer leads into `doc` (read from `file`):
/// its parent must be an object, or an array holding the index it names.
void check_edit_target(const Edit& target, const Json& doc, const std::string& file,
                       const EditSource& source);

/// Sets `edit.value` at `edit.pointer` of `doc`.
void apply_edit(Json& doc, const Edit& edit);

/// A training scenario's configs after edits: the scenario file's document with its
/// /scenario edits, and each part with its own.
struct EditedScenario {
  ConfigNode scenario;
  sim::workload::ScenarioParts parts;
};

/// `scenario` with its /scenario edits (in order).
ConfigNode edited_scenario_node(const Document& scenario, const std::vector<Edit>& edits);

/// The part `part` that `scenario` (edited) names, with that part's edits: its inline object
/// (errors name the scenario file), or its file relative to the scenario's folder, taken from
/// `part_files` (by path) when it holds it and read otherwise. ConfigError at the scenario's
/// key for a file that does not exist.
ConfigNode edited_part(const ConfigNode& scenario,
                       const std::map<std::string, Document>& part_files,
                       const std::vector<Edit>& edits, std::string_view part);

/// Every config a point loads: scenario edits first (they may pick another part file), then
/// each part's.
EditedScenario edit_scenario(const Document& scenario,
                             const std::map<std::string, Document>& part_files,
                             const std::vector<Edit>& edits);

}  // namespace strait::sweep
