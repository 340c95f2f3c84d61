// A batch of ready connections in passes (ConnectionPoller::dispatch). At 64 busy keep-alive
// connections the loads a redirect waits for (the link's slot, its entry, its Location: each
// needs the one before it) were most of its user time; read one connection's request while the
// others' loads are on their way, and each finds its link in the cache. The answers are all
// written, then all sent: the code and data of each stay in cache for the whole batch, instead of
// a send() between two answers pushing the answering code out, and the client's next requests
// gather meanwhile (a quarter fewer epoll_wait() calls per request at 64 connections).

#include <sys/epoll.h>

#include "plain_header.hpp"
#include "session.hpp"

namespace refgate::http {

std::string_view Session::arriving_path() const {
    if (parser_ && parser_->got_some()) return {};  // the bytes continue a request
    const auto bytes = input().data();
    return http::arriving_path({static_cast<const char*>(bytes.data()), bytes.size()}, limits_);
}

bool Session::do_batch_read(std::uint32_t events, BatchIo& io) {
    // Only a waiting connection whose socket has bytes, the case of nearly every event. (A
    // socket once watched for room to write reports EPOLLOUT with its reads from then on; it
    // means nothing to a connection that is not writing.)
    constexpr std::uint32_t kEnds = EPOLLRDHUP | EPOLLERR | EPOLLHUP;
    if ((events & EPOLLIN) == 0 || (events & kEnds) != 0 || !waiting()) {
        on_events(events);
        return false;
    }
    ready_ = true;
    end_wait();
    auto room = input_room();
    io.recv(fd_, room.data(), room.size());
    return true;
}

bool Session::on_batch_read(ssize_t received) {
    if (ended() || !on_read(received)) return false;
    if (!parser_) start_request();
    std::string_view path = arriving_path();
    if (path.empty()) {
        do_answer();
        return false;
    }
    RequestNotes& notes = storage().notes;
    notes.arrived = path;
    handler_.prepare(path, Handler::Parsed::arrived, notes);
    return true;
}

void Session::do_batch_prepare() {
    RequestNotes& notes = storage().notes;
    if (!notes.arrived.empty()) handler_.prepare(notes.arrived, Handler::Parsed::arrived, notes);
}

// Answers like do_answer(), but answers ready to send wait in Phase::batched for the batch's
// send.
void Session::do_batch_answer() { do_answer(Send::batched); }

bool Session::do_batch_write(BatchIo& io) {
    if (phase_ != Phase::batched) return false;
    int flags = write_flags();
    io.send(fd_, output().data(), output().size(), flags);
    return true;
}

void Session::on_batch_write(ssize_t sent) {
    if (phase_ != Phase::batched) return;
    enter(Phase::answering);
    on_write(sent);
}

}  // namespace refgate::http
