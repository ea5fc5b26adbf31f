// Progress of long computations. See convlab/progress.hpp.
#include "convlab/progress.hpp"

#include <cstdio>

#include <unistd.h>

namespace convlab {
namespace {

std::mutex& step_mutex() {
  static std::mutex mu;
  return mu;
}
std::string& step_text() {
  static std::string text;
  return text;
}

}  // namespace

void progress_step(const std::string& what) {
  std::lock_guard<std::mutex> lock(step_mutex());
  step_text() = what;
}

std::string current_progress_step() {
  std::lock_guard<std::mutex> lock(step_mutex());
  return step_text();
}

ProgressStep::ProgressStep(const std::string& what) : previous_(current_progress_step()) { progress_step(what); }
ProgressStep::~ProgressStep() { progress_step(previous_); }

std::string heartbeat_text(double elapsed_s, const std::string& step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[%4.0f s] ", elapsed_s);
  return buf + (step.empty() ? std::string("working") : step) + " ...";
}

Heartbeat::Heartbeat(std::FILE* out, double every_s)
    : out_(out), every_s_(every_s), tty_(::isatty(::fileno(out)) == 1), start_(std::chrono::steady_clock::now()),
      last_(start_), thread_([this] { run(); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (status_shown_) std::fputs("\r\033[K", out_);
  }
  cv_.notify_all();
  thread_.join();
  std::fflush(out_);
}

void Heartbeat::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_shown_) std::fputs("\r\033[K", out_);
  status_shown_ = false;
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
  last_ = std::chrono::steady_clock::now();
}

void Heartbeat::run() {
  // A terminal gets its status line refreshed every second; a log a line per quiet period.
  const auto tick = std::chrono::milliseconds(tty_ ? 1000 : 250);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, tick);
    if (stop_) break;
    const auto now = std::chrono::steady_clock::now();
    const double quiet = std::chrono::duration<double>(now - last_).count();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (quiet < every_s_) continue;
    const std::string text = heartbeat_text(elapsed, current_progress_step());
    if (tty_) {
      std::fprintf(out_, "\r\033[K%s", text.substr(0, 150).c_str());
      status_shown_ = true;
    } else {
      std::fprintf(out_, "%s\n", text.c_str());
      last_ = now;
    }
    std::fflush(out_);
    ++beats_;
  }
}

}  // namespace convlab
