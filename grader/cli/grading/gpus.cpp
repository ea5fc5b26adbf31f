// `convlab grade --gpus`: the GPUs of a grading run, checked before anything is built. See gpus.hpp.
#include "grading/gpus.hpp"

#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>


namespace convlab::cli {

namespace {

bool is_index(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool is_mig(const std::string& s) { return starts_with(s, "MIG-"); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A UUID compared without its case or its GPU-/MIG- prefix: the driver hands back 16 bytes for a
// MIG instance too, which format_uuid() writes with the GPU- prefix.
std::string uuid_key(const std::string& uuid) {
  const std::string l = lower(uuid);
  return starts_with(l, "gpu-") || starts_with(l, "mig-") ? l.substr(4) : l;
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ",") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string plural(std::size_t n, const std::string& one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }

// "this machine has 2 GPUs (0: NVIDIA H100 80GB HBM3, 1: ...)", with their UUIDs when `uuids`.
std::string machine_has(const std::vector<GpuListed>& gpus, bool uuids) {
  if (gpus.empty()) return "nvidia-smi lists no GPU on this machine";
  std::vector<std::string> each;
  for (const auto& g : gpus) each.push_back(std::to_string(g.index) + ": " + (uuids ? g.uuid : g.name));
  return "this machine has " + plural(gpus.size(), "GPU") + " (" + join(each, ", ") + ")";
}

// The GPU (or MIG instance) of `list` that `entry` names: by index, or by UUID or a prefix of one
// (CUDA_VISIBLE_DEVICES takes a unique prefix too). nullptr when none; Error when a prefix names several.
const GpuListed* find_listed(const std::string& entry, const std::vector<GpuListed>& list) {
  std::vector<const GpuListed*> found;
  for (const auto& g : list)
    if (is_index(entry) ? g.index == std::atoi(entry.c_str()) : starts_with(lower(g.uuid), lower(entry)))
      found.push_back(&g);
  if (found.size() > 1 && !is_index(entry)) {
    std::vector<std::string> which;
    for (const auto* g : found) which.push_back(std::to_string(g->index) + ": " + g->uuid);
    throw Error("--gpus " + entry + ": that UUID prefix matches " + plural(found.size(), "GPU") + " (" +
                join(which, ", ") + "); give more of it");
  }
  return found.empty() ? nullptr : found.front();
}

// Each GPU grades one submission at a time: a GPU named twice would grade two at once on it.
// `as_given`: the option as it was written, for the message.
void refuse_repeats(const std::vector<std::string>& entries, const std::string& as_given) {
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (lower(entries[i]) == lower(entries[j]))
        throw Error("--gpus " + as_given + ": GPU " + entries[i] +
                    " is named twice; each GPU grades one submission at a time, so name it once");
}

// Whether CUDA_VISIBLE_DEVICES's entry `v` is the GPU `g`: the same words, or the same GPU by
// nvidia-smi's list (an index on one side and a UUID on the other).
bool same_gpu(const GpuAssigned& g, const std::string& v, const GpuContext& c) {
  if (lower(g.entry) == lower(v)) return true;
  const GpuListed* l = nullptr;
  try {
    if (is_mig(v) && c.migs) l = find_listed(v, *c.migs);
    else if (!is_mig(v) && c.gpus) l = find_listed(v, *c.gpus);
  } catch (const Error&) {
    return false;  // an ambiguous prefix: CUDA would not take it either
  }
  if (!l) return false;
  if (!g.uuid.empty()) return uuid_key(g.uuid) == uuid_key(l->uuid);
  return !is_mig(v) && g.index >= 0 && g.index == l->index;
}

}  // namespace

std::string GpuAssigned::short_label() const { return entry == kNoGpu ? "no GPU" : "GPU " + entry; }

std::string GpuAssigned::label() const {
  if (entry == kNoGpu) return short_label();
  std::vector<std::string> about;
  if (index >= 0 && (!is_index(entry) || std::atoi(entry.c_str()) != index))
    about.push_back("nvidia-smi's " + std::to_string(index));
  if (!name.empty()) about.push_back(name);
  if (!uuid.empty() && uuid_key(uuid) != uuid_key(entry)) about.push_back(uuid);
  return "GPU " + entry + (about.empty() ? "" : " (" + join(about, ", ") + ")");
}

std::string parse_gpu_entry(const std::string& text) {
  const std::string e = trim(text);
  const auto refuse = [&] {
    return Error("--gpus " + (e.empty() ? "''" : e) +
                 ": not a GPU index (0, 1, ... as nvidia-smi numbers the GPUs) or UUID (GPU-... or MIG-..., as "
                 "nvidia-smi -L prints them)");
  };
  if (is_index(e)) {
    const std::string digits = e.substr(std::min(e.find_first_not_of('0'), e.size() - 1));
    if (digits.size() > 6) throw refuse();  // no machine has a million GPUs; atoi would overflow first
    return digits;
  }
  if (!starts_with(e, "GPU-") && !is_mig(e)) throw refuse();
  const std::string rest = e.substr(4);
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isxdigit(c) || c == '-'; }))
    throw refuse();
  return e;
}

