// Unit tests of the symbol fence: names, the readers of binutils' text, the
// grading spec's "fence" section, and the checks on hand-made objects. The
// corpus of real objects (corpus/*.cu) is tested by CTest (CMakeLists.txt).
#include "allowlist.hpp"
#include "fence.hpp"
#include "names.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace convlab::fence {
namespace {

// ---- names -------------------------------------------------------------------------------

TEST(FenceNames, DemangledNamesAreTakenApart) {
  const Name s = parse_name("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm");
  EXPECT_TRUE(s.mangled);
  EXPECT_TRUE(s.function);
  EXPECT_EQ(s.qualified, "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create");
  EXPECT_EQ(s.outer(), "std");
  EXPECT_EQ(s.base(), "_M_create");

  const Name c = parse_name("_ZN7convlab5lab0112conv1d_naiveEPKfS2_PfRKNS0_13Conv1dProblemEP11CUstream_st");
  EXPECT_EQ(c.qualified, "convlab::lab01::conv1d_naive");
  ASSERT_EQ(c.scopes.size(), 3u);
  EXPECT_EQ(c.scopes[1], "lab01");

  const Name what = parse_name("_ZNKSt13runtime_error4whatEv");  // a const member function
  EXPECT_EQ(what.key(), "std::runtime_error::what");

  const Name cold = parse_name("_ZN7convlab5lab0112conv1d_naiveEPKfS2_PfRKNS0_13Conv1dProblemEP11CUstream_st.cold");
  EXPECT_EQ(cold.qualified, "convlab::lab01::conv1d_naive");
}

TEST(FenceNames, SpecialNamesKeepTheirPrefix) {
  const Name t = parse_name("_ZTIN7convlab9CudaErrorE");
  EXPECT_EQ(t.special, "typeinfo for");
  EXPECT_EQ(t.qualified, "convlab::CudaError");
  EXPECT_EQ(t.key(), "typeinfo for convlab::CudaError");
  EXPECT_FALSE(t.function);
  EXPECT_EQ(parse_name("_ZTHN11convlab_cpu6detail2tvE").key(), "TLS init function for convlab_cpu::detail::tv");
}

TEST(FenceNames, OperatorsAndReturnTypesAreNotConfusedWithBrackets) {
  EXPECT_EQ(parse_name("_Znwm").key(), "operator new");
  EXPECT_EQ(parse_name("_ZdlPvm").key(), "operator delete");
  EXPECT_EQ(parse_name("_Znam").key(), "operator new[]");
  const Name shl = parse_name("_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc");
  EXPECT_EQ(shl.outer(), "std");
  EXPECT_EQ(shl.qualified.rfind("std::operator<<", 0), 0u) << shl.qualified;
  // A template function's demangled name starts with its return type.
  const Name plus = parse_name("_ZStplIcSt11char_traitsIcESaIcEENSt7__cxx1112basic_stringIT_T0_T1_EEOS8_S9_");
  EXPECT_EQ(plus.qualified, "std::operator+<char, std::char_traits<char>, std::allocator<char> >");
}

TEST(FenceNames, LocalEntitiesAndAnonymousNamespaces) {
  // Demangled text is taken apart the same way (a C name is its own demangled name).
  const Name lambda = parse_name(
      "typeinfo for convlab_cpu::launch<float*, int>(char const*, char const*, int, void (*)(float*, int), "
      "convlab_cpu::LaunchConfig const&, float*&, int&)::{lambda()#1}");
  EXPECT_EQ(lambda.special, "typeinfo for");
  EXPECT_EQ(lambda.outer(), "convlab_cpu");
  EXPECT_FALSE(lambda.function);
  const Name local = parse_name("helper(int)::{lambda()#1}::operator()() const");
  EXPECT_TRUE(local.function);
  EXPECT_EQ(local.qualified, "helper(int)::{lambda()#1}::operator()");
  EXPECT_EQ(local.outer(), "") << "a local entity of a global function is in the global namespace";
  const Name anon = parse_name("convlab::lab02::(anonymous namespace)::c_filter");
  EXPECT_FALSE(anon.function);
  EXPECT_EQ(anon.qualified, "convlab::lab02::(anonymous namespace)::c_filter");
}

TEST(FenceNames, BaseDropsTemplateArguments) {
  EXPECT_EQ(parse_name("cudaMemcpyToSymbol<float [33]>").base(), "cudaMemcpyToSymbol");
  EXPECT_EQ(parse_name("_ZNSt7__cxx119to_stringEi").base(), "to_string");
}

TEST(FenceNames, GlobsAndPerThreadStreamVariants) {
  EXPECT_TRUE(glob_match("std::__throw_*", "std::__throw_length_error"));
  EXPECT_TRUE(glob_match("__popcount?i2", "__popcountdi2") == false);  // '?' is an ordinary character
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("exit", "_exit"));
  EXPECT_TRUE(matches("cudaLaunchKernel", parse_name("cudaLaunchKernel_ptsz")));
  EXPECT_TRUE(matches("cudaMemcpy", parse_name("cudaMemcpy_ptds")));
  EXPECT_FALSE(matches("cudaMemcpy", parse_name("cudaMemcpyAsync_ptsz")));
}

