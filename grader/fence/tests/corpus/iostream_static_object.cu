// <iostream> is allowed, but not as a cover: another global object with a constructor in the
// same file is still code that runs before main.
// fence-backends: cuda cpu
// fence-expect: iostream_static_object\.cu: has a global constructor that initialises .*banner
#include <iostream>
#include <string>

namespace convlab::lab01 {
std::string banner = std::string("conv") + "1d";
void say() { std::cout << banner << "\n"; }
}  // namespace convlab::lab01
