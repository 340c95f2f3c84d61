// One hop over libcurl. The host is resolved here, once, and every answer checked: refused ones
// are never contacted, the others are tried in order (the next after a connect failure). For
// each try curl is told to use exactly that address (CURLOPT_RESOLVE) and every socket it opens
// is checked against it, so another DNS answer can never take the request somewhere else.

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cstring>
#include <mutex>
#include <vector>

#include "refgate/domain/ip_network.hpp"
#include "refgate/linkcheck/fetcher.hpp"

namespace refgate::linkcheck {
namespace {

struct CurlDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

struct Transfer {
    std::string body;
    std::size_t max_body = 0;
    bool capped = false;
    domain::IpBytes pinned{};
    bool socket_refused = false;
    const std::atomic<bool>* stopping = nullptr;
};

// Curl calls it often during a transfer and about once a second while waiting: non-zero aborts.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* t = static_cast<const Transfer*>(user);
    return t->stopping != nullptr && t->stopping->load() ? 1 : 0;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::size_t n = size * count;
    std::size_t room = t->max_body - t->body.size();
    if (n > room) {
        t->body.append(data, room);
        t->capped = true;
        return 0;  // stops the transfer: the rest of a large page is never read
    }
    t->body.append(data, n);
    return n;
}

curl_socket_t open_socket(void* user, curlsocktype, curl_sockaddr* address) {
    auto* t = static_cast<Transfer*>(user);
    auto ip = domain::sockaddr_ip(&address->addr);
    if (!ip || *ip != t->pinned) {
        t->socket_refused = true;
        return CURL_SOCKET_BAD;
    }
    return ::socket(address->family, address->socktype, address->protocol);
}

std::string ip_text(const domain::IpBytes& ip) {
    char buf[INET6_ADDRSTRLEN] = {};
    bool v4 = std::all_of(ip.begin(), ip.begin() + 10, [](auto b) { return b == 0; }) &&
              ip[10] == 0xff && ip[11] == 0xff;
    if (v4) return inet_ntop(AF_INET, ip.data() + 12, buf, sizeof buf);
    return inet_ntop(AF_INET6, ip.data(), buf, sizeof buf);
}

domain::HopFailure failure_of(CURLcode code) {
    switch (code) {
        case CURLE_COULDNT_RESOLVE_HOST:
            return domain::HopFailure::dns;
        case CURLE_OPERATION_TIMEDOUT:
            return domain::HopFailure::timeout;
        case CURLE_COULDNT_CONNECT:
            return domain::HopFailure::connect;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_INVALIDCERTSTATUS:
            return domain::HopFailure::tls;
        default:
            return domain::HopFailure::other;
    }
}

struct Answer {
    domain::IpBytes address{};
    bool allowed = false;  // a test entry of the resolve list: let past the refusal
};

// Every address of the host, in the resolver's order (a literal: itself).
std::vector<Answer> resolve(const std::string& host, std::uint16_t port,
                            const std::vector<config::ResolveEntry>& fixed) {
    std::string bare = host;
    if (bare.size() > 2 && bare.front() == '[') bare = bare.substr(1, bare.size() - 2);
    if (auto literal = domain::parse_ip(bare)) return {Answer{.address = *literal}};
    std::vector<Answer> out;
    for (const auto& e : fixed) {
        if (e.host != host || e.port != port) continue;
        if (auto ip = domain::parse_ip(e.address)) out.push_back({.address = *ip, .allowed = true});
    }
    if (!out.empty()) return out;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(bare.c_str(), nullptr, &hints, &found) != 0) return out;
    for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
        auto ip = domain::sockaddr_ip(ai->ai_addr);
        if (!ip) continue;
        bool seen =
            std::any_of(out.begin(), out.end(), [&](const Answer& a) { return a.address == *ip; });
        if (!seen) out.push_back({.address = *ip});
    }
    ::freeaddrinfo(found);
    return out;
}

class CurlFetcher final : public HopFetcher {
  public:
    explicit CurlFetcher(FetcherOptions options) : options_(std::move(options)) {
        static std::once_flag once;
        std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    }

    HopResult fetch(const std::string& url) override { return send(url, nullptr); }

    HopResult post(const std::string& url, const std::vector<std::string>& headers,
                   const std::string& body) override {
        Post post{.headers = headers, .body = body};
        return send(url, &post);
    }

  private:
    struct Post {
        const std::vector<std::string>& headers;
        const std::string& body;
    };