// ---- the readers of binutils' text ----------------------------------------------------------

const char* const kSections = R"(ELF Header:
  Machine:                           Advanced Micro Devices X86-64
Section Headers:
  [Nr] Name              Type            Address          Off    Size   ES Flg Lk Inf Al
  [ 0]                   NULL            0000000000000000 000000 000000 00      0   0  0
  [ 1] .group            GROUP           0000000000000000 000040 00000c 04     24  23  4
  [ 2] .text             PROGBITS        0000000000000000 000050 00026d 00  AX  0   0 16
  [ 3] .rela.text        RELA            0000000000000000 001c38 0002e8 18   I 24   2  8
  [ 4] .init_array       INIT_ARRAY      0000000000000000 0013a8 000008 08  WA  0   0  8
  [ 5] .rela.init_array  RELA            0000000000000000 002070 000018 18   I 24   4  8
  [ 6] .note.GNU-stack   PROGBITS        0000000000000000 001400 000000 00      0   0  1
Key to Flags:
)";

const char* const kSymbols = R"(
Symbol table '.symtab' contains 5 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     0: 0000000000000000     0 NOTYPE  LOCAL  DEFAULT  UND 
     1: 0000000000000000     0 SECTION LOCAL  DEFAULT    2 .text
     2: 0000000000000010    97 FUNC    LOCAL  DEFAULT    2 _ZL24__sti____cudaRegisterAllv
     3: 0000000000000000     0 NOTYPE  GLOBAL DEFAULT  UND atexit
     4: 0000000000000080    21 FUNC    GLOBAL DEFAULT    2 _Z6helperf
)";

const char* const kRelocations = R"(
Relocation section '.rela.text' at offset 0x1c38 contains 1 entry:
    Offset             Info             Type               Symbol's Value  Symbol's Name + Addend
0000000000000030  0000000300000004 R_X86_64_PLT32         0000000000000000 atexit - 4

Relocation section '.rela.init_array' at offset 0x2070 contains 1 entry:
    Offset             Info             Type               Symbol's Value  Symbol's Name + Addend
0000000000000000  0000000100000001 R_X86_64_64            0000000000000000 .text + 10
)";

ObjectFile parsed() {
  ObjectFile o;
  o.member = "t.cu.o";
  parse_sections(kSections, o);
  parse_symbols(kSymbols, o);
  parse_relocations(kRelocations, o);
  return o;
}

