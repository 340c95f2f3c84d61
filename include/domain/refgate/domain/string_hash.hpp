#pragma once

// A hash for unordered containers keyed by strings that can be searched with a string_view
// (with std::equal_to<>), without building a std::string per lookup.

#include <cstddef>
#include <functional>
#include <string_view>

namespace refgate {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

}  // namespace refgate
