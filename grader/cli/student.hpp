/// @file student.hpp
/// @brief The students' commands: status, check, bench, watch.
#pragma once

#include "project.hpp"

#include <string>

namespace convlab::cli {

/// Where a student's build lives and how it is made.
struct StudentBuild {
  std::string preset = "default";  ///< CMake configure preset (configured on first use)
  std::string dir;                 ///< build folder ("" = ROOT/build/PRESET)
};

/// `convlab status`: a table of every lab and what to do next. Always 0.
int status_main(const Project& p, const StudentBuild& b);
/// `convlab check LAB`: builds and runs the lab's graders, explains each failure. 0 if none failed.
int check_main(const Project& p, const StudentBuild& b, const std::string& lab);
/// `convlab bench LAB`: the lab's benchmark table. The benchmark's exit status.
int bench_main(const Project& p, const StudentBuild& b, const std::string& lab);
/// `convlab watch LAB`: check, then check again whenever a file of the lab changes
/// (`cycles` > 0 stops after that many checks).
int watch_main(const Project& p, const StudentBuild& b, const std::string& lab, int cycles);

}  // namespace convlab::cli
