#pragma once

// Header-only, for unit and integration tests alike: whether the kernel lets this process make an
// io_uring (a seccomp profile or an old kernel may not), so that a test can say which path the
// server must have taken.
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace refgate::test {

inline bool kernel_allows_io_uring() {
    io_uring_params params{};
    long fd = ::syscall(SYS_io_uring_setup, 4, &params);
    if (fd < 0) return false;
    ::close(static_cast<int>(fd));
    return true;
}

}  // namespace refgate::test
