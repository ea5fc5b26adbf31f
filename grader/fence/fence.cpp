// The symbol fence's checks. See fence.hpp for what it refuses and why.
#include "fence.hpp"

#include "allowlist.hpp"
#include "names.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace convlab::fence {
namespace {

bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

bool contains_icase(const std::string& haystack, const std::string& needle) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "conv_basic.cu.o" -> "conv_basic.cu"; the CPU backend's "conv_basic.cpp.o" (the
// rewrite of conv_basic.cu) -> "conv_basic.cu".
std::string display_file(const Policy& p, const std::string& member) {
  std::string f = member;
  for (const char* ext : {".o", ".obj"})
    if (ends_with(f, ext)) f.erase(f.size() - std::string(ext).size());
  if (ends_with(f, ".cpp")) {
    const std::string cu = f.substr(0, f.size() - 4) + ".cu";
    if (std::find(p.files.begin(), p.files.end(), cu) != p.files.end()) return cu;
  }
  return f;
}

class Checker {
public:
  Checker(const Policy& p, Backend b, const ObjectFile& o, const std::map<std::string, bool>& harness,
          std::vector<Finding>& out)
      : policy_(p), backend_(b), obj_(o), harness_(harness), out_(out), file_(display_file(p, o.member)) {}

  void run() {
    check_machine();
    check_forbidden_substrings();
    check_start_up();  // first: what a refused start-up function calls is not named twice
    check_references();
    check_definitions();
    check_sections();
    check_instructions();
  }

private:
  unsigned mask() const { return backend_ == Backend::cuda ? kCuda : kCpu; }

  void add(const std::string& symbol, const std::string& what) {
    for (const auto& f : out_)
      if (f.file == file_ && f.what == what) return;
    out_.push_back({file_, symbol, what});
  }

  // ---- what a name may be ------------------------------------------------------------

  bool file_may_use_substring(const std::string& demangled) const {
    const auto it = policy_.allowed_substrings.find(file_);
    if (it == policy_.allowed_substrings.end()) return false;
    for (const auto& sub : it->second)
      if (contains_icase(demangled, sub)) return true;
    return false;
  }

  // The lab's own namespace (convlab::lab01): the contract's functions and the
  // submission's helpers, in this file or another of the submission's files.
  bool own(const Name& n) const { return n.outer() == "convlab" && n.scopes.size() > 2 && n.scopes[1] == policy_.lab; }

  bool allowed_reference(const Name& n) const {
    if (own(n) && !graders_answer(n) && !harness_.count(n.raw)) return true;
    for (const auto& g : base_allow_list())
      if (g.backends & mask())
        for (const char* p : g.patterns)
          if (matches(p, n)) return true;
    for (const auto& a : policy_.allow) {
      if (!a.backends.empty() &&
          std::find(a.backends.begin(), a.backends.end(), backend_ == Backend::cuda ? "cuda" : "cpu") ==
              a.backends.end())
        continue;
      if (!a.files.empty() && std::find(a.files.begin(), a.files.end(), file_) == a.files.end()) continue;
      for (const auto& p : a.symbols)
        if (matches(p, n)) return true;
    }
    if (backend_ == Backend::cpu)
      for (const auto& alias : cpu_aliases())
        if (matches(alias.internal, n))
          for (const char* api : alias.api)
            if (allowed_reference(parse_name(api))) return true;
    return false;
  }

  bool calls(const Symbol& sym, int index, const Name& n) const {
    if (n.function) return true;
    for (const auto& r : obj_.relocations)
      if (r.symbol_index == index &&
          (r.type.find("PLT") != std::string::npos || r.type.find("CALL") != std::string::npos ||
           r.type.find("JUMP26") != std::string::npos))
        return true;
    return sym.type == "FUNC";
  }

  void refuse_reference(const Symbol& sym, int index, const Name& n) {
    add(n.shown(), std::string(calls(sym, index, n) ? "calls " : "uses ") + n.shown() +
                       ", which your kernels' file may not use (" + reason_for(n) + ")");
  }

