#pragma once

// The console's secrets: passwords hashed with Argon2id (libsodium's crypto_pwhash_str with
// OPSLIMIT_INTERACTIVE and MEMLIMIT_INTERACTIVE: t=2 passes over m=64 MiB, p=1 lane), and
// random session ids and CSRF tokens (32 bytes from randombytes_buf, unpadded base64url).
// Nothing here logs.

#include <string>
#include <string_view>

namespace refgate::admin {

// Initialises libsodium once (thread-safe, idempotent); throws std::runtime_error when it cannot.
// Every function below calls it too, so calling it at start only moves the cost forward.
void init_console_crypto();

// "$argon2id$v=19$m=65536,t=2,p=1$<salt>$<hash>"; throws std::runtime_error when out of memory.
std::string hash_password(std::string_view password);
// True when `password` matches `hash` (any Argon2 string libsodium reads).
bool verify_password(const std::string& hash, std::string_view password);
// True when `hash` was made with other parameters than hash_password uses now.
bool password_needs_rehash(const std::string& hash);
// Spends the time of one verification on no user, so that an unknown name takes as long as a
// wrong password.
void verify_nobody(std::string_view password);

// 32 random bytes as 43 base64url characters: session ids and CSRF tokens.
std::string random_secret();
// A password to hand out once: 18 random bytes as 24 base64url characters.
std::string generate_password();
// 43 base64url characters, as random_secret makes them.
bool plausible_secret(std::string_view text);
// The lower-case hex SHA-256 of a session id: what the database keeps instead of the id.
std::string secret_hash_hex(std::string_view secret);
// Compares two strings in constant time for their length.
bool same_secret(std::string_view a, std::string_view b);

}  // namespace refgate::admin
