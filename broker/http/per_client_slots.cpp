#include "http/per_client_slots.hpp"

namespace queen::http {

per_client_slots::slot::~slot() {
    if (!state_) return;
    std::lock_guard lock(state_->mu);
    auto it = state_->held.find(address_);
    if (it != state_->held.end() && --it->second == 0) state_->held.erase(it);
}

std::optional<per_client_slots::slot> per_client_slots::try_take(const std::string& address) {
    if (limit_ == 0) return slot(nullptr, {});
    std::lock_guard lock(state_->mu);
    auto& n = state_->held[address];
    if (n >= limit_) return std::nullopt;
    ++n;
    return slot(state_, address);
}

std::size_t per_client_slots::held(const std::string& address) const {
    std::lock_guard lock(state_->mu);
    auto it = state_->held.find(address);
    return it == state_->held.end() ? 0 : it->second;
}

}  // namespace queen::http
