// <iostream>: a global constructor with GCC 12 and older, std::cout with every compiler.
// fence-backends: cuda cpu
// fence-expect: iostream\.cu: .*<iostream>
#include <iostream>

namespace convlab::lab01 {
void say() { std::cout << "launching\n"; }
}  // namespace convlab::lab01
