/// @file reports.hpp
/// @brief What grading writes: the gradebook, each student's feedback, the
/// Gradescope results, and the saved state that lets an interrupted run resume.
#pragma once

#include "grading/scoring.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace convlab::cli {

/// The failing tests of a grader whose reports the feedback shows in full (their error maps copied).
constexpr std::size_t kFailuresShown = 3;
/// The lines of a test's printing the feedback shows (the judge keeps 40, convlab/remote.hpp).
constexpr std::size_t kPrintedLinesShown = 40;

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
  /// Sum of the labs' totals less what this run could not grade (unreachable_points(): the speed
  /// graders on the CPU backend): the gradebook's points possible for this student's row.
  double possible_total() const;
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
/// The grading time of these results, for a GPU's or a Slurm task's line of the closing summary
/// (issue 29, item 6): "3 submissions, 12.3 s each (build 5.0, run 7.3)", the means of the build
/// and run seconds of their labs; "no submission graded" when none has any.
std::string seconds_per_submission(const std::vector<const StudentResult*>& results);

/// `feedback/<student>.md`: every grader, passed or not, its message, measured ratio and threshold,
/// what the student's code printed, error maps (copied to `feedback/<student>/`, linked relatively);
/// one replay command per failure shown, naming the build folder of `preset`, the preset the
/// submission was graded with (a student types it in their own tree). A lab-wide reason is said
/// once, in its lab, not again for each grader.
std::string feedback_markdown(const StudentResult& r, const std::string& preset = "default");
/// `results/<student>.json` in Gradescope's results.json format, with the same texts.
std::string gradescope_json(const StudentResult& r, const std::string& preset = "default");

/// A failing 2D test's error map lies in the judge's results folder (`results/error-maps/<test>.png`):
/// those of the failures the feedback shows are copied to `feedback_dir/<student>/<test>.png`, and
/// each such test's `error_map` and message name the copy, relative to `feedback_dir`.
void keep_error_maps(const std::string& results, const std::string& feedback_dir, const std::string& student,
                     std::vector<TestOutcome>& tests);
/// The name a submission is shown by in its feedback: its file or folder name, never the path it
/// was graded from (`/srv/lms/alice.tar.gz` -> `alice.tar.gz`).
std::string shown_origin(const std::string& origin);
/// `text` with every absolute path under one of `roots` (the course tree, the grading run's output
/// and work folders) made into what a student can place: a file of a grading tree by its path in
/// the course (`.../slots/0/src/labs/01-conv-basic/lab01.hpp` -> `labs/01-conv-basic/lab01.hpp`),
/// a build folder's by `build/...`, the course's files relative to it, anything else by its name.
std::string strip_machine_paths(const std::string& text, const std::vector<std::string>& roots);
/// strip_machine_paths() on every text of `r` a student reads.
void strip_machine_paths(StudentResult& r, const std::vector<std::string>& roots);
/// The lines of a symbol-fence refusal from its findings (`file: what (why)` each): one finding a
/// line ("- ..."), each reason in full the first time only, at most `most` findings and how many more.
std::string fence_refusal(const std::vector<std::string>& findings, std::size_t most = 12);

/// `--expect FILE`: compares the scores of `results` with a JSON file of expected
/// scores (`{"alice": {"lab01": 100, "reason": "..."}}`; a list of numbers accepts
/// any of them; keys starting with `_` are comments). Returns a table for the log
/// and sets `*differences`; throws Error if the file is not valid JSON.
std::string compare_with_expected(const std::string& expect_path, const std::vector<StudentResult>& results,
                                  int* differences);

}  // namespace convlab::cli
