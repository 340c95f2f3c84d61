#include "support/private_postgres.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <vector>

#include "refgate/pg/database.hpp"
#include "support/test_env.hpp"

namespace refgate::test {

PrivatePostgres::PrivatePostgres() : PrivatePostgres(nullptr) {}

std::unique_ptr<PrivatePostgres> PrivatePostgres::standby_of(const PrivatePostgres& primary) {
    return std::unique_ptr<PrivatePostgres>(new PrivatePostgres(&primary));
}

PrivatePostgres::PrivatePostgres(const PrivatePostgres* primary)
    : bindir_(require_env("REFGATE_TEST_PG_BINDIR")), user_(require_env("REFGATE_TEST_PG_USER")) {
    std::string pattern = (std::filesystem::temp_directory_path() / "refgate-pg-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    give_to_user(dir_);
    port_ = unused_port();
    if (primary != nullptr) {
        // -R: standby.signal and primary_conninfo; -c fast: a checkpoint at once; -N: no fsync.
        run(bindir_ + "/pg_basebackup -h 127.0.0.1 -p " + std::to_string(primary->port_) +
            " -U refgate -D " + dir_ + "/data -R -X stream -c fast -N");
    } else {
        std::string cluster = template_cluster();
        if (cluster.empty()) {
            initdb(dir_ + "/data");
        } else {
            run("cp -a " + cluster + " " + dir_ + "/data");
        }
    }
    start();
}

void PrivatePostgres::initdb(const std::string& data_dir) const {
    run(bindir_ + "/initdb -D " + data_dir +
        " -U refgate --auth=trust -E UTF8 --locale=C.UTF-8 -N");
}

std::string PrivatePostgres::template_cluster() const {
    const char* root = std::getenv("REFGATE_TEST_PG_TEMPLATE");
    if (root == nullptr || *root == '\0') return "";
    std::string cluster = std::string(root) + "/data";
    if (std::filesystem::exists(cluster + "/PG_VERSION")) return cluster;
    // Made aside and renamed into place, so that a test copies a whole cluster or none; of two
    // tests that make one at once, the second rename fails and its cluster is dropped.
    std::string pattern = std::string(root) + "/new-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    give_to_user(pattern);
    initdb(pattern + "/data");
    std::error_code ec;
    std::filesystem::rename(pattern + "/data", cluster, ec);
    std::filesystem::remove_all(pattern, ec);
    REQUIRE(std::filesystem::exists(cluster + "/PG_VERSION"));
    return cluster;
}

void PrivatePostgres::give_to_user(const std::string& dir) const {
    if (::geteuid() != 0) return;
    passwd* pw = ::getpwnam(user_.c_str());
    REQUIRE(pw != nullptr);
    REQUIRE(::chown(dir.c_str(), pw->pw_uid, pw->pw_gid) == 0);
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

namespace {

// /proc/<pid>/stat's text, or "" once the process has gone.
std::string read_stat(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string text(512, '\0');
    ssize_t n = ::read(fd, text.data(), text.size());
    ::close(fd);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
}

// The postmaster (first line of postmaster.pid) and its children, from /proc.
std::vector<pid_t> server_processes(const std::string& data_dir) {
    std::ifstream pid_file(data_dir + "/postmaster.pid");
    pid_t postmaster = 0;
    pid_file >> postmaster;
    REQUIRE(postmaster > 0);
    std::vector<pid_t> pids{postmaster};
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        // A process may end between the listing and the read: its stat then reads as empty
        // (through a stream, the read's ESRCH would throw out of the stream buffer).
        std::string text = read_stat(entry.path() / "stat");
        auto close = text.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream fields(text.substr(close + 2));
        std::string state;
        pid_t parent = 0;
        fields >> state >> parent;
        if (parent == postmaster) pids.push_back(std::stoi(name));
    }
    return pids;
}

}  // namespace

void PrivatePostgres::pause() {
    REQUIRE(running_);
    for (pid_t pid : server_processes(dir_ + "/data")) ::kill(pid, SIGSTOP);
    paused_ = true;
}

void PrivatePostgres::resume() {
    if (!paused_) return;
    for (pid_t pid : server_processes(dir_ + "/data")) ::kill(pid, SIGCONT);
    paused_ = false;
}

void PrivatePostgres::stop() {
    if (!running_) return;
    resume();
    run(bindir_ + "/pg_ctl -D " + dir_ + "/data -w -t 30 -m fast stop");
    running_ = false;
}

void PrivatePostgres::crash() {
    if (!running_) return;
    resume();
    run(bindir_ + "/pg_ctl -D " + dir_ + "/data -w -t 30 -m immediate stop");
    running_ = false;
}

std::string PrivatePostgres::url(const std::string& name) const {
    return "postgresql://refgate@127.0.0.1:" + std::to_string(port_) + "/" + name;
}

std::string PrivatePostgres::create_database(const std::string& name) {
    {
        pqxx::connection conn(url("postgres"));
        pqxx::nontransaction tx(conn);
        tx.exec("CREATE DATABASE " + name);
    }
    pg::migrate(url(name));
    return url(name);
}

void PrivatePostgres::promote() {
    REQUIRE(running_);
    run(bindir_ + "/pg_ctl -D " + dir_ + "/data -w -t 30 promote");
}

void PrivatePostgres::set_synchronous_standby_names(const std::string& names) {
    pqxx::connection conn(url("postgres"));
    pqxx::nontransaction tx(conn);
    tx.exec("ALTER SYSTEM SET synchronous_standby_names = " + tx.quote(names));
    tx.exec("SELECT pg_reload_conf()");
}

}  // namespace refgate::test
