// Fault injection (PS_FAULT_INJECTION builds, linked into test_faults only):
// the program's own operator new and delete, which XGBoost's allocations
// reach (the executable's definitions interpose on libstdc++'s), so that the
// n-th C++ allocation can fail with std::bad_alloc (PSI_FAULT_NEW).
#include <cstdlib>
#include <exception>
#include <new>

extern "C" int fault_new_now(void);

static void *fault_alloc(std::size_t n)
{
    if (fault_new_now())
        return nullptr;
    return std::malloc(n ? n : 1);
}

void *operator new(std::size_t n)
{
    void *p = fault_alloc(n);
    if (!p)
        throw std::bad_alloc();
    return p;
}
void *operator new[](std::size_t n) { return operator new(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return fault_alloc(n); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return fault_alloc(n); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }

// XGBoost calls std::terminate when an allocation fails inside its noexcept
// code (its CPU count from cgroups, reached by every DMatrix and booster it
// creates): exit 42, which test_faults counts apart from its own failures.
[[noreturn]] static void terminated() { std::_Exit(42); }
static const bool terminate_installed = (std::set_terminate(terminated), true);
