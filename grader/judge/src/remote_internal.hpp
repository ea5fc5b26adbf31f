// Private to the judge's remote (grader/judge/src): what remote.cpp (the runner process and its
// requests) shares with remote_api.cpp (the public API) and remote_cuda.cpp (the judge's CUDA runtime).
#pragma once

#include "convlab/remote.hpp"
#include "convlab/remote_contract.hpp"

#include "convlab/record.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace convlab::remote {

// One request and its reply. A harness-side error comes back as Status::error and is thrown;
// a CUDA error is returned with its code (and remembered for cudaGetErrorString).
struct Reply {
  wire::Status status = wire::Status::ok;
  std::string payload;
  cudaError_t code = cudaSuccess;
};

extern cudaError_t g_last_error;
extern cudaError_t g_sync_error;  // the error of the work of the last call, until synchronised
extern std::map<int, std::pair<std::string, std::string>> g_error_text;  // code -> name, description
extern ProgramRecorder* g_recording;

Reply request(wire::Op op, const std::string& payload, const std::string& what);

// Bulk data through the window.
cudaError_t to_device(std::uint64_t dst, const char* src, std::size_t bytes);
cudaError_t to_host(char* dst, std::uint64_t src, std::size_t bytes);

inline std::uint64_t addr(const void* p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); }

void note_op(wire::ProgramOp op);

// The runner process and its state (remote.cpp), which the public API (remote_api.cpp) drives.
namespace detail {

using wire::Op;
using wire::Status;

struct Connection {
  pid_t pid = -1;
  int req = -1, rep = -1;
  int printed = -1;  // the read end of the runner's stdout and stderr
  char* window = nullptr;
  std::size_t window_bytes = 0;
  bool started = false;
  bool restart = false;  // replace it before the next test (a lost context, a crash)
  bool counting = false;  // its context has the GPU's counters on (the counting runner, once enabled)
  bool preparing = false;  // told to set the counters up in the background (prepare_counting)
  std::uint64_t generation = 0;  // which start of this runner: addresses belong to one
  std::vector<Op> pending;  // requests sent ahead whose replies are not read yet (prestart_counting)
};

extern RunnerOptions g_options;
extern Connection g_runners[2];
extern int g_which;
extern std::uint64_t g_generations;
Connection& conn();
// Sends the requests of its scope to runner `which`, and gives the choice back at the scope's end,
// an exception's included, unless keep() was called (set_counting's counting runner stays current
// until the counted work is done).
class RunnerChoice {
public:
  explicit RunnerChoice(int which) : was_(g_which) { g_which = which; }
  ~RunnerChoice() {
    if (!kept_) g_which = was_;
  }
  RunnerChoice(const RunnerChoice&) = delete;
  RunnerChoice& operator=(const RunnerChoice&) = delete;
  void keep() { kept_ = true; }

private:
  int was_;
  bool kept_ = false;
};
extern std::map<std::uint64_t, std::pair<int, std::uint64_t>> g_owner;
extern DeviceStatus g_status;
extern std::string g_current;
extern std::vector<CallRecord> g_calls;
extern std::map<std::string, std::map<std::string, std::string>> g_kernels_launched;
extern int g_schedule;
extern std::uint64_t g_schedule_seed;
extern std::string g_ended;
extern std::string g_counters_refused;
extern std::map<std::string, double> g_seconds;

double seconds_since(std::chrono::steady_clock::time_point t0);

// What the runners printed since take_printed(): the head kept, the rest only counted.
struct Printed {
  std::string kept;
  std::size_t lines = 0;          // newlines in kept
  std::uint64_t cut_bytes = 0, cut_lines = 0;
  std::uint64_t total = 0;        // bytes in all, for the stop at kPrintedStopBytes
};
extern Printed g_printed;

bool drain_printed(std::size_t most);
std::size_t utf8_length(const std::string& s, std::size_t i);
std::string stop(bool kill_it);
void quit();
void note_kernels(const std::string& entry, const wire::Evidence& evidence);
[[noreturn]] void fail(const std::string& why, bool kill_it);

void start(bool defer_hello = false);
void settle();

void send_request(Op op, const std::string& payload);
Reply receive_reply(const std::string& what);
void hello_reply(const Reply& r);
std::string counting_reply(const Reply& r);

}  // namespace detail

}  // namespace convlab::remote
