// Submissions as they come: archives checked and unpacked with bounds, LMS bulk downloads, rosters.
#include "grading/archive.hpp"
#include "grading/intake.hpp"
#include "common/project.hpp"
#include "common/sandbox.hpp"
#include "grading/submission.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>

namespace convlab::cli {
namespace {

namespace fs = std::filesystem;
using testing_files::temp_dir;

const Project& project() {
  static const Project p = load_project(CONVLAB_SOURCE_DIR);
  return p;
}

// A zip written byte by byte (entries stored, not compressed), so that a test can hold what no
// zip tool writes: ../ paths, absolute paths, links, Unix file types.
struct ZipEntry {
  std::string name, data;
  std::uint32_t unix_mode = 0100644;  // 0120777: a symbolic link (data is its target)
};

std::uint32_t crc32(const std::string& s) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string zip_bytes(const std::vector<ZipEntry>& entries) {
  std::string body, dir;
  for (const auto& e : entries) {
    const std::uint32_t offset = static_cast<std::uint32_t>(body.size()), crc = crc32(e.data);
    put(body, 0x04034b50, 4), put(body, 10, 2), put(body, 0, 2), put(body, 0, 2), put(body, 0, 4), put(body, crc, 4);
    put(body, e.data.size(), 4), put(body, e.data.size(), 4), put(body, e.name.size(), 2), put(body, 0, 2);
    body += e.name + e.data;
    put(dir, 0x02014b50, 4), put(dir, 3u << 8 | 30, 2), put(dir, 10, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, 0, 4), put(dir, crc, 4), put(dir, e.data.size(), 4), put(dir, e.data.size(), 4);
    put(dir, e.name.size(), 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, static_cast<std::uint64_t>(e.unix_mode) << 16, 4), put(dir, offset, 4);
    dir += e.name;
  }
  std::string end;
  put(end, 0x06054b50, 4), put(end, 0, 2), put(end, 0, 2), put(end, entries.size(), 2), put(end, entries.size(), 2);
  put(end, dir.size(), 4), put(end, body.size(), 4), put(end, 0, 2);
  return body + dir + end;
}

// Tests that make zips the way a student does (`zip -r`) need Info-ZIP's zip (Debian's package;
// .ci/run installs it): without it they skip, saying so (the H100's machine has none).
#define SKIP_WITHOUT_ZIP()                                                                            \
  do {                                                                                                \
    if (which("zip").empty() || which("unzip").empty())                                               \
      GTEST_SKIP() << "zip and unzip are not installed (apt-get install zip unzip): this test makes zips with them"; \
  } while (0)

const std::string kKernel = "starter_code/01-conv-basic/conv_basic.cu";

// A student's tree under `dir`: the lab 01 kernel file, holding `text`.
void student_tree(const std::string& dir, const std::string& text, bool bare = false) {
  const std::string file = dir + "/" + (bare ? kKernel.substr(13) : kKernel);
  make_dirs(fs::path(file).parent_path().string());
  write_file_atomic(file, text);
}

// `zip -r` of the folder `dir`'s contents, as a student makes one.
void zip_folder(const std::string& zip, const std::string& dir) {
  const RunResult r = run_tool({"sh", "-c", "cd '" + dir + "' && zip -qr '" + zip + "' ."});
  ASSERT_TRUE(r.ok()) << r.output;
}

std::string unpack(const std::string& t, const std::string& name, const std::string& bytes, const UnpackLimits& l = {}) {
  write_file_atomic(t + "/" + name, bytes);
  return unpack_archive(t + "/" + name, t + "/out-" + name, l);
}

TEST(Archive, RecognisedByContentNotByName) {
  const std::string t = temp_dir("sniff");
  std::string what;
  write_file_atomic(t + "/a.tar.gz", zip_bytes({{"x", "y"}}));
  EXPECT_EQ(sniff_archive(t + "/a.tar.gz", &what), ArchiveFormat::zip);
  EXPECT_EQ(what, "a .zip archive");
  write_file_atomic(t + "/erin.zip", "%PDF-1.7\n...");
  EXPECT_EQ(sniff_archive(t + "/erin.zip", &what), ArchiveFormat::none);
  EXPECT_EQ(what, "a PDF document");
  write_file_atomic(t + "/r.rar", std::string("Rar!\x1a\x07\x01\x00", 8));
  sniff_archive(t + "/r.rar", &what);
  EXPECT_EQ(what, "a RAR archive (not accepted)");
  ASSERT_TRUE(run_tool({"tar", "-czf", t + "/t", "-C", t, "a.tar.gz"}).ok());
  EXPECT_EQ(sniff_archive(t + "/t", &what), ArchiveFormat::tarball);
  EXPECT_EQ(what, "a gzip-compressed tarball");
  EXPECT_EQ(strip_archive_extension("smith_12345_67890_lab.zip"), "smith_12345_67890_lab");
  EXPECT_EQ(strip_archive_extension("bob.tar.xz"), "bob");
  EXPECT_EQ(strip_archive_extension("notes.txt"), "notes.txt");
  fs::remove_all(t);
}

TEST(Archive, RefusesPathsOutsideItsFolderBeforeWritingAnything) {
  const std::string t = temp_dir("traversal");
  const std::string up = unpack(t, "up.zip", zip_bytes({{"ok.cu", "1"}, {"../../escaped.cu", "2"}}));
  EXPECT_NE(up.find("it holds ../../escaped.cu, a path outside its folder"), std::string::npos) << up;
  const std::string win = unpack(t, "win.zip", zip_bytes({{"a\\..\\..\\escaped.cu", "2"}}));
  EXPECT_NE(win.find("a path outside its folder"), std::string::npos) << win;
  const std::string abs = unpack(t, "abs.zip", zip_bytes({{"/tmp/escaped.cu", "2"}}));
  EXPECT_NE(abs.find("it holds /tmp/escaped.cu, an absolute path"), std::string::npos) << abs;
  EXPECT_FALSE(fs::exists(t + "/out-up.zip")) << "nothing is unpacked from a refused archive";
  EXPECT_FALSE(fs::exists(t + "/escaped.cu"));
  // The same in a tarball (GNU tar keeps a ../ name only with -P).
  write_file_atomic(t + "/f.cu", "x");
  ASSERT_TRUE(run_tool({"tar", "-cPf", t + "/up.tar", "--transform", "s,^.*f.cu$,../f.cu,", t + "/f.cu"}).ok());
  const std::string tar = unpack_archive(t + "/up.tar", t + "/out-tar");
  EXPECT_NE(tar.find("it holds ../f.cu, a path outside its folder"), std::string::npos) << tar;
  fs::remove_all(t);
}

TEST(Archive, RefusesLinks) {
  const std::string t = temp_dir("links");
  const std::string zip = unpack(t, "link.zip", zip_bytes({{"starter_code", "/work/main/reference", 0120777}}));
  EXPECT_NE(zip.find("it holds a symbolic link (starter_code)"), std::string::npos) << zip;
  fs::create_symlink("/etc/passwd", t + "/conv_basic.cu");
  ASSERT_TRUE(run_tool({"tar", "-cf", t + "/link.tar", "-C", t, "conv_basic.cu"}).ok());
  const std::string tar = unpack_archive(t + "/link.tar", t + "/out-tar");
  EXPECT_NE(tar.find("it holds a link (conv_basic.cu)"), std::string::npos) << tar;
  fs::remove_all(t);
}

TEST(Archive, BoundsWhatItUnpacksTo) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("bomb");
  UnpackLimits small;
  small.max_bytes = 1 << 20;
  small.max_file_bytes = 1 << 20;
  // 4 MiB of zeros deflate to a few KiB: refused from what the zip declares.
  write_file_atomic(t + "/zeros", std::string(4 << 20, '\0'));
  ASSERT_TRUE(run_tool({"zip", "-qj", t + "/bomb.zip", t + "/zeros"}).ok());
  const std::string declared = unpack_archive(t + "/bomb.zip", t + "/out1", small);
  EXPECT_NE(declared.find("one of its files unpacks to more than 1 MiB"), std::string::npos) << declared;
  // The same zip, its sizes made to lie (1000 bytes): refused from what it really unpacks to.
  std::string bytes = read_file(t + "/bomb.zip");
  const std::size_t local = bytes.find("PK\x03\x04"), central = bytes.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  for (int i = 0; i < 4; ++i) bytes[local + 22 + i] = bytes[central + 24 + i] = "\xe8\x03\x00\x00"[i];
  write_file_atomic(t + "/lie.zip", bytes);
  const std::string lie = unpack_archive(t + "/lie.zip", t + "/out2", small);
  EXPECT_NE(lie.find("more than its entries declare (a zip bomb?)"), std::string::npos) << lie;
  EXPECT_FALSE(fs::exists(t + "/out2/zeros"));
  // Entries are counted too.
  UnpackLimits few;
  few.max_entries = 2;
  const std::string many = unpack(t, "many.zip", zip_bytes({{"a", ""}, {"b", ""}, {"c", ""}}), few);
  EXPECT_NE(many.find("it holds 3 entries, more than the 2 accepted"), std::string::npos) << many;
  fs::remove_all(t);
}

TEST(Archive, EmptyDamagedAndUnknown) {
  const std::string t = temp_dir("empty");
  EXPECT_EQ(unpack(t, "empty.zip", zip_bytes({})), "it is empty: it holds no file");
  std::string cut = zip_bytes({{"a.cu", "int x;"}});
  cut.resize(cut.size() - 22);  // the download stopped before the end record
  EXPECT_NE(unpack(t, "cut.zip", cut).find("not a complete .zip archive"), std::string::npos);
  EXPECT_NE(unpack(t, "erin.zip", "%PDF-1.4").find("it is a PDF document, not a .zip or a tarball"), std::string::npos);
  fs::remove_all(t);
}

TEST(Submission, ZipsBareLabFoldersAndAZipOfTheZip) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("zips");
  student_tree(t + "/alice", "// alice\n");
  zip_folder(t + "/alice.zip", t + "/alice");
  const Submission a = open_submission(t + "/alice.zip", t + "/s1", project());
  EXPECT_EQ(a.kind, "zip");
  EXPECT_EQ(a.student, "alice");
  ASSERT_EQ(a.failure, "");
  EXPECT_EQ(read_file(a.files.at("lab01").at("conv_basic.cu")), "// alice\n");
  // carol/01-conv-basic/... without starter_code/, as a folder and zipped from inside it.
  student_tree(t + "/carol", "// carol\n", true);
  const Submission c = open_submission(t + "/carol", t + "/s2", project());
  ASSERT_EQ(c.failure, "");
  EXPECT_EQ(read_file(c.files.at("lab01").at("conv_basic.cu")), "// carol\n");
  zip_folder(t + "/carol.zip", t + "/carol/01-conv-basic/..");
  const Submission cz = open_submission(t + "/carol.zip", t + "/s3", project());
  ASSERT_EQ(cz.failure, "");
  EXPECT_EQ(read_file(cz.files.at("lab01").at("conv_basic.cu")), "// carol\n");
  // A zip that holds the student's zip (and macOS's __MACOSX/ beside it) is opened once more.
  make_dirs(t + "/outer/__MACOSX/starter_code/01-conv-basic");
  write_file_atomic(t + "/outer/__MACOSX/starter_code/01-conv-basic/._conv_basic.cu", "resource fork");
  fs::copy_file(t + "/alice.zip", t + "/outer/lab.zip");
  zip_folder(t + "/outer.zip", t + "/outer");
  const Submission n = open_submission(t + "/outer.zip", t + "/s4", project());
  ASSERT_EQ(n.failure, "");
  EXPECT_EQ(read_file(n.files.at("lab01").at("conv_basic.cu")), "// alice\n");
  // An LMS's folder per student, holding the archive they uploaded; two archives: which one?
  make_dirs(t + "/moodle/Alice Smith_77_assignsubmission_file_");
  fs::copy_file(t + "/alice.zip", t + "/moodle/Alice Smith_77_assignsubmission_file_/lab1.zip");
  const Submission m = open_submission(t + "/moodle/Alice Smith_77_assignsubmission_file_", t + "/s5", project());
  ASSERT_EQ(m.failure, "");
  EXPECT_EQ(m.kind, "zip");
  fs::copy_file(t + "/carol.zip", t + "/moodle/Alice Smith_77_assignsubmission_file_/lab1-old.zip");
  const Submission two = open_submission(t + "/moodle/Alice Smith_77_assignsubmission_file_", t + "/s6", project());
  EXPECT_NE(two.failure.find("the folder holds 2 archives (lab1-old.zip, lab1.zip)"), std::string::npos) << two.failure;
  // What is not an archive says what it is, once.
  write_file_atomic(t + "/erin.zip", "%PDF-1.4");
  const Submission e = open_submission(t + "/erin.zip", t + "/s7", project());
  EXPECT_EQ(e.failure, "cannot unpack erin.zip: it is a PDF document, not a .zip or a tarball (.tar, .tar.gz, .tgz, "
                       ".tar.bz2, .tar.xz, .tar.zst)");
  fs::remove_all(t);
}

