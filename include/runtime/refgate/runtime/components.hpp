#pragma once

// The running service as a list of components: each starts in the order it was added and stops
// in reverse, so that a component stops while everything it uses still runs, and the shutdown
// order can be read off the list.

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace refgate::runtime {

class Components {
  public:
    // False from `start` refuses the start (the component has logged why).
    using Start = std::function<bool()>;
    using Stop = std::function<void()>;

    Components() = default;
    Components(const Components&) = delete;
    Components& operator=(const Components&) = delete;
    // Stops what is still running, in reverse.
    ~Components();

    void add(std::string name, Start start, Stop stop);
    // A worker with void start() and stop() (the sender, the flusher, the snapshot follower).
    template <typename Worker>
    void add_worker(std::string name, Worker& worker) {
        add(
            std::move(name),
            [&worker] {
                worker.start();
                return true;
            },
            [&worker] { worker.stop(); });
    }

    // Starts every component in order. When one refuses, those already started are stopped
    // in reverse and the result is false.
    bool start();
    // Stops the started components, last first. Idempotent.
    void stop();
    // The names, in start order.
    std::vector<std::string> names() const;

  private:
    struct Component {
        std::string name;
        Start start;
        Stop stop;
    };
    std::vector<Component> components_;
    std::size_t started_ = 0;  // components_[0, started_) are running
};

}  // namespace refgate::runtime
