#pragma once

// How the click pipeline reports failures: the adapters (Redis, PostgreSQL) catch their own
// exceptions at their boundary and return a Fault naming the dependency; the sender and the
// flusher branch on results, never on exception types.

#include <optional>
#include <string>
#include <utility>

namespace refgate::clicks {

enum class Dependency { redis, postgres };

struct Fault {
    Dependency dependency = Dependency::redis;
    std::string message;
    // The store took the writes, but fewer replicas acknowledged them than asked for (WAIT): the
    // round is retried, nothing is down.
    bool unreplicated = false;
};

// A value, or the fault that prevented it.
template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : value_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Fault fault) : fault_(std::move(fault)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return !fault_.has_value(); }
    explicit operator bool() const { return ok(); }
    T& operator*() { return *value_; }
    const T& operator*() const { return *value_; }
    T* operator->() { return &*value_; }
    const T* operator->() const { return &*value_; }
    const Fault& fault() const { return *fault_; }

  private:
    std::optional<T> value_;
    std::optional<Fault> fault_;
};

struct Done {};
using Status = Result<Done>;
inline Status done() { return Done{}; }

}  // namespace refgate::clicks