std::string write_roster(const std::string& t, const std::string& text) {
  write_file_atomic(t + "/roster.csv", text);
  return t + "/roster.csv";
}

TEST(Roster, ReadsIdNameAndEmail) {
  const std::string t = temp_dir("roster");
  const Roster r = read_roster(write_roster(t,
                                            "\xef\xbb\xbfStudent,ID,SIS User ID,Email\n"
                                            "    Points Possible,,,\n"
                                            "\"Smith, Alice\",12345,S1,asmith@example.edu\n"
                                            "\n"
                                            "Bob Jones,222,S2,\n"));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].id, "12345");  // "ID" is preferred to "SIS User ID"
  EXPECT_EQ(r.rows[0].name, "Smith, Alice");
  EXPECT_EQ(r.rows[0].email, "asmith@example.edu");
  EXPECT_EQ(r.rows[1].line, 5);
  // A name holds an id as a word of its own; failing that, the e-mail or its local part.
  ASSERT_EQ(r.matches("smith_12345_67890_lab.zip").size(), 1u);
  EXPECT_EQ(r.matches("smith_12345_67890_lab.zip")[0]->id, "12345");
  EXPECT_TRUE(r.matches("smith_123456_lab.zip").empty());
  EXPECT_EQ(r.matches("ASMITH.tar.gz").at(0)->id, "12345");
  EXPECT_EQ(r.matches("jones-222").at(0)->id, "222");
  fs::remove_all(t);
}