  // ---- 5. the spec's forbidden substrings ---------------------------------------------

  void check_forbidden_substrings() {
    for (std::size_t i = 0; i < obj_.symbols.size(); ++i) {
      const Symbol& s = obj_.symbols[i];
      if (s.name.empty() || s.type == "FILE" || s.type == "SECTION" || s.name[0] == '.') continue;
      const Name n = parse_name(s.name);
      for (const auto& f : policy_.forbidden) {
        if (!contains_icase(n.demangled, f) || file_may_use_substring(n.demangled)) continue;
        forbidden_.insert(s.name);
        add(n.shown(), std::string(s.undefined() ? "uses " : "defines ") + n.shown() + ", and this lab forbids " + f +
                           " (its grading.json lists \"" + f + "\" in forbidden_symbols)");
      }
    }
  }

  // ---- 1. references --------------------------------------------------------------------

  // True if symbol `index` is referenced, and only from functions in `functions`.
  bool only_referenced_from(int index, const std::set<const Symbol*>& functions) const {
    bool any = false;
    for (const auto& r : obj_.relocations) {
      if (r.symbol_index != index) continue;
      any = true;
      const Symbol* f = obj_.function_at(r.section, r.offset);
      if (!f || !functions.count(f)) return false;
    }
    return any;
  }

  // True if every reference to symbol `index` sits in a start-up function that
  // check_start_up() refused already (a global std::string's constructor calls
  // __cxa_atexit for its destructor: one finding, not three).
  bool only_in_refused_start_up(int index) const { return only_referenced_from(index, refused_start_up_); }

  void check_references() {
    bool registers_at_exit = false;  // __dso_handle only ever goes with __cxa_atexit: name that one
    for (const auto& s : obj_.symbols)
      if (s.undefined() && (s.name == "__cxa_atexit" || s.name.rfind("__cxa_thread_atexit", 0) == 0))
        registers_at_exit = true;
    for (std::size_t i = 0; i < obj_.symbols.size(); ++i) {
      const Symbol& s = obj_.symbols[i];
      if (!s.undefined() || s.name.empty() || forbidden_.count(s.name)) continue;
      if (only_in_refused_start_up(static_cast<int>(i)) || (s.name == "__dso_handle" && registers_at_exit)) continue;
      if ((s.name == "__cxa_atexit" || s.name == "__dso_handle") && only_in_iostream_start_up(static_cast<int>(i)))
        continue;
      const Name n = parse_name(s.name);
      if (file_may_use_substring(n.demangled)) continue;
      const NvccOnly* only = nullptr;
      if (backend_ == Backend::cuda)
        for (const auto& o : nvcc_only())
          if (matches(o.pattern, n)) only = &o;
      if (only) {
        if (!nvcc_reference_ok(static_cast<int>(i), only->callers)) refuse_reference(s, static_cast<int>(i), n);
        continue;
      }
      if (!allowed_reference(n)) refuse_reference(s, static_cast<int>(i), n);
    }
  }

  // A name nvcc's own code uses (registration, exit in __device__ stubs) is allowed
  // only where that code uses it: every reference must sit in such a function.
  bool nvcc_reference_ok(int index, const std::string& callers) const {
    for (const auto& r : obj_.relocations) {
      if (r.symbol_index != index) continue;
      const Symbol* f = obj_.function_at(r.section, r.offset);
      if (!f) return false;
      if (callers == "registration") {
        // nvcc's file-static start-up and clean-up functions (without optimisation
        // the registration callbacks are not inlined into __sti____cudaRegisterAll): a
        // student cannot define these names in the same file, where nvcc defines them.
        static const std::set<std::string> nvcc_functions = {
            "_ZL24__sti____cudaRegisterAllv", "_ZL26__cudaUnregisterBinaryUtilv",
            "_ZL31__nv_cudaEntityRegisterCallbackPPv", "_ZL32__nv_init_managed_rt_with_modulePPv",
            "_ZL37__nv_save_fatbinhandle_for_managed_rtPPv"};
        if (f->bind != "LOCAL" || !nvcc_functions.count(f->name)) return false;
      } else if (!device_function_stub(*f)) {
        return false;
      }
    }
    return true;
  }

