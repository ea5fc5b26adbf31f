// Submissions as they come, and the roster that names them. See intake.hpp.
#include "grading/intake.hpp"

#include "grading/archive.hpp"
#include "grading/submission.hpp"
#include "common/util.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace convlab::cli {

namespace fs = std::filesystem;

namespace {

// A class's bulk download holds every student's archive: its bounds are a class's, each student's
// archive is then held to open_submission()'s own.
const UnpackLimits kBulkLimits{4ll << 30, 256ll << 20, 200000, 600};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// `word` stands in `text` on its own: bounded by the ends or by characters other than letters
// and digits (`12345` is in `smith_12345_67890_lab`, not in `smith_123456_lab`). Case is ignored.
bool has_word(const std::string& text, const std::string& word) {
  if (word.empty()) return false;
  const std::string t = lower(text), w = lower(word);
  for (std::size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1))
    if ((at == 0 || !alnum(t[at - 1])) && (at + w.size() == t.size() || !alnum(t[at + w.size()]))) return true;
  return false;
}

// One CSV record of one line: fields split at commas, double quotes around a field, "" for a quote.
std::vector<std::string> csv_fields(const std::string& line, const std::string& where) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  if (quoted) throw Error(where + ": a quote is not closed (a field may not span lines)");
  for (auto& f : out) f = trim(f);
  return out;
}

// The first header among `names`, in their order of preference (-1: none).
int column(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (const char* n : names)
    for (std::size_t i = 0; i < header.size(); ++i)
      if (lower(header[i]) == n) return static_cast<int>(i);
  return -1;
}

std::string list(const std::vector<std::string>& v, std::size_t shown = 10) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < shown; ++i) out += (i ? "; " : "") + v[i];
  if (v.size() > shown) out += "; and " + std::to_string(v.size() - shown) + " more";
  return out;
}

bool hidden(const std::string& name) { return name.empty() || name[0] == '.' || name == "__MACOSX"; }

// The entries of a bulk download's folder that are students' (folders and archives), sorted; the
// rest named in `left_out`. A folder that holds nothing but one folder that is not a submission
// (a wrapper: class-export/...) is looked through, at most three deep.
std::vector<fs::path> bulk_entries(fs::path dir, std::vector<std::string>* left_out, const std::string& label) {
  std::error_code ec;
  for (int depth = 0;; ++depth) {
    std::vector<fs::path> folders, archives, files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (hidden(n)) continue;
      if (e.is_symlink()) files.push_back(e.path());  // never followed: it may point anywhere
      else if (e.is_directory()) folders.push_back(e.path());
      else if (e.is_regular_file() && sniff_archive(e.path().string()) != ArchiveFormat::none) archives.push_back(e.path());
      else files.push_back(e.path());
    }
    if (folders.size() == 1 && archives.empty() && depth < 3) {
      dir = folders[0];
      continue;
    }
    for (const auto& f : files) {
      std::string what = "a link";
      if (!fs::is_symlink(fs::symlink_status(f, ec))) sniff_archive(f.string(), &what);
      left_out->push_back(label + f.filename().string() + " (" + what + ")");
    }
    folders.insert(folders.end(), archives.begin(), archives.end());
    std::sort(folders.begin(), folders.end());
    return folders;
  }
}

bool has_archive_extension(const std::string& name) { return strip_archive_extension(name) != name; }

}  // namespace

std::vector<const RosterEntry*> Roster::matches(const std::string& name) const {
  const std::string base = strip_archive_extension(name);
  std::vector<const RosterEntry*> by_id, by_email;
  for (const auto& r : rows) {
    if (has_word(base, r.id)) by_id.push_back(&r);
    if (!r.email.empty()) {
      const std::string local = r.email.substr(0, r.email.find('@'));
      if (lower(base) == lower(r.email) || has_word(base, local)) by_email.push_back(&r);
    }
  }
  return by_id.empty() ? by_email : by_id;
}

