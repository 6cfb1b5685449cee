#include "store/metrics_store.hpp"

#include <charconv>

namespace queen::store {

namespace {

std::optional<std::string> optional_string(const db::pg_result& res, int row, int col) {
    auto v = res.opt_text(row, col);
    if (!v) return std::nullopt;
    return std::string(*v);
}

}  // namespace

boost::asio::awaitable<std::vector<metrics_sample>> metrics_scrape(db::pg_pool& pool) {
    auto res = co_await pool.exec(
        "SELECT family, queue, consumer_group, label, label_value, value::text "
        "FROM queen.metrics_scrape()",
        {}, db::result_format::text);
    std::vector<metrics_sample> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) {
        metrics_sample s;
        s.family = std::string(res.text(r, 0));
        s.queue = optional_string(res, r, 1);
        s.consumer_group = optional_string(res, r, 2);
        s.label = optional_string(res, r, 3);
        s.label_value = optional_string(res, r, 4);
        const auto text = res.text(r, 5);
        std::from_chars(text.data(), text.data() + text.size(), s.value);
        out.push_back(std::move(s));
    }
    co_return out;
}

}  // namespace queen::store
