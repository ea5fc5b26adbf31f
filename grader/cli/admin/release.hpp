/// @file release.hpp
/// @brief `convlab release`: the student copy of the course's tree.
///
/// What a student copy leaves out, and why (docs/grading.md, "Release"):
/// - answers: reference/, and the grader-owned code that is a lab's answer (the naive
///   baselines, lab 01's and lab 05's naive kernels; the cuDNN anchor, lab 06's conv_cudnn
///   slot), which it holds compiled only, in grader/prebuilt/ with a SHA-256 manifest;
/// - instructor material: the instructor pages, the regions of the shared pages marked
///   instructor-only (strip_instructor_only()), the presets that need
///   reference/, CI, the grading fixtures and the instructor's GPU scripts.
#pragma once

#include "common/project.hpp"

#include <set>
#include <string>

namespace convlab::cli {

/// Settings of `convlab release`.
struct ReleaseOptions {
  std::string out;               ///< the tarball to write
  std::string prefix = "convlab";  ///< the folder inside it
  bool allow_dirty = false;      ///< pack uncommitted edits of tracked files (warned about)
  std::string build_dir;         ///< where the prebuilt libraries are compiled ("" = ROOT/build/release)
};

/// Whether `rel`, a file the course's tree ships to grading slots (source_files(root, true)),
/// also goes into the student copy.
bool in_student_copy(const std::string& rel);

/// `text` (a Markdown page) without its instructor-only regions: every line from one holding the
/// HTML comment `instructor-only` to one holding the comment `/instructor-only`, both included.
/// Throws Error naming `file` and the line of a region left open, an opening inside a region,
/// or a closing without an opening.
std::string strip_instructor_only(const std::string& text, const std::string& file);

/// The Doxygen anchors `text` defines: `{#id}` and the ids of \\page, \\section, \\anchor ....
std::set<std::string> doc_anchors(const std::string& text);

/// `text` with every \\ref or \\subpage to an anchor of `gone` replaced by its link text. Throws
/// Error naming `file` and the line of such a reference without link text.
std::string unlink_refs(const std::string& text, const std::set<std::string>& gone, const std::string& file);

/// CMakePresets.json (`json_text`) with the student's presets only: the configure presets that
/// build the student's kernels (CONVLAB_IMPL "student") and the hidden ones they inherit from,
/// the build and test presets of those, and the workflows made only of them. Throws Error when a
/// kept preset inherits from one that is not kept.
std::string student_presets(const std::string& json_text);

/// `convlab release`: builds the prebuilt libraries, stages the student copy and packs it; returns 0.
int release_main(const Project& p, const ReleaseOptions& o);

}  // namespace convlab::cli
