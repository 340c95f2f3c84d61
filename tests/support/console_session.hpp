#pragma once

// A console user and a signed-in browser of theirs, as the integration tests make them: the
// user from the CLI, the session from POST /api/v1/session on the admin listener.

#include <string>
#include <utility>
#include <vector>

namespace refgate::test {

// The origin a browser names for pages of the admin listener as the test client reaches it.
inline const std::string kConsoleOrigin = "http://127.0.0.1";

// `refgate user create` with the password on standard input; REQUIREs that it succeeds.
void add_console_user(const std::string& database_url, const std::string& name,
                      const std::string& role, const std::string& password);

// A signed-in browser: its cookie ("name=id"), the session id and the session's CSRF token.
struct ConsoleBrowser {
    std::string cookie;
    std::string id;
    std::string csrf;
};

// Signs in from kConsoleOrigin; REQUIREs the 200.
ConsoleBrowser sign_in_console(int admin_port, const std::string& name,
                               const std::string& password);

// A console page's request headers: the cookie, the CSRF token, the same origin.
std::vector<std::pair<std::string, std::string>> console_page_headers(const ConsoleBrowser& b);

}  // namespace refgate::test
