// A global whose value is computed when the program starts: code of the
// submission runs before the graders do (the 100/100 exploit of issue 12 did its work there).
// fence-backends: cuda cpu
// fence-expect: ctor_global_string\.cu: has a global constructor that initialises convlab::lab01::g_name: a global or static variable
#include <string>

namespace convlab::lab01 {
std::string g_name = std::string("conv") + std::to_string(1) + "d";
const char* name() { return g_name.c_str(); }
}  // namespace convlab::lab01
