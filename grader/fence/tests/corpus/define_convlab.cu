// Defining a name of the graders (a record writer, say).
// fence-backends: cuda cpu
// fence-expect: define_convlab\.cu: defines convlab::write_record, which your kernels' file may not define \(names in namespace convlab belong to the graders: put your code in convlab::lab01
namespace convlab {
bool write_record(const char*) { return true; }
}  // namespace convlab
