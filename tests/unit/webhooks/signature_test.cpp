// The webhook signature of the Standard Webhooks specification and the retry schedule.

#include <catch2/catch.hpp>

#include "refgate/webhooks/delivery.hpp"

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace signature_test {

using namespace std::chrono_literals;
using refgate::webhooks::retry_delay;
using refgate::webhooks::signature;

TEST_CASE("a webhook is signed as the Standard Webhooks specification's example is", "[webhooks]") {
    // The specification's reference implementations test with this secret, id, time and body.
    CHECK(signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                    "1614265330", R"({"test": 2432232314})") ==
          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    // One byte more in the body, another id or another time: another signature.
    CHECK(signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                    "1614265330", R"({"test": 2432232315})") !=
          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    CHECK(signature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                    "1614265331", R"({"test": 2432232314})") !=
          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    // A secret that is not "whsec_" + base64 signs nothing.
    CHECK(signature("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "id", "1", "{}").empty());
    CHECK(signature("whsec_not base64!", "id", "1", "{}").empty());
}

TEST_CASE("a failed delivery is retried after the base, then after doubling waits up to a day",
          "[webhooks]") {
    CHECK(retry_delay(5000ms, 1) == 5s);
    CHECK(retry_delay(5000ms, 2) == 10s);
    CHECK(retry_delay(5000ms, 3) == 20s);
    CHECK(retry_delay(5000ms, 15) == 5s * 16384);
    CHECK(retry_delay(5000ms, 40) == std::chrono::hours{24});
    CHECK(retry_delay(5000ms, 100000) == std::chrono::hours{24});
}

}  // namespace signature_test
