#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/test_env.hpp"

namespace refgate::test {

using EnvPairs = std::vector<std::pair<std::string, std::string>>;

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// Runs the refgate binary (REFGATE_BIN) to completion with extra environment variables.
CommandResult run_refgate(const std::vector<std::string>& args, const EnvPairs& env = {},
                          const std::string& stdin_text = "");

// A browser's User-Agent: refgate counts its clicks as human ones.
inline const std::string kBrowser =
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

// A new API token's text, made as `refgate token create --name NAME --role ROLE` makes it (the
// same function, audited under the same "cli:<OS user>"), in this process: tests that need a
// token but do not test the CLI spare a sanitizer refgate's start (some 240 a run).
std::string create_api_token(const std::string& database_url, const std::string& name,
                             const std::string& role);

struct ServiceOptions {
    std::string database_url;
    std::string redis_url;      // default: a database of the shared test Redis for this process
    std::string snapshot_file;  // default: a file in the service's temp dir
    EnvPairs env;               // more REFGATE_* settings
    bool wait_ready = true;     // wait until both listeners are up
};

// `refgate serve` as a child process on ports chosen by the kernel, with stderr kept in a file.
class ServiceProcess {
  public:
    explicit ServiceProcess(ServiceOptions options);
    ~ServiceProcess();
    ServiceProcess(const ServiceProcess&) = delete;
    ServiceProcess& operator=(const ServiceProcess&) = delete;

    int port() const { return port_; }
    int admin_port() const { return admin_port_; }
    pid_t pid() const { return pid_; }
    const std::string& snapshot_file() const { return snapshot_file_; }

    // Sends `signal` and waits for the exit; returns the exit code (or 128 + signal number).
    int stop(int signal, std::chrono::milliseconds timeout = std::chrono::seconds{20});
    bool running();
    // Everything the service wrote to stderr so far.
    std::string log() const;
    // Waits until the log has a line containing `text`.
    bool wait_for_log(const std::string& text,
                      std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;

  private:
    TempDir dir_;
    std::string log_file_;
    std::string snapshot_file_;
    pid_t pid_ = -1;
    int port_ = 0;
    int admin_port_ = 0;
    std::optional<int> exit_code_;
};

}  // namespace refgate::test

namespace refgate::test {

// `refgate import` of a JSON text into the database at `database_url`.
CommandResult import_json(const std::string& database_url, const std::string& json_text);

}  // namespace refgate::test
