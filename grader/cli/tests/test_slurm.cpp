// The decisions of `convlab grade --slurm` (slurm.hpp): how submissions are split
// into array tasks and named, which options each task gets, what Slurm's job
// states mean, and when a submission is flagged for its GPU. The whole path,
// against a real Slurm, is cli.e2e.slurm (e2e_slurm.sh).
#include "grading/intake.hpp"
#include "grading/reports.hpp"
#include "common/sandbox.hpp"
#include "grading/slurm.hpp"
#include "grading/submission.hpp"
#include "test_files.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace convlab::cli {
namespace {

namespace fs = std::filesystem;

TEST(Slurm, StudentNamesAreThoseGradeGives) {
  // As Grader::run(): the first keeps its name; repeats get -2, -3, skipping names taken.
  const std::vector<std::string> subs = {"a/alice", "b/alice.tar.gz", "c/alice-2", "bob.git", "d/alice"};
  EXPECT_EQ(slurm::student_names(subs),
            (std::vector<std::string>{"alice", "alice-2", "alice-2-2", "bob", "alice-3"}));
}

TEST(Slurm, SharesKeepOrderAndSize) {
  std::vector<std::string> subs;
  for (int i = 0; i < 23; ++i) subs.push_back("subs/s" + std::to_string(100 + i));
  const auto shares = slurm::split_shares(subs, 10);
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].submissions.size(), 10u);
  EXPECT_EQ(shares[1].submissions.size(), 10u);
  EXPECT_EQ(shares[2].submissions.size(), 3u);
  std::vector<std::string> again;
  for (const auto& s : shares) {
    EXPECT_EQ(s.index, &s - &shares[0]);
    again.insert(again.end(), s.submissions.begin(), s.submissions.end());
  }
  EXPECT_EQ(again, subs);
  EXPECT_EQ(shares[2].students, (std::vector<std::string>{"s120", "s121", "s122"}));
}

TEST(Slurm, NamesThatCouldCollideStayInOneShare) {
  // alice, alice-2 (a folder so named) and a second alice name one another: in separate
  // tasks, each task would call its own "alice" alice. Together, they get the names one
  // local `convlab grade` of the whole list gives.
  const std::vector<std::string> subs = {"x/alice", "x/bob", "x/carol", "y/alice-2", "x/dave", "y/alice", "x/erin"};
  const auto shares = slurm::split_shares(subs, 2);
  const auto global = slurm::student_names(subs);
  std::map<std::string, int> task_of;
  std::size_t total = 0;
  for (const auto& s : shares) {
    // The invariant the merge relies on: a task names its share as the whole run does.
    EXPECT_EQ(slurm::student_names(s.submissions), s.students) << "task " << s.index;
    for (const auto& n : s.students) task_of[n] = s.index;
    total += s.submissions.size();
  }
  EXPECT_EQ(total, subs.size());
  EXPECT_EQ(global[5], "alice-3");  // alice-2 is taken by the folder of that name
  EXPECT_EQ(task_of.at("alice"), task_of.at("alice-2"));
  EXPECT_EQ(task_of.at("alice"), task_of.at("alice-3"));
  EXPECT_NE(task_of.at("alice"), task_of.at("erin"));  // the others are still spread over tasks
  for (std::size_t i = 0; i < subs.size(); ++i) EXPECT_TRUE(task_of.count(global[i])) << global[i];
}

TEST(Slurm, SharesRefuseNonsense) {
  EXPECT_THROW(slurm::split_shares({"a"}, 0), Error);
  EXPECT_TRUE(slurm::split_shares({}, 3).empty());
}

// A `grade`-like command: the options each task must get again, as given.
struct GradeLike {
  CLI::App app{"t"};
  std::vector<std::string> subs, defs;
  std::string out, labs, exclude, roster, gpus, work, calibration, expect;
  int jobs = 0;
  bool force = false;
  SlurmOptions slurm;
  GradeLike() {
    app.add_option("SUBMISSION", subs);
    app.add_option("--out", out);
    app.add_option("--labs", labs);
    app.add_option("--roster", roster);
    app.add_option("--jobs,-j", jobs);
    app.add_option("-D", defs);
    app.add_option("--sanitize-exclude", exclude);
    app.add_option("--gpus", gpus);
    app.add_option("--work-dir", work);
    app.add_option("--calibration", calibration);
    app.add_option("--expect", expect);
    app.add_flag("--force", force);
    add_slurm_options(app, slurm);
  }
  // The settings `convlab grade` reads from what was parsed (main.cpp's part).
  GradeOptions options() const {
    GradeOptions go;
    go.submissions = subs;
    go.out = out;
    go.roster = roster;
    go.labs = split(labs, ',');
    return go;
  }
  void parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  }
};