  // nvcc replaces the host copy of a __device__ function by
  // `{ int volatile ___ = 1; (void)args; ::exit(___); }`: the function may only
  // spill its arguments, store the constant 1 and call exit with it.
  bool device_function_stub(const Symbol& f) const {
    if (f.type != "FUNC" || f.size == 0) return false;
    const std::uint64_t begin = f.value, end = f.value + f.size;
    int relocs = 0;
    for (const auto& r : obj_.relocations)
      if (r.section == f.section && r.offset >= begin && r.offset < end) {
        if (r.symbol_index < 0 || obj_.symbols[static_cast<std::size_t>(r.symbol_index)].name != "exit") return false;
        ++relocs;
      }
    if (relocs != 1) return false;
    const bool x86 = obj_.machine.find("X86-64") != std::string::npos;
    bool stores_one = false;
    for (const auto& in : obj_.instructions) {
      if (in.section != f.section || in.offset < begin || in.offset >= end) continue;
      std::vector<std::string> w = words(in.text);
      while (!w.empty() && (w[0] == "endbr64" || w[0] == "bnd" || w[0] == "notrack" || w[0] == "data16" ||
                            w[0] == "cs" || w[0] == "ds"))
        w.erase(w.begin());
      if (w.empty()) continue;
      const std::string& op = w[0];
      const std::string args = w.size() > 1 ? w[1] : "";
      if (x86) {
        static const std::set<std::string> allowed = {"push", "pop", "mov", "movl", "movq", "movss", "movsd", "movd",
                                                      "movaps", "movups", "movapd", "movdqa", "movdqu", "sub", "add",
                                                      "lea", "call", "nop", "nopw", "nopl", "xchg", "int3", "hlt",
                                                      "ud2", "ret", "leave"};
        if (!allowed.count(op)) return false;
        const auto dollar = args.find('$');
        if (dollar != std::string::npos) {
          if (starts_with(op, "mov")) {
            if (args.compare(dollar, 5, "$0x1,") != 0) return false;
            stores_one = true;
          } else if (!((op == "sub" || op == "add") && (ends_with(args, "%rsp") || ends_with(args, "%rbp")))) {
            return false;
          }
        }
      } else {
        static const std::set<std::string> allowed = {"stp", "ldp", "mov", "str", "ldr", "stur", "ldur", "add", "sub",
                                                      "bl", "b", "nop", "brk", "udf", "paciasp", "autiasp", "bti",
                                                      "ret"};
        if (!allowed.count(op)) return false;
        // An immediate outside an address ([sp, #12]) must be the constant 1.
        std::string outside;
        int depth = 0;
        for (char c : in.text.substr(in.text.find(op) + op.size())) {
          if (c == '[') ++depth;
          if (c == ']') --depth;
          if (depth == 0) outside += c;
        }
        const auto hash = outside.find('#');
        if (hash != std::string::npos) {
          if (op == "mov") {
            const std::string imm = outside.substr(hash + 1, outside.find_first_of(", \t", hash + 1) - hash - 1);
            if (imm != "1" && imm != "0x1") return false;
            stores_one = true;
          } else if (!((op == "sub" || op == "add") && outside.find("sp") != std::string::npos)) {
            return false;
          }
        }
      }
    }
    return stores_one;
  }

  // ---- 2. definitions ------------------------------------------------------------------

  bool header_definition(const Name& n) const {
    for (const auto& h : header_definitions())
      if (h.backends & mask())
        for (const char* p : h.patterns)
          if (matches(p, n)) return true;
    return false;
  }

  void refuse_definition(const Name& n, const std::string& why) {
    add(n.shown(), "defines " + n.shown() + ", which your kernels' file may not define (" + why + ")");
  }

