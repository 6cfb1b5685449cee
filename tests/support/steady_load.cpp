#include "steady_load.hpp"

#include <chrono>

namespace queen::test {

using nlohmann::json;
using namespace std::chrono_literals;

steady_load::steady_load(unsigned short port, std::string queue, steady_load_options options)
    : port_(port), queue_(std::move(queue)), options_(options) {
    producer_ = std::thread([this] { produce(); });
    consumer_ = std::thread([this] { consume(); });
}

steady_load::~steady_load() {
    stop_producing();
    stop_consuming();
}

void steady_load::wait_produced(int n) const {
    while (produced_ < n) std::this_thread::sleep_for(20ms);
}

void steady_load::stop_producing() {
    stopping_producer_ = true;
    if (producer_.joinable()) producer_.join();
}

void steady_load::stop_consuming() {
    stopping_consumer_ = true;
    if (consumer_.joinable()) consumer_.join();
}

bool steady_load::all_delivered() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& txid : answered_)
        if (!deliveries_.count(txid)) return false;
    return true;
}

std::set<std::string> steady_load::delivered() const {
    std::set<std::string> out;
    for (const auto& [txid, times] : deliveries_) out.insert(txid);
    return out;
}

int steady_load::most_deliveries() const {
    int most = 0;
    for (const auto& [txid, times] : deliveries_) most = std::max(most, times);
    return most;
}

std::string steady_load::summary() const {
    std::string out = "pushed " + std::to_string(produced()) + ", answered " + std::to_string(answered().size()) + " (";
    for (const auto& [answer, n] : push_answers()) out += std::to_string(n) + " " + answer + ", ";
    return out + std::to_string(refused_pops()) + " pops refused)";
}

void steady_load::produce() {
    http_client c("127.0.0.1", port_);
    const int lanes = options_.lanes;
    for (int n = 0; !stopping_producer_; ++n) {
        const std::string txid = queue_ + "-" + std::to_string(n);
        const json item{{"queue", queue_}, {"partition", "lane" + std::to_string(n % lanes)},
                        {"transactionId", txid}, {"payload", {{"lane", n % lanes}, {"seq", n / lanes}}}};
        for (int attempt = 0; attempt < 600; ++attempt) {
            auto r = c.post("/api/v1/push", json{{"items", json::array({item})}});
            const bool stored = r.status == 201;
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (stored) answered_.insert(txid);
                ++push_answers_[stored ? json::parse(r.body)[0]["status"].get<std::string>()
                                       : "refused " + std::to_string(r.status)];
            }
            if (stored) break;
            std::this_thread::sleep_for(100ms);
        }
        ++produced_;
        std::this_thread::sleep_for(5ms);
    }
}

void steady_load::acknowledge(http_client& c, const json& acks) {
    for (int attempt = 0; attempt < 300; ++attempt) {
        auto r = c.post("/api/v1/ack/batch", json{{"consumerGroup", "g"}, {"acknowledgments", acks}});
        if (r.status == 200) return;
        if (r.status != 503 || !options_.retry_acks) break;
        std::this_thread::sleep_for(100ms);
    }
    ++refused_acks_;
}

void steady_load::consume() {
    http_client c("127.0.0.1", port_);
    while (!stopping_consumer_) {
        auto r = c.get("/api/v1/pop/queue/" + queue_ + "?consumerGroup=g&batch=20&wait=true&timeout=1000");
        if (r.status == 204) continue;
        if (r.status != 200) {
            ++refused_pops_;
            std::this_thread::sleep_for(100ms);
            continue;
        }
        const json body = json::parse(r.body);
        json acks = json::array();
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (const auto& m : body["messages"]) {
                const std::string txid = m["transactionId"];
                const int lane = m["data"]["lane"], seq = m["data"]["seq"];
                if (deliveries_[txid]++ == 0) {
                    if (seq != next_first_[lane]) ++out_of_order_;
                    next_first_[lane] = seq + 1;
                }
                acks.push_back({{"transactionId", txid}, {"partitionId", m["partitionId"]},
                                {"leaseId", m["leaseId"]}, {"status", "completed"}});
            }
        }
        acknowledge(c, acks);
    }
}

}  // namespace queen::test
