/// @file exec_busy.hpp
/// @brief An exec that waits out "Text file busy" (ETXTBSY) for a program written a moment ago.
#pragma once

#include <cerrno>
#include <ctime>

namespace convlab {

/// Calls `exec` (an execve or execvp, which returns only when it fails) again while it fails with
/// ETXTBSY, for up to 2 s. `convlab grade` copies each submission's graders and runner into its work
/// folder from several threads; while one thread writes such a copy, a child that another thread forks
/// holds it open for writing until that child's own exec (or its closing of every descriptor), and
/// the kernel refuses to run a file that is open for writing. That passes within milliseconds; seen
/// once in cli.e2e.grade_exploits, where it scored an exploit 0 ("cannot run .../lab01_graders:
/// Text file busy") instead of 70. Safe between fork and exec: it only calls `exec` and nanosleep.
template <class Exec>
void exec_retrying_busy(Exec exec) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    exec();
    if (errno != ETXTBSY) return;
    const timespec pause{0, 10 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
  }
}

}  // namespace convlab
