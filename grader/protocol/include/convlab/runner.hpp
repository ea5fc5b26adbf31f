/// @file runner.hpp
/// @brief The runner's table of entries: the functions the judge may call in the runner process.
///
/// A lab's runner is its student kernels, the harness's runner library (grader/runner/) and the
/// table that convlab_remote_entries() fills (remote_labNN.cpp, see convlab/remote_contract.hpp).
/// Each entry decodes its arguments by the parameter types of the function it wraps, calls it
/// and encodes its result; the runner library does everything else (memory, streams, launch
/// records, timing), so no lab writes runner code of its own.
#pragma once

#include "convlab/remote_codec.hpp"

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace convlab::remote {

/// The runner's entries, by name.
class Entries {
public:
  /// Decodes the arguments from `args` (using `context` for pointers and streams), calls, and
  /// writes the encoded result to `result`.
  using Fn = std::function<void(wire::Reader& args, ArgContext& context, wire::Writer& result)>;

  /// Adds `fn` under `name`; its parameters are decoded with Codec<decayed parameter type>.
  template <class R, class... P>
  void add(const std::string& name, R (*fn)(P...)) {
    add_fn(name, [fn](wire::Reader& r, ArgContext& c, wire::Writer& out) {
      // Braced initialisation decodes the arguments left to right, in the order they were sent.
      std::tuple<std::decay_t<P>...> args{Codec<std::decay_t<P>>::decode(r, c)...};
      r.finish();
      c.before_call();
      if constexpr (std::is_void_v<R>) {
        std::apply(fn, args);
      } else {
        Codec<std::decay_t<R>>::encode(out, std::apply(fn, args));
      }
    });
  }
  /// The entry called `name`, or null.
  const Fn* find(const std::string& name) const {
    const auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
  }
  /// Every entry's name, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& [k, v] : map_) n.push_back(k);
    return n;
  }

private:
  void add_fn(const std::string& name, Fn fn) {
    if (!map_.emplace(name, std::move(fn)).second) throw std::logic_error("convlab runner: entry '" + name + "' added twice");
  }
  std::map<std::string, Fn> map_;
};

}  // namespace convlab::remote