TEST(Roster, RefusesWhatCannotNameTheRows) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("roster-bad");
  const auto refused = [&](const std::string& text) {
    try {
      read_roster(write_roster(t, text));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(refused("id,name\n1,a\n2,b\n1,c\n").find("line 4: id 1 is also on line 2"), std::string::npos);
  EXPECT_NE(refused("name,email\na,a@x\n").find("its first line names no id column"), std::string::npos);
  EXPECT_NE(refused("id,name\n,Nobody\n").find("line 2: no id"), std::string::npos);
  EXPECT_NE(refused("id,name\n1,\"Smith, A\n").find("line 2: a quote is not closed"), std::string::npos);
  EXPECT_NE(refused("id,name,email\n").find("lists no student"), std::string::npos);
  EXPECT_THROW(read_roster(t + "/missing.csv"), Error);
  fs::remove_all(t);
}

// A Canvas-style bulk download: a zip of the students' zips, named lastfirst_userid_submissionid_file.
std::string canvas_download(const std::string& t) {
  make_dirs(t + "/bulk");
  student_tree(t + "/a", "// alice\n");
  zip_folder(t + "/bulk/smithalice_12345_67890_lab01.zip", t + "/a");
  student_tree(t + "/b", "// bob\n", true);
  zip_folder(t + "/bulk/jonesbob_222_333_lab01.zip", t + "/b");
  write_file_atomic(t + "/bulk/index.html", "<html></html>");
  zip_folder(t + "/class.zip", t + "/bulk");
  return t + "/class.zip";
}

std::string intake_error(const std::vector<std::string>& args, const std::string& scratch, const Roster* roster) {
  std::vector<std::string> notes;
  try {
    take_in(args, scratch, project(), roster, &notes);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Intake, BulkDownloadNamedByTheRoster) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("bulk");
  const std::string bulk = canvas_download(t);
  std::vector<std::string> notes;
  // Without a roster: a student per archive, named after it; the LMS's index page left out, said.
  auto got = take_in({bulk}, t + "/scratch", project(), nullptr, &notes);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, "jonesbob_222_333_lab01");
  EXPECT_EQ(got[0].source, "class.zip: jonesbob_222_333_lab01.zip");
  EXPECT_EQ(got[0].id, "");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("class.zip: index.html (a text file)"), std::string::npos) << notes[0];
  // With one: each is a student of it, named by id; who did not submit is said.
  const Roster roster = read_roster(write_roster(t, "id,name,email\n12345,Alice Smith,asmith@x.edu\n222,Bob Jones,\n9,Eve,\n"));
  notes.clear();
  got = take_in({bulk}, t + "/scratch", project(), &roster, &notes);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].name, "12345");
  EXPECT_EQ(got[1].display, "Alice Smith");
  EXPECT_EQ(got[1].email, "asmith@x.edu");
  EXPECT_EQ(read_file(open_submission(got[1].path, t + "/s1", project()).files.at("lab01").at("conv_basic.cu")),
            "// alice\n");
  EXPECT_EQ(read_file(open_submission(got[0].path, t + "/s2", project()).files.at("lab01").at("conv_basic.cu")),
            "// bob\n");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[1], "no submission from 1 student(s) of the roster: 9 (Eve) (they have no row in the gradebook)");
  // The same download as a folder, inside a wrapper folder, is read the same way.
  make_dirs(t + "/unzipped");
  ASSERT_TRUE(run_tool({"unzip", "-qq", bulk, "-d", t + "/unzipped/export"}).ok());
  got = take_in({t + "/unzipped"}, t + "/scratch", project(), &roster, &notes);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, "222");
  fs::remove_all(t);
}