TEST(Slurm, TasksGetTheGradingOptionsAsGiven) {
  GradeLike g;
  g.parse({"s1", "s2", "--out", "o", "--labs", "lab01,lab02", "-j", "3", "-D", "A=1", "-DB=2", "--sanitize-exclude",
           "-x*", "--force", "--slurm", "--partition", "gpu", "--per-task", "4"});
  EXPECT_TRUE(g.slurm.enabled);
  EXPECT_EQ(g.slurm.partition, "gpu");
  const auto words = slurm::given_options(g.app, {"--out"});
  // Positionals, --out (skipped) and the Slurm group are left out; a value that starts
  // with '-' stays attached to its option.
  EXPECT_EQ(words, (std::vector<std::string>{"--labs=lab01,lab02", "--jobs=3", "-DA=1", "-DB=2", "--sanitize-exclude=-x*",
                                             "--force"}));
  // Read back by the same command, they mean what they meant.
  GradeLike again;
  std::vector<std::string> args = {"s1", "--out", "elsewhere"};
  args.insert(args.end(), words.begin(), words.end());
  again.parse(args);
  EXPECT_EQ(again.labs, "lab01,lab02");
  EXPECT_EQ(again.jobs, 3);
  EXPECT_EQ(again.defs, (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_EQ(again.exclude, "-x*");
  EXPECT_TRUE(again.force);
  EXPECT_FALSE(again.slurm.enabled);
}

// The collector writes feedback as the tasks' own grading would: for the preset they graded with.
TEST(Slurm, TheCollectorsPresetIsTheTasks) {
  EXPECT_EQ(slurm::preset_of({}), "default");
  EXPECT_EQ(slurm::preset_of({"--labs=lab01", "--preset=cpu", "--jobs=1"}), "cpu");
  EXPECT_EQ(slurm::preset_of({"--cuda-arch=90"}), "default");
}

TEST(Slurm, SbatchArgsTakeOneValueEach) {
  GradeLike g;
  g.parse({"--slurm", "--sbatch-arg=--qos=short", "s1", "--sbatch-arg", "--mem=8G", "s2", "--out", "o"});
  EXPECT_EQ(g.slurm.sbatch_args, (std::vector<std::string>{"--qos=short", "--mem=8G"}));
  EXPECT_EQ(g.subs, (std::vector<std::string>{"s1", "s2"}));
}

TEST(Slurm, SlurmOptionsNeedSlurm) {
  GradeLike g;
  g.parse({"s1", "--out", "o", "--time", "30"});
  EXPECT_THROW(refuse_slurm_options(g.app), Error);
  GradeLike plain;
  plain.parse({"s1", "--out", "o", "--labs", "lab01"});
  EXPECT_NO_THROW(refuse_slurm_options(plain.app));
}

TEST(Slurm, SacctStatesPerArrayIndex) {
  const std::string sacct =
      "123_0|COMPLETED|0:0|node1|00:01:02\n"
      "123_1|CANCELLED by 0|0:15|node2|00:00:40\n"
      "123_3|TIMEOUT|0:0|node1|00:30:00\n"
      "123_4|NODE_FAIL|0:0|node3|00:12:00\n"
      "123_[5-7,9%2]|PENDING|0:0|None assigned|00:00:00\n"
      "123_2.batch|COMPLETED|0:0|node1|00:01:00\n"  // a step, not a task
      "1234_8|FAILED|2:0|node1|00:00:01\n"          // another job
      "124|COMPLETED|0:0|node1|00:00:01\n";         // the collector
  const auto s = slurm::parse_job_states(sacct, "123");
  EXPECT_EQ(s.size(), 8u);
  EXPECT_EQ(s.at(0).state, "COMPLETED");
  EXPECT_EQ(s.at(0).node, "node1");
  EXPECT_EQ(s.at(0).elapsed, "00:01:02");
  EXPECT_EQ(s.at(1).state, "CANCELLED by 0");
  EXPECT_EQ(s.at(1).exit_code, "0:15");
  EXPECT_EQ(s.at(3).state, "TIMEOUT");
  EXPECT_EQ(s.at(4).state, "NODE_FAIL");
  for (int k : {5, 6, 7, 9}) {
    EXPECT_EQ(s.at(k).state, "PENDING") << k;
    EXPECT_EQ(s.at(k).job, "123_" + std::to_string(k));
  }
  EXPECT_FALSE(s.count(2));
  EXPECT_FALSE(s.count(8));
}

TEST(Slurm, SqueueStatesPerArrayIndex) {
  // squeue -h -r --states=all -o '%i|%T||%N|%M' (where there is no accounting)
  const auto s = slurm::parse_job_states("77_0|RUNNING||gpu3|1:02\n77_1|PREEMPTED||gpu4|10:00\n", "77");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.at(0).state, "RUNNING");
  EXPECT_EQ(s.at(0).node, "gpu3");
  EXPECT_EQ(s.at(1).state, "PREEMPTED");
  EXPECT_TRUE(slurm::parse_job_states("slurm_load_jobs error: Invalid job id specified\n", "77").empty());
}

TEST(Slurm, ActiveStatesAreNotResubmitted) {
  for (const char* s : {"PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "COMPLETING", "CONFIGURING"})
    EXPECT_TRUE(slurm::is_active(s)) << s;
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED by 1000", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                        "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", ""})
    EXPECT_FALSE(slurm::is_active(s)) << s;
}

TEST(Slurm, GpuModelAndTheCalibrationFlag) {
  EXPECT_EQ(slurm::gpu_model("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MB L2, 85.0 GB, SM clock 1980 MHz)"),
            "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(slurm::gpu_model("NVIDIA A100-SXM4-80GB"), "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(slurm::calibration_note("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"), "");
  EXPECT_EQ(slurm::calibration_note("", "NVIDIA H100 80GB HBM3"), "");  // no GPU: no speed measured
  EXPECT_EQ(slurm::calibration_note("NVIDIA A100-SXM4-80GB", ""), "");  // the calibration names none
  const std::string note = slurm::calibration_note("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3");
  EXPECT_NE(note.find("graded on an NVIDIA A100-SXM4-80GB"), std::string::npos) << note;
  EXPECT_NE(note.find("calibrated on an NVIDIA H100 80GB HBM3"), std::string::npos) << note;
}

TEST(Slurm, DefaultTimeGrowsWithTheShare) {
  EXPECT_EQ(slurm::default_time(8, 1), "0:44:00");    // 20 + 3 x 8
  EXPECT_EQ(slurm::default_time(10, 6), "3:20:00");   // 20 + 3 x 60
  EXPECT_EQ(slurm::default_time(1, 0), "0:23:00");
}

TEST(Slurm, ShellQuote) {
  EXPECT_EQ(slurm::shell_quote("/a b/c"), "'/a b/c'");
  EXPECT_EQ(slurm::shell_quote("it's"), "'it'\\''s'");
}

// --slurm takes submissions in as a local `convlab grade` does (intake.hpp): an LMS bulk download
// with a roster is a student per submission, named by the roster's id, before the class is split
// into array tasks; each task's `convlab grade` gets an intake list of its students with the names,
// ids and origins the local grading gives them. sbatch is a stand-in that records its scripts and
// prints a job id (a real Slurm runs the tasks in cli.e2e.slurm).
class SlurmIntake : public ::testing::Test {
protected:
  void SetUp() override {
    t_ = testing_files::temp_dir("slurm-intake");
    // A bulk download as a tarball of the students' folders (Moodle-style names), the LMS's index
    // page beside them, and a roster with one student who did not submit.
    for (const auto& [folder, text] : std::vector<std::pair<std::string, std::string>>{
             {"smithalice_12345_67890_lab01", "// alice\n"}, {"jonesbob_222_333_lab01", "// bob\n"},
             {"carol_777_1_lab01", "// carol\n"}}) {
      make_dirs(t_ + "/bulk/" + folder + "/starter_code/01-conv-basic");
      write_file_atomic(t_ + "/bulk/" + folder + "/starter_code/01-conv-basic/conv_basic.cu", text);
    }
    write_file_atomic(t_ + "/bulk/index.html", "<html></html>");
    const RunResult tar = run_tool({"tar", "-czf", t_ + "/class.tar.gz", "-C", t_ + "/bulk", "."});
    ASSERT_TRUE(tar.ok()) << tar.output;
    write_file_atomic(t_ + "/roster.csv",
                      "id,name,email\n12345,\"Smith, Alice\",asmith@x.edu\n222,Bob Jones,\n777,Carol,c@x.edu\n9,Eve,\n");
    testing_files::write_executable(t_ + "/bin/sbatch",
                                    "#!/bin/sh\necho \"$@\" >>'" + t_ + "/sbatch.log'\necho 4242\n");
    // No accounting: the collector then reads the tasks' folders only.
    for (const char* tool : {"sacct", "squeue"}) testing_files::write_executable(t_ + "/bin/" + tool, "#!/bin/sh\nexit 0\n");
    path_ = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("PATH", (t_ + "/bin:" + path_).c_str(), 1);
  }
  void TearDown() override {
    ::setenv("PATH", path_.c_str(), 1);
    fs::remove_all(t_);
  }
  static const Project& project() {
    static const Project p = load_project(CONVLAB_SOURCE_DIR);
    return p;
  }
  // `convlab grade ARGS --slurm`: its exit status; what it printed in printed_.
  int grade(const std::vector<std::string>& args) {
    GradeLike g;
    g.parse(args);
    ::testing::internal::CaptureStdout();
    int rc = -1;
    try {
      rc = slurm_grade_main(project(), g.options(), g.slurm, g.app);
    } catch (...) {
      printed_ = ::testing::internal::GetCapturedStdout();
      throw;
    }
    printed_ = ::testing::internal::GetCapturedStdout();
    return rc;
  }
  std::string t_, path_, printed_;
};

TEST_F(SlurmIntake, BulkDownloadWithARosterGetsTheLocalNamesAndIds) {
  const std::string out = t_ + "/out";
  ASSERT_EQ(grade({t_ + "/class.tar.gz", "--roster", t_ + "/roster.csv", "--out", out, "--labs", "lab01", "--slurm",
                   "--per-task", "2"}),
            0)
      << printed_;
  // What a local `convlab grade` of the same arguments takes in (grade.cpp: take_in, then names).
  const Roster roster = read_roster(t_ + "/roster.csv");
  std::vector<std::string> notes;
  const auto local = take_in({t_ + "/class.tar.gz"}, t_ + "/local", project(), &roster, &notes);
  std::vector<std::string> local_names;
  for (const auto& i : local) local_names.push_back(i.name);
  local_names = slurm::unique_names(local_names);
  ASSERT_EQ(local_names, (std::vector<std::string>{"777", "222", "12345"}));

  const auto m = nlohmann::json::parse(read_file(out + "/slurm/manifest.json"));
  EXPECT_EQ(m.at("students").get<std::vector<std::string>>(), local_names);
  EXPECT_EQ(m.at("arguments"), nlohmann::json({t_ + "/class.tar.gz"}));
  ASSERT_EQ(m.at("tasks").size(), 2u);  // three students, two per task: not one task for the download
  for (const auto& o : m.at("grade_options")) EXPECT_EQ(o.get<std::string>().find("--roster"), std::string::npos) << o;
  EXPECT_NE(printed_.find("3 submission(s) from 1 argument(s), named by the roster " + t_ + "/roster.csv in 2 array task(s)"),
            std::string::npos)
      << printed_;
  EXPECT_NE(printed_.find("intake: no submission from 1 student(s) of the roster: 9 (Eve)"), std::string::npos) << printed_;
  EXPECT_NE(printed_.find("index.html"), std::string::npos) << printed_;  // left out, said
  EXPECT_EQ(split(read_file(t_ + "/sbatch.log"), '\n').size(), 2u);     // the array and its collector

  // Each task's list: its students as the local grading names, identifies and shows them; read by
  // the task's `convlab grade` (take_in) as those students, with their own files.
  std::vector<std::string> names;
  std::map<std::string, std::string> code = {{"777", "// carol\n"}, {"222", "// bob\n"}, {"12345", "// alice\n"}};
  for (const auto& task : m.at("tasks")) {
    const std::string list = out + "/slurm/intake/task-" + std::to_string(task.at("index").get<int>()) + ".json";
    std::vector<std::string> task_notes;
    const auto got = take_in({list}, t_ + "/task-scratch", project(), nullptr, &task_notes);
    ASSERT_EQ(got.size(), task.at("students").size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].name, task.at("students")[i].get<std::string>());
      const auto same = std::find_if(local.begin(), local.end(), [&](const Intake& l) { return l.id == got[i].id; });
      ASSERT_NE(same, local.end()) << got[i].id;
      EXPECT_EQ(got[i].source, same->source);  // "class.tar.gz: carol_777_1_lab01"
      EXPECT_EQ(got[i].display, same->display);
      EXPECT_EQ(got[i].email, same->email);
      const Submission s = open_submission(got[i].path, t_ + "/open-" + got[i].name, project());
      EXPECT_EQ(read_file(s.files.at("lab01").at("conv_basic.cu")), code.at(got[i].name)) << got[i].name;
      names.push_back(got[i].name);
    }
  }
  EXPECT_EQ(names, local_names);
  EXPECT_EQ(local[0].source, "class.tar.gz: carol_777_1_lab01");

  // The tasks' results (as their `convlab grade` names and identifies them), merged: the gradebook of
  // the local grading, with the roster's columns, and the intake's notes in the log.
  std::vector<StudentResult> expected;
  for (const auto& task : m.at("tasks")) {
    const std::string dir = out + "/tasks/" + std::to_string(task.at("index").get<int>());
    const auto listed = read_intake_list(out + "/slurm/intake/task-" + std::to_string(task.at("index").get<int>()) + ".json");
    for (const auto& i : listed) {
      StudentResult r;
      r.student = i.name;
      r.id = i.id, r.name = i.display, r.email = i.email, r.origin = i.source;
      LabResult l;
      l.lab = "lab01";
      l.score = l.max_score = 100;
      r.labs = {l};
      make_dirs(dir + "/state");
      write_file_atomic(dir + "/state/" + i.name + ".json", to_json(r));
    }
  }
  ::testing::internal::CaptureStdout();
  const int rc = slurm_collect_main(project(), out);
  printed_ = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << printed_;
  EXPECT_EQ(read_file(out + "/gradebook.csv"),
            "student,id,email,lab01,total\nPoints Possible,,,100,100\nCarol,777,c@x.edu,100,100\n"
            "Bob Jones,222,,100,100\n\"Smith, Alice\",12345,asmith@x.edu,100,100\n");
  EXPECT_NE(read_file(out + "/feedback/777.md").find("Submission: `class.tar.gz: carol_777_1_lab01`"), std::string::npos);
  EXPECT_NE(read_file(out + "/grade.log").find("intake: no submission from 1 student(s) of the roster: 9 (Eve)"),
            std::string::npos);
}

TEST_F(SlurmIntake, ARosterThatDoesNotMatchIsRefusedBeforeAnythingIsSubmitted) {
  write_file_atomic(t_ + "/short.csv", "id,name\n12345,Alice\n222,Bob\n");
  const std::string out = t_ + "/out";
  try {
    grade({t_ + "/class.tar.gz", "--roster", t_ + "/short.csv", "--out", out, "--slurm"});
    FAIL() << "a roster without carol was accepted: " << printed_;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no student of the roster for 1 submission(s): class.tar.gz: carol_777_1_lab01"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(out + "/slurm/manifest.json"));
  EXPECT_FALSE(fs::exists(t_ + "/sbatch.log"));
  // A dry run takes the download in too, says what each task would grade, and leaves nothing behind.
  ASSERT_EQ(grade({t_ + "/class.tar.gz", "--out", out, "--slurm", "--per-task", "2", "--dry-run"}), 0);
  EXPECT_NE(printed_.find("would hold 3 submission(s) in 2 array task(s)"), std::string::npos) << printed_;
  EXPECT_NE(printed_.find("task 0: carol_777_1_lab01 jonesbob_222_333_lab01"), std::string::npos) << printed_;
  EXPECT_NE(printed_.find(out + "/slurm/intake/task-0.json --out"), std::string::npos) << printed_;
  EXPECT_FALSE(fs::exists(out));
  // Its unpacked download too (a temporary folder, removed when the dry run ends).
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / ("convlab-slurm-dry-run-" + std::to_string(::getpid()))));
  EXPECT_FALSE(fs::exists(t_ + "/sbatch.log"));
}

// The collector on a run as its tasks leave it: a manifest, each task's state/ and
// slurm.json (its attempts, the GPU each found, what each graded). Slurm itself is
// not asked (no round was submitted); e2e_slurm.sh runs the collector under Slurm.
class Collector : public ::testing::Test {
protected:
  void SetUp() override {
    out_ = fs::temp_directory_path().string() + "/convlab-collect-" + std::to_string(::getpid());
    fs::remove_all(out_);
    const nlohmann::json tasks = nlohmann::json::array(
        {{{"index", 0}, {"submissions", {"s/alice", "s/bob", "s/dan"}}, {"students", {"alice", "bob", "dan"}}},
         {{"index", 1}, {"submissions", {"s/carol"}}, {"students", {"carol"}}}});
    const nlohmann::json manifest = {
        {"convlab_slurm", 1}, {"created", "now"}, {"out", out_}, {"root", CONVLAB_SOURCE_DIR}, {"convlab", "convlab"},
        {"cwd", "/"}, {"grade_options", nlohmann::json::array()}, {"labs", {"lab01"}}, {"lab_points", {100}},
        {"calibration", ""}, {"calibrated_on", "NVIDIA H100 80GB HBM3"}, {"calibrated_on_source", "the test"},
        {"expect", ""}, {"work_dir", ""}, {"submissions", {"s/alice", "s/bob", "s/carol", "s/dan"}},
        {"students", {"alice", "bob", "carol", "dan"}}, {"tasks", tasks},
        {"slurm", {{"partition", ""}, {"account", ""}, {"gpu_type", ""}, {"constraint", ""}, {"no_gpu", false},
                   {"time", ""}, {"per_task", 2}, {"tasks_at_once", 0}, {"cpus_per_task", 0},
                   {"sbatch_args", nlohmann::json::array()}}},
        {"rounds", nlohmann::json::array()}};
    make_dirs(out_ + "/slurm");
    write_file_atomic(out_ + "/slurm/manifest.json", manifest.dump(2));
    // Task 0 ran twice: alice and dan on an A100 (then the node failed), bob on an H100; task 1
    // had no GPU. dan did not compile: no speed grader of his ran.
    attempt(0, {{"NVIDIA A100-SXM4-80GB", {"alice", "dan"}, 137}, {"NVIDIA H100 80GB HBM3", {"bob"}, 0}});
    attempt(1, {{"", {"carol"}, 0}});
    state(0, "alice", 100, true);
    state(0, "bob", 50, true);
    state(0, "dan", 0, false);
    state(1, "carol", 0, false);
  }
  void TearDown() override { fs::remove_all(out_); }

  struct Attempt {
    std::string gpu;  // "" = none
    std::vector<std::string> graded;
    int exit_code;
  };
  void attempt(int task, const std::vector<Attempt>& attempts) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& a : attempts) {
      nlohmann::json gpu = a.gpu.empty() ? nlohmann::json{{"available", false}, {"summary", "no GPU: none"}}
                                         : nlohmann::json{{"available", true}, {"name", a.gpu}};
      list.push_back({{"job_id", "7"}, {"node", "n" + std::to_string(list.size())}, {"exit_code", a.exit_code},
                      {"graded", a.graded}, {"hardware", {{"host", "h"}, {"gpus", {gpu}}}}});
    }
    make_dirs(out_ + "/tasks/" + std::to_string(task));
    write_file_atomic(out_ + "/tasks/" + std::to_string(task) + "/slurm.json",
                      nlohmann::json{{"task", task}, {"attempts", list}}.dump());
  }
  void state(int task, const std::string& student, double score, bool speed_ran) {
    StudentResult r;
    r.student = student;
    r.origin = "s/" + student;
    r.kind = "folder";
    LabResult l;
    l.lab = "lab01";
    l.title = "Naive 1D and 2D convolution";
    l.submitted = true;
    l.score = score;
    l.max_score = 100;
    GraderResult g;
    g.id = "speedup.conv1d";
    g.kind = "speedup";
    g.ran = speed_ran;
    l.graders.push_back(g);
    r.labs.push_back(l);
    make_dirs(out_ + "/tasks/" + std::to_string(task) + "/state");
    write_file_atomic(out_ + "/tasks/" + std::to_string(task) + "/state/" + student + ".json", to_json(r));
  }
  int collect() {
    static const Project p = load_project(CONVLAB_SOURCE_DIR);
    ::testing::internal::CaptureStdout();
    const int rc = slurm_collect_main(p, out_);
    printed_ = ::testing::internal::GetCapturedStdout();
    return rc;
  }
  std::string out_, printed_;
};

