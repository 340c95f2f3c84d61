#include "batch_io.hpp"

#include <liburing.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "refgate/runtime/log.hpp"

namespace refgate::http {

// Through syscall(): glibc's wrappers make each a cancellation point, two more calls around it
// with an atomic exchange each, about 3 % of a keep-alive redirect's user time (perf). No I/O
// thread is ever cancelled.
ssize_t receive_plain(int fd, void* data, std::size_t size) {
    long n = ::syscall(SYS_recvfrom, fd, data, size, MSG_DONTWAIT, nullptr, nullptr);
    return n < 0 ? -errno : n;
}

ssize_t send_plain(int fd, const void* data, std::size_t size, int flags) {
    long n = ::syscall(SYS_sendto, fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT | flags, nullptr, 0);
    return n < 0 ? -errno : n;
}

namespace {

// Twice a batch's bound: the completion queue (twice this) never overflows.
constexpr unsigned kRingEntries = BatchIo::kMaxQueued * 2;

}  // namespace

struct BatchIo::Ring {
    io_uring ring{};
    bool open = false;
    ~Ring() {
        if (open) io_uring_queue_exit(&ring);
    }
};

BatchIo::BatchIo(bool wanted) : wanted_(wanted) {}

BatchIo::~BatchIo() = default;

bool BatchIo::start() {
    if (!wanted_ || std::exchange(started_, true)) return batching();
    auto ring = std::make_unique<Ring>();
    // One thread submits, and it takes its own completions: the kernel skips the locking and
    // the interrupts that other uses need. A kernel too old for these flags gets none.
    unsigned flags =
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
    int rc = io_uring_queue_init(kRingEntries, &ring->ring, flags);
    if (rc == -EINVAL) rc = io_uring_queue_init(kRingEntries, &ring->ring, 0);
    if (rc < 0) {
        runtime::log::info(
            "io_uring_unavailable",
            {{"detail", "each read and send is a system call of its own"}, {"errno", -rc}});
        return false;
    }
    ring->open = true;
    ring_ = std::move(ring);
    batching_.store(true, std::memory_order_relaxed);
    return true;
}

void BatchIo::recv(int fd, void* data, std::size_t size) {
    ops_[queued_++] = {false, fd, data, size, 0};
}

void BatchIo::send(int fd, const void* data, std::size_t size, int flags) {
    ops_[queued_++] = {true, fd, const_cast<void*>(data), size, flags};
}

void BatchIo::submit() {
    if (queued_ == 0) return;
    // A single call gains nothing from the ring.
    if (!ring_ || queued_ == 1 || !submit_ring()) run_plain();
    queued_ = 0;
}

void BatchIo::run_plain() {
    for (std::size_t i = 0; i < queued_; ++i) {
        const Op& op = ops_[i];
        results_[i] = op.send ? send_plain(op.fd, op.data, op.size, op.flags)
                              : receive_plain(op.fd, op.data, op.size);
    }
}

// False when the ring took none of the batch (the plain calls then do it all).
bool BatchIo::submit_ring() {
    io_uring& ring = ring_->ring;
    for (std::size_t i = 0; i < queued_; ++i) {
        const Op& op = ops_[i];
        io_uring_sqe* sqe = io_uring_get_sqe(&ring);  // never null: the ring is empty here
        if (op.send) {
            io_uring_prep_send(sqe, op.fd, op.data, op.size,
                               MSG_NOSIGNAL | MSG_DONTWAIT | op.flags);
        } else {
            io_uring_prep_recv(sqe, op.fd, op.data, op.size, MSG_DONTWAIT);
        }
        io_uring_sqe_set_data64(sqe, i);
        results_[i] = -EIO;
    }
    // Every operation ends within the submission (MSG_DONTWAIT): the completions are there when
    // it returns. Whatever the ring did not take (an error of the kernel's) must not run at a
    // later submission, with buffers long reused: the ring then goes, this thread makes plain
    // calls from now on, and the connections whose calls did not run close (EIO).
    const auto want = static_cast<unsigned>(queued_);
    unsigned taken = 0;
    int rc = 0;
    for (int tries = 0; taken < want && tries < 4; ++tries) {
        rc = io_uring_submit_and_wait(&ring, want - taken);
        if (rc > 0) taken += static_cast<unsigned>(rc);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) break;
    }
    unsigned done = 0;
    while (done < taken) {
        io_uring_cqe* cqe = nullptr;
        rc = io_uring_wait_cqe(&ring, &cqe);
        if (rc == -EINTR) continue;
        if (rc < 0) break;
        unsigned head = 0;
        unsigned seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            if (cqe->user_data < queued_) results_[cqe->user_data] = cqe->res;
            ++seen;
        }
        io_uring_cq_advance(&ring, seen);
        done += seen;
    }
    if (taken < want || done < taken) {
        runtime::log::warn("io_uring_failed", {{"errno", -rc}, {"taken", taken}, {"done", done}});
        ring_.reset();
        batching_.store(false, std::memory_order_relaxed);
        return taken > 0;
    }
    return true;
}

}  // namespace refgate::http
