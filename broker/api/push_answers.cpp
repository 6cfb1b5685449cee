#include "api/push_answers.hpp"

#include "api/json_text.hpp"
#include "core/message_id.hpp"

namespace queen::api {
namespace {

// {"index":i,"transaction_id":"…"  — the start every answer shares.
void open_answer(std::string& out, std::size_t i, const core::push_item& item) {
    if (i) out += ',';
    out += "{\"index\":" + std::to_string(i) + ",\"transaction_id\":";
    append_json_string(out, item.transaction_id);
}

void append_trace(std::string& out, const core::push_item& item) {
    out += ",\"trace_id\":";
    if (item.trace_id) append_json_string(out, *item.trace_id);
    else out += "null";
}

// ,"queueName":"…"}  — the end every answer shares.
void close_answer(std::string& out, const core::push_item& item) {
    out += ",\"queueName\":";
    append_json_string(out, item.queue);
    out += '}';
}

}  // namespace

std::string render_push_answers(const std::vector<core::push_item>& items,
                                const std::vector<core::push_outcome>& outcomes) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& o = outcomes[i];
        open_answer(out, i, items[i]);
        out += o.queued ? ",\"status\":\"queued\"" : ",\"status\":\"duplicate\"";
        out += ",\"message_id\":\"" + core::message_id(o.partition_id, o.offset) + "\"";
        if (o.queued) {
            out += ",\"partition_id\":\"" + std::to_string(o.partition_id) + "\"";
            out += ",\"offset\":" + std::to_string(o.offset);
            append_trace(out, items[i]);
        }
        close_answer(out, items[i]);
    }
    return out + ']';
}

std::string render_buffered_answers(const std::vector<core::push_item>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        open_answer(out, i, items[i]);
        out += ",\"status\":\"buffered\",\"message_id\":null";
        append_trace(out, items[i]);
        close_answer(out, items[i]);
    }
    return out + ']';
}

}  // namespace queen::api