  void check_definitions() {
    for (const auto& s : obj_.symbols) {
      if (s.undefined() || !s.global() || s.name.empty() || s.type == "SECTION" || s.type == "FILE" ||
          forbidden_.count(s.name))
        continue;
      const Name n = parse_name(s.name);
      const Section* sec = obj_.section(s.section);
      // Inline functions, templates and their statics: the compiler puts each in a
      // COMDAT group, and the linker keeps one copy of each.
      const bool inline_copy = (s.bind == "WEAK" || s.bind == "UNIQUE") && sec && sec->flags.find('G') != std::string::npos;
      if (s.type == "IFUNC" || s.type == "GNU_IFUNC") {
        refuse_definition(n, "an indirect function's resolver runs while the program loads, before the graders start");
        continue;
      }
      const auto h = harness_.find(s.name);
      if (h != harness_.end() && !(inline_copy && h->second)) {
        refuse_definition(n, "the graders' own code defines it too, and your definition would take the place of theirs");
        continue;
      }
      // Definitions the compiler makes itself: the pointer to the C++ personality
      // routine, and AddressSanitizer's one-definition-rule indicator of each global.
      if (s.name == "DW.ref.__gxx_personality_v0" || starts_with(s.name, "__odr_asan.") ||
          starts_with(s.name, "__odr_asan_gen_"))
        continue;
      if (!n.mangled) {
        check_c_definition(s, n, sec);
        continue;
      }
      const std::string outer = n.outer();
      const std::string base = n.base();
      if (outer == "std" || outer == "__gnu_cxx" || outer == "__cxxabiv1") {
        if (!inline_copy)
          refuse_definition(n, "the standard library's names are its own: a definition in namespace " + outer +
                                   " would replace the library's for the graders too");
      } else if (graders_answer(n)) {
        refuse_definition(n, kGradersAnswersReason);
      } else if (outer == "convlab") {
        if (!own(n) && !(inline_copy && header_definition(n)))
          refuse_definition(n, "names in namespace convlab belong to the graders: put your code in convlab::" +
                                   policy_.lab + " or in an anonymous namespace");
      } else if (outer == "convlab_cpu") {
        if (!(inline_copy && header_definition(n)))
          refuse_definition(n, "it belongs to the CPU backend's runtime, which the graders use too");
      } else if (outer == "testing" || outer == "nlohmann" || outer == "boost" || outer == "CLI") {
        refuse_definition(n, "it belongs to the graders' libraries: GoogleTest, JSON, Boost, CLI11");
      } else if (outer.empty()) {
        check_global_definition(s, n, base, inline_copy);
      }
    }
  }

  // A C++ name in the global namespace.
  void check_global_definition(const Symbol& s, const Name& n, const std::string& base, bool inline_copy) {
    (void)s;
    if (starts_with(base, "operator new") || starts_with(base, "operator delete")) {
      // <new>'s placement forms are inline (the compiler emits copies without
      // optimisation) and cannot be replaced; every other form replaces the allocator.
      const bool placement = n.demangled.find(", void*)") != std::string::npos;
      if (!(inline_copy && placement))
        refuse_definition(n, "it replaces the program's memory allocator, which the graders use too");
    } else if (base == "main") {
      refuse_definition(n, "the program's entry point is the graders'");
    } else if (cuda_name(base)) {
      if (inline_copy) {
        // An instance of a runtime header's template (cudaMemcpyToSymbol<float [33]>
        // on the CPU backend): using it is calling that API.
        const Name api = parse_name(base);
        if (!allowed_reference(api))
          add(api.shown(), "calls " + api.shown() + ", which your kernels' file may not use (" + reason_for(api) + ")");
      } else {
        refuse_definition(n, "it is a CUDA runtime or library name, and your definition would replace the "
                             "library's for the graders too, who time with cudaEventElapsedTime");
      }
    } else if (starts_with(base, "__asan") || starts_with(base, "__sanitizer") || starts_with(base, "__ubsan") ||
               starts_with(base, "__lsan")) {
      refuse_definition(n, "it would change the sanitizers that check your code");
    }
  }

