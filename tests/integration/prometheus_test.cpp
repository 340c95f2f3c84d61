// A real Prometheus server (Debian's prometheus) scrapes refgate, and PromQL through its HTTP API
// sees exactly the clicks the test sent.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "support/http_client.hpp"
#include "support/private_redis.hpp"
#include "support/service_process.hpp"
#include "support/test_database.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace prometheus_test {

using namespace refgate::test;
using namespace std::chrono_literals;

namespace {

// True when something accepts connections on 127.0.0.1:port (the HTTP helpers REQUIRE that).
bool accepts(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

// Prometheus on 127.0.0.1 with its data in a temp dir, scraping one target every second.
// Stopped (SIGTERM, then SIGKILL) at the end of the scope.
class PrivatePrometheus {
  public:
    explicit PrivatePrometheus(int target_port) : port_(unused_port()) {
        std::ofstream(dir_.file("prometheus.yml"))
            << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
               "scrape_configs:\n  - job_name: refgate\n    static_configs:\n"
               "      - targets: ['127.0.0.1:"
            << target_port << "']\n";
        std::string config = "--config.file=" + dir_.file("prometheus.yml");
        std::string storage = "--storage.tsdb.path=" + dir_.file("data");
        std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
        std::string log = dir_.file("prometheus.log");
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            FILE* out = std::freopen(log.c_str(), "w", stderr);
            if (out == nullptr) ::_exit(126);
            ::dup2(::fileno(stderr), 1);
            ::execlp("prometheus", "prometheus", config.c_str(), storage.c_str(), listen.c_str(),
                     "--log.level=warn", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        auto deadline = std::chrono::steady_clock::now() + 30s;
        while (std::chrono::steady_clock::now() < deadline) {
            if (ready()) return;
            std::this_thread::sleep_for(100ms);
        }
        INFO(log_text());
        FAIL("Prometheus did not become ready on port " << port_);
    }

    ~PrivatePrometheus() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
            std::this_thread::sleep_for(100ms);
        }
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }

    PrivatePrometheus(const PrivatePrometheus&) = delete;
    PrivatePrometheus& operator=(const PrivatePrometheus&) = delete;

    bool ready() const { return accepts(port_) && http_get(port_, "/-/ready").status == 200; }

    // The value of a scalar PromQL query (the first series), or nullopt when it has none.
    std::optional<double> query(const std::string& promql_encoded) const {
        auto r = http_get(port_, "/api/v1/query?query=" + promql_encoded);
        if (r.status != 200) return std::nullopt;
        auto body = nlohmann::json::parse(r.body, nullptr, false);
        if (body.is_discarded() || body.value("status", "") != "success") return std::nullopt;
        const auto& result = body["data"]["result"];
        if (!result.is_array() || result.empty()) return std::nullopt;
        return std::stod(result[0]["value"][1].get<std::string>());
    }

    std::string log_text() const {
        std::ifstream in(dir_.file("prometheus.log"));
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

  private:
    TempDir dir_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("a real Prometheus scraping refgate sees exactly the clicks that were sent",
          "[metrics][prometheus][pg][redis]") {
    TestDatabase db;
    import_demo_links(db.url(), {{"alpha"}, {"beta"}});
    PrivateRedis redis;
    ServiceProcess service({.database_url = db.url(), .redis_url = redis.url()});
    PrivatePrometheus prometheus(service.admin_port());

    constexpr int kHuman = 12;
    constexpr int kBot = 3;
    for (int i = 0; i < kHuman; ++i) {
        REQUIRE(http_get(service.port(), i % 2 == 0 ? "/go/alpha" : "/go/beta",
                         {{"User-Agent", kBrowser}})
                    .status == 302);
    }
    for (int i = 0; i < kBot; ++i) {
        REQUIRE(
            http_request(service.port(), "HEAD", "/go/alpha", {{"User-Agent", kBrowser}}).status ==
            302);
    }

    // sum(refgate_clicks_total) and the human share, polled until Prometheus has scraped them.
    const std::string total = "sum%28refgate_clicks_total%7Bjob%3D%22refgate%22%7D%29";
    const std::string human =
        "sum%28refgate_clicks_total%7Bjob%3D%22refgate%22%2Cclass%3D%22human%22%2C"
        "partner%3D%22tailscale%22%7D%29";
    auto deadline = std::chrono::steady_clock::now() + 30s;
    std::optional<double> seen = prometheus.query(total);
    while (seen != kHuman + kBot && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(250ms);
        seen = prometheus.query(total);
    }
    INFO("Prometheus log:\n" << prometheus.log_text());
    REQUIRE(seen.has_value());
    CHECK(*seen == kHuman + kBot);
    CHECK(prometheus.query(human) == kHuman);
    CHECK(prometheus.query("up%7Bjob%3D%22refgate%22%7D") == 1);
}

}  // namespace prometheus_test
