/// @file submission.hpp
/// @brief A student's submission (a folder, a tarball or a git repository)
/// unpacked, and sorted into the files the labs' specs allow and the rest.
#pragma once

#include "project.hpp"

#include <map>
#include <string>
#include <vector>

namespace convlab::cli {

/// A submission, ready to be overlaid on a pristine tree.
struct Submission {
  std::string student;  ///< its name: the folder or file name without extensions
  std::string origin;   ///< the path given
  std::string kind;     ///< "folder", "tarball" or "git"
  std::string root;     ///< the folder holding its starter_code/
  /// lab id -> file name (as in the spec's submission.files) -> absolute path of the submitted file
  std::map<std::string, std::map<std::string, std::string>> files;
  std::vector<std::string> notes;  ///< files ignored and why (tampering is named as such)
  std::string failure;             ///< why it could not be read ("" if it could)
  /// Hash of every allowed file's name and content.
  std::string fingerprint() const;
};

/// The name a submission is graded under: `alice.tar.gz` -> `alice`, `repos/bob.git` -> `bob`.
std::string student_name(const std::string& origin);

/// Reads the submission at `origin`, unpacking a tarball or cloning a git
/// repository into `scratch` (a fresh folder). A submission that cannot be read
/// comes back with `failure` set; a missing `origin` throws Error.
Submission open_submission(const std::string& origin, const std::string& scratch, const Project& project);

}  // namespace convlab::cli
