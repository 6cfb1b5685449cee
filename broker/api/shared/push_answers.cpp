#include "api/shared/push_answers.hpp"

#include "domain/message_id.hpp"
#include "render/json_writer.hpp"

namespace queen::api {
namespace {

// {"index":i,"transaction_id":"…"  — the start every answer shares.
void open_answer(render::json_writer& out, std::size_t i, const domain::push_item& item) {
    out.begin_object().field("index", i).field("transaction_id", item.transaction_id);
}

// ,"queueName":"…"}  — the end every answer shares.
void close_answer(render::json_writer& out, const domain::push_item& item, const domain::tenant_scope& scope) {
    out.field("queueName", scope.local(item.queue)).end_object();
}

}  // namespace

std::string render_push_answers(const std::vector<domain::push_item>& items,
                                const std::vector<domain::push_outcome>& outcomes, const domain::tenant_scope& scope) {
    render::json_writer out;
    out.begin_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& o = outcomes[i];
        open_answer(out, i, items[i]);
        out.field("status", o.queued ? "queued" : "duplicate")
            .field("message_id", domain::message_id(o.partition_id, o.offset));
        if (o.queued) {
            out.field("partition_id", std::to_string(o.partition_id))
                .field("offset", o.offset)
                .field("trace_id", items[i].trace_id);
        }
        close_answer(out, items[i], scope);
    }
    return out.end_array().take();
}

std::string render_buffered_answers(const std::vector<domain::push_item>& items, const domain::tenant_scope& scope) {
    render::json_writer out;
    out.begin_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
        open_answer(out, i, items[i]);
        out.field("status", "buffered").field("message_id", nullptr).field("trace_id", items[i].trace_id);
        close_answer(out, items[i], scope);
    }
    return out.end_array().take();
}

}  // namespace queen::api
