// probekit runtime, C++ API (C++17 or later): RAII listeners and typed
// callbacks over the C API in runtime.h (docs/runtime.md).
//
//   auto l = probekit::listen<int, const char *>("app", "req__start",
//       [](int fd, const char *path) { ... });
//   if (!l) std::puts(probekit_strerror(l.status()));
//   // the callback is removed when l is destroyed
//
//   auto g = probekit::listen("app", "req__start", [](const probekit::event &e) {
//     for (std::size_t i = 0; i < e.size(); ++i) print(e[i].name(), e[i].u64());
//   });
#ifndef PROBEKIT_RUNTIME_HPP
#define PROBEKIT_RUNTIME_HPP

#include <probekit/runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <utility>

namespace probekit {

// One argument of an event: its description from the spec and its value.
class arg {
public:
  arg(const probekit_arg_info &info, unsigned long long bits) : info_(&info), bits_(bits) {}
  probekit_arg_kind kind() const { return static_cast<probekit_arg_kind>(info_->kind); }
  int sdt_size() const { return info_->sdt_size; }
  std::string_view name() const { return info_->name; }
  std::string_view type() const { return info_->type; }
  unsigned long long u64() const { return bits_; }
  long long i64() const { return static_cast<long long>(bits_); }
  float as_float() const { return probekit_bits_float(bits_); }
  // FLOAT widened, DOUBLE reinterpreted, integers converted.
  double as_double() const {
    switch (kind()) {
      case PROBEKIT_ARG_FLOAT: return static_cast<double>(probekit_bits_float(bits_));
      case PROBEKIT_ARG_DOUBLE: return probekit_bits_double(bits_);
      case PROBEKIT_ARG_SIGNED: return static_cast<double>(i64());
      default: return static_cast<double>(bits_);
    }
  }
  const void *pointer() const { return reinterpret_cast<const void *>(static_cast<std::uintptr_t>(bits_)); }
  // The text of a string argument ("" for null); empty when not a string.
  std::string_view str() const {
    if (kind() != PROBEKIT_ARG_STRING || bits_ == 0) return {};
    return static_cast<const char *>(pointer());
  }

private:
  const probekit_arg_info *info_;
  unsigned long long bits_;
};

// What a generic callback receives; valid during the call.
class event {
public:
  explicit event(const probekit_event &e) : e_(&e) {}
  const probekit_probe &probe() const { return *e_->probe; }
  std::string_view provider() const { return e_->probe->provider; }
  std::string_view name() const { return e_->probe->name; }
  std::size_t size() const { return e_->probe->nargs; }
  arg operator[](std::size_t i) const { return arg(e_->probe->args[i], e_->args[i]); }
  const probekit_event &raw() const { return *e_; }

private:
  const probekit_event *e_;
};

// A registered callback; the destructor unregisters it and then destroys the
// function object once no call of it can be in progress.
class listener {
public:
  listener() = default;
  listener(const listener &) = delete;
  listener &operator=(const listener &) = delete;
  listener(listener &&o) noexcept { swap(o); }
  listener &operator=(listener &&o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  ~listener() { reset(); }

  // PROBEKIT_OK when registered, otherwise why not.
  int status() const { return status_; }
  explicit operator bool() const { return desc_ != nullptr; }
  probekit_probe_v1 *probe() const { return desc_; }
  std::uint64_t key() const { return key_; }

  // Unregisters now; returns the C API's status (PROBEKIT_OK when there was
  // nothing to remove).
  int reset() {
    if (!desc_) return PROBEKIT_OK;
    int rc = probekit_callback_unregister_release(desc_, fn_, data_, key_, release_);
    desc_ = nullptr;
    data_ = nullptr;
    status_ = PROBEKIT_E_NOT_FOUND;
    return rc;
  }

  // Used by listen(): takes ownership of data (released with release).
  static listener make(probekit_probe_v1 *desc, probekit_callback_fn fn, void *data, void (*release)(void *),
                       std::uint64_t key, int (*accept)(const probekit_probe *, void *)) {
    listener l;
    int rc = desc ? probekit_callback_register_if(desc, fn, data, key, accept) : PROBEKIT_E_NO_PROBE;
    if (rc != PROBEKIT_OK) {
      release(data);
      l.status_ = rc;
      return l;
    }
    l.desc_ = desc;
    l.fn_ = fn;
    l.data_ = data;
    l.release_ = release;
    l.key_ = key;
    l.status_ = PROBEKIT_OK;
    return l;
  }

private:
  void swap(listener &o) noexcept {
    std::swap(desc_, o.desc_);
    std::swap(fn_, o.fn_);
    std::swap(data_, o.data_);
    std::swap(release_, o.release_);
    std::swap(key_, o.key_);
    std::swap(status_, o.status_);
  }

  probekit_probe_v1 *desc_ = nullptr;
  probekit_callback_fn fn_ = nullptr;
  void *data_ = nullptr;
  void (*release_)(void *) = nullptr;
  std::uint64_t key_ = 0;
  int status_ = PROBEKIT_E_NOT_FOUND;
};

namespace detail {

template <class T>
inline constexpr bool is_char_v =
    std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>;

template <class T>
inline constexpr bool is_text_pointer_v =
    std::is_pointer_v<T> && is_char_v<std::remove_cv_t<std::remove_pointer_t<T>>>;

template <class T>
inline constexpr bool supported_v = std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T> ||
                                    std::is_same_v<T, std::string_view> || std::is_same_v<T, std::nullptr_t>;

// Whether a parameter of type T can take the argument described by a
// without losing information.
template <class T>
constexpr bool fits(const probekit_arg_info &a) {
  const unsigned size = a.sdt_size == 0 ? 8u : static_cast<unsigned>(a.sdt_size < 0 ? -a.sdt_size : a.sdt_size);
  const unsigned kind = a.kind;
  if constexpr (std::is_same_v<T, bool>) {
    return kind == PROBEKIT_ARG_BOOL;
  } else if constexpr (std::is_enum_v<T>) {
    return fits<std::underlying_type_t<T>>(a);
  } else if constexpr (std::is_integral_v<T>) {
    switch (kind) {
      case PROBEKIT_ARG_SIGNED: return std::is_signed_v<T> && sizeof(T) >= size;
      case PROBEKIT_ARG_UNSIGNED: return std::is_signed_v<T> ? sizeof(T) > size : sizeof(T) >= size;
      case PROBEKIT_ARG_CHAR:
      case PROBEKIT_ARG_BOOL: return true;
      case PROBEKIT_ARG_UNTYPED: return sizeof(T) >= size;
      case PROBEKIT_ARG_POINTER:
      case PROBEKIT_ARG_STRING: return std::is_unsigned_v<T> && sizeof(T) >= sizeof(void *);  // uintptr_t
      default: return false;
    }
  } else if constexpr (std::is_same_v<T, float>) {
    return kind == PROBEKIT_ARG_FLOAT;
  } else if constexpr (std::is_same_v<T, double>) {
    return kind == PROBEKIT_ARG_FLOAT || kind == PROBEKIT_ARG_DOUBLE;
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return kind == PROBEKIT_ARG_STRING;
  } else if constexpr (is_text_pointer_v<T> || std::is_same_v<std::remove_cv_t<std::remove_pointer_t<T>>, void>) {
    return kind == PROBEKIT_ARG_STRING || kind == PROBEKIT_ARG_POINTER;
  } else if constexpr (std::is_pointer_v<T>) {
    return kind == PROBEKIT_ARG_POINTER;
  } else {
    return false;
  }
}

template <class T>
T convert(unsigned kind, unsigned long long v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(convert<std::underlying_type_t<T>>(kind, v));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, float>) {
    return probekit_bits_float(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return kind == PROBEKIT_ARG_FLOAT ? static_cast<double>(probekit_bits_float(v)) : probekit_bits_double(v);
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return v ? std::string_view(reinterpret_cast<const char *>(static_cast<std::uintptr_t>(v))) : std::string_view();
  } else {
    return reinterpret_cast<T>(static_cast<std::uintptr_t>(v));
  }
}

template <class F>
struct holder {
  F f;
  static void release(void *p) { delete static_cast<holder *>(p); }
};

template <class... Args, std::size_t... I>
bool all_fit(const probekit_probe *p, std::index_sequence<I...>) {
  return (fits<Args>(p->args[I]) && ...);
}

template <class... Args>
int accept_types(const probekit_probe *p, void *) {
  if (p->nargs != sizeof...(Args)) return PROBEKIT_E_TYPE;
  return all_fit<Args...>(p, std::index_sequence_for<Args...>{}) ? PROBEKIT_OK : PROBEKIT_E_TYPE;
}

template <class H, class... Args, std::size_t... I>
void call_typed(H *h, const probekit_event *e, std::index_sequence<I...>) {
  h->f(convert<Args>(e->probe->args[I].kind, e->args[I])...);
}

template <class H, class... Args>
void typed_trampoline(const probekit_event *e, void *data) {
  call_typed<H, Args...>(static_cast<H *>(data), e, std::index_sequence_for<Args...>{});
}

template <class H>
void event_trampoline(const probekit_event *e, void *data) {
  static_cast<H *>(data)->f(event(*e));
}

}  // namespace detail

// listen<T...>(probe, f): f(T...) is called with the probe's arguments
// converted to T... (status PROBEKIT_E_TYPE when they do not fit the probe's
// kinds and count). listen(probe, f) with no T and f(const event &): the
// generic form. key identifies the tracer (see runtime.h).
template <class... Args, class F>
listener listen(probekit_probe_v1 *desc, F &&f, std::uint64_t key = 0) {
  using H = detail::holder<std::decay_t<F>>;
  H *h = new H{std::forward<F>(f)};
  if constexpr (sizeof...(Args) == 0 && std::is_invocable_v<std::decay_t<F> &, const event &>) {
    return listener::make(desc, &detail::event_trampoline<H>, h, &H::release, key, nullptr);
  } else {
    static_assert((detail::supported_v<std::remove_cv_t<Args>> && ...),
                  "probekit::listen: parameter types must be arithmetic, enums, pointers or std::string_view");
    static_assert(std::is_invocable_v<std::decay_t<F> &, Args...>,
                  "probekit::listen<T...>(probe, f): f must be callable with T...");
    return listener::make(desc, &detail::typed_trampoline<H, std::remove_cv_t<Args>...>, h, &H::release, key,
                          &detail::accept_types<std::remove_cv_t<Args>...>);
  }
}

template <class... Args, class F>
listener listen(const probekit_probe *probe, F &&f, std::uint64_t key = 0) {
  return listen<Args...>(probe ? probe->desc : nullptr, std::forward<F>(f), key);
}

// On the first loaded probe with this provider and name.
template <class... Args, class F>
listener listen(const char *provider, const char *name, F &&f, std::uint64_t key = 0) {
  return listen<Args...>(probekit_probe_find(provider, name), std::forward<F>(f), key);
}

// A registered statedump provider; the destructor unregisters it (waiting
// for a dump in progress) and then destroys the function object.
//
//   auto sd = probekit::provide_statedump("cache", [&](std::uint64_t) {
//     for (auto &e : cache) APP_CACHE_ENTRY_GATED(e.key, e.size);
//   });
class statedump_provider {
public:
  statedump_provider() = default;
  statedump_provider(const statedump_provider &) = delete;
  statedump_provider &operator=(const statedump_provider &) = delete;
  statedump_provider(statedump_provider &&o) noexcept { swap(o); }
  statedump_provider &operator=(statedump_provider &&o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  ~statedump_provider() { reset(); }

  int status() const { return status_; }
  explicit operator bool() const { return handle_ != nullptr; }
  probekit_statedump *handle() const { return handle_; }

  // A POLLING provider: runs its pending dumps on this thread (see
  // probekit_statedump_poll).
  int poll() const { return handle_ ? probekit_statedump_poll(handle_) : PROBEKIT_E_NOT_FOUND; }

  int reset() {
    if (!handle_) return PROBEKIT_OK;
    int rc = probekit_statedump_unregister(handle_);
    // Not running any more, and never again: the function object can go.
    release_(data_);
    handle_ = nullptr;
    data_ = nullptr;
    status_ = PROBEKIT_E_NOT_FOUND;
    return rc;
  }

  // Used by provide_statedump(): takes ownership of data.
  static statedump_provider make(const char *name, probekit_statedump_fn fn, void *data, void (*release)(void *),
                                 probekit_statedump_mode mode) {
    statedump_provider p;
    int rc = probekit_statedump_register(name, fn, data, mode, &p.handle_);
    if (rc != PROBEKIT_OK) {
      release(data);
      p.handle_ = nullptr;
      p.status_ = rc;
      return p;
    }
    p.data_ = data;
    p.release_ = release;
    p.status_ = PROBEKIT_OK;
    return p;
  }

private:
  void swap(statedump_provider &o) noexcept {
    std::swap(handle_, o.handle_);
    std::swap(data_, o.data_);
    std::swap(release_, o.release_);
    std::swap(status_, o.status_);
  }

  probekit_statedump *handle_ = nullptr;
  void *data_ = nullptr;
  void (*release_)(void *) = nullptr;
  int status_ = PROBEKIT_E_NOT_FOUND;
};

namespace detail {
template <class H>
void statedump_trampoline(std::uint64_t key, void *data) {
  static_cast<H *>(data)->f(key);
}
}  // namespace detail

// f(std::uint64_t key) fires probes describing the current state. mode:
// PROBEKIT_STATEDUMP_AGENT (the runtime's thread runs it) or
// PROBEKIT_STATEDUMP_POLLING (the application calls poll()). Do not destroy
// the provider from inside f.
template <class F>
statedump_provider provide_statedump(const char *name, F &&f,
                                     probekit_statedump_mode mode = PROBEKIT_STATEDUMP_AGENT) {
  static_assert(std::is_invocable_v<std::decay_t<F> &, std::uint64_t>,
                "probekit::provide_statedump(name, f): f must be callable with std::uint64_t");
  using H = detail::holder<std::decay_t<F>>;
  H *h = new H{std::forward<F>(f)};
  return statedump_provider::make(name, &detail::statedump_trampoline<H>, h, &H::release, mode);
}

// A tracer's statedump request for its key; cancelled by the destructor.
class statedump_request {
public:
  statedump_request() = default;
  explicit statedump_request(std::uint64_t key) : key_(key), status_(probekit_statedump_request(key)) {}
  statedump_request(const statedump_request &) = delete;
  statedump_request &operator=(const statedump_request &) = delete;
  statedump_request(statedump_request &&o) noexcept
      : key_(o.key_), status_(std::exchange(o.status_, PROBEKIT_E_NOT_FOUND)) {}
  statedump_request &operator=(statedump_request &&o) noexcept {
    if (this != &o) {
      cancel();
      key_ = o.key_;
      status_ = std::exchange(o.status_, PROBEKIT_E_NOT_FOUND);
    }
    return *this;
  }
  ~statedump_request() { cancel(); }

  int status() const { return status_; }
  explicit operator bool() const { return status_ == PROBEKIT_OK; }
  std::uint64_t key() const { return key_; }
  // Dumps for the key not finished yet.
  int pending() const { return probekit_statedump_pending(key_); }

  int cancel() {
    if (status_ != PROBEKIT_OK) return PROBEKIT_OK;
    status_ = PROBEKIT_E_NOT_FOUND;
    return probekit_statedump_cancel(key_);
  }

private:
  std::uint64_t key_ = 0;
  int status_ = PROBEKIT_E_NOT_FOUND;
};

}  // namespace probekit

#endif  // PROBEKIT_RUNTIME_HPP
