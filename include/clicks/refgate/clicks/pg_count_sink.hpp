#pragma once

#include <memory>
#include <string>

#include "refgate/clicks/count_sink.hpp"

namespace refgate::clicks {

struct PgCountSinkOptions {
    std::string database_url;
};

// The CountSink over one PostgreSQL connection (libpqxx), opened when first needed and again after
// any failure (which also ends the session's flush lock). Blocking: never on an I/O thread.
std::unique_ptr<CountSink> make_pg_count_sink(PgCountSinkOptions options);

}  // namespace refgate::clicks