TEST_F(Collector, MergesAndFlagsTheOtherGpuModel) {
  ASSERT_EQ(collect(), 0) << printed_;
  EXPECT_EQ(read_file(out_ + "/gradebook.csv"),
            "student,lab01,total\nPoints Possible,100,100\nalice,100,100\nbob,50,50\ncarol,0,0\ndan,0,0\n");
  // alice was graded on the A100 of the first attempt, against thresholds calibrated on an H100.
  const std::string alice = read_file(out_ + "/feedback/alice.md");
  EXPECT_NE(alice.find("- Note: graded on an NVIDIA A100-SXM4-80GB, but the speed thresholds were calibrated on an "
                       "NVIDIA H100 80GB HBM3"),
            std::string::npos)
      << alice;
  EXPECT_NE(read_file(out_ + "/results/alice.json").find("Note: graded on an NVIDIA A100"), std::string::npos);
  EXPECT_EQ(read_file(out_ + "/feedback/bob.md").find("Note:"), std::string::npos);    // the same model
  EXPECT_EQ(read_file(out_ + "/feedback/carol.md").find("Note:"), std::string::npos);  // no GPU, no speed
  EXPECT_EQ(read_file(out_ + "/feedback/dan.md").find("Note:"), std::string::npos);    // the A100, but no speed
  const auto hw = nlohmann::json::parse(read_file(out_ + "/hardware.json"));
  ASSERT_EQ(hw.at("flagged").size(), 1u);
  EXPECT_EQ(hw.at("flagged")[0].at("student"), "alice");
  EXPECT_EQ(hw.at("flagged")[0].at("node"), "n0");
  EXPECT_EQ(hw.at("gpu_models").at("NVIDIA H100 80GB HBM3"), nlohmann::json({"bob"}));
  EXPECT_EQ(hw.at("tasks")[0].at("attempts")[0].at("matches_calibration"), false);
  EXPECT_EQ(hw.at("tasks")[0].at("attempts")[1].at("matches_calibration"), true);
  EXPECT_NE(read_file(out_ + "/grade.log").find("flagged: alice was graded on an NVIDIA A100-SXM4-80GB"),
            std::string::npos);
}

TEST_F(Collector, NoGradebookWhileAResultIsMissing) {
  fs::remove(out_ + "/tasks/1/state/carol.json");
  EXPECT_EQ(collect(), 1);
  EXPECT_FALSE(fs::exists(out_ + "/gradebook.csv"));
  EXPECT_TRUE(fs::exists(out_ + "/feedback/alice.md"));
  EXPECT_FALSE(fs::exists(out_ + "/feedback/carol.md"));
  EXPECT_NE(printed_.find("INCOMPLETE: 1 of 4 submission(s) have no result yet (carol)"), std::string::npos) << printed_;
  EXPECT_NE(printed_.find("convlab grade --slurm --resume --out " + out_), std::string::npos);
}

TEST_F(Collector, RefusesWhatIsNotARun) {
  static const Project p = load_project(CONVLAB_SOURCE_DIR);
  write_file_atomic(out_ + "/slurm/manifest.json", "{\"convlab_slurm\": 1}");
  EXPECT_THROW(slurm_collect_main(p, out_), Error);
  EXPECT_THROW(slurm_collect_main(p, out_ + "/nothing"), Error);
}

}  // namespace
}  // namespace convlab::cli
