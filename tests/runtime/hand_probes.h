// Hand-made probe descriptors for the runtime tests: what a generated header
// puts in section probekit_probes_v1, built at run time so that each test can
// have its own object (its own range, gates and argument records).
#ifndef PROBEKIT_TESTS_RUNTIME_HAND_PROBES_H
#define PROBEKIT_TESTS_RUNTIME_HAND_PROBES_H

#include <probekit/runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace hand {

struct Arg {
  unsigned char kind;
  signed char sdt_size;
  const char *name;
  const char *type;
};

struct Probe {
  const char *provider;
  const char *name;
  std::vector<Arg> args;
  const char *doc = "";
};

// The argument records, laid out as in .note.probekit.
inline std::string encode(const std::vector<Arg> &args) {
  std::string out;
  for (const Arg &a : args) {
    out.push_back(static_cast<char>(a.kind));
    out.push_back(static_cast<char>(a.sdt_size));
    out += a.name;
    out.push_back('\0');
    out += a.type;
    out.push_back('\0');
  }
  return out;
}

// One "linked object": a descriptor range and a gate word per probe.
class Object {
public:
  Object(std::initializer_list<Probe> probes) : specs_(probes) {
    descs_ = std::make_unique<probekit_probe_v1[]>(specs_.size());
    gates_ = std::make_unique<unsigned[]>(specs_.size());
    for (size_t i = 0; i < specs_.size(); ++i) {
      blobs_.push_back(encode(specs_[i].args));
      gates_[i] = 0;
    }
    for (size_t i = 0; i < specs_.size(); ++i) {
      probekit_probe_v1 &d = descs_[i];
      d.abi = 1;
      d.nargs = static_cast<unsigned>(specs_[i].args.size());
      d.provider = specs_[i].provider;
      d.name = specs_[i].name;
      d.gate = &gates_[i];
      d.args = reinterpret_cast<const unsigned char *>(blobs_[i].data());
      d.doc = specs_[i].doc;
      d.runtime = nullptr;
    }
  }
  ~Object() {
    while (loads_ > 0) unload();
  }
  Object(const Object &) = delete;
  Object &operator=(const Object &) = delete;

  probekit_probe_v1 *begin() { return descs_.get(); }
  probekit_probe_v1 *end() { return descs_.get() + specs_.size(); }
  probekit_probe_v1 *operator[](size_t i) { return &descs_[i]; }
  unsigned gate(size_t i) const { return __atomic_load_n(&gates_[i], __ATOMIC_RELAXED); }
  unsigned *gate_word(size_t i) { return &gates_[i]; }

  // As each translation unit's constructor / destructor does.
  void load() {
    probekit_register_v1(begin(), end());
    ++loads_;
  }
  void unload() {
    probekit_unregister_v1(begin(), end());
    --loads_;
  }

private:
  std::vector<Probe> specs_;
  std::vector<std::string> blobs_;
  std::unique_ptr<probekit_probe_v1[]> descs_;
  std::unique_ptr<unsigned[]> gates_;
  int loads_ = 0;
};

// How a site passes a value (runtime_abi.h): integers sign- or zero-extended,
// pointers as addresses, float and double as their bits.
template <class T>
inline unsigned long long bits(T v) {
  if constexpr (std::is_same_v<T, float>) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  } else if constexpr (std::is_same_v<T, double>) {
    unsigned long long b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<std::uintptr_t>(v);
  } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
    return 0;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<unsigned long long>(static_cast<long long>(v));
  } else {
    return static_cast<unsigned long long>(v);
  }
}

// What a gated site does: one load of the gate word, dispatch when the
// in-process half is open.
template <class... T>
inline bool fire(probekit_probe_v1 *d, T... values) {
  const unsigned long long args[sizeof...(T) + 1] = {bits(values)..., 0};
  if ((__atomic_load_n(d->gate, __ATOMIC_RELAXED) >> 16) == 0) return false;
  probekit_dispatch_v1(d, args);
  return true;
}

}  // namespace hand

#endif
