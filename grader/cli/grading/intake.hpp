/// @file intake.hpp
/// @brief Submissions as they come: the command line's folders and archives, an LMS's bulk
/// download (one archive or folder per student, in a .zip or a folder, flat or nested), named
/// after the students of a roster. The first stage of `convlab grade`; docs/grading.md has the
/// rules and an example tree.
#pragma once

#include "common/project.hpp"

#include <string>
#include <vector>

namespace convlab::cli {

/// A student as the course's learning-management system knows them: a row of the roster.
struct RosterEntry {
  std::string id;     ///< the id the LMS matches a grade on (unique in the roster)
  std::string name;   ///< "Alice Smith" ("" if the roster has no name column)
  std::string email;  ///< "asmith@example.edu" ("" if none)
  int line = 0;       ///< its line in the roster file
};

/// The class list that names the gradebook's rows.
struct Roster {
  std::string path;               ///< the file it was read from
  std::vector<RosterEntry> rows;  ///< in the file's order
  /// The rows a submission called `name` (a file or folder name, extension included or not) is
  /// from: those whose id stands in the name as a word of its own (`smith_12345_67890_lab` is
  /// id 12345's); failing that, those whose e-mail is the name or whose e-mail's local part is a
  /// word of it. Case is ignored.
  std::vector<const RosterEntry*> matches(const std::string& name) const;
};

/// Reads a roster: CSV with a header row naming an id column (`id`; else `Student ID`, `SIS User
/// ID`, `sid`) and optionally a name (`name`, `student`, `full name`) and an e-mail column
/// (`email`, `e-mail`, `email address`); other columns are ignored, a row named "Points Possible"
/// (an LMS's gradebook export) is skipped. Throws Error, naming the line, for a missing id column,
/// an empty or a duplicate id, an unclosed quote or a roster without students.
Roster read_roster(const std::string& path);

/// One student's submission, found.
struct Intake {
  std::string path;    ///< what open_submission() reads: a folder, an archive or a repository
  std::string name;    ///< the name it is graded under: its file name (feedback/<name>.md), or its roster id
  std::string source;  ///< where it came from, for messages: "class.zip: smith_12345_67890_lab.zip"
  std::string id;      ///< the roster's id ("" without a roster)
  std::string display; ///< the roster's name ("" without a roster or a name column)
  std::string email;   ///< the roster's e-mail ("" without)
};

/// An intake list: the submissions of one array task of `convlab grade --slurm`, taken in once on
/// the login node (a bulk download unpacked, a roster read) and handed to the task's own `convlab
/// grade` as its one argument, so that each student keeps the name, id and origin one local grading
/// of the whole class gives them. JSON: `{"convlab_intake": 1, "submissions": [{"path", "name",
/// "source", "id", "display", "email"}, ...]}`.
std::string intake_list_json(const std::vector<Intake>& intake);
/// Whether `path` is a file intake_list_json() wrote (a JSON object with "convlab_intake").
bool is_intake_list(const std::string& path);
/// Reads an intake list. Throws Error, naming the file, for one that is not valid JSON or not an
/// intake list, an entry without a path or a name, a name that is not a plain file name or is
/// given twice, and a path that does not exist.
std::vector<Intake> read_intake_list(const std::string& path);

/// The submissions that `args` (the command line's) hold, one per student, in the order given
/// (a bulk download's students sorted by name). A folder or an archive that is not a submission
/// itself but holds folders or archives is a bulk download: it is unpacked under `scratch`
/// (bounded as archive.hpp says) and each of its folders and archives is a student's; a wrapper
/// folder around them is looked through. With a roster, every submission must match exactly one
/// row and no row two submissions. Lines for the log (files of a bulk download left out, students
/// of the roster with no submission) go to `notes`. An intake list (is_intake_list()) stands for
/// the submissions it lists, as it names them; it is not read with a roster.
///
/// Throws Error, before anything is built, for a file that is neither a folder, a repository nor
/// an archive (`erin.pdf`: "a PDF document, not a submission ..."), and for submissions the roster
/// does not name, names twice, or gives to one student twice: each listed once.
std::vector<Intake> take_in(const std::vector<std::string>& args, const std::string& scratch, const Project& project,
                            const Roster* roster, std::vector<std::string>* notes);

}  // namespace convlab::cli