TEST(FenceReaders, SectionsSymbolsAndRelocations) {
  const ObjectFile o = parsed();
  EXPECT_EQ(o.machine, "Advanced Micro Devices X86-64");
  ASSERT_EQ(o.sections.size(), 6u);
  EXPECT_TRUE(o.section(2)->executable());
  EXPECT_EQ(o.section(1)->flags, "");
  EXPECT_EQ(o.section(5)->info, 4) << "a relocation section names the section it applies to";
  ASSERT_EQ(o.symbols.size(), 5u);
  EXPECT_TRUE(o.symbols[3].undefined());
  EXPECT_EQ(o.symbols[2].section, 2);
  ASSERT_EQ(o.relocations.size(), 2u);
  EXPECT_EQ(o.relocations[0].symbol_index, 3);
  EXPECT_EQ(o.relocations[0].addend, -4);
  EXPECT_EQ(o.relocations[1].section, 4);
  EXPECT_EQ(o.relocations[1].addend, 0x10);
  EXPECT_EQ(o.function_at(2, 0x30)->name, "_ZL24__sti____cudaRegisterAllv");
  EXPECT_EQ(o.symbol_at(2, 0x10)->name, "_ZL24__sti____cudaRegisterAllv");
}

TEST(FenceReaders, TextTheyCannotReadIsAnErrorNotASkip) {
  ObjectFile o;
  o.member = "x.o";
  EXPECT_THROW(parse_sections("Section Headers:\n  [ 1] a b c d e\n", o), FenceError);
  ObjectFile p = parsed();
  p.symbols.clear();
  EXPECT_THROW(parse_symbols("Symbol table '.symtab' contains 2 entries:\n     0: garbage\n", p), FenceError);
  ObjectFile q = parsed();
  q.symbols.clear();
  EXPECT_THROW(parse_symbols("Symbol table '.symtab' contains 9 entries:\n", q), FenceError)
      << "every symbol readelf announced must be read";
}

TEST(FenceReaders, FilesThatAreNotObjects) {
  EXPECT_THROW(read_objects({"/no/such/file.a"}), FenceError);
  EXPECT_THROW(read_objects({std::string(CONVLAB_SOURCE_DIR) + "/labs/01-conv-basic/grading.json"}), FenceError);
  EXPECT_THROW(read_objects({}), FenceError);
}

// ---- the spec's "fence" section ----------------------------------------------------------------

std::string spec_with(const std::string& fence) {
  return R"({"lab": "lab05", "slug": "05-x", "title": "t", "submission": {"files": ["a.cu", "jacobi.cu"]},
             "forbidden_symbols": ["cublas"], "time_limits_s": {"compile": 1, "test": 1},
             "graders": [{"id": "correctness.a", "kind": "correctness", "points": 1}])" +
         (fence.empty() ? std::string() : ", \"fence\": " + fence) + "}";
}

TEST(FencePolicy, ReadsTheAllowSection) {
  const Policy p = parse_policy(
      spec_with(R"({"allow": [{"symbols": ["cudaMalloc"], "files": ["jacobi.cu"], "backends": ["cuda"], "why": "w"}]})"),
      "g.json");
  EXPECT_EQ(p.lab, "lab05");
  ASSERT_EQ(p.allow.size(), 1u);
  EXPECT_EQ(p.allow[0].files, std::vector<std::string>{"jacobi.cu"});
  EXPECT_TRUE(parse_policy(spec_with(""), "g.json").allow.empty());
}

