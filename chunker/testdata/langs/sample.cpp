#include <vector>
#include "foo.hpp"
using namespace std;
using std::string;

namespace acme {
namespace detail { int helper(); }

/// Doc.
template <typename T>
class Box : public Base {
public:
    Box(T v) : v_(v) {}
    ~Box() override;
    T get() const { return v_; }
    static int count;
private:
    T v_;
};

template <typename T>
T Box<T>::get2() const {
    return v_;
}

void Box<int>::set(int v) { v_ = v; }

struct S { int a; void m(); };
enum class E { A, B };
}  // namespace acme

int main(int argc, char** argv) {
    return 0;
}