TEST(Intake, RefusesSubmissionsTheRosterDoesNotName) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("bulk-bad");
  const std::string bulk = canvas_download(t);
  const Roster only_alice = read_roster(write_roster(t, "id,name\n12345,Alice\n"));
  const std::string unknown = intake_error({bulk}, t + "/scratch", &only_alice);
  EXPECT_NE(unknown.find("no student of the roster for 1 submission(s): class.zip: jonesbob_222_333_lab01.zip"),
            std::string::npos) << unknown;
  const Roster both = read_roster(write_roster(t, "id,name\n12345,Alice\n333,Carol\n222,Bob\n"));
  const std::string ambiguous = intake_error({bulk}, t + "/scratch", &both);
  EXPECT_NE(ambiguous.find("more than one student of the roster for: class.zip: jonesbob_222_333_lab01.zip (ids 333, 222)"),
            std::string::npos) << ambiguous;
  fs::copy_file(t + "/bulk/smithalice_12345_67890_lab01.zip", t + "/smith_12345_late.zip");
  const Roster roster = read_roster(write_roster(t, "id,name\n12345,Alice\n222,Bob\n"));
  const std::string twice = intake_error({bulk, t + "/smith_12345_late.zip"}, t + "/scratch", &roster);
  EXPECT_NE(twice.find("two submissions of one student: id 12345: class.zip: smithalice_12345_67890_lab01.zip, " + t +
                       "/smith_12345_late.zip"),
            std::string::npos) << twice;
  fs::remove_all(t);
}