  // A name with C linkage: one name program-wide, for every library.
  void check_c_definition(const Symbol& s, const Name& n, const Section* sec) {
    const bool code = s.type == "FUNC" || (s.type == "NOTYPE" && sec && sec->executable());
    const auto& vars = c_library_variables();
    const bool c_library_variable =
        std::find_if(vars.begin(), vars.end(), [&](const char* v) { return n.qualified == v; }) != vars.end();
    bool library = false;  // a name the allow-list or the refusals know: a library's
    for (const auto& g : base_allow_list())
      for (const char* p : g.patterns)
        if (std::string(p).find_first_of("*?:") == std::string::npos && n.qualified == p) library = true;
    if (!library && reason_for(n) != kDefaultReason) library = true;
    if (code) {
      if (cuda_name(n.qualified))
        refuse_definition(n, "it is a CUDA runtime or library function, and your definition would replace the "
                             "library's for the graders too, who time with cudaEventElapsedTime");
      else if (library)
        refuse_definition(n, n.qualified + " is a C library function, and your definition would replace it for the "
                             "graders too");
      else
        refuse_definition(n, "a function with C linkage, extern \"C\", has one name program-wide, so it could take "
                             "the place of a library function the graders call: remove the extern \"C\" or make it "
                             "static");
      return;
    }
    if (c_library_variable || library)
      refuse_definition(n, n.qualified + " is a C library variable, and your definition would replace it for the "
                           "graders too");
    else if (n.qualified[0] == '_')
      refuse_definition(n, "global names that begin with an underscore belong to the compiler and its libraries: "
                           "rename it or put it in a namespace");
    else if (cuda_name(n.qualified))
      refuse_definition(n, "names that begin with cuda, cu or nv belong to CUDA's libraries: rename it or put it in "
                           "a namespace");
  }

  // ---- 3. global constructors and destructors ---------------------------------------------

  static bool start_up_section(const Section& s, bool* exit_time) {
    const std::string& n = s.name;
    const auto is = [&](const char* base) { return n == base || starts_with(n, std::string(base) + "."); };
    *exit_time = is(".fini_array") || is(".dtors") || s.type == "FINI_ARRAY";
    return *exit_time || is(".init_array") || is(".preinit_array") || is(".ctors") || s.type == "INIT_ARRAY" ||
           s.type == "PREINIT_ARRAY";
  }

  // The function an entry points at: a named symbol, or a section symbol + offset.
  const Symbol* entry_target(const Relocation& r) const {
    if (r.symbol_index < 0 || static_cast<std::size_t>(r.symbol_index) >= obj_.symbols.size()) return nullptr;
    const Symbol& s = obj_.symbols[static_cast<std::size_t>(r.symbol_index)];
    if (s.type != "SECTION") return &s;
    return obj_.symbol_at(s.section, static_cast<std::uint64_t>(r.addend));
  }

  // A sanitizer's module constructor (GCC: _sub_I_00099_0): it may only call the
  // sanitizer's run-time library (AddressSanitizer's, or ThreadSanitizer's __tsan_init,
  // which the CPU backend's runtime answers to count memory accesses).
  bool sanitizer_module_function(const Symbol& f) const {
    if (f.bind != "LOCAL" || f.type != "FUNC") return false;
    if (!(starts_with(f.name, "_sub_I_00099_") || starts_with(f.name, "_sub_D_00099_") ||
          starts_with(f.name, "_GLOBAL__sub_I_00099_") || starts_with(f.name, "_GLOBAL__sub_D_00099_")))
      return false;
    for (const auto& r : obj_.relocations) {
      if (r.section != f.section || r.offset < f.value || r.offset >= f.value + f.size) continue;
      if (r.symbol_index < 0) return false;
      const Symbol& t = obj_.symbols[static_cast<std::size_t>(r.symbol_index)];
      const bool runtime = t.undefined() && (starts_with(t.name, "__asan_") || t.name == "__tsan_init");
      const bool data = !t.undefined() && (t.type == "SECTION" || t.type == "OBJECT" || t.type == "NOTYPE") &&
                        !(obj_.section(t.section) && obj_.section(t.section)->executable());
      if (!runtime && !data) return false;
    }
    return true;
  }

