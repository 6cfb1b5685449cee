#include "api/route_guard.hpp"

#include "api/shared/api_error.hpp"
#include "auth/authenticator.hpp"

#include <string>
#include <string_view>

namespace queen::api {

namespace {

// The one mapping of an authentication failure to an HTTP answer.
api_error refusal(const auth::auth_failure& failure) {
    switch (failure.kind) {
        case auth::failure_kind::insufficient_level:
            return api_error(error_code::forbidden, failure.message());
        case auth::failure_kind::jwks_unavailable:
            return api_error(error_code::unavailable, failure.message(), 5);
        default:
            return api_error(error_code::unauthorized, failure.message());
    }
}

// Takes one request from the bucket of (kind, id), or refuses it with 429 and Retry-After.
// The key is built only when rate limiting is on.
void admit_rate(broker_context& ctx, std::string_view kind, const std::string& id) {
    if (!ctx.rate_limiter.enabled()) return;
    std::string key(kind);
    key += id;
    if (const int wait = ctx.rate_limiter.take(key); wait > 0)
        throw api_error(error_code::too_many_requests,
                        "request rate limit exceeded; retry after " + std::to_string(wait) + " s", wait);
}

}  // namespace

boost::asio::awaitable<void> admit(broker_context& ctx, const route_spec& r, http::request_context& rc) {
    const std::string_view target = rc.req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    if (r.access == access_level::anyone) co_return;
    if (ctx.auth.enabled() && !ctx.auth.skips(path)) {
        const auth::verification verdict = co_await ctx.auth.authenticate(rc.req[http::bhttp::field::authorization]);
        if (const auto* failure = std::get_if<auth::auth_failure>(&verdict)) {
            // Refused tokens count against the address, so guessing is rate limited too.
            admit_rate(ctx, "address ", rc.client.address());
            throw refusal(*failure);
        }
        const auto& who = std::get<auth::principal>(verdict);
        rc.subject = who.subject;
        rc.caller_admin = who.may(auth::access_level::admin);
        if (who.subject)
            admit_rate(ctx, "subject ", *who.subject);
        else
            admit_rate(ctx, "address ", rc.client.address());
        if (!who.may(r.access)) throw refusal(auth::auth_failure{auth::failure_kind::insufficient_level, {}});
    } else {
        rc.caller_admin = !ctx.auth.enabled();
        admit_rate(ctx, "address ", rc.client.address());
    }
}

}  // namespace queen::api
