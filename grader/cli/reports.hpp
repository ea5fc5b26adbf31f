/// @file reports.hpp
/// @brief What grading writes: the gradebook, each student's feedback, the
/// Gradescope results, and the saved state that lets an interrupted run resume.
#pragma once

#include "scoring.hpp"

#include <string>
#include <vector>

namespace convlab::cli {

/// Everything decided about one submission.
struct StudentResult {
  std::string student;              ///< the submission's name (its folder or file name, or its roster id)
  std::string id;                   ///< the roster's id ("" when graded without a roster)
  std::string name;                 ///< the roster's name for the student ("" if none)
  std::string email;                ///< the roster's e-mail ("" if none)
  std::string origin;               ///< where it came from
  std::string kind;                 ///< folder, tarball or git
  std::string fingerprint;          ///< hash of its files and of the grading settings (resume)
  std::vector<std::string> notes;   ///< submission-wide notes (ignored files, ...)
  std::string failure;              ///< submission-wide failure (unreadable tarball, ...)
  std::vector<LabResult> labs;      ///< one per graded lab, in lab order
  double seconds = 0;               ///< wall time to grade it
  /// Sum over labs.
  double total() const;
  /// Sum of the labs' totals.
  double max_total() const;
};

/// The result as JSON text (the saved state).
std::string to_json(const StudentResult& r);
/// Reads what to_json() wrote; throws Error on bad input.
StudentResult student_from_json(const std::string& text);

/// `gradebook.csv`: a header, a "Points Possible" row, then a row per student
/// with a column per lab and the total. With a roster (any student with an id), the student
/// column holds the roster's name and `id` and `email` columns follow it. A lab whose graders
/// need a GPU the run did not have (GraderResult::needs_gpu) is possible out of what could be
/// graded, and a last column, `not graded`, names those graders and why.
std::string gradebook_csv(const std::vector<StudentResult>& students, const std::vector<std::string>& labs,
                          const std::vector<double>& lab_max);
/// `feedback/<student>.md`: every grader, passed or not, its message, measured ratio and threshold;
/// replay commands name the build folder of `preset`, the preset the submission was graded with.
std::string feedback_markdown(const StudentResult& r, const std::string& preset = "default");
/// `results/<student>.json` in Gradescope's results.json format.
std::string gradescope_json(const StudentResult& r);

/// `--expect FILE`: compares the scores of `results` with a JSON file of expected
/// scores (`{"alice": {"lab01": 100, "reason": "..."}}`; a list of numbers accepts
/// any of them; keys starting with `_` are comments). Returns a table for the log
/// and sets `*differences`; throws Error if the file is not valid JSON.
std::string compare_with_expected(const std::string& expect_path, const std::vector<StudentResult>& results,
                                  int* differences);

}  // namespace convlab::cli