TEST(Intake, OneSubmissionPerArgumentAndAClearErrorForTheRest) {
  SKIP_WITHOUT_ZIP();
  const std::string t = temp_dir("args");
  student_tree(t + "/alice", "// alice\n");
  zip_folder(t + "/alice.zip", t + "/alice");
  student_tree(t + "/carol", "// carol\n", true);
  write_file_atomic(t + "/broken.tar.gz", "not a tarball");
  std::vector<std::string> notes;
  const auto got = take_in({t + "/alice.zip", t + "/carol", t + "/broken.tar.gz"}, t + "/scratch", project(), nullptr, &notes);
  ASSERT_EQ(got.size(), 3u);  // a damaged archive is the student's: graded 0, with the reason
  EXPECT_EQ(got[0].name, "alice");
  EXPECT_EQ(got[1].name, "carol");
  EXPECT_EQ(got[2].name, "broken");
  // A class's folders, passed as one folder: a student each (a wrapper folder is not a class).
  student_tree(t + "/class/dave", "// dave\n");
  student_tree(t + "/class/eve/work", "// eve\n");
  const auto cls = take_in({t + "/class"}, t + "/scratch", project(), nullptr, &notes);
  ASSERT_EQ(cls.size(), 2u);
  EXPECT_EQ(cls[0].name, "dave");
  EXPECT_EQ(cls[1].source, "class: eve");
  EXPECT_EQ(take_in({t + "/class/eve"}, t + "/scratch", project(), nullptr, &notes).size(), 1u);
  write_file_atomic(t + "/erin.pdf", "%PDF-1.4");
  write_file_atomic(t + "/roster.csv", "id\n1\n");
  const std::string e = intake_error({t + "/alice.zip", t + "/erin.pdf", t + "/roster.csv"}, t + "/scratch", nullptr);
  EXPECT_NE(e.find("not a submission: " + t + "/erin.pdf is a PDF document; " + t +
                   "/roster.csv is a CSV file (a roster is given with --roster FILE). convlab grades folders"),
            std::string::npos) << e;
  EXPECT_NE(intake_error({t + "/nobody"}, t + "/scratch", nullptr).find("does not exist"), std::string::npos);
  fs::remove_all(t);
}

