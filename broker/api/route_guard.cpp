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

// The caller's tenant (docs/tenancy.md): the token's claim when the token carries one (a
// header that differs is refused), else the header. With a claim configured, a token without
// the claim may name its tenant by the header only when it has admin (`header_allowed`).
// A header that is no valid tenant name is refused with 400 naming what is wrong.
domain::tenant_scope tenant_of(const broker_context& ctx, const http::request_context& rc,
                               const std::optional<std::string>& claimed, bool header_allowed) {
    const std::string& header = ctx.config.tenancy_header;
    const auto field = rc.req.find(header);
    std::optional<std::string> named;
    if (field != rc.req.end()) named = std::string(field->value());
    std::string tenant;
    if (claimed) {
        if (auto problem = domain::tenant_name_problem(*claimed); !problem.empty())
            throw api_error(error_code::forbidden, "the token's tenant claim " + problem);
        if (named && *named != *claimed)
            throw api_error(error_code::forbidden, "tenant header " + header + " differs from the token's tenant");
        tenant = *claimed;
    } else {
        if (!ctx.config.auth.tenant_claim.empty() && !header_allowed)
            throw api_error(error_code::forbidden,
                            "the token names no tenant (claim " + ctx.config.auth.tenant_claim + ")");
        if (!named) throw bad_request("missing tenant header " + header);
        if (auto problem = domain::tenant_name_problem(*named); !problem.empty())
            throw bad_request("tenant header " + header + " " + problem);
        tenant = std::move(*named);
    }
    const bool is_default = tenant == ctx.config.tenancy_default;
    return domain::tenant_scope(std::move(tenant), is_default);
}

// Takes one request from the tenant's bucket (QUEEN_TENANT_RATE_LIMIT_PER_SECOND), or
// refuses it with 429 and Retry-After.
void admit_tenant_rate(broker_context& ctx, const domain::tenant_scope& tenant) {
    if (!ctx.tenant_rate_limiter.enabled() || !tenant.tenancy_on()) return;
    if (const int wait = ctx.tenant_rate_limiter.take(tenant.tenant()); wait > 0)
        throw api_error(error_code::too_many_requests,
                        "tenant request rate limit exceeded; retry after " + std::to_string(wait) + " s", wait);
}

}  // namespace

boost::asio::awaitable<void> admit(broker_context& ctx, const route_spec& r, http::request_context& rc) {
    const std::string_view target = rc.req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    if (r.access == access_level::anyone) co_return;
    const bool tenancy = !ctx.config.tenancy_header.empty();
    // With tenancy on, an operator route (every tenant's data) needs admin even on a skipped path.
    const bool operator_route = tenancy && r.tenancy == tenancy_rule::operator_;
    if (ctx.auth.enabled() && (!ctx.auth.skips(path) || operator_route)) {
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
        if (!who.may(r.access) || (operator_route && !rc.caller_admin))
            throw refusal(auth::auth_failure{auth::failure_kind::insufficient_level, {}});
        // A tenant's admin is admin inside its tenant only; operator routes serve every tenant.
        if (operator_route && who.tenant_claimed)
            throw api_error(error_code::forbidden,
                            "this route serves every tenant: it needs an admin token without the "
                            "tenant claim " +
                                ctx.config.auth.tenant_claim);
        if (who.tenant_claimed && !who.tenant)
            throw api_error(error_code::forbidden,
                            "the token's tenant claim " + ctx.config.auth.tenant_claim + " is not a string");
        if (tenancy && r.tenancy == tenancy_rule::tenant) rc.tenant = tenant_of(ctx, rc, who.tenant, rc.caller_admin);
    } else {
        rc.caller_admin = !ctx.auth.enabled();
        admit_rate(ctx, "address ", rc.client.address());
        if (tenancy && r.tenancy == tenancy_rule::tenant) rc.tenant = tenant_of(ctx, rc, std::nullopt, true);
    }
    admit_tenant_rate(ctx, rc.tenant);
}

}  // namespace queen::api
