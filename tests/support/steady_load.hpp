#pragma once
// Steady push and consume load through a broker, with what each side saw kept for exact
// accounting (the failover and shard-move tests): a producer pushing one message at a time to
// `lanes` lanes (payload {lane, seq}, partition "lane<k>"), each retried with its transaction
// id until it is answered 201, as a client retries; and a consumer group `g` popping the queue
// with long-polls and acknowledging what it got.
#include "test_env.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace queen::test {

struct steady_load_options {
    int lanes = 12;
    // Acknowledgements answered 503 are sent again until taken (a client that keeps its
    // lease); otherwise an ack lost in an outage leaves its span to come back after its lease.
    bool retry_acks = false;
};

class steady_load {
public:
    steady_load(unsigned short port, std::string queue, steady_load_options options = {});
    ~steady_load();

    int produced() const { return produced_; }
    // Waits until at least `n` messages were produced.
    void wait_produced(int n) const;
    void stop_producing();
    void stop_consuming();
    // Whether every answered push has been delivered to the group.
    bool all_delivered();

    // After both stopped:
    const std::set<std::string>& answered() const { return answered_; }  // pushes answered 201
    std::set<std::string> delivered() const;
    int most_deliveries() const;  // of any one message
    int out_of_order() const { return out_of_order_; }  // first deliveries out of lane order
    // How the pushes were answered: "queued", "buffered", … and each refusal's HTTP status.
    const std::map<std::string, int>& push_answers() const { return push_answers_; }
    int refused_pops() const { return refused_pops_; }
    int refused_acks() const { return refused_acks_; }  // answered neither 200 nor (retried) 503
    // One line: what was pushed, how it was answered, what was refused.
    std::string summary() const;

private:
    void produce();
    void consume();
    void acknowledge(http_client& c, const nlohmann::json& acks);

    unsigned short port_;
    std::string queue_;
    steady_load_options options_;
    std::mutex mu_;
    std::set<std::string> answered_;
    std::map<std::string, int> deliveries_;  // transaction id -> times delivered
    std::map<int, int> next_first_;          // lane -> the seq its next first delivery must have
    std::map<std::string, int> push_answers_;
    int out_of_order_ = 0;
    std::atomic<int> produced_{0}, refused_pops_{0}, refused_acks_{0};
    std::atomic<bool> stopping_producer_{false}, stopping_consumer_{false};
    std::thread producer_, consumer_;
};

}  // namespace queen::test
