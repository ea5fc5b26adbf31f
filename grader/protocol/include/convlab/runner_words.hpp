/// @file runner_words.hpp
/// @brief The words of the judge's runner failures that `convlab grade` and `convlab check` read
/// back from a failed test's message (one place, so that the two cannot drift apart).
#pragma once

namespace convlab::runner_words {

/// What the runner was doing when it failed before any kernel ran: the message then says
/// "... while running its start-up" (a sandbox or set-up fault, not the kernels').
inline constexpr char kStartUp[] = "its start-up";

/// A runner process that died of a signal, its own or (under the sandbox) its child's:
/// "the runner (the process that runs your kernels) was ended by signal 11 (SIGSEGV: ...)".
/// Host code crashed there; lowering the device optimisation cannot change that.
inline constexpr char kEndedBySignal[] = "was ended by signal";

}  // namespace convlab::runner_words
