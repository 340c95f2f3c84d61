// refgate_micro_bench: Catch2 v2 with BENCHMARK enabled. Not a test suite (not registered with
// ctest); tests/bench/run.sh runs it and reads its XML report.
#define CATCH_CONFIG_MAIN
#define CATCH_CONFIG_ENABLE_BENCHMARKING
#include <catch2/catch.hpp>
