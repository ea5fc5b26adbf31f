/// @file gate.hpp
/// @brief Correctness and technique gate speed, early: a speed grader whose correctness (or
/// technique) grader already failed in this build is not timed (it could earn nothing), so it
/// ends in well under a second with that reason instead of spending seconds on a problem the
/// kernel gets wrong.
///
/// The evidence is the records of this build in the results folder (convlab/record.hpp):
/// records written after the kernels under test were built (the runner that holds them). A
/// speed test run alone, before any correctness test of this build, finds none and runs; it
/// still checks correctness on its own problem before timing.
#pragma once

#include <filesystem>
#include <string>

namespace convlab {

/// The reason to skip a speed test gated by `gate` (a grader id, "correctness.conv1d" or
/// "technique.conv1d") of `lab`: the first failed record of that grader in `results_dir`
/// (smallest case first) that was written at or after `built` and by the same `impl`, as one
/// line naming the grader, the test and its first informative message line. "" when no such record failed (none written
/// yet, all passed, or all older than the build).
std::string failed_gate(const std::string& results_dir, const std::string& lab, const std::string& gate,
                        const std::string& impl, std::filesystem::file_time_type built);

/// The first line of a failure message that says something: not GoogleTest's bare "Failed",
/// an "Expected: ..." line without its explanation, or a blank line; a short heading ending in
/// ':' comes with the line after it ("2D convolution, 100 x 75, radius 3: 5 of 7500 outputs
/// are wrong ...").
std::string first_informative_line(const std::string& message);

/// Failed records of `impl` in `results_dir` written at or after `since`: how many failures a
/// run has reported so far.
int failed_records_since(const std::string& results_dir, const std::string& impl, std::filesystem::file_time_type since);

/// The short form of a failure: its first informative line and, if the message holds one, the
/// replay command that prints the full report (convlab/brief_failures.hpp).
std::string brief_failure(const std::string& test, const std::string& message);

/// The size of a test's case, read from the last part of its name ("n1000003_r3",
/// "w1023_h517_r3", "8x16x32"): the product of the numbers before the radius, for sorting
/// failures smallest first. Names without numbers sort last.
double case_size(const std::string& test_name);

}  // namespace convlab
