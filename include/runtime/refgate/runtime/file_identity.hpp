#pragma once

// Which file a path names right now, cheaply (one stat): a file renamed over it (as a package
// upgrade installs one) has another inode, one rewritten in place another size or mtime. A
// database that refgate maps must be replaced by renaming: truncating it in place under a live
// mapping can kill the process (SIGBUS).

#include <cstdint>
#include <optional>
#include <string>

namespace refgate::runtime {

struct FileIdentity {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
};

// nullopt when the path names no file that can be stat'ed.
std::optional<FileIdentity> file_identity(const std::string& path);

}  // namespace refgate::runtime