  // On the CPU backend, cu2cpp registers each __constant__ and __device__ variable
  // with the runtime from a global constructor (convlab_cpu::detail::DeviceSymbol): a
  // start-up function of the file is the rewrite's if all it reaches is that
  // registration, the file's own data and the sanitizers' instrumentation.
  bool rewrite_registration(const Symbol& f) const {
    if (backend_ != Backend::cpu || f.type != "FUNC") return false;
    static const char* const registration[] = {"convlab_cpu::detail::register_symbol",
                                               "convlab_cpu::detail::device_symbol<*",
                                               "convlab_cpu::detail::DeviceSymbol::DeviceSymbol"};
    bool registers = false;
    for (const auto& r : obj_.relocations) {
      if (r.section != f.section || r.offset < f.value || r.offset >= f.value + f.size) continue;
      if (r.symbol_index < 0) return false;
      const Symbol& t = obj_.symbols[static_cast<std::size_t>(r.symbol_index)];
      const Section* sec = obj_.section(t.section);
      const bool code = t.type == "FUNC" || (sec && sec->executable()) || (t.undefined() && t.type == "NOTYPE");
      if (!code) continue;  // the file's own variables, their names, keys
      if (t.undefined() && (starts_with(t.name, "__tsan_") || starts_with(t.name, "__asan_"))) continue;
      const Name n = parse_name(t.name);
      bool ok = false;
      for (const char* p : registration) ok = ok || matches(p, n);
      if (!ok) return false;
      registers = true;
    }
    return registers;
  }