std::vector<std::string> parse_gpu_list(const std::string& text) {
  if (trim(text).empty()) throw Error("--gpus is empty: name at least one GPU (--gpus 0, or --gpus 0,1 for two)");
  std::vector<std::string> entries;
  std::size_t start = 0;
  for (int k = 1;; ++k) {
    const std::size_t comma = text.find(',', start);
    const std::string piece = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (trim(piece).empty())
      throw Error("--gpus " + text + ": entry " + std::to_string(k) + " is empty (a stray comma?)");
    entries.push_back(parse_gpu_entry(piece));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  refuse_repeats(entries, text);
  return entries;
}

std::vector<std::string> parse_visible_devices(const std::string& value) {
  std::vector<std::string> out;
  std::istringstream in(value);
  for (std::string piece; std::getline(in, piece, ',');) {
    try {
      out.push_back(parse_gpu_entry(piece));
    } catch (const Error&) {
      break;  // CUDA stops at the first entry it cannot read: "0,-1,1" shows GPU 0 only
    }
  }
  return out;
}

std::vector<GpuListed> parse_nvidia_smi_gpus(const std::string& csv) {
  std::vector<GpuListed> out;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    const auto c1 = line.find(','), c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
    GpuListed g;
    if (c2 != std::string::npos) {
      const std::string index = trim(line.substr(0, c1));
      g.uuid = trim(line.substr(c1 + 1, c2 - c1 - 1));
      g.name = trim(line.substr(c2 + 1));  // a name may hold a comma: the rest of the line
      if (is_index(index) && index.size() <= 6) g.index = std::atoi(index.c_str());
    }
    if (g.index < 0 || !starts_with(g.uuid, "GPU-") || g.name.empty())
      throw Error("cannot read nvidia-smi's list of GPUs: '" + trim(line) + "' is not 'index, uuid, name'");
    out.push_back(g);
  }
  return out;
}

std::vector<GpuListed> parse_nvidia_smi_migs(const std::string& listing) {
  std::vector<GpuListed> out;
  std::istringstream in(listing);
  int gpu = -1;
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (starts_with(t, "GPU ")) {  // "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)"
      const std::string n = t.substr(4, t.find(':') == std::string::npos ? 0 : t.find(':') - 4);
      gpu = is_index(n) && n.size() <= 6 ? std::atoi(n.c_str()) : -1;
      continue;
    }
    const auto at = t.find("(UUID: MIG-");
    if (at == std::string::npos) continue;
    GpuListed m;
    m.index = gpu;
    const auto end = t.find(')', at);
    m.uuid = trim(t.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7));
    const auto device = t.find(" Device");
    m.name = trim(t.substr(0, std::min(device, at)));  // "MIG 1g.10gb"
    out.push_back(m);
  }
  return out;
}