TEST(FencePolicy, RefusesABadSectionWithItsKey) {
  const auto error = [](const std::string& fence) {
    try {
      parse_policy(spec_with(fence), "g.json");
    } catch (const FenceError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error(R"({"allow": [{"symbols": ["x"]}]})").find("fence.allow[0]: needs 'why'"), std::string::npos);
  EXPECT_NE(error(R"({"allow": [{"symbols": ["x"], "why": "w", "files": ["b.cu"]}]})")
                .find("fence.allow[0].files: 'b.cu' is not one of submission.files"),
            std::string::npos);
  EXPECT_NE(error(R"({"allow": [{"symbols": ["x"], "why": "w", "backends": ["gpu"]}]})")
                .find("must be 'cuda' or 'cpu'"),
            std::string::npos);
  EXPECT_NE(error(R"({"allow": [{"symbols": [], "why": "w"}]})").find("non-empty list"), std::string::npos);
  EXPECT_NE(error(R"({"allowed": []})").find("unknown key 'allowed'"), std::string::npos);
  EXPECT_NE(error(R"({"allow": [{"symbols": ["x"], "why": "w", "because": 1}]})").find("unknown key 'because'"),
            std::string::npos);
}

TEST(FencePolicy, EveryLabSpecLoads) {
  int labs = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CONVLAB_SOURCE_DIR) + "/labs")) {
    const auto spec = e.path() / "grading.json";
    if (!std::filesystem::exists(spec)) continue;
    EXPECT_NO_THROW(load_policy(spec.string())) << spec;
    ++labs;
  }
  EXPECT_GE(labs, 6);
  EXPECT_THROW(load_policy("/no/such/grading.json"), FenceError);
}

// ---- the checks, on hand-made objects --------------------------------------------------------

// An x86-64 object with .text and a non-executable stack note; symbols are added by the tests.
struct Obj {
  ObjectFile o;
  explicit Obj(const std::string& member) {
    o.member = member;
    o.machine = "Advanced Micro Devices X86-64";
    o.sections = {{1, ".text", "PROGBITS", "AX", 0x1000, 0}, {2, ".note.GNU-stack", "PROGBITS", "", 0, 0},
                  {3, ".rela.text", "RELA", "I", 0, 1}, {4, ".text.inline", "PROGBITS", "AXG", 0x100, 0},
                  {5, ".data", "PROGBITS", "WA", 0x100, 0}};
    o.symbols.push_back({"", 0, 0, "NOTYPE", "LOCAL", "DEFAULT", "UND", -1});
  }
  int undefined(const std::string& name) {
    o.symbols.push_back({name, 0, 0, "NOTYPE", "GLOBAL", "DEFAULT", "UND", -1});
    return static_cast<int>(o.symbols.size()) - 1;
  }
  int function(const std::string& name, std::uint64_t at, std::uint64_t size, const std::string& bind = "GLOBAL",
               int section = 1) {
    o.symbols.push_back({name, at, size, "FUNC", bind, "DEFAULT", std::to_string(section), section});
    return static_cast<int>(o.symbols.size()) - 1;
  }
  void call(int symbol, std::uint64_t at) { o.relocations.push_back({1, at, "R_X86_64_PLT32", "", -4, symbol}); }
};

Policy lab05() {
  Policy p = parse_policy(spec_with(R"({"allow": [
      {"symbols": ["cudaMemcpyFromSymbol"], "why": "constant memory read back"},
      {"symbols": ["cudaMallocPitch"], "files": ["jacobi.cu"], "why": "scratch"},
      {"symbols": ["cudaMemcpy2D"], "backends": ["cpu"], "why": "only to test the backend filter"}]})"),
                          "g.json");
  p.allowed_substrings["a.cu"] = {"cublas"};
  return p;
}

std::string lines(const std::vector<Finding>& f) {
  std::string s;
  for (const auto& x : f) s += x.line() + "\n";
  return s;
}

