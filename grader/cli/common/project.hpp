/// @file project.hpp
/// @brief The convlab tree the command works on, and its labs, found by
/// scanning `labs/*/grading.json` (a new lab needs no change to the command).
#pragma once

#include "convlab/spec.hpp"

#include <string>
#include <vector>

namespace convlab::cli {

/// One lab: its grading spec and where it lives.
struct Lab {
  LabSpec spec;           ///< labs/NN-slug/grading.json, parsed
  std::string dir;        ///< labs/NN-slug (relative to the root)
  std::string starter;    ///< starter_code/NN-slug (relative)
  std::string reference;  ///< reference/NN-slug (relative)
};

/// A convlab source tree.
struct Project {
  std::string root;       ///< absolute path
  std::vector<Lab> labs;  ///< in folder order (lab01, lab02, ...)
  /// The lab named by `name`: "lab01", "01", "1", "01-conv-basic"; throws Error listing the labs otherwise.
  const Lab& find(const std::string& name) const;
  /// Whether the tree holds the instructor's solutions (reference/).
  bool has_reference() const;
};

/// The tree: `explicit_root` if given; else CONVLAB_ROOT; else the nearest
/// folder above the working folder that holds labs/ and CMakePresets.json;
/// else the tree convlab was built from. Throws Error if none is a convlab tree.
std::string find_root(const std::string& explicit_root);

/// Loads the tree and every lab's spec; throws Error (naming the file) if a spec is bad.
Project load_project(const std::string& root);

/// What belongs to the source tree that gets copied (a grading copy, a student
/// copy): not build outputs, not .git, not editor files. With `student_copy`,
/// also not reference/, the command's own tests and fixtures, nor instructor-only scripts.
bool in_source_tree(const std::string& rel, bool is_dir, bool student_copy);

/// The files of the source tree (see in_source_tree()), relative to `root`.
std::vector<std::string> source_files(const std::string& root, bool student_copy);

}  // namespace convlab::cli
