#pragma once
// Applies encryption at rest to push items and removes it from delivered payloads.
#include "api/shared/broker_context.hpp"
#include "domain/push_item.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace queen::api {

// Seals the payloads of items whose queue has encryptionEnabled (and, when the database
// cannot say, of every item whose queue is unknown: sealing is never wrong, pops open it).
// Without QUEEN_ENCRYPTION_KEY: 400 for an encrypted queue.
boost::asio::awaitable<void> seal_payloads(broker_context& ctx, std::vector<domain::push_item>& items);

// The payload to deliver: opened when sealed (and the key fits), else as stored.
std::string deliverable_payload(const broker_context& ctx, std::string_view stored, std::string_view queue);

}  // namespace queen::api
