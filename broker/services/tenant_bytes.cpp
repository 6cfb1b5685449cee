#include "services/tenant_bytes.hpp"

#include "log/log.hpp"
#include "store/tenants_store.hpp"

namespace queen::services {

boost::asio::awaitable<std::optional<std::uint64_t>> tenant_bytes::at_limit(const std::string& scope) {
    if (max_bytes_ == 0) co_return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    bool read = false;
    {
        std::lock_guard lock(mu_);
        if (!reading_ && (!read_at_ || now - *read_at_ >= ttl_)) {
            reading_ = true;
            read = true;
        }
    }
    if (read) {
        std::unordered_map<std::string, std::uint64_t> fresh;
        bool ok = false;
        try {
            const auto rows = co_await store::tenant_usage(pool_, true);
            for (const auto& row : rows) fresh[row.tenant] = static_cast<std::uint64_t>(row.stored_bytes);
            ok = true;
        } catch (const std::exception& e) {
            log::warn("tenant stored bytes: not read ({}); the last figures stand", e.what());
        }
        std::lock_guard lock(mu_);
        reading_ = false;
        read_at_ = now;
        if (ok) bytes_ = std::move(fresh);
    }
    std::lock_guard lock(mu_);
    const auto it = bytes_.find(scope);
    if (it == bytes_.end() || it->second < max_bytes_) co_return std::nullopt;
    co_return it->second;
}

}  // namespace queen::services
