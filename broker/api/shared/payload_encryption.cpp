#include "api/shared/payload_encryption.hpp"

#include "api/shared/api_error.hpp"
#include "crypto/payload_cipher.hpp"
#include "log/log.hpp"

#include <set>

namespace queen::api {

boost::asio::awaitable<void> seal_payloads(broker_context& ctx, std::vector<domain::push_item>& items) {
    if (items.empty()) co_return;
    std::set<std::string> queues;
    for (const auto& item : items) queues.insert(item.queue);
    auto encryption = co_await ctx.queue_settings.encryption(queues);
    for (auto& item : items) {
        const auto& enc = encryption[item.queue];
        bool seal = enc.value_or(ctx.cipher.has_value());
        if (!seal) continue;
        if (!ctx.cipher)
            throw bad_request("queue " + item.queue +
                              " has encryptionEnabled but this broker has no QUEEN_ENCRYPTION_KEY");
        item.payload = ctx.cipher->seal(item.payload, item.queue);
    }
}

std::string deliverable_payload(const broker_context& ctx, std::string_view stored, std::string_view queue) {
    if (!crypto::payload_cipher::is_sealed(stored)) return std::string(stored);
    if (ctx.cipher) {
        if (auto plain = ctx.cipher->open(stored, queue)) return std::move(*plain);
        log::error("a payload of queue {} does not decrypt with this broker's key; delivered sealed",
                   std::string(queue));
    } else {
        log::error("a payload of queue {} is encrypted but this broker has no QUEEN_ENCRYPTION_KEY; delivered sealed",
                   std::string(queue));
    }
    return std::string(stored);
}

}  // namespace queen::api
