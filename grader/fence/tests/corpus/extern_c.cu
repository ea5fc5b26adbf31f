// A helper with C linkage: one name for the whole process.
// fence-backends: cuda cpu
// fence-expect: extern_c\.cu: defines helper_with_c_linkage, which your kernels' file may not define \(a function with C linkage
extern "C" int helper_with_c_linkage(int x) { return x + 1; }
