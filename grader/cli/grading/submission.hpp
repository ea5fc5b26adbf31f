/// @file submission.hpp
/// @brief A student's submission (a folder, a .zip, a tarball or a git repository)
/// unpacked, and sorted into the files the labs' specs allow and the rest.
///
/// Its files lie under `starter_code/NN-slug/` or, without that parent, under `NN-slug/`, at the
/// top of the submission or one or two folders down. A folder that holds no such tree but one
/// archive (an LMS's folder per student) is read as that archive.
#pragma once

#include "common/project.hpp"

#include <map>
#include <string>
#include <vector>

namespace convlab::cli {

/// A submission, ready to be overlaid on a pristine tree.
struct Submission {
  std::string student;  ///< its name: the folder or file name without extensions
  std::string origin;   ///< the path given
  std::string kind;     ///< "folder", "zip", "tarball", "git", or "file" (none of these)
  std::string root;     ///< the folder holding its starter_code/ (or its NN-slug/ folders)
  /// lab id -> file name (as in the spec's submission.files) -> absolute path of the submitted file
  std::map<std::string, std::map<std::string, std::string>> files;
  std::vector<std::string> notes;  ///< files ignored and why (tampering is named as such)
  std::string failure;             ///< why it could not be read ("" if it could)
  /// Hash of every allowed file's name and content.
  std::string fingerprint() const;
};

/// The name a submission is graded under: `alice.tar.gz` -> `alice`, `repos/bob.git` -> `bob`.
std::string student_name(const std::string& origin);

/// True when the folder `dir` is one submission: a git repository, or a tree with starter_code/
/// or the labs' NN-slug/ folders, at the top or one or two levels down.
bool is_one_submission(const std::string& dir, const Project& project);

/// Reads the submission at `origin`, unpacking an archive (archive.hpp) or cloning a git
/// repository into `scratch` (a fresh folder). A submission that cannot be read
/// comes back with `failure` set; a missing `origin` throws Error.
Submission open_submission(const std::string& origin, const std::string& scratch, const Project& project);

}  // namespace convlab::cli
