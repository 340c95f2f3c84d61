// Boost.URL compiled from its sources into the fuzz build, so that libFuzzer sees coverage inside
// URL parsing (the packaged libboost_url is not instrumented).
#include <boost/url/src.hpp>
