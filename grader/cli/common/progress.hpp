/// @file progress.hpp
/// @brief Progress of the convlab command's long steps (a build, a graders run, a benchmark):
/// on a terminal one status line rewritten in place — a bar when the number of items is known,
/// else a spinner — with the elapsed time and the latest item; otherwise plain lines, at least
/// one every few seconds, so that nothing runs silent in a log either.
#pragma once

#include "common/sandbox.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace convlab::cli {

/// One status line: "running the lab01 graders [#######.............]  9/27  12 s  lab01.corr...",
/// or without a total "building lab01_graders  12 s  [45/105] Building CXX object ...";
/// at most `width` characters.
std::string progress_line(const std::string& what, int done, int total, double elapsed_s, const std::string& item,
                          std::size_t width = 100);

/// A long step in progress (see the file comment). Thread-safe: item() and note() may be
/// called from the thread that reads a child's output while the display refreshes.
class Progress {
public:
  /// Starts showing `what`; `total` items are expected (0: unknown). `tty` says whether
  /// standard output is a terminal (the default asks).
  explicit Progress(std::string what, int total = 0, bool tty = default_tty(), double plain_every_s = 5.0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// One more item started (a test, a row): counts towards the total, becomes the shown item.
  void item(const std::string& name);
  /// The latest line of output: shown as the item when there is no total. A build tool's
  /// "[45/105] Building ..." sets the count and the total too.
  void note(const std::string& line);
  /// Ends the display and prints "what: result in 12.3 s".
  void finish(const std::string& result);
  /// Items started so far.
  int done() const;

private:
  static bool default_tty();
  void run();
  void draw(bool plain);
  std::string what_;
  int total_, done_ = 0;
  bool tty_;
  double plain_every_s_;
  std::string item_;
  std::chrono::steady_clock::time_point start_, last_plain_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, finished_ = false, shown_ = false, counted_ = false;
  std::thread thread_;
};

/// Runs `spec` showing a Progress named `what`: each output line that starts with
/// `item_marker` counts as an item (towards `total`), or, without a marker, becomes the shown
/// line; ends with "what: done in 12.3 s" (or how it failed; for a graders process, whose exit
/// status 1 means failed tests, "done: some tests failed").
RunResult run_with_progress(const std::string& what, RunSpec spec, int total = 0, const std::string& item_marker = "",
                            bool graders = false);

}  // namespace convlab::cli