std::string grading_backend(const std::string& preset, const std::vector<std::string>& cmake_args,
                            const std::string& presets_json, const std::string& user_presets_json) {
  // A -D option on the command line comes after the preset's, and the last one counts.
  std::string from_args;
  for (const auto& a : cmake_args) {
    const std::string d = starts_with(a, "-D") ? a.substr(2) : a;
    const auto eq = d.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = d.substr(0, std::min(eq, d.find(':')));  // NAME or NAME:TYPE
    if (trim(name) == "CONVLAB_BACKEND") from_args = trim(d.substr(eq + 1));
  }
  if (!from_args.empty()) return from_args;
  if (preset == "default") return "cuda";  // grade's configure_options() sets it for the student's preset
  std::map<std::string, nlohmann::json> presets;
  for (const std::string* text : {&presets_json, &user_presets_json}) {
    if (text->empty()) continue;
    try {
      const auto j = nlohmann::json::parse(*text);
      for (const auto& p : j.value("configurePresets", nlohmann::json::array()))
        if (p.is_object() && p.contains("name") && p["name"].is_string()) presets[p["name"].get<std::string>()] = p;
    } catch (const std::exception&) {
      // An unreadable presets file: cmake says so when it configures; the GPUs are checked meanwhile.
    }
  }
  // The preset's own value, else the first of its `inherits` that gives one (CMake's order).
  std::function<std::string(const std::string&, int)> lookup = [&](const std::string& name, int depth) -> std::string {
    const auto it = presets.find(name);
    if (it == presets.end() || depth > 16) return "";
    const auto& p = it->second;
    if (p.contains("cacheVariables") && p["cacheVariables"].is_object() && p["cacheVariables"].contains("CONVLAB_BACKEND")) {
      const auto& v = p["cacheVariables"]["CONVLAB_BACKEND"];
      if (v.is_string()) return v.get<std::string>();
      if (v.is_object() && v.contains("value") && v["value"].is_string()) return v["value"].get<std::string>();
    }
    std::vector<std::string> parents;
    if (p.contains("inherits") && p["inherits"].is_string()) parents.push_back(p["inherits"].get<std::string>());
    if (p.contains("inherits") && p["inherits"].is_array())
      for (const auto& i : p["inherits"])
        if (i.is_string()) parents.push_back(i.get<std::string>());
    for (const auto& parent : parents) {
      const std::string v = lookup(parent, depth + 1);
      if (!v.empty()) return v;
    }
    return "";
  };
  const std::string v = lookup(preset, 0);
  return v.empty() ? "cuda" : v;  // CONVLAB_BACKEND's default (CMakeLists.txt)
}

GpuContext read_gpu_context(bool on_gpu, const std::vector<std::string>& entries) {
  GpuContext c;
  c.on_gpu = on_gpu;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) c.visible = v;
  if (!on_gpu) return c;
  if (which("nvidia-smi").empty()) {
    c.smi_note = "nvidia-smi is not on PATH";
    return c;
  }
  const RunResult r = run_tool({"nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"}, "", 60);
  if (!r.ok()) {
    c.smi_note = "nvidia-smi could not list the GPUs (" + r.describe() + ": " + trim(head_lines(r.output, 1)) + ")";
    return c;
  }
  try {
    c.gpus = parse_nvidia_smi_gpus(r.output);
  } catch (const Error& e) {
    c.smi_note = e.what();
    return c;
  }
  const bool mig = std::any_of(entries.begin(), entries.end(), is_mig) ||
                   (c.visible && c.visible->find("MIG-") != std::string::npos);
  if (mig) {
    const RunResult l = run_tool({"nvidia-smi", "-L"}, "", 60);
    if (l.ok()) c.migs = parse_nvidia_smi_migs(l.output);
  }
  return c;
}