TEST(FenceChecks, TheLabsAdditionsHoldForTheirFilesAndBackends) {
  Obj a("a.cu.o"), j("jacobi.cu.o");
  for (Obj* o : {&a, &j}) {
    o->undefined("cudaMallocPitch");
    o->undefined("cudaMemcpyFromSymbol");
    o->undefined("cudaMemcpy2D");
    o->undefined("cudaMalloc");  // on the common list: the runner's recorder sees it
  }
  const auto cuda = lines(check_objects(lab05(), Backend::cuda, {a.o, j.o}));
  EXPECT_NE(cuda.find("a.cu: uses cudaMallocPitch, which your kernels' file may not use (it allocates memory that "
                      "the graders' recorder of your calls does not see"),
            std::string::npos)
      << cuda;
  EXPECT_EQ(cuda.find("jacobi.cu: uses cudaMallocPitch"), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("cudaMemcpyFromSymbol"), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("cudaMalloc,"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("a.cu: uses cudaMemcpy2D"), std::string::npos) << cuda;
  const auto cpu = lines(check_objects(lab05(), Backend::cpu, {j.o}));
  EXPECT_EQ(cpu, "") << "cudaMemcpy2D is allowed on the CPU backend only";
}

TEST(FenceChecks, ForbiddenSubstringsAndTheirPerFileExemption) {
  Obj a("a.cu.o"), j("jacobi.cu.o");
  a.undefined("cublasCreate_v2");
  j.undefined("cublasCreate_v2");
  const auto out = lines(check_objects(lab05(), Backend::cuda, {a.o, j.o}));
  EXPECT_EQ(out,
            "jacobi.cu: uses cublasCreate_v2, and this lab forbids cublas (its grading.json lists \"cublas\" in "
            "forbidden_symbols)\n");
}

TEST(FenceChecks, Lab06CudnnOnlyInTheCudnnSlot) {
  // Lab 06's own spec: the tensor-core slot (or any other) calling cuDNN, the evasion of timing
  // cuDNN's tensor-core kernels as the student's, is refused at build time; conv_cudnn.cu may.
  const Policy p = load_policy(std::string(CONVLAB_SOURCE_DIR) + "/labs/06-conv-im2col-cudnn/grading.json");
  Obj tc("conv_tensor_core.cu.o"), dn("conv_cudnn.cu.o"), ig("conv_implicit_gemm.cu.o");
  for (Obj* o : {&tc, &dn, &ig}) o->undefined("cudnnConvolutionForward");
  const auto out = lines(check_objects(p, Backend::cuda, {tc.o, dn.o, ig.o}));
  EXPECT_NE(out.find("conv_tensor_core.cu: uses cudnnConvolutionForward, and this lab forbids cudnn"), std::string::npos)
      << out;
  EXPECT_NE(out.find("conv_implicit_gemm.cu: uses cudnnConvolutionForward"), std::string::npos) << out;
  EXPECT_EQ(out.find("conv_cudnn.cu:"), std::string::npos) << out;
}

TEST(FenceChecks, CallsAreNamedAsCalls) {
  Obj a("a.cu.o");
  const int f = a.function("_ZN7convlab5lab054stepEv", 0, 0x20);
  (void)f;
  a.call(a.undefined("setenv"), 0x8);
  const auto out = lines(check_objects(lab05(), Backend::cuda, {a.o}));
  EXPECT_EQ(out,
            "a.cu: calls setenv, which your kernels' file may not use (the graders fix every setting before your code "
            "runs)\n");
}

TEST(FenceChecks, CpuRuntimeInternalsFollowTheirApiName) {
  Obj a("a.cpp.o");  // the CPU backend's rewrite of a.cu
  a.undefined("_ZN11convlab_cpu11copy_symbolEPvmPKvmmb");
  a.undefined("_ZN11convlab_cpu12set_scheduleENS_8ScheduleEm");
  const auto out = lines(check_objects(lab05(), Backend::cpu, {a.o}));
  EXPECT_EQ(out.find("copy_symbol"), std::string::npos) << "cudaMemcpyToSymbol is allowed\n" << out;
  EXPECT_NE(out.find("a.cu: calls convlab_cpu::set_schedule, which your kernels' file may not use (it sets the CPU "
                     "backend's thread schedule"),
            std::string::npos)
      << out;
  // An internal name is allowed only through its API: set_max_dynamic_shared is cudaFuncSetAttribute's.
  Obj b("b.cpp.o");
  b.undefined("_ZN11convlab_cpu22set_max_dynamic_sharedEPKvi");
  b.undefined("_ZN11convlab_cpu21fill_unwritten_sharedEPvm");
  const auto internals = lines(check_objects(lab05(), Backend::cpu, {b.o}));
  EXPECT_EQ(internals.find("set_max_dynamic_shared"), std::string::npos) << internals;
  EXPECT_NE(internals.find("calls convlab_cpu::fill_unwritten_shared, which your kernels' file may not use (it is "
                           "part of the CPU backend's runtime"),
            std::string::npos)
      << internals;
}

TEST(FenceChecks, NvccRegistrationNamesOnlyFromNvccsFunctions) {
  Obj ok("a.cu.o");
  const int sti = ok.function("_ZL24__sti____cudaRegisterAllv", 0x100, 0x40, "LOCAL");
  (void)sti;
  ok.call(ok.undefined("atexit"), 0x110);
  EXPECT_EQ(lines(check_objects(lab05(), Backend::cuda, {ok.o})), "");
  Obj bad("a.cu.o");
  bad.function("_ZN7convlab5lab055laterEv", 0x100, 0x40);
  bad.call(bad.undefined("atexit"), 0x110);
  EXPECT_NE(lines(check_objects(lab05(), Backend::cuda, {bad.o})).find("a.cu: calls atexit"), std::string::npos);
  EXPECT_NE(lines(check_objects(lab05(), Backend::cpu, {ok.o})).find("a.cu: calls atexit"), std::string::npos)
      << "the CPU backend has no nvcc registration";
}

TEST(FenceChecks, ExitOnlyFromADeviceFunctionsHostStub) {
  const auto object = [](const std::string& constant) {
    Obj o("a.cu.o");
    o.function("_Z6helperf", 0x0, 0x20);
    o.call(o.undefined("exit"), 0x11);
    o.o.instructions = {{1, 0x0, "sub    $0x18,%rsp"},
                        {1, 0x4, "movl   " + constant + ",0xc(%rsp)"},
                        {1, 0xc, "mov    0xc(%rsp),%edi"},
                        {1, 0x10, "call   15 <_Z6helperf+0x15>"},
                        {1, 0x15, "data16 cs nopw 0x0(%rax,%rax,1)"}};
    return o.o;
  };
  EXPECT_EQ(lines(check_objects(lab05(), Backend::cuda, {object("$0x1")})), "") << "nvcc's stub: exit(1)";
  EXPECT_NE(lines(check_objects(lab05(), Backend::cuda, {object("$0x0")})).find("a.cu: calls exit"), std::string::npos)
      << "exit(0) is not nvcc's";
}

TEST(FenceChecks, StartUpEntriesMustBeNvccsRegistration) {
  Obj o("a.cu.o");
  o.o.sections.push_back({6, ".init_array", "INIT_ARRAY", "WA", 8, 0});
  o.function("_ZL24__sti____cudaRegisterAllv", 0x100, 0x40, "LOCAL");
  o.o.symbols.push_back({".text", 0, 0, "SECTION", "LOCAL", "DEFAULT", "1", 1});
  const int text = static_cast<int>(o.o.symbols.size()) - 1;
  o.o.relocations.push_back({6, 0, "R_X86_64_64", ".text", 0x100, text});
  EXPECT_EQ(lines(check_objects(lab05(), Backend::cuda, {o.o})), "");
  const auto cpu = lines(check_objects(lab05(), Backend::cpu, {o.o}));
  EXPECT_NE(cpu.find("a.cu: runs __sti____cudaRegisterAll before main"), std::string::npos) << cpu;
  o.o.sections.back().size = 16;  // a second pointer without a relocation
  EXPECT_NE(lines(check_objects(lab05(), Backend::cuda, {o.o})).find("entries that point at fixed addresses"),
            std::string::npos);
}

TEST(FenceChecks, DefinitionsOutsideTheStudentsNames) {
  Obj o("a.cu.o");
  o.function("_ZN7convlab5lab054stepEv", 0, 0x10);                 // own: convlab::lab05
  o.function("_ZN7convlab5lab014stepEv", 0x10, 0x10);              // another lab's
  o.function("_ZN7testing4TestD2Ev", 0x20, 0x10);                  // GoogleTest
  o.function("_Z20cudaEventElapsedTimePfP10CUevent_stS1_", 0x30, 0x10);  // the CPU runtime's API, C++
  o.function("helper_c", 0x40, 0x10);                              // extern "C"
  o.function("_ZN7convlab6detail10cuda_checkE9cudaErrorPKcS3_i", 0x0, 0x10, "WEAK", 4);  // check.hpp, inline
  o.function("_ZNSt7__cxx119to_stringEi", 0x10, 0x10, "WEAK", 4);  // std, inline
  o.function("_ZSt20__throw_length_errorPKc", 0x50, 0x10);         // std, strong
  o.o.symbols.push_back({"counter", 0, 4, "OBJECT", "GLOBAL", "DEFAULT", "5", 5});  // a plain global: fine
  o.o.symbols.push_back({"optind", 4, 4, "OBJECT", "GLOBAL", "DEFAULT", "5", 5});   // the C library's
  const auto out = lines(check_objects(lab05(), Backend::cpu, {o.o}));
  EXPECT_EQ(out.find("lab05::step"), std::string::npos) << out;
  EXPECT_NE(out.find("defines convlab::lab01::step, which your kernels' file may not define (names in namespace "
                     "convlab belong to the graders: put your code in convlab::lab05"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("defines testing::Test::~Test"), std::string::npos) << out;
  EXPECT_NE(out.find("defines cudaEventElapsedTime, which your kernels' file may not define (it is a CUDA runtime"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("defines helper_c, which your kernels' file may not define (a function with C linkage"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("cuda_check"), std::string::npos) << out;
  EXPECT_EQ(out.find("to_string"), std::string::npos) << out;
  EXPECT_NE(out.find("defines std::__throw_length_error"), std::string::npos) << out;
  EXPECT_EQ(out.find("counter"), std::string::npos) << out;
  EXPECT_NE(out.find("defines optind, which your kernels' file may not define (optind is a C library variable"),
            std::string::npos)
      << out;
}

TEST(FenceChecks, ANameTheGradersDefineStaysTheirs) {
  Obj student("a.cu.o"), harness("test_lab05.cpp.o");
  // An inline function of the graders' header: a weak copy in their object.
  harness.function("_ZN7convlab5lab0513inline_helperEv", 0, 0x10, "WEAK", 4);
  harness.function("_ZN7convlab5lab0513strong_helperEv", 0x10, 0x10, "GLOBAL");
  student.function("_ZN7convlab5lab0513inline_helperEv", 0, 0x10, "GLOBAL");  // strong: would win at link time
  student.function("_ZN7convlab5lab0513strong_helperEv", 0x10, 0x10, "WEAK", 4);
  const auto out = lines(check_objects(lab05(), Backend::cuda, {student.o}, {harness.o}));
  EXPECT_NE(out.find("defines convlab::lab05::inline_helper, which your kernels' file may not define (the graders' own "
                     "code defines it too"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("defines convlab::lab05::strong_helper"), std::string::npos) << out;
  Obj same("a.cu.o");  // the same inline copy both compile from a shared header: fine
  same.function("_ZN7convlab5lab0513inline_helperEv", 0, 0x10, "WEAK", 4);
  EXPECT_EQ(lines(check_objects(lab05(), Backend::cuda, {same.o}, {harness.o})), "");
}

TEST(FenceChecks, TheGradersAnswersAreNotTheSubmissions) {
  Obj o("a.cu.o");
  // The lab's namespace is the submission's, except for the golden models and baselines in it.
  o.undefined("_ZN7convlab5lab056helperEv");  // its own helper, in its other file: fine
  o.undefined("_ZN7convlab5lab058baseline10conv_naiveEPKfPf");
  o.function("_ZN7convlab5lab056golden3runEv", 0, 0x10, "WEAK", 4);  // an inline copy from stencil_golden.hpp
  o.function("_ZN7convlab5lab0511conv_goldenEv", 0x10, 0x10);
  const auto out = lines(check_objects(lab05(), Backend::cuda, {o.o}));
  EXPECT_EQ(out.find("helper"), std::string::npos) << out;
  const std::string why = "it is the graders' golden model or baseline kernel, which computes the answer your kernels "
                          "must compute";
  EXPECT_NE(out.find("a.cu: calls convlab::lab05::baseline::conv_naive, which your kernels' file may not use (" + why),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("a.cu: defines convlab::lab05::golden::run, which your kernels' file may not define (" + why),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("defines convlab::lab05::conv_golden"), std::string::npos) << out;
  // A name of the lab's namespace that the graders define is theirs, not a helper of the submission.
  Obj harness("test_lab05.cpp.o");
  harness.function("_ZN7convlab5lab056helperEv", 0, 0x10);
  EXPECT_NE(lines(check_objects(lab05(), Backend::cuda, {o.o}, {harness.o})).find("calls convlab::lab05::helper, which"),
            std::string::npos);
}

TEST(FenceChecks, SectionsAndSystemCalls) {
  Obj o("a.cu.o");
  o.function("_ZN7convlab5lab053rawEv", 0, 0x10);
  o.o.instructions = {{1, 0x0, "mov    $0x27,%eax"}, {1, 0x5, "syscall"}, {1, 0x7, "int    $0x80"}};
  o.o.sections.push_back({7, ".hidden_code", "PROGBITS", "AX", 0x10, 0});
  o.o.sections.push_back({8, ".text.rwx", "PROGBITS", "WAX", 0x10, 0});
  o.o.sections.erase(o.o.sections.begin() + 1);  // no .note.GNU-stack
  const auto out = lines(check_objects(lab05(), Backend::cuda, {o.o}));
  EXPECT_NE(out.find("a.cu: has a system-call instruction (syscall) in convlab::lab05::raw: your code may not make "
                     "system calls itself"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("(int $0x80)"), std::string::npos) << out;
  EXPECT_NE(out.find("has an executable section .hidden_code, which the compiler does not make"), std::string::npos);
  EXPECT_NE(out.find("both writable and executable (.text.rwx)"), std::string::npos);
  EXPECT_NE(out.find("asks for an executable stack (it has no .note.GNU-stack section)"), std::string::npos);
  o.o.machine = "MIPS R3000";
  EXPECT_THROW(check_objects(lab05(), Backend::cuda, {o.o}), FenceError);
}

TEST(FenceAllowList, EveryEntrySaysWhy) {
  for (const auto& g : base_allow_list()) {
    EXPECT_GT(std::string(g.why).size(), 20u);
    EXPECT_FALSE(g.patterns.empty());
  }
  for (const auto& r : refusal_reasons()) EXPECT_GT(std::string(r.why).size(), 20u);
  // The names the brief refuses are not on the common list.
  for (const char* refused : {"setenv", "getenv", "putenv", "fork", "execve", "system", "popen", "ptrace", "dlopen",
                              "dlsym", "mprotect", "mmap", "syscall", "pthread_create", "exit", "_exit", "fopen",
                              "open", "write", "read", "signal", "sigaction", "kill", "cudaDeviceSetLimit",
                              "cudaStreamSetAttribute", "cudaCtxResetPersistingL2Cache", "cudaDeviceReset",
                              "cuLaunchKernel", "cuptiActivityEnable", "nvmlInit_v2", "cudaMallocManaged",
                              "cudaMallocAsync", "__real_cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernelExC"})
    for (const auto& g : base_allow_list())
      for (const char* p : g.patterns) EXPECT_FALSE(matches(p, parse_name(refused))) << refused << " matches " << p;
}

}  // namespace
}  // namespace convlab::fence
