// A non-owning reference to a callable, for parameters that are only called during the
// call (the fit's searches and its callbacks). Unlike std::function it allocates nothing and
// makes one small thunk per lambda instead of a vtable of clone/destroy/call functions:
// those were ~60 functions of the page's calculator module (issue 13). The callable must
// outlive every call: bind a named lambda, or a lambda argument used only by that call.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

namespace kvb {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
public:
    FunctionRef() = default;
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                std::is_invocable_r_v<R, F&, Args...>>>
    FunctionRef(F&& f)  // NOLINT: converts from any callable, as std::function does
        : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))), call_([](void* obj, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }
    // False for a default-constructed reference (no callable), as an empty std::function.
    explicit operator bool() const { return call_ != nullptr; }

private:
    void* obj_ = nullptr;
    R (*call_)(void*, Args...) = nullptr;
};

}  // namespace kvb
