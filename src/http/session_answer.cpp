#include <exception>

#include "refgate/runtime/log.hpp"
#include "session.hpp"
#include "wire.hpp"

// A connection's answers: the handler's, a refusal's, and their bytes in the output buffer
// (no I/O here; session.cpp reads and writes).
namespace refgate::http {

void Session::answer_error(int status, std::string_view title) {
    listener_.stats.rejected_requests.fetch_add(1, std::memory_order_relaxed);
    response().reset();
    response().simple_page(status, title);
    response().set_close();
    serialize(false, false);
    end_after(Ending::linger);  // the client may still be sending what was refused
}

Request Session::make_request() const {
    Request request;
    request.method = storage().method;
    request.method_name = storage().method_name;
    request.target = storage().target;
    request.authority = storage().authority;
    request.version = storage().version;
    request.fields = &storage().fields;
    request.body = storage().body;
    request.peer = peer_;
    request.notes = storage().notes;
    return request;
}

// A handler that does not block answers on this thread.
void Session::answer_here() {
    response().reset();
    call_handler();
    finish_answer();
}

// An exception escaping a handler costs its request a 500, counted and logged; the connection
// and its thread go on (Beast's examples would lose the thread, and every connection on it).
void Session::call_handler() {
    try {
        handler_.handle(make_request(), response());
    } catch (const std::exception& e) {
        handler_failed(e.what());
    } catch (...) {
        handler_failed("not a std::exception");
    }
}

void Session::handler_failed(const char* error) {
    auto count = listener_.stats.handler_errors.fetch_add(1, std::memory_order_relaxed);
    if (listener_.handler_error_log.allow()) {
        runtime::log::error("handler_failed", {{"listener", listener_.options.name},
                                               {"error", error},
                                               {"handler_errors_total", count + 1}});
    }
    response().reset();
    response().simple_page(500, "Internal Server Error");
}

void Session::finish_answer() {
    bool client_keeps = parser_->keep_alive();
    bool keep_alive = client_keeps && !response().close() && !stopping_;
    serialize(storage().method == Method::head, keep_alive);
    // A client that meant to keep the connection may already be sending its next request.
    if (!keep_alive) end_after(client_keeps ? Ending::linger : Ending::close);
}

// Refuses a blocking request that the pool cannot take in time.
void Session::answer_unavailable(std::string_view reason) {
    auto count = listener_.stats.unavailable_requests.fetch_add(1, std::memory_order_relaxed);
    if (listener_.unavailable_log.allow()) {
        runtime::log::warn("blocking_pool_busy", {{"listener", listener_.options.name},
                                                  {"reason", reason},
                                                  {"unavailable_total", count + 1}});
    }
    response().reset();
    handler_.unavailable(make_request(), response());
    finish_answer();
}

void Session::serialize(bool head, bool keep_alive) {
    append_response(output(), response(),
                    {.head = head,
                     .keep_alive = keep_alive,
                     .request_version = storage().version,
                     .date = context_.http_date()});
}

}  // namespace refgate::http
