#pragma once

// The link checker's integration fixture: the scenario HTTPS server (tests/linkcheck/
// scenario_server.py), the links pointing at its scenarios and the settings that reach it.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/service_process.hpp"
#include "support/test_database.hpp"
#include "support/test_env.hpp"

namespace linkcheck_fixture {

using namespace refgate::test;
using namespace std::chrono_literals;
using Json = nlohmann::json;

// A test's HTTPS server in Python (tests/linkcheck/scenario_server.py, tests/webhooks/receiver.py):
// started on 127.0.0.2 with a directory of its own, where it writes its port, its test CA
// (ca.pem) and what it received; stopped with the object.
class LocalPythonServer {
  public:
    explicit LocalPythonServer(const char* script_path) {
        std::string script = (source_root() / script_path).string();
        std::string dir = dir_.path().string();
        pid_ = ::fork();
        if (pid_ == 0) {
            ::execl("/usr/bin/python3", "python3", script.c_str(), "--dir", dir.c_str(),
                    "--address", "127.0.0.2", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        for (int i = 0; i < 300 && port_ == 0; ++i) {
            std::this_thread::sleep_for(50ms);
            std::ifstream in(dir_.file("port"));
            in >> port_;
        }
    }
    ~LocalPythonServer() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    LocalPythonServer(const LocalPythonServer&) = delete;
    LocalPythonServer& operator=(const LocalPythonServer&) = delete;
    int port() const { return port_; }
    std::string ca_file() const { return dir_.file("ca.pem"); }

  protected:
    TempDir dir_;

  private:
    pid_t pid_ = -1;
    int port_ = 0;
};

// The scenario server, started once for the file's tests and stopped at exit (or when a test
// fails: it lives in a function's static, destroyed with the program).
class ScenarioServer : public LocalPythonServer {
  public:
    ScenarioServer() : LocalPythonServer("tests/linkcheck/scenario_server.py") {}
    std::string requests() const { return read_text(dir_.file("requests.log")); }
    // /flip/NAME answers 404 while broken, else as /clean.
    void set_broken(const std::string& name, bool broken) const {
        std::string path = dir_.file("broken-" + name);
        if (broken) {
            std::ofstream(path) << "1";
        } else {
            std::remove(path.c_str());
        }
    }
};

inline ScenarioServer& server() {
    static ScenarioServer instance;
    REQUIRE(instance.port() != 0);
    return instance;
}

inline const std::map<std::string, std::string> kScenarios = {
    {"clean", "https://shop.test:{P}/clean"},
    {"drop", "https://shop.test:{P}/drop"},
    {"swap", "https://shop.test:{P}/swap"},
    {"home", "https://shop.test:{P}/home"},
    {"moved", "https://shop.test:{P}/moved"},
    {"gone", "https://shop.test:{P}/gone"},
    {"fail", "https://shop.test:{P}/fail"},
    {"mismatch", "https://mismatch.shop.test:{P}/clean"},
    {"expired", "https://expired.shop.test:{P}/clean"},
    {"loop", "https://shop.test:{P}/loop/a"},
    {"private", "https://shop.test:{P}/private"},
    {"metadata", "https://shop.test:{P}/metadata"},
    {"oos", "https://shop.test:{P}/oos"},
    {"slow", "https://shop.test:{P}/slow"},
    {"big", "https://shop.test:{P}/big"},
};

inline std::string with_port(std::string url, int port) {
    return url.replace(url.find("{P}"), 3, std::to_string(port));
}

inline std::string document(int port, const std::vector<std::string>& slugs) {
    Json doc = {{"partners",
                 {{{"slug", "shop"},
                   {"name", "Shop"},
                   {"ref_param", "ref"},
                   {"ref_code", "picks42"},
                   {"allowed_domains", {"shop.test"}}}}},
                {"links", Json::array()}};
    for (const auto& slug : slugs) {
        doc["links"].push_back({{"slug", slug},
                                {"partner", "shop"},
                                {"destination", with_port(kScenarios.at(slug), port)}});
    }
    return doc.dump();
}

// `timeout_ms`: each hop's (REFGATE_LINKCHECK_TIMEOUT_MS).
inline EnvPairs checker_env(const TestDatabase& db, const ScenarioServer& s,
                            const std::string& timeout_ms = "1000") {
    std::string resolve;
    for (const char* host :
         {"shop.test", "www.shop.test", "other.test", "mismatch.shop.test", "expired.shop.test"})
        resolve += std::string(resolve.empty() ? "" : ",") + host + ":" + std::to_string(s.port()) +
                   ":127.0.0.2";
    return {{"REFGATE_DATABASE_URL", db.url()},
            {"REFGATE_LINKCHECK_CA_FILE", s.ca_file()},
            {"REFGATE_LINKCHECK_RESOLVE", resolve},
            {"REFGATE_LINKCHECK_TIMEOUT_MS", timeout_ms},
            {"REFGATE_LINKCHECK_HOST_INTERVAL_MS", "100"},
            {"REFGATE_LINKCHECK_CONTACT_URL", "https://picks.example.com/contact"}};
}

}  // namespace linkcheck_fixture
