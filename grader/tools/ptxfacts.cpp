// ptxfacts: what each kernel of a compiled CUDA file does with memory, read from its PTX.
//
//   convlab_ptxfacts OUT.json FILE.ptx...
//
// For every kernel (.entry) it counts the instructions that touch each memory space — shared
// loads and stores, barriers, constant loads, global loads and stores, atomics — including those
// of the device functions it calls (.func, followed through the call graph). The technique graders
// read the result next to the runner's launch records: a tiled kernel must load and store shared
// memory and wait at a barrier; a kernel that reads its filter from constant memory has ld.const.
// Counts are static (instructions in the code), not executions: the CPU backend counts executions.
// Kernels are keyed by the short name the runner reports ("conv2d_tiled_in_kernel", template
// arguments kept), the mangled name alongside.
#include <cxxabi.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Counts {
  long ld_shared = 0, st_shared = 0, barriers = 0, ld_const = 0, ld_global = 0, st_global = 0, atomics = 0,
       ld_generic = 0, st_generic = 0, async_copies = 0, mma = 0;
  void add(const Counts& o) {
    ld_shared += o.ld_shared, st_shared += o.st_shared, barriers += o.barriers, ld_const += o.ld_const;
    ld_global += o.ld_global, st_global += o.st_global, atomics += o.atomics;
    ld_generic += o.ld_generic, st_generic += o.st_generic, async_copies += o.async_copies;
    mma += o.mma;
  }
};

struct Function {
  bool kernel = false;
  Counts own;
  std::set<std::string> callees;
};

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// The same shortening as the runner's launch records: no namespaces, no parameters.
std::string short_name(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : mangled;
  std::free(d);
  for (std::size_t p; (p = s.find("(anonymous namespace)")) != std::string::npos;) s.erase(p, 21);
  int angle = 0;
  std::size_t end = s.size(), start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') ++angle;
    else if (c == '>') --angle;
    else if (angle == 0 && c == '(') {
      end = i;
      break;
    } else if (angle == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      start = i + 2;
      ++i;
    }
  }
  return s.substr(start, end - start);
}

// The identifier before the first '(' of a function header line, e.g.
// ".visible .entry _Z6kernelPf(" or ".func (.param .b32 r) _Z3addii(".
std::string header_name(const std::string& line) {
  std::string s = line;
  // Skip a return-value list: ".func (.param ...) name(".
  const std::size_t func = s.find(".func");
  std::size_t from = func == std::string::npos ? s.find(".entry") : func;
  from = s.find_first_not_of(' ', from + 6);
  if (from != std::string::npos && s[from] == '(') from = s.find(')', from) + 1;
  std::size_t b = s.find_first_not_of(" \t", from);
  std::size_t e = b;
  while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_' || s[e] == '$')) ++e;
  return b == std::string::npos ? std::string() : s.substr(b, e - b);
}

// The callee of a call instruction, written over one or more lines by nvcc:
// "call.uni (retval0), _Z3fooi, (param0);" or "call.uni _Z3barv, ();".
std::string callee_of(const std::string& call) {
  std::string rest = call.substr(call.find_first_of(" \t\n"));
  std::size_t p = rest.find_first_not_of(" \t\n");
  if (p != std::string::npos && rest[p] == '(') {  // the return values
    p = rest.find(')', p);
    if (p == std::string::npos) return {};
    p = rest.find(',', p);
    if (p == std::string::npos) return {};
    p = rest.find_first_not_of(" \t\n", p + 1);
  }
  std::size_t e = p;
  while (e < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[e])) || rest[e] == '_' || rest[e] == '$')) ++e;
  return p == std::string::npos || e == p ? std::string() : rest.substr(p, e - p);
}