Roster read_roster(const std::string& path) {
  Roster roster;
  roster.path = path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Error("--roster: no file " + path);
  std::istringstream in(read_file(path));
  std::string line;
  int n = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++n;
    if (n == 1 && starts_with(line, "\xef\xbb\xbf")) line.erase(0, 3);  // a spreadsheet's byte-order mark
    if (!trim(line).empty()) header = csv_fields(line, path + " line " + std::to_string(n));
  }
  const int id = column(header, {"id", "student id", "student_id", "sis user id", "sid"});
  const int name = column(header, {"name", "student", "student name", "full name"});
  const int email = column(header, {"email", "e-mail", "email address", "e-mail address"});
  if (id < 0)
    throw Error("roster " + path + ": its first line names no id column (it must be a CSV file whose header has "
                "id and, optionally, name and email: id,name,email)");
  std::map<std::string, int> seen;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    const std::string where = "roster " + path + " line " + std::to_string(n);
    const auto f = csv_fields(line, where);
    const auto at = [&](int c) { return c >= 0 && c < static_cast<int>(f.size()) ? f[c] : std::string(); };
    if (at(id).empty() && trim(at(name)) == "Points Possible") continue;  // an LMS gradebook export's second row
    if (at(id).empty()) throw Error(where + ": no id (every student needs one: the gradebook's rows are matched on it)");
    const auto [it, fresh] = seen.emplace(lower(at(id)), n);
    if (!fresh)
      throw Error(where + ": id " + at(id) + " is also on line " + std::to_string(it->second) +
                  " (each id once: which student is it?)");
    roster.rows.push_back({at(id), at(name), at(email), n});
  }
  if (roster.rows.empty()) throw Error("roster " + path + " lists no student (a header row, then a row per student)");
  return roster;
}

std::string intake_list_json(const std::vector<Intake>& intake) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i : intake)
    list.push_back({{"path", i.path}, {"name", i.name}, {"source", i.source}, {"id", i.id}, {"display", i.display},
                    {"email", i.email}});
  return nlohmann::json{{"convlab_intake", 1},
                        {"about", "the submissions of one array task of convlab grade --slurm (intake.hpp)"},
                        {"submissions", list}}
             .dump(2) + "\n";
}

bool is_intake_list(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > (64u << 20)) return false;
  const auto j = nlohmann::json::parse(read_file(path), nullptr, false);
  return j.is_object() && j.contains("convlab_intake");
}

std::vector<Intake> read_intake_list(const std::string& path) {
  const auto bad = [&](const std::string& why) { return Error("intake list " + path + ": " + why); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("convlab_intake", 0) != 1 || !j.contains("submissions") || !j.at("submissions").is_array())
    throw bad("not an intake list of convlab grade --slurm (\"convlab_intake\": 1 and a \"submissions\" list)");
  std::vector<Intake> out;
  std::set<std::string> names;
  for (const auto& e : j.at("submissions")) {
    const std::string where = "submission " + std::to_string(out.size() + 1);
    if (!e.is_object()) throw bad(where + " is not an object");
    Intake i;
    try {
      i.path = e.at("path").get<std::string>();
      i.name = e.at("name").get<std::string>();
      i.source = e.value("source", i.path);
      i.id = e.value("id", std::string());
      i.display = e.value("display", std::string());
      i.email = e.value("email", std::string());
    } catch (const nlohmann::json::exception& x) {
      throw bad(where + ": " + x.what());
    }
    // The name becomes feedback/<name>.md and state/<name>.json: a plain file name only.
    if (i.name.empty() || i.name != safe_name(i.name)) throw bad(where + ": '" + i.name + "' is not a plain file name");
    if (!names.insert(i.name).second) throw bad(where + ": the name '" + i.name + "' is given twice");
    std::error_code ec;
    if (i.path.empty() || !fs::exists(i.path, ec)) throw bad(where + " (" + i.name + "): '" + i.path + "' does not exist");
    out.push_back(std::move(i));
  }
  return out;
}

namespace {

// What take_in() gathers over its arguments: the submissions, and what it refuses or leaves out.
struct Taking {
  std::vector<Intake> out;
  std::vector<std::string> not_submissions, left_out;
  std::error_code ec;

