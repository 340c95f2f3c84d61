#pragma once

#include "refgate/config/config.hpp"

namespace refgate::app {

// The composition root: the only place that names concrete adapters.
class App {
  public:
    explicit App(config::Config config) : config_(std::move(config)) {}

    // Serves until SIGINT, SIGTERM or SIGQUIT (SIGHUP reloads the snapshot); returns the process
    // exit code.
    int serve();

  private:
    config::Config config_;
};

// argv -> command. Returns the process exit code.
int run_cli(int argc, char** argv);

}  // namespace refgate::app
