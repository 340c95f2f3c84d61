#include "refgate/runtime/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace refgate::runtime {

MappedFile::MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        int error = errno;
        ::close(fd);
        throw std::runtime_error(path + ": " + (st.st_size <= 0 ? "empty" : std::strerror(error)));
    }
    void* mapped =
        ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    int error = errno;
    ::close(fd);  // the mapping keeps the file
    if (mapped == MAP_FAILED) throw std::runtime_error(path + ": mmap: " + std::strerror(error));
    data_ = static_cast<const std::byte*>(mapped);
    size_ = static_cast<std::size_t>(st.st_size);
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

void MappedFile::release_resident() const noexcept {
    ::madvise(const_cast<std::byte*>(data_), size_, MADV_DONTNEED);
}

}  // namespace refgate::runtime
