// Progress of the convlab command's long steps. See progress.hpp.
#include "common/progress.hpp"

#include "common/util.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace convlab::cli {

std::string progress_line(const std::string& what, int done, int total, double elapsed_s, const std::string& item,
                          std::size_t width) {
  char buf[64];
  std::string line = what;
  if (total > 0) {
    const int cells = 20, full = std::min(cells, done * cells / total);
    line += " [" + std::string(full, '#') + std::string(cells - full, '.') + "]";
    std::snprintf(buf, sizeof buf, " %d/%d", done, total);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "  %.0f s", elapsed_s);
  line += buf;
  if (!item.empty()) line += "  " + item;
  if (line.size() > width) line = line.substr(0, width > 3 ? width - 3 : 0) + "...";
  return line;
}

bool Progress::default_tty() { return stdout_is_tty(); }

Progress::Progress(std::string what, int total, bool tty, double plain_every_s)
    : what_(std::move(what)), total_(total), tty_(tty), plain_every_s_(plain_every_s),
      start_(std::chrono::steady_clock::now()), last_plain_(start_) {
  if (!tty_) std::cout << what_ << " ..." << std::endl;
  thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_ && !finished_) std::cout << "\r\033[K" << std::flush;
}

int Progress::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

void Progress::item(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  counted_ = true;
  ++done_;
  item_ = name;
  if (tty_) draw(false);
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  int k = 0, n = 0;
  char rest[2];
  if (std::sscanf(line.c_str(), "[%d/%d]%1c", &k, &n, rest) == 3 && n > 0 && k >= 0 && k <= n) {
    done_ = k;  // ninja's own count
    total_ = n;
    item_ = trim(line.substr(line.find(']') + 1));
  } else if (total_ > 0 && counted_) {
    return;  // the bar shows items, not every line
  } else {
    item_ = trim(line);
  }
  if (tty_) draw(false);
}

// Called with mu_ held.
void Progress::draw(bool plain) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (plain) {
    std::cout << "  " << progress_line(what_, done_, total_, elapsed, item_, 160) << std::endl;
    last_plain_ = now;
    return;
  }
  std::cout << "\r\033[K" << progress_line(what_, done_, total_, elapsed, item_) << std::flush;
  shown_ = true;
}

void Progress::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(tty_ ? 500 : 250));
    if (stop_ || finished_) break;
    if (tty_) {
      draw(false);  // the elapsed time moves on even when no line comes
    } else if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_plain_).count() >= plain_every_s_) {
      draw(true);
    }
  }
}

void Progress::finish(const std::string& result) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (shown_) std::cout << "\r\033[K";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::cout << what_ << ": " << result << " in " << fmt_seconds(elapsed) << std::endl;
}

RunResult run_with_progress(const std::string& what, RunSpec spec, int total, const std::string& item_marker,
                            bool graders) {
  spec.keep_head = std::max<std::size_t>(spec.keep_head, 1 << 20);  // a build's errors can be long
  spec.keep_tail = std::max<std::size_t>(spec.keep_tail, 1 << 20);
  Progress progress(what, total);
  spec.on_line = [&](const std::string& line) {
    if (!item_marker.empty()) {
      if (starts_with(line, item_marker)) progress.item(trim(line.substr(item_marker.size())));
    } else {
      progress.note(line);
    }
  };
  RunResult r = run_sandboxed(spec);
  const bool failed_tests = graders && r.exit_code == 1 && !r.timed_out && !r.idle_timed_out && !r.output_exceeded;
  progress.finish(r.ok() ? "done" : failed_tests ? "done: some tests failed" : r.describe());
  return r;
}

}  // namespace convlab::cli