// An intake list (a --slurm task's share, written on the login node) stands for the submissions it
// lists, named and identified as listed; anything else in its place is refused, naming the file.
TEST(Intake, IntakeListsAreTheirStudentsAndNothingElse) {
  const std::string t = temp_dir("intake-list");
  student_tree(t + "/carol", "// carol\n");
  student_tree(t + "/bob", "// bob\n");
  Intake c{t + "/carol", "777", "class.zip: carol_777_lab01", "777", "Carol", "c@x.edu"};
  Intake b{t + "/bob", "222", "class.zip: jonesbob_222_lab01", "222", "Bob Jones", ""};
  write_file_atomic(t + "/task-0.json", intake_list_json({c, b}));
  EXPECT_TRUE(is_intake_list(t + "/task-0.json"));
  std::vector<std::string> notes;
  const auto got = take_in({t + "/task-0.json"}, t + "/scratch", project(), nullptr, &notes);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].path, c.path);
  EXPECT_EQ(got[0].name, "777");
  EXPECT_EQ(got[0].source, "class.zip: carol_777_lab01");
  EXPECT_EQ(got[0].display, "Carol");
  EXPECT_EQ(got[0].email, "c@x.edu");
  EXPECT_EQ(got[1].id, "222");
  EXPECT_TRUE(notes.empty());
  // Not read with a roster: it names its students itself.
  const Roster roster = read_roster(write_roster(t, "id\n777\n222\n"));
  EXPECT_NE(intake_error({t + "/task-0.json"}, t + "/scratch", &roster).find("is not read with --roster"),
            std::string::npos);

  const auto refused = [&](const std::string& text, const std::string& why) {
    write_file_atomic(t + "/bad.json", text);
    try {
      read_intake_list(t + "/bad.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("intake list " + t + "/bad.json: " + why), std::string::npos) << e.what();
    }
  };
  refused("{", "not valid JSON");
  refused(R"({"convlab_intake": 2, "submissions": []})", "not an intake list of convlab grade --slurm");
  refused(R"({"convlab_intake": 1, "submissions": [{"path": "/"}]})", "submission 1: ");
  refused(R"({"convlab_intake": 1, "submissions": [{"path": ")" + t + R"(/carol", "name": "../x"}]})",
          "submission 1: '../x' is not a plain file name");
  refused(R"({"convlab_intake": 1, "submissions": [{"path": ")" + t + R"(/carol", "name": "a"}, {"path": ")" + t +
              R"(/bob", "name": "a"}]})",
          "submission 2: the name 'a' is given twice");
  refused(R"({"convlab_intake": 1, "submissions": [{"path": ")" + t + R"(/gone", "name": "a"}]})",
          "submission 1 (a): '" + t + "/gone' does not exist");
  // Other JSON is not a submission, as before.
  write_file_atomic(t + "/other.json", "{\"a\": 1}");
  EXPECT_FALSE(is_intake_list(t + "/other.json"));
  EXPECT_NE(intake_error({t + "/other.json"}, t + "/scratch", nullptr).find("not a submission: " + t + "/other.json"),
            std::string::npos);
  fs::remove_all(t);
}

}  // namespace
}  // namespace convlab::cli