  // One student's submission at p, named after it, said to come from source.
  void one(const fs::path& p, const std::string& source) {
    Intake i;
    i.path = p.string();
    i.name = student_name(p.string());
    i.source = source;
    out.push_back(i);
  }
};

// Takes in args[k]: an intake list, one submission, or a bulk download (a folder or an archive).
void take_in_arg(const std::vector<std::string>& args, std::size_t k, const std::string& scratch, const Project& project,
                 const Roster* roster, Taking& t) {
  auto& ec = t.ec;
  const fs::path arg = fs::absolute(args[k], ec);
  if (!fs::exists(arg, ec)) throw Error("submission '" + args[k] + "' does not exist");
  if (is_intake_list(arg.string())) {  // a --slurm task's share, taken in already
    if (roster)
      throw Error("the intake list " + args[k] + " names its students itself: it is not read with --roster");
    const auto listed = read_intake_list(arg.string());
    t.out.insert(t.out.end(), listed.begin(), listed.end());
    return;
  }
  fs::path bulk;  // the folder of a bulk download
  if (fs::is_directory(arg, ec)) {
    if (is_one_submission(arg.string(), project)) {
      t.one(arg, args[k]);
      return;
    }
    bulk = arg;
  } else {
    std::string what;
    if (sniff_archive(arg.string(), &what) == ArchiveFormat::none) {
      // Named as an archive, it is a student's that did not arrive whole: graded 0, with the reason.
      const std::string name = arg.filename().string();
      if (has_archive_extension(name)) t.one(arg, args[k]);
      else if (lower(fs::path(name).extension().string()) == ".csv") t.not_submissions.push_back(args[k] + " is a CSV file (a roster is given with --roster FILE)");
      else t.not_submissions.push_back(args[k] + " is " + what);
      return;
    }
    // Unpacked once here to see what it holds; a student's own archive is then read as usual.
    const fs::path into = fs::path(scratch) / (std::to_string(k) + "-" + safe_name(arg.filename().string()));
    fs::remove_all(into, ec);
    const std::string why = unpack_archive(arg.string(), into.string(), kBulkLimits);
    if (!why.empty() || is_one_submission(into.string(), project)) {
      fs::remove_all(into, ec);  // open_submission() unpacks it again, into the student's own folder
      t.one(arg, args[k]);       // a failure is the student's, said in their feedback
      return;
    }
    bulk = into;
  }
  const std::string label = fs::path(args[k]).filename().string() + ": ";
  const auto entries = bulk_entries(bulk, &t.left_out, label);
  if (entries.empty()) {
    t.one(arg, args[k]);  // nothing in it looks like a submission: graded 0, with open_submission()'s reason
    return;
  }
  for (const auto& e : entries) t.one(e, label + e.filename().string());
}

// Names each submission after its student of the roster (refusing what does not match), and notes who sent none.
void match_roster(std::vector<Intake>& out, const Roster& roster, std::vector<std::string>* notes) {
  // Every submission is one student's of the roster, and no student has two.
  std::vector<std::string> unknown, ambiguous, twice;
  std::map<std::string, std::vector<std::string>> by_id;
  for (auto& i : out) {
    const auto m = roster.matches(fs::path(i.path).filename().string());
    if (m.empty()) {
      unknown.push_back(i.source);
      continue;
    }
    if (m.size() > 1) {
      ambiguous.push_back(i.source + " (ids " + m[0]->id + ", " + m[1]->id + (m.size() > 2 ? ", ..." : "") + ")");
      continue;
    }
    i.id = m[0]->id;
    i.display = m[0]->name;
    i.email = m[0]->email;
    i.name = safe_name(i.id);
    by_id[i.id].push_back(i.source);
  }
  for (const auto& [id, sources] : by_id)
    if (sources.size() > 1) twice.push_back("id " + id + ": " + sources[0] + ", " + sources[1] + (sources.size() > 2 ? ", ..." : ""));
  std::string bad;
  if (!unknown.empty())
    bad += "\n  no student of the roster for " + std::to_string(unknown.size()) + " submission(s): " + list(unknown) +
           "\n    (a name must hold a roster id as a word of its own, like smith_12345_lab.zip, or the student's e-mail;"
           " add them to the roster, or rename them)";
  if (!ambiguous.empty())
    bad += "\n  more than one student of the roster for: " + list(ambiguous) + "\n    (rename them so one id stands in each name)";
  if (!twice.empty())
    bad += "\n  two submissions of one student: " + list(twice) + "\n    (keep one of each)";
  if (!bad.empty()) throw Error("the roster " + roster.path + " does not match the submissions:" + bad);
  std::vector<std::string> absent;
  for (const auto& r : roster.rows)
    if (!by_id.count(r.id)) absent.push_back(r.id + (r.name.empty() ? "" : " (" + r.name + ")"));
  if (!absent.empty())
    notes->push_back("no submission from " + std::to_string(absent.size()) + " student(s) of the roster: " + list(absent, 20) +
                     " (they have no row in the gradebook)");
}

}  // namespace

std::vector<Intake> take_in(const std::vector<std::string>& args, const std::string& scratch, const Project& project,
                            const Roster* roster, std::vector<std::string>* notes) {
  Taking t;
  for (std::size_t k = 0; k < args.size(); ++k) take_in_arg(args, k, scratch, project, roster, t);
  if (!t.not_submissions.empty())
    throw Error("not a submission: " + list(t.not_submissions) +
                ". convlab grades folders, git repositories, .zip archives and tarballs (.tar, .tar.gz, .tgz, "
                ".tar.bz2, .tar.xz, .tar.zst), and LMS bulk downloads of those (one folder or archive per student)");
  if (!t.left_out.empty())
    notes->push_back("left out of the bulk download(s), not a folder or an archive: " + list(t.left_out));
  if (!roster) return std::move(t.out);
  match_roster(t.out, *roster, notes);
  return std::move(t.out);
}

}  // namespace convlab::cli