  // What the start-up function `f` initialises: the variables of this file it writes.
  std::string initialised(const Symbol& f) const {
    std::set<std::string> names;
    for (const auto& r : obj_.relocations) {
      if (r.section != f.section || r.offset < f.value || r.offset >= f.value + f.size || r.symbol_index < 0) continue;
      const Symbol& t = obj_.symbols[static_cast<std::size_t>(r.symbol_index)];
      if (!t.undefined() && (t.type == "OBJECT" || t.type == "TLS") && !t.name.empty() && t.name[0] != '.' &&
          !starts_with(t.name, "_ZGV"))  // guard variables
        names.insert(parse_name(t.name).shown());
    }
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  // <iostream>'s start-up with GCC 12 and older (`static std::ios_base::Init __ioinit;`): a start-up
  // function of the file that constructs that object and registers its destructor, and otherwise
  // reaches only what rewrite_registration() accepts. Another static object's constructor or
  // destructor in the same file is a call or an address of code of its own: refused as before.
  bool iostream_start_up(const Symbol& f) const {
    if (f.type != "FUNC" || !calls_ios_init(f)) return false;
    static const char* const ours[] = {"std::ios_base::Init::Init", "std::ios_base::Init::~Init", "__cxa_atexit",
                                       "__dso_handle"};
    static const char* const registration[] = {"convlab_cpu::detail::register_symbol",
                                               "convlab_cpu::detail::device_symbol<*",
                                               "convlab_cpu::detail::DeviceSymbol::DeviceSymbol"};
    for (const auto& r : obj_.relocations) {
      if (r.section != f.section || r.offset < f.value || r.offset >= f.value + f.size) continue;
      if (r.symbol_index < 0) return false;
      const Symbol& t = obj_.symbols[static_cast<std::size_t>(r.symbol_index)];
      const Section* sec = obj_.section(t.section);
      const bool code = t.type == "FUNC" || (sec && sec->executable()) || (t.undefined() && t.type == "NOTYPE");
      if (!code) continue;  // the file's own variables: the Init object among them
      if (t.undefined() && (starts_with(t.name, "__tsan_") || starts_with(t.name, "__asan_"))) continue;
      const Name n = parse_name(t.name);
      bool ok = false;
      for (const char* p : ours) ok = ok || (t.undefined() && matches(p, n));
      if (backend_ == Backend::cpu)
        for (const char* p : registration) ok = ok || matches(p, n);
      if (!ok) return false;
    }
    return true;
  }

  // True if every reference to symbol `index` sits in an accepted <iostream> start-up function.
  bool only_in_iostream_start_up(int index) const { return only_referenced_from(index, iostream_start_up_); }

  bool calls_ios_init(const Symbol& f) const {
    for (const auto& r : obj_.relocations)
      if (r.section == f.section && r.offset >= f.value && r.offset < f.value + f.size && r.symbol_index >= 0 &&
          starts_with(obj_.symbols[static_cast<std::size_t>(r.symbol_index)].name, "_ZNSt8ios_base4Init"))
        return true;
    return false;
  }

  void check_start_up() {
    for (const auto& sec : obj_.sections) {
      bool exit_time = false;
      if (!start_up_section(sec, &exit_time)) continue;
      const char* when = exit_time ? "when the program exits" : "before main";
      std::size_t entries = 0;
      for (const auto& r : obj_.relocations) {
        if (r.section != sec.index) continue;
        ++entries;
        const Symbol* t = entry_target(r);
        if (!t) {
          add("", "has an entry in " + sec.name + " that runs code " + when +
                      ", and the fence cannot tell what it runs: no code of yours may run " + when);
          continue;
        }
        if (backend_ == Backend::cuda && t->bind == "LOCAL" && t->type == "FUNC" &&
            t->name == "_ZL24__sti____cudaRegisterAllv")
          continue;  // nvcc's registration of this file's kernels
        if (sanitizer_module_function(*t) || rewrite_registration(*t)) continue;
        if (!exit_time && starts_with(t->name, "_GLOBAL__sub_I_") && iostream_start_up(*t)) {
          iostream_start_up_.insert(t);
          continue;
        }
        const Name n = parse_name(t->name);
        // A variable placed in the section by hand.
        const Symbol* var = nullptr;
        for (const auto& s : obj_.symbols)
          if (s.section == sec.index && s.type == "OBJECT" && r.offset >= s.value &&
              r.offset < s.value + std::max<std::uint64_t>(s.size, 1))
            var = &s;
        if (var) {
          refused_start_up_.insert(t);
          add(n.shown(), "places " + parse_name(var->name).shown() + " in " + sec.name + ", so " + n.shown() +
                             " runs " + when + ": no code of yours may run " + when);
        } else if (starts_with(t->name, "_GLOBAL__sub_I_") || starts_with(t->name, "_GLOBAL__sub_D_")) {
          // GCC's dynamic initialisation of the file's globals, named after the first of them.
          refused_start_up_.insert(t);
          // (<iostream>'s own object, _ZStL8__ioinit, is not the student's to name.)
          std::string vars = initialised(*t);
          for (const std::string ioinit : {"std::__ioinit, ", ", std::__ioinit", "std::__ioinit"})
            if (const auto p = vars.find(ioinit); p != std::string::npos) vars.erase(p, ioinit.size());
          const std::string after = t->name.substr(std::string("_GLOBAL__sub_I_").size());
          if (vars.empty() && starts_with(after, "_Z") && !parse_name(after).function) vars = parse_name(after).shown();
          add(vars, "has a global constructor" + (vars.empty() ? std::string() : " that initialises " + vars) +
                          ": a global or static variable whose value is computed when the program starts (a "
                          "global std::string, a `static Foo foo;` with a constructor, the result of a function) "
                          "runs code " + when + ", before the graders start; make it constexpr, or a local "
                          "variable of your launcher");
        } else {
          refused_start_up_.insert(t);
          add(n.shown(), "runs " + n.shown() + " " + when + " (a function marked __attribute__((" +
                             (exit_time ? "destructor" : "constructor") + ")) or a pointer placed in " + sec.name +
                             "): no code of yours may run " + when);
        }
      }
      // Every pointer of the section must have come from a relocation.
      if (sec.type != "NOBITS" && sec.size > entries * 8)
        add("", "has " + sec.name + " entries that point at fixed addresses: no code of yours may run " +
                    std::string(when));
    }
  }

  // ---- 4. sections and instructions ------------------------------------------------------

  void check_machine() {
    if (obj_.machine.find("X86-64") == std::string::npos && obj_.machine.find("AArch64") == std::string::npos)
      throw FenceError(obj_.member + ": the fence reads x86-64 and AArch64 objects, not '" + obj_.machine + "'");
  }

  void check_sections() {
    bool note_stack = false;
    for (const auto& s : obj_.sections) {
      if (s.name == ".note.GNU-stack") {
        note_stack = true;
        if (s.executable())
          add("", "asks for an executable stack (its .note.GNU-stack section is executable), which would let data "
                  "run as code");
      }
      if (starts_with(s.name, ".gnu.lto_"))
        add("", "holds link-time-optimisation bytecode (" + s.name + "), which the fence cannot check");
      if (!s.executable()) continue;
      if (s.name != ".text" && !starts_with(s.name, ".text."))
        add("", "has an executable section " + s.name + ", which the compiler does not make for your code (" +
                    (s.name == ".init" || s.name == ".fini" ? "it runs when the program starts or ends"
                                                              : "code put there by hand") +
                    ")");
      if (s.writable()) add("", "has a section that is both writable and executable (" + s.name + ")");
    }
    if (!note_stack)
      add("", "asks for an executable stack (it has no .note.GNU-stack section), which would let data run as code");
  }

  void check_instructions() {
    const bool x86 = obj_.machine.find("X86-64") != std::string::npos;
    for (const auto& in : obj_.instructions) {
      const auto w = words(in.text);
      std::string found;
      for (std::size_t i = 0; i < w.size() && found.empty(); ++i) {
        if (x86 && (w[i] == "syscall" || w[i] == "sysenter")) found = w[i];
        if (x86 && w[i] == "int" && i + 1 < w.size() && w[i + 1] == "$0x80") found = "int $0x80";
        if (!x86 && (w[i] == "svc" || w[i] == "hvc" || w[i] == "smc")) found = w[i];
      }
      if (found.empty()) continue;
      const Symbol* f = obj_.function_at(in.section, in.offset);
      const Section* sec = obj_.section(in.section);
      const std::string where = f ? parse_name(f->name).shown()
                                  : (sec ? sec->name : std::string("?")) + "+0x" + [&] {
                                      std::ostringstream o;
                                      o << std::hex << in.offset;
                                      return o.str();
                                    }();
      add(found, "has a system-call instruction (" + found + ") in " + where +
                     ": your code may not make system calls itself");
    }
  }

  const Policy& policy_;
  Backend backend_;
  const ObjectFile& obj_;
  const std::map<std::string, bool>& harness_;
  std::vector<Finding>& out_;
  std::string file_;
  std::set<std::string> forbidden_;  // names already refused for a forbidden substring
  std::set<const Symbol*> refused_start_up_;  // start-up functions refused by check_start_up()
  std::set<const Symbol*> iostream_start_up_;  // <iostream>'s, accepted by check_start_up()
};

}  // namespace

std::vector<Finding> check_objects(const Policy& policy, Backend backend, const std::vector<ObjectFile>& objects,
                                   const std::vector<ObjectFile>& harness) {
  // The graders' global definitions: name -> defined as an inline copy (weak, in a COMDAT group).
  std::map<std::string, bool> defined;
  for (const auto& o : harness)
    for (const auto& s : o.symbols) {
      if (s.undefined() || !s.global() || s.name.empty() || s.type == "SECTION") continue;
      const Section* sec = o.section(s.section);
      const bool inline_copy = (s.bind == "WEAK" || s.bind == "UNIQUE") && sec && sec->flags.find('G') != std::string::npos;
      const auto it = defined.find(s.name);
      defined[s.name] = (it == defined.end() || it->second) && inline_copy;
    }
  std::vector<Finding> out;
  for (const auto& o : objects) Checker(policy, backend, o, defined, out).run();
  return out;
}

std::vector<Finding> check(const Policy& policy, Backend backend, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& harness_inputs) {
  const auto objects = read_objects(inputs);
  const auto harness = read_symbol_tables(harness_inputs);
  return check_objects(policy, backend, objects, harness);
}

}  // namespace convlab::fence
