#include "refgate/runtime/file_identity.hpp"

#include <sys/stat.h>

namespace refgate::runtime {

std::optional<FileIdentity> file_identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileIdentity{.device = static_cast<std::uint64_t>(st.st_dev),
                        .inode = static_cast<std::uint64_t>(st.st_ino),
                        .size = static_cast<std::int64_t>(st.st_size),
                        .mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                                    st.st_mtim.tv_nsec};
}

}  // namespace refgate::runtime
