#pragma once

// A whole file mapped read-only and shared: its pages are the page cache's, shared by every
// process that maps the file, and count in a process's RssFile only while it has them mapped in.

#include <cstddef>
#include <span>
#include <string>

namespace refgate::runtime {

class MappedFile {
  public:
    // Throws std::runtime_error naming the path and the reason.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Page-aligned.
    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    // Unmaps the pages read so far from this process (MADV_DONTNEED; they stay in the page cache
    // and come back on the next read): after a check that read the whole file, the process holds
    // only what its lookups touch.
    void release_resident() const noexcept;

  private:
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace refgate::runtime
