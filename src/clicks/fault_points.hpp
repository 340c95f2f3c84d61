#pragma once

// Named places where a test kills the process, to show that no count is lost or doubled
// (REFGATE_FAULT_POINT=before_commit|after_commit|between_buckets). Compiled only into a build
// configured with -DREFGATE_FAULT_POINTS=ON (the test suite's); elsewhere they are nothing.

#ifdef REFGATE_FAULT_POINTS
namespace refgate::clicks {
void fault_point(const char* name);
}  // namespace refgate::clicks
#define REFGATE_FAULT_POINT(name) ::refgate::clicks::fault_point(name)
#else
#define REFGATE_FAULT_POINT(name) static_cast<void>(0)
#endif