// Counts one line of a function body; `call` gathers a call instruction until its ';'.
void count(const std::string& raw, Function& f, std::string& call) {
  std::string line = raw;
  const std::size_t comment = line.find("//");
  if (comment != std::string::npos) line.erase(comment);
  if (!call.empty()) {
    call += " " + line;
    if (line.find(';') != std::string::npos) {
      if (const std::string callee = callee_of(call); !callee.empty()) f.callees.insert(callee);
      call.clear();
    }
    return;
  }
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return;
  line.erase(0, i);
  if (line[0] == '@') {  // a predicate guard: "@%p1 ld.shared.f32 ..."
    const std::size_t sp = line.find_first_of(" \t");
    if (sp == std::string::npos) return;
    line.erase(0, line.find_first_not_of(" \t", sp));
  }
  const std::string op = line.substr(0, line.find_first_of(" \t;"));
  Counts& c = f.own;
  if (starts_with(op, "ld.") || starts_with(op, "ldu.")) {
    if (op.find(".shared") != std::string::npos) ++c.ld_shared;
    else if (op.find(".const") != std::string::npos) ++c.ld_const;
    else if (op.find(".global") != std::string::npos) ++c.ld_global;
    else if (op.find(".param") == std::string::npos && op.find(".local") == std::string::npos) ++c.ld_generic;
  } else if (starts_with(op, "st.")) {
    if (op.find(".shared") != std::string::npos) ++c.st_shared;
    else if (op.find(".global") != std::string::npos) ++c.st_global;
    else if (op.find(".param") == std::string::npos && op.find(".local") == std::string::npos) ++c.st_generic;
  } else if (starts_with(op, "bar.") || starts_with(op, "barrier.")) {
    if (op.find("warp") == std::string::npos) ++c.barriers;
  } else if (starts_with(op, "atom.") || starts_with(op, "red.")) {
    ++c.atomics;
  } else if (starts_with(op, "wmma.mma") || starts_with(op, "mma.") || starts_with(op, "wgmma.mma")) {
    ++c.mma;  // a tensor-core matrix multiply-accumulate
  } else if (starts_with(op, "cp.async")) {
    ++c.async_copies;
  } else if (op == "call" || starts_with(op, "call.")) {
    if (line.find(';') != std::string::npos) {
      if (const std::string callee = callee_of(line); !callee.empty()) f.callees.insert(callee);
    } else {
      call = line;
    }
  }
}

Counts total(const std::string& name, const std::map<std::string, Function>& fns, std::set<std::string>& seen) {
  Counts c;
  const auto it = fns.find(name);
  if (it == fns.end() || !seen.insert(name).second) return c;
  c = it->second.own;
  for (const auto& callee : it->second.callees) c.add(total(callee, fns, seen));
  return c;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: convlab_ptxfacts OUT.json FILE.ptx...\n";
    return 2;
  }
  std::map<std::string, Function> fns;
  for (int a = 2; a < argc; ++a) {
    std::ifstream in(argv[a]);
    if (!in) {
      std::cerr << "convlab_ptxfacts: cannot read " << argv[a] << "\n";
      return 2;
    }
    std::string line, current, call;
    int depth = 0;
    bool pending = false;  // a header seen, its body not yet opened
    while (std::getline(in, line)) {
      if (depth == 0) {
        if (line.find(".entry") != std::string::npos || line.find(".func") != std::string::npos) {
          current = header_name(line);
          pending = !current.empty();
          if (pending) fns[current].kernel = fns[current].kernel || line.find(".entry") != std::string::npos;
        }
        if (pending && line.find(';') != std::string::npos && line.find('{') == std::string::npos &&
            line.find(')') != std::string::npos && line.find(".extern") != std::string::npos)
          pending = false;  // a declaration only
      }
      for (char ch : line) {
        if (ch == '{') {
          if (depth == 0 && !pending) current.clear();
          ++depth;
          pending = false;
        } else if (ch == '}') {
          --depth;
        }
      }
      if (depth > 0 && !current.empty()) count(line, fns[current], call);
      if (depth == 0 && !pending) current.clear();
    }
  }
  std::ostringstream out;
  out << "{\n  \"kernels\": {";
  bool first = true;
  std::map<std::string, std::pair<Counts, std::string>> by_short;
  for (const auto& [name, f] : fns) {
    if (!f.kernel) continue;
    std::set<std::string> seen;
    const Counts c = total(name, fns, seen);
    auto& slot = by_short[short_name(name)];
    slot.first.add(c);  // overloads that shorten alike are merged
    slot.second = name;
  }
  for (const auto& [name, v] : by_short) {
    const Counts& c = v.first;
    out << (first ? "\n" : ",\n") << "    \"" << json_escape(name) << "\": {\"mangled\": \"" << json_escape(v.second)
        << "\", \"ld_shared\": " << c.ld_shared << ", \"st_shared\": " << c.st_shared
        << ", \"barriers\": " << c.barriers << ", \"ld_const\": " << c.ld_const << ", \"ld_global\": " << c.ld_global
        << ", \"st_global\": " << c.st_global << ", \"atomics\": " << c.atomics << ", \"ld_generic\": " << c.ld_generic
        << ", \"st_generic\": " << c.st_generic << ", \"async_copies\": " << c.async_copies
        << ", \"mma\": " << c.mma << "}";
    first = false;
  }
  out << "\n  }\n}\n";
  std::ofstream o(argv[1]);
  if (!(o << out.str())) {
    std::cerr << "convlab_ptxfacts: cannot write " << argv[1] << "\n";
    return 2;
  }
  return 0;
}