std::vector<GpuAssigned> assign_gpus(const std::vector<std::string>& given, const GpuContext& c,
                                     std::vector<std::string>* notes) {
  std::vector<std::string> entries;
  for (const auto& e : given) entries.push_back(parse_gpu_entry(e));
  refuse_repeats(entries, join(given));
  const auto say = [&](const std::string& line) {
    if (notes) notes->push_back(line);
  };
  std::vector<GpuAssigned> out;
  if (!c.on_gpu) {
    if (entries.empty()) entries = {"0"};
    for (const auto& e : entries) {
      GpuAssigned g;
      g.entry = e;
      out.push_back(g);
    }
    say("GPUs: the graders run on the CPU backend, so no GPU is used or checked; --gpus sets only how many "
        "submissions are graded at once (" + std::to_string(out.size()) + ")");
    return out;
  }
  const std::vector<std::string> visible = c.visible ? parse_visible_devices(*c.visible) : std::vector<std::string>{};
  if (c.visible && visible.empty()) {
    // A run given no GPU (Slurm sets NoDevFiles, or nothing, for a task without one): its graders
    // must not find one either, so they get a CUDA_VISIBLE_DEVICES that shows none.
    if (!entries.empty())
      throw Error("--gpus " + join(entries) + ": convlab runs with CUDA_VISIBLE_DEVICES='" + *c.visible +
                  "', which gives this run no GPU; unset it to grade on this machine's GPUs, or leave out --gpus "
                  "to grade without a GPU (the GPU graders are then not run)");
    say("GPUs: CUDA_VISIBLE_DEVICES='" + *c.visible + "' gives this run no GPU: the graders see none, and their GPU "
        "tests are not run");
    GpuAssigned none;
    none.entry = GpuAssigned::kNoGpu;
    return {none};
  }
  if (entries.empty()) {
    entries = {visible.empty() ? "0" : visible.front()};
    if (!visible.empty())
      say("GPUs: no --gpus: grading on GPU " + entries.front() + ", the first of CUDA_VISIBLE_DEVICES=" + *c.visible);
  }
  for (const auto& e : entries) {
    GpuAssigned g;
    g.entry = e;
    if (is_mig(e) && c.migs) {
      const GpuListed* m = find_listed(e, *c.migs);
      if (!m) {
        std::vector<std::string> each;
        for (const auto& x : *c.migs) each.push_back(x.uuid + " on GPU " + std::to_string(x.index));
        throw Error("--gpus " + e + ": no MIG instance of this machine has that UUID (nvidia-smi -L lists " +
                    (each.empty() ? std::string("none") : join(each, ", ")) + ")");
      }
      g.index = m->index, g.uuid = m->uuid, g.name = m->name;
    } else if (!is_mig(e) && c.gpus) {
      const GpuListed* l = find_listed(e, *c.gpus);
      if (!l) {
        const std::string how = c.gpus->empty() ? "grade on a machine with a GPU, or on the CPU backend (--preset cpu)"
                                : is_index(e)    ? "name a GPU by one of these indices, or by its UUID (nvidia-smi -L)"
                                                 : "no GPU has that UUID";
        throw Error("--gpus " + e + ": " + machine_has(*c.gpus, !is_index(e)) + "; " + how);
      }
      g.index = l->index, g.uuid = l->uuid, g.name = l->name;
    }
    out.push_back(g);
  }
  if (!c.gpus)
    say("GPUs: " + c.smi_note + ", so the GPUs named by --gpus (" + join(entries) +
        ") were not checked: a GPU that does not exist shows as GPU tests not run");
  refuse_shared_gpus(out);
  if (c.visible)
    for (const auto& g : out)
      if (std::none_of(visible.begin(), visible.end(), [&](const std::string& v) { return same_gpu(g, v, c); }))
        throw Error("--gpus " + g.entry + ": convlab runs with CUDA_VISIBLE_DEVICES=" + *c.visible +
                    ", so this run may use only " + (visible.size() == 1 ? "that GPU" : "those GPUs") + " (--gpus " +
                    join(visible) + "); --gpus names GPUs as nvidia-smi numbers them, not by their place in "
                    "CUDA_VISIBLE_DEVICES");
  return out;
}

void refuse_shared_gpus(const std::vector<GpuAssigned>& gpus) {
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (!gpus[i].uuid.empty() && uuid_key(gpus[i].uuid) == uuid_key(gpus[j].uuid))
        throw Error("--gpus " + gpus[j].entry + "," + gpus[i].entry + ": both are " + gpus[i].uuid +
                    (gpus[i].name.empty() ? "" : " (" + gpus[i].name + ")") +
                    "; each GPU grades one submission at a time, so name it once");
}

std::string confirm_gpu(GpuAssigned& gpu, const nlohmann::json& probe, const GpuContext& c) {
  const auto devices = probe.find("cuda_devices");
  if (devices == probe.end() || !devices->is_array()) return "";  // the probe could not run at all: it says why
  if (devices->size() > 1)
    throw Error(gpu.label() + ": CUDA_VISIBLE_DEVICES=" + gpu.entry + " shows the graders " +
                plural(devices->size(), "GPU") + ", not one; name the GPU by its UUID (nvidia-smi -L)");
  if (devices->empty())
    return gpu.label() + ": the graders' environment shows no GPU (" +
           probe.value("cuda_devices_reason", std::string("?")) + "), so their GPU tests will not run";
  const auto& d = devices->front();
  const std::string seen = d.value("uuid", std::string());
  if (seen.empty()) return "";
  const std::string expected = gpu.uuid;
  gpu.uuid = is_mig(gpu.entry) ? "MIG-" + uuid_key(seen) : seen;
  if (gpu.name.empty()) gpu.name = d.value("name", std::string());
  if (c.gpus && !is_mig(gpu.entry)) {
    const auto it = std::find_if(c.gpus->begin(), c.gpus->end(),
                                 [&](const GpuListed& g) { return uuid_key(g.uuid) == uuid_key(seen); });
    if (it == c.gpus->end())
      return gpu.label() + ": the graders see " + seen + ", which nvidia-smi does not list";
    gpu.index = it->index, gpu.name = it->name;
  }
  if (!expected.empty() && uuid_key(expected) != uuid_key(seen))
    return gpu.label() + ": CUDA_VISIBLE_DEVICES=" + gpu.entry + " shows the graders " + seen + ", not " + expected +
           " (the GPU nvidia-smi calls " + gpu.entry + "): this environment numbers its GPUs its own way; the records name "
           "the GPU the graders saw";
  return "";
}

}  // namespace convlab::cli
