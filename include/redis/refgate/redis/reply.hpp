#pragma once

#include <string>
#include <vector>

namespace refgate::redis {

// A reply, copied out of hiredis: a plain value, so that the code reading it is a pure function
// (refgate/clicks/reply_readers.hpp) that tests and the fuzzer call without a server.
struct Reply {
    enum class Type { nil, status, error, integer, string, array };
    Type type = Type::nil;
    std::string str;
    long long integer = 0;
    std::vector<Reply> elements;

    bool is_error() const { return type == Type::error; }
    bool operator==(const Reply&) const = default;
};

}  // namespace refgate::redis
