#include "support/private_postgres.hpp"

#include <pwd.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <pqxx/pqxx>

#include "refgate/pg/database.hpp"
#include "support/test_env.hpp"

namespace refgate::test {

PrivatePostgres::PrivatePostgres()
    : bindir_(require_env("REFGATE_TEST_PG_BINDIR")), user_(require_env("REFGATE_TEST_PG_USER")) {
    std::string pattern = "/tmp/refgate-pg-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    if (::geteuid() == 0) {
        passwd* pw = ::getpwnam(user_.c_str());
        REQUIRE(pw != nullptr);
        REQUIRE(::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) == 0);
    }
    port_ = unused_port();
    run(bindir_ + "/initdb -D " + dir_ +
        "/data -U refgate --auth=trust -E UTF8 --locale=C.UTF-8 -N");
    start();
}

PrivatePostgres::~PrivatePostgres() {
    try {
        stop();
    } catch (...) {
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

void PrivatePostgres::run(const std::string& command) const {
    std::string full = command + " > " + dir_ + "/cmd.log 2>&1";
    struct passwd* me = ::getpwuid(::geteuid());
    if (me == nullptr || user_ != me->pw_name)
        full = "cd / && runuser -u " + user_ + " -- sh -c '" + full + "'";
    int rc = std::system(full.c_str());
    INFO(command);
    REQUIRE(rc == 0);
}

void PrivatePostgres::start() {
    if (running_) return;
    run(bindir_ + "/pg_ctl -D " + dir_ + "/data -w -t 30 -l " + dir_ + "/server.log -o \"-p " +
        std::to_string(port_) + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" +
        dir_ + " -c fsync=off\" start");
    running_ = true;
}

void PrivatePostgres::stop() {
    if (!running_) return;
    run(bindir_ + "/pg_ctl -D " + dir_ + "/data -w -t 30 -m fast stop");
    running_ = false;
}

std::string PrivatePostgres::create_database(const std::string& name) {
    std::string base = "postgresql://refgate@127.0.0.1:" + std::to_string(port_);
    {
        pqxx::connection conn(base + "/postgres");
        pqxx::nontransaction tx(conn);
        tx.exec("CREATE DATABASE " + name);
    }
    std::string url = base + "/" + name;
    pg::migrate(url);
    return url;
}

}  // namespace refgate::test
