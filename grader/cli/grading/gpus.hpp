/// @file gpus.hpp
/// @brief `convlab grade --gpus`: which GPUs a grading run may use, checked before anything is built.
///
/// An entry of --gpus is a GPU index, as nvidia-smi numbers the GPUs (PCI bus order, the order the
/// graders see them in: they run with CUDA_DEVICE_ORDER=PCI_BUS_ID), or a UUID (`GPU-...`, or
/// `MIG-...` for a MIG instance), as `nvidia-smi -L` prints them. Each entry becomes the
/// CUDA_VISIBLE_DEVICES of the graders that run on it, so they see that GPU and no other.
///
/// When convlab itself runs with CUDA_VISIBLE_DEVICES set (a Slurm job, a container, a shared
/// machine's launcher), that list is what the run was given: every entry of --gpus must name one of
/// its GPUs, still by nvidia-smi's numbering or by UUID (a Slurm task passes its
/// CUDA_VISIBLE_DEVICES entry through unchanged), and --gpus defaults to its first GPU. An index
/// is never taken as a position in that list: `--gpus 0` under CUDA_VISIBLE_DEVICES=2,3 is
/// refused, with the list in the message, rather than graded on a GPU the run was not given.
///
/// The checks run where the facts are: the entries' form always (parse_gpu_list); whether the GPUs
/// exist and were given to this run against nvidia-smi's list and CUDA_VISIBLE_DEVICES
/// (assign_gpus, before the build); what the graders' environment really shows, asked of the
/// driver in a child process that has the graders' environment (confirm_gpu, before the build).
/// On the CPU backend the graders use no GPU: --gpus then only sets how many submissions run at
/// once, and no GPU is checked.
#pragma once

#include "common/cuda_devices.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace convlab::cli {

/// What the machine says about its GPUs, read once before a grading run (read_gpu_context()).
struct GpuContext {
  bool on_gpu = true;                          ///< the graders run on a GPU (false: the CPU backend)
  std::optional<std::string> visible;          ///< convlab's own CUDA_VISIBLE_DEVICES (nullopt: not set)
  std::optional<std::vector<GpuListed>> gpus;  ///< nvidia-smi's GPUs (nullopt: no nvidia-smi, or it failed)
  std::optional<std::vector<GpuListed>> migs;  ///< nvidia-smi -L's MIG instances (read only when one is named)
  std::string smi_note;                        ///< why `gpus` is absent
};

/// A GPU a grading run uses.
struct GpuAssigned {
  /// The --gpus entry (an index without leading zeros, or a UUID): the graders' CUDA_VISIBLE_DEVICES.
  /// kNoGpu when convlab's own CUDA_VISIBLE_DEVICES gives the run no GPU (a Slurm task without a
  /// GPU): the graders then see none either, and their GPU tests are not run.
  std::string entry;
  int index = -1;     ///< nvidia-smi's index (-1: not known)
  std::string uuid;   ///< its UUID ("" : not known); after confirm_gpu(), the one the graders' environment shows
  std::string name;   ///< its name ("": not known)
  /// "GPU 1 (NVIDIA H100 80GB HBM3, GPU-4b0d...)", "GPU GPU-4b0d... (nvidia-smi's 1, NVIDIA H100 ...)", "GPU 1",
  /// "no GPU".
  std::string label() const;
  /// "GPU 1", or "no GPU".
  std::string short_label() const;
  /// CUDA_VISIBLE_DEVICES=-1: CUDA stops at an invalid entry, so this value shows no GPU.
  static constexpr const char* kNoGpu = "-1";
};

/// One --gpus entry, checked: an index (leading zeros dropped) or a UUID, as given. Throws Error
/// ("--gpus x: not a GPU index ... or UUID ...") for anything else: a negative number, a word.
std::string parse_gpu_entry(const std::string& text);

/// The --gpus option: comma-separated entries (parse_gpu_entry), spaces around them ignored.
/// Throws Error for an empty list, an empty entry (a stray comma) or a GPU named twice.
std::vector<std::string> parse_gpu_list(const std::string& text);

/// CUDA_VISIBLE_DEVICES read as CUDA reads it: the entries up to the first that is not an index or
/// a UUID (CUDA ignores that one and the rest). "" and "-1" give none.
std::vector<std::string> parse_visible_devices(const std::string& value);

/// The output of `nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader`, one GPU a line
/// ("0, GPU-4b0d..., NVIDIA H100 80GB HBM3"). Throws Error for a line it cannot read.
std::vector<GpuListed> parse_nvidia_smi_gpus(const std::string& csv);

/// The MIG instances in the output of `nvidia-smi -L` ("  MIG 1g.10gb Device 0: (UUID: MIG-...)"
/// under "GPU 0: ... (UUID: GPU-...)"), each with its GPU's index.
std::vector<GpuListed> parse_nvidia_smi_migs(const std::string& listing);

/// The backend the graders of a run are built for: "cpu", "cuda" or "auto". Read from the `-D`
/// options (the last CONVLAB_BACKEND wins), else from the configure preset in CMakePresets.json
/// and CMakeUserPresets.json (their text; `inherits` followed), else "cuda", the project's default.
/// The student's preset `default` grades on the GPU ("cuda"): convlab grade sets it so.
std::string grading_backend(const std::string& preset, const std::vector<std::string>& cmake_args,
                            const std::string& presets_json, const std::string& user_presets_json = "");

/// Reads the context: CUDA_VISIBLE_DEVICES, and when the graders run on a GPU, nvidia-smi's list
/// of GPUs (and its MIG instances when `entries` or CUDA_VISIBLE_DEVICES name one).
GpuContext read_gpu_context(bool on_gpu, const std::vector<std::string>& entries);

/// The GPUs of a run: `entries` (parse_gpu_list's; empty: the default, CUDA_VISIBLE_DEVICES's
/// first GPU or GPU 0) checked against `context`. Throws Error, before anything is built, for a
/// GPU that nvidia-smi does not list, two entries naming the same GPU, or a GPU outside convlab's
/// own CUDA_VISIBLE_DEVICES (one that leaves no GPU included). Without entries under such a
/// CUDA_VISIBLE_DEVICES, the run grades on no GPU (GpuAssigned::kNoGpu). Lines for the run's log
/// (what was chosen, what could not be checked) go to `notes`.
std::vector<GpuAssigned> assign_gpus(const std::vector<std::string>& entries, const GpuContext& context,
                                     std::vector<std::string>* notes);

/// Throws Error when two of `gpus` are the same GPU by UUID ("0" and that GPU's UUID): each GPU
/// grades one submission at a time.
void refuse_shared_gpus(const std::vector<GpuAssigned>& gpus);

/// What the graders' environment shows for `gpu`: `probe` is probe_hardware(gpu.entry)'s record,
/// whose "cuda_devices" the child read from the driver. Throws Error when it shows more than one
/// GPU. Otherwise records the UUID it shows in `gpu` (and nvidia-smi's index and name of that UUID,
/// from `context`) and returns a line for the log when something is worth saying: it shows no GPU,
/// or another GPU than nvidia-smi numbers so (an environment that numbers GPUs its own way); "" if not.
std::string confirm_gpu(GpuAssigned& gpu, const nlohmann::json& probe, const GpuContext& context);

}  // namespace convlab::cli
