#pragma once
// Where the bundled configs (profiles, clusters, models, scenarios) of the running strait
// are: `share/strait/configs` in the installation or build tree that holds the program or
// the Python module, found relative to that binary, never through a source path. An
// installation lays out PREFIX/bin/strait, PREFIX/lib/python3/dist-packages/strait/ and
// PREFIX/share/strait/configs; the build tree has build/bin/strait, build/python/strait/
// and build/share/strait/configs (a link to the checkout's configs/, made by cmake).

#include <filesystem>

namespace strait {

/// The file of the program or shared object that holds strait's code (this function), from
/// the kernel's map of this process: dladdr would give the main program's argv[0], which may
/// be a bare name or, after strait's hand-over to strait-mpi, another program's. Empty when
/// the map has no file for it.
std::filesystem::path this_binary();

/// The first `share/strait/configs` folder found in the folder of `binary` or one of its
/// parents (up to 4 levels up); empty when there is none.
std::filesystem::path bundled_configs_near(const std::filesystem::path& binary);

/// bundled_configs_near the binary (program or shared object) that holds this code.
/// Throws strait::Error naming where it looked when there is none.
std::filesystem::path bundled_configs_dir();

/// bundled_configs_dir() / "profiles": the calibration profiles a scenario that names no
/// "profiles" folder is simulated with.
std::filesystem::path bundled_profiles_dir();

}  // namespace strait
