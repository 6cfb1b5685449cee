#pragma once
// Helpers of the Shards tests (shards_delivery, _admin and _deployment_test.cpp): a pop whose
// messages are checked one by one and acked in one batch, through a sharded deployment's proxy.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace queen::test::shards_support {

using nlohmann::json;

// One pop of `path` (a 200 or a 204 expected) through `popper`; each message goes to `ack_of`,
// which checks it and gives its ack's status (and error), and the batch is acked at once through
// `acker` for `group` ("" for queue mode), every ack succeeding. Returns how many messages came.
inline int pop_and_ack(http_client& popper, http_client& acker, const std::string& path, const std::string& group,
                       const std::function<json(const json&)>& ack_of) {
    auto r = popper.get(path);
    EXPECT_TRUE(r.status == 200 || r.status == 204) << r.status << " " << r.body;
    if (r.status != 200) return 0;
    json acks = json::array();
    const json popped = json::parse(r.body);
    for (const auto& m : popped["messages"]) {
        json one{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]}, {"leaseId", m["leaseId"]}};
        one.update(ack_of(m));
        acks.push_back(one);
    }
    json body{{"acknowledgments", acks}};
    if (!group.empty()) body["consumerGroup"] = group;
    auto a = acker.post("/api/v1/ack/batch", body);
    EXPECT_EQ(a.status, 200) << a.body;
    if (a.status == 200) {
        const json answers = json::parse(a.body);
        for (const auto& one : answers) EXPECT_TRUE(one["success"].get<bool>()) << one;
    }
    return static_cast<int>(acks.size());
}

}  // namespace queen::test::shards_support
