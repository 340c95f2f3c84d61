#include "refgate/admin/console_crypto.hpp"

#include <sodium.h>

#include <array>
#include <stdexcept>

#include "refgate/admin/tokens.hpp"

namespace refgate::admin {
namespace {

constexpr std::size_t kSecretBytes = 32;
constexpr std::size_t kSecretLength = 43;  // 32 bytes in unpadded base64url
constexpr std::size_t kPasswordBytes = 18;

std::string random_text(std::size_t bytes) {
    init_console_crypto();
    std::array<unsigned char, kSecretBytes> buffer{};
    randombytes_buf(buffer.data(), bytes);
    std::string text = base64url(buffer.data(), bytes);
    sodium_memzero(buffer.data(), buffer.size());
    return text;
}

}  // namespace

void init_console_crypto() {
    static const bool ready = sodium_init() >= 0;
    if (!ready) throw std::runtime_error("libsodium could not be initialised");
}

std::string hash_password(std::string_view password) {
    init_console_crypto();
    std::array<char, crypto_pwhash_STRBYTES> out{};
    if (crypto_pwhash_str_alg(
            out.data(), password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
            crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13) != 0)
        throw std::runtime_error("hashing a password ran out of memory");
    return std::string(out.data());
}

bool verify_password(const std::string& hash, std::string_view password) {
    init_console_crypto();
    return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

bool password_needs_rehash(const std::string& hash) {
    init_console_crypto();
    return crypto_pwhash_str_needs_rehash(hash.c_str(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                          crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0;
}

void verify_nobody(std::string_view password) {
    // A hash of 32 random bytes nobody kept, with hash_password's parameters: verifying against
    // it costs what a real user's does, from the first call on.
    static const std::string nobody =
        "$argon2id$v=19$m=65536,t=2,p=1$jRVGQHDNy6sYJe0jI70mjw$"
        "k7rxLSadBMN5FCrQ3/5F1l7hSh5tfA/H8roEZR3QVls";
    verify_password(nobody, password);
}

std::string random_secret() { return random_text(kSecretBytes); }

std::string generate_password() { return random_text(kPasswordBytes); }

bool plausible_secret(std::string_view text) {
    if (text.size() != kSecretLength) return false;
    for (char c : text) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

std::string secret_hash_hex(std::string_view secret) {
    init_console_crypto();
    std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
    crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(secret.data()),
                       secret.size());
    std::string hex(digest.size() * 2 + 1, '\0');
    sodium_bin2hex(hex.data(), hex.size(), digest.data(), digest.size());
    hex.pop_back();
    return hex;
}

bool same_secret(std::string_view a, std::string_view b) {
    return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace refgate::admin
