#pragma once

// The reads (and the sends) of a batch of ready connections in one system call, through an
// io_uring of the I/O thread's own: a batch of k sockets costs one io_uring_enter() instead of k
// recv() calls, and one instead of k send() calls. Every operation is queued with MSG_DONTWAIT,
// so the kernel does each at once, as the plain call would, and reports EAGAIN instead of
// waiting: submit() returns with every result, and no buffer stays with the kernel after it.
//
// Without io_uring (a kernel without it, a seccomp profile that forbids it, as container
// runtimes' defaults do, or REFGATE_IO_URING=off) submit() makes the plain calls one by one.

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace refgate::http {

// recv() and send() (MSG_DONTWAIT, and MSG_NOSIGNAL for send) as plain system calls: the bytes,
// or -errno.
ssize_t receive_plain(int fd, void* data, std::size_t size);
ssize_t send_plain(int fd, const void* data, std::size_t size, int flags = 0);

class BatchIo {
  public:
    static constexpr std::size_t kMaxQueued = 64;

    // `wanted` false: plain calls only.
    explicit BatchIo(bool wanted);
    ~BatchIo();
    BatchIo(const BatchIo&) = delete;
    BatchIo& operator=(const BatchIo&) = delete;

    // Makes the ring if wanted, on the thread that will submit (the kernel ties the ring to it),
    // before the first submit(); until then submit() makes the plain calls. True when submit()
    // goes through the ring; false when it was not wanted or the kernel refused it (seccomp, an
    // old kernel: logged, io_uring_unavailable). Only the first call tries.
    bool start();
    // Whether submit() goes through the ring: false again once the kernel failed a batch (the
    // ring is then dropped for good). Any thread may ask.
    bool batching() const { return batching_.load(std::memory_order_relaxed); }

    // Queue a recv() or send() (flags added to MSG_DONTWAIT); its result is result(i), i being
    // the number queued before it. Not more than kMaxQueued between two submit()s.
    void recv(int fd, void* data, std::size_t size);
    void send(int fd, const void* data, std::size_t size, int flags);
    std::size_t queued() const { return queued_; }

    // Runs what was queued; afterwards result(i) is what the call would have returned, or
    // -errno where it would have failed.
    void submit();
    ssize_t result(std::size_t i) const { return results_[i]; }

  private:
    struct Ring;
    struct Op {
        bool send;
        int fd;
        void* data;
        std::size_t size;
        int flags;
    };
    bool submit_ring();
    void run_plain();

    const bool wanted_;
    bool started_ = false;
    std::unique_ptr<Ring> ring_;
    std::atomic<bool> batching_{false};  // ring_ is set, for other threads' batching()
    std::size_t queued_ = 0;
    std::array<Op, kMaxQueued> ops_{};
    std::array<ssize_t, kMaxQueued> results_{};
};

}  // namespace refgate::http
