// Reading submissions and the course tree.
#include "common/project.hpp"
#include "common/sandbox.hpp"
#include "grading/submission.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace convlab::cli {
namespace {

namespace fs = std::filesystem;

const Project& project() {
  static const Project p = load_project(CONVLAB_SOURCE_DIR);
  return p;
}

struct TempDir {
  std::string path = fs::temp_directory_path().string() + "/convlab-sub-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter++);
  static inline int counter = 0;
  TempDir() {
    fs::remove_all(path);
    make_dirs(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(Project, FindsLabsByAnyName) {
  const Project& p = project();
  ASSERT_FALSE(p.labs.empty());
  for (const char* name : {"lab01", "01", "1", "01-conv-basic", "labs/01-conv-basic"})
    EXPECT_EQ(p.find(name).spec.lab, "lab01") << name;
  try {
    p.find("lab42");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown lab 'lab42'; the labs are: lab01 (01-conv-basic)"), std::string::npos);
  }
  EXPECT_THROW(find_root("/nonexistent"), Error);
}

TEST(Project, StudentCopyLeavesOutSolutionsAndGradingFixtures) {
  EXPECT_FALSE(in_source_tree("reference/01-conv-basic/conv_basic.cu", false, true));
  EXPECT_FALSE(in_source_tree("grader/cli/tests/fixtures/correct", true, true));
  EXPECT_FALSE(in_source_tree("build/default", true, true));
  EXPECT_FALSE(in_source_tree(".git", true, false));
  EXPECT_TRUE(in_source_tree("reference/01-conv-basic/conv_basic.cu", false, false));
  EXPECT_TRUE(in_source_tree("grader/cli/main.cpp", false, true));
  EXPECT_TRUE(in_source_tree("starter_code/01-conv-basic/conv_basic.cu", false, true));
}

// Build slots (grade_build.cpp): a slot is held by one lease at a time, in this process or another; a
// released slot is taken again, its build found (a later run rebuilds only what changed).
TEST(SlotLease, OneHolderPerSlotAndReuseAfterRelease) {
  TempDir t;
  const std::string base = t.path + "/slots/abc";
  SlotLease a = lease_slot(base);
  ASSERT_TRUE(a.held());
  EXPECT_EQ(a.index(), 0);
  EXPECT_EQ(a.dir(), base + "/0");
  EXPECT_FALSE(a.reused());
  SlotLease b = lease_slot(base);  // slot 0 is held: the next one
  EXPECT_EQ(b.index(), 1);
  // Another process cannot take slot 0 or 1 either (flock is per open file, across processes).
  const std::string probe = "flock --nonblock " + base + "/0.lock true";
  const bool have_flock = !which("flock").empty();
  if (have_flock) {
    EXPECT_NE(std::system(probe.c_str()), 0);
  }
  make_dirs(a.dir() + "/build");
  write_file_atomic(a.dir() + "/build/CMakeCache.txt", "cache\n");
  a = SlotLease();  // released
  if (have_flock) {
    EXPECT_EQ(std::system(probe.c_str()), 0);
  }
  SlotLease c = lease_slot(base);
  EXPECT_EQ(c.index(), 0);
  EXPECT_TRUE(c.reused());
  // Every slot held: a clear error, never a wait or a shared tree.
  try {
    SlotLease d = lease_slot(base, 2);
    ADD_FAILURE() << "a third lease of two slots";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all 2 build slots of " + base + " are in use"), std::string::npos) << e.what();
  }
}

TEST(Submission, NamesComeFromThePath) {
  EXPECT_EQ(student_name("subs/alice.tar.gz"), "alice");
  EXPECT_EQ(student_name("subs/bob.tgz"), "bob");
  EXPECT_EQ(student_name("/x/carol.git"), "carol");
  EXPECT_EQ(student_name("/x/dave/"), "dave");
  EXPECT_EQ(student_name("eve smith.tar"), "eve_smith");
}

TEST(Submission, KeepsOnlyAllowedFilesAndNamesTampering) {
  TempDir t;
  const std::string s = t.path + "/alice";
  make_dirs(s + "/starter_code/01-conv-basic");
  make_dirs(s + "/labs/01-conv-basic");
  write_file_atomic(s + "/starter_code/01-conv-basic/conv_basic.cu", "// mine\n");
  write_file_atomic(s + "/starter_code/01-conv-basic/notes.txt", "notes\n");
  write_file_atomic(s + "/labs/01-conv-basic/grading.json", "{\"hacked\": true}\n");
  write_file_atomic(s + "/labs/01-conv-basic/lab01.hpp", read_file(project().root + "/labs/01-conv-basic/lab01.hpp"));
  const Submission sub = open_submission(s, t.path + "/scratch", project());
  EXPECT_EQ(sub.kind, "folder");
  EXPECT_EQ(sub.failure, "");
  ASSERT_EQ(sub.files.count("lab01"), 1u);
  EXPECT_EQ(sub.files.at("lab01").at("conv_basic.cu"), s + "/starter_code/01-conv-basic/conv_basic.cu");
  std::string notes;
  for (const auto& n : sub.notes) notes += n + "\n";
  EXPECT_NE(notes.find("tampering ignored"), std::string::npos) << notes;
  EXPECT_NE(notes.find("labs/01-conv-basic/grading.json"), std::string::npos) << notes;
  EXPECT_NE(notes.find("starter_code/01-conv-basic/notes.txt"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 unchanged file(s) of the course tree ignored"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("lab01.hpp"), std::string::npos) << "an unchanged copy is not tampering: " << notes;
}

TEST(Submission, RefusesSymbolicLinks) {
  TempDir t;
  const std::string s = t.path + "/mallory";
  make_dirs(s + "/starter_code/01-conv-basic");
  fs::create_symlink(project().root + "/reference/01-conv-basic/conv_basic.cu",
                     s + "/starter_code/01-conv-basic/conv_basic.cu");
  const Submission sub = open_submission(s, t.path + "/scratch", project());
  EXPECT_EQ(sub.files.count("lab01"), 0u);
  ASSERT_FALSE(sub.notes.empty());
  EXPECT_NE(sub.notes[0].find("refused: starter_code/01-conv-basic/conv_basic.cu (not a regular file"), std::string::npos)
      << sub.notes[0];
}

TEST(Submission, TarballsAndGitRepositories) {
  TempDir t;
  const std::string s = t.path + "/src/work";
  make_dirs(s + "/starter_code/01-conv-basic");
  write_file_atomic(s + "/starter_code/01-conv-basic/conv_basic.cu", "// from an archive\n");
  ASSERT_TRUE(run_tool({"tar", "-czf", t.path + "/bob.tar.gz", "-C", t.path + "/src", "work"}).ok());
  Submission tar = open_submission(t.path + "/bob.tar.gz", t.path + "/scratch-tar", project());
  EXPECT_EQ(tar.kind, "tarball");
  EXPECT_EQ(tar.student, "bob");
  ASSERT_EQ(tar.failure, "");
  EXPECT_EQ(read_file(tar.files.at("lab01").at("conv_basic.cu")), "// from an archive\n");

  const std::string git = "git -c user.name=t -c user.email=t@t";
  ASSERT_TRUE(run_tool({"sh", "-c", "cd " + s + " && git init -q && " + git + " add -A && " + git +
                                        " commit -qm s && echo '// uncommitted' > starter_code/01-conv-basic/conv_basic.cu"})
                  .ok());
  Submission repo = open_submission(s, t.path + "/scratch-git", project());
  EXPECT_EQ(repo.kind, "git");
  ASSERT_EQ(repo.failure, "");
  EXPECT_EQ(read_file(repo.files.at("lab01").at("conv_basic.cu")), "// from an archive\n");  // the commit, not the work tree
}

TEST(Submission, BadSubmissionsAreGradedNotFatal) {
  TempDir t;
  write_file_atomic(t.path + "/broken.tar.gz", "this is not a tarball");
  const Submission bad = open_submission(t.path + "/broken.tar.gz", t.path + "/scratch", project());
  EXPECT_NE(bad.failure.find("cannot unpack broken.tar.gz: it is a text file, not a .zip or a tarball"), std::string::npos)
      << bad.failure;
  make_dirs(t.path + "/empty");
  const Submission empty = open_submission(t.path + "/empty", t.path + "/scratch2", project());
  EXPECT_NE(empty.failure.find("no starter_code/ folder"), std::string::npos);
  EXPECT_THROW(open_submission(t.path + "/missing", t.path + "/scratch3", project()), Error);
}

}  // namespace
}  // namespace convlab::cli