    HopResult send(const std::string& url, const Post* post) {
        HopResult result{.hop = {.url = url}};
        if (options_.stopping != nullptr && options_.stopping->load()) {
            result.hop.failure = domain::HopFailure::other;
            return result;
        }
        auto parsed = boost::urls::parse_uri(url);
        if (!parsed || parsed->encoded_host().empty()) {
            result.hop.failure = domain::HopFailure::other;
            return result;
        }
        std::string host(parsed->encoded_host());
        bool https = parsed->scheme_id() == boost::urls::scheme::https;
        std::uint16_t port = parsed->has_port() ? parsed->port_number() : (https ? 443 : 80);
        auto answers = resolve(host, port, options_.resolve);
        if (answers.empty()) {
            result.hop.failure = domain::HopFailure::dns;
            return result;
        }
        // Each answer is judged: a refused one is never contacted; the allowed ones are tried
        // in order, the next after a connect failure.
        bool tried = false;
        for (const Answer& answer : answers) {
            if (!answer.allowed && !domain::public_address(answer.address)) continue;
            tried = true;
            result = HopResult{.hop = {.url = url, .address = ip_text(answer.address)}};
            transfer(url, host, port, answer.address, result, post);
            if (result.hop.failure != domain::HopFailure::connect) break;
        }
        if (!tried) {
            result.hop.address = ip_text(answers.front().address);
            result.hop.failure = domain::HopFailure::ssrf;
        }
        return result;
    }

    void transfer(const std::string& url, const std::string& host, std::uint16_t port,
                  const domain::IpBytes& address, HopResult& result, const Post* post);

    FetcherOptions options_;
};

void CurlFetcher::transfer(const std::string& url, const std::string& host, std::uint16_t port,
                           const domain::IpBytes& address, HopResult& result, const Post* post) {
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    std::string ip = ip_text(address);
    std::string bare = host.front() == '[' ? host.substr(1, host.size() - 2) : host;
    std::string pin = bare + ":" + std::to_string(port) + ":" +
                      (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip);
    std::unique_ptr<curl_slist, SlistDeleter> resolve(curl_slist_append(nullptr, pin.c_str()));
    Transfer t{.max_body = options_.max_body, .pinned = address, .stopping = options_.stopping};
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_RESOLVE, resolve.get());
    // No proxy from the environment (http_proxy, ...): the connection goes to the pinned address.
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    if (post == nullptr) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else {
        for (const auto& h : post->headers) {
            curl_slist* more = curl_slist_append(headers.get(), h.c_str());
            if (more == nullptr) break;
            headers.release();
            headers.reset(more);
        }
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(post->body.size()));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post->body.c_str());
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    }
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
    curl_easy_setopt(
        c, CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(std::min(options_.connect_timeout, options_.timeout).count()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
    if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
    CURLcode code = curl_easy_perform(c);
    if (t.socket_refused) {
        result.hop.failure = domain::HopFailure::ssrf;
        return;
    }
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && t.capped)) {
        result.hop.failure = failure_of(code);
        return;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    result.hop.status = static_cast<int>(status);
    char* primary = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &primary) == CURLE_OK && primary != nullptr &&
        domain::parse_ip(primary) != address) {
        result.hop =
            domain::Hop{.url = url, .failure = domain::HopFailure::ssrf, .address = primary};
        return;
    }
    char* location = nullptr;
    if (status >= 300 && status < 400 &&
        curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr)
        result.hop.location = location;
    result.body = std::move(t.body);
    result.body_capped = t.capped;
}

}  // namespace

std::string outbound_refusal(const std::string& url,
                             const std::vector<config::ResolveEntry>& fixed) {
    auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed || parsed->encoded_host().empty()) return "is not an absolute URL";
    if (parsed->scheme_id() != boost::urls::scheme::https) return "must be https";
    if (parsed->has_userinfo()) return "must not carry a user name or password";
    if (parsed->has_fragment()) return "must not have a fragment";
    std::string host(parsed->encoded_host());
    std::uint16_t port = parsed->has_port() ? parsed->port_number() : 443;
    auto answers = resolve(host, port, fixed);
    if (answers.empty()) return "has a host that does not resolve";
    for (const Answer& a : answers) {
        if (a.allowed || domain::public_address(a.address)) return "";
    }
    return "resolves only to private, loopback, link-local or other non-public addresses";
}

std::unique_ptr<HopFetcher> make_curl_fetcher(FetcherOptions options) {
    return std::make_unique<CurlFetcher>(std::move(options));
}

}  // namespace refgate::linkcheck
