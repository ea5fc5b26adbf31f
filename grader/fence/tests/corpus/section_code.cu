// Code placed in a section of its own, outside .text.
// fence-backends: cuda cpu
// fence-expect: section_code\.cu: has an executable section \.convlab_hidden, which the compiler does not make for your code
namespace convlab::lab01 {
__attribute__((section(".convlab_hidden"), used)) int hidden(int x) { return x * 3; }
}  // namespace convlab::lab01
