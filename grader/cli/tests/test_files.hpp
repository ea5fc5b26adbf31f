// Scratch files for the convlab command's unit tests.
#pragma once

#include "common/util.hpp"

#include <filesystem>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace convlab::cli::testing_files {

/// An empty folder of the test's own under the system's temporary folder (removed first if an
/// earlier run left it): <tmp>/convlab-test-<name>-<pid>.
inline std::string temp_dir(const std::string& name) {
  const std::string d = std::filesystem::temp_directory_path().string() + "/convlab-test-" + name + "-" +
                        std::to_string(::getpid());
  std::filesystem::remove_all(d);
  make_dirs(d);
  return d;
}

/// A script (or any file) that may be run: written, then made executable.
inline void write_executable(const std::string& path, const std::string& text) {
  write_file_atomic(path, text);
  ::chmod(path.c_str(), 0755);
}

}  // namespace convlab::cli::testing_files
