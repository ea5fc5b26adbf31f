/// @file progress.hpp
/// @brief Progress of long computations in a benchmark or a grader process: what it is doing
/// now (a step any code may name), and a heartbeat that says so whenever the process has been
/// silent for a few seconds, so that nothing runs silent (a benchmark computing an 8192 x 8192
/// golden model on the CPU used to print nothing for minutes).
///
/// On a terminal the heartbeat is one status line rewritten in place; otherwise (a log, a pipe,
/// `convlab bench`) it prints plain lines.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace convlab {

/// Names the step this process is in now ("computing the expected output of 8192 x 8192, r = 7
/// on the CPU"); thread-safe and cheap, a no-op for everyone but a running Heartbeat.
void progress_step(const std::string& what);
/// The step named last ("" before any).
std::string current_progress_step();

/// Names a step for the lifetime of the object, then restores the one before.
class ProgressStep {
public:
  explicit ProgressStep(const std::string& what);
  ~ProgressStep();
  ProgressStep(const ProgressStep&) = delete;
  ProgressStep& operator=(const ProgressStep&) = delete;

private:
  std::string previous_;
};

/// One heartbeat line: "[ 35 s] computing the expected output ...". `step` "" reads "working".
std::string heartbeat_text(double elapsed_s, const std::string& step);

/// While it lives, writes heartbeat_text() to `out` whenever `every_s` seconds pass without
/// a line through line(); on a terminal (`out` is one) the status line is rewritten in place
/// and cleared before each line().
class Heartbeat {
public:
  explicit Heartbeat(std::FILE* out = stderr, double every_s = 5.0);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  /// Prints `text` as a line of its own (e.g. a finished benchmark row) and restarts the timer.
  void line(const std::string& text);
  /// Heartbeat lines printed so far (for tests).
  int beats() const { return beats_; }

private:
  void run();
  std::FILE* out_;
  double every_s_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, status_shown_ = false;
  std::atomic<int> beats_{0};
  std::thread thread_;
};

}  // namespace convlab
