#include "api/pop_answer.hpp"

#include "api/json_text.hpp"
#include "core/message_id.hpp"

namespace queen::api {

void append_pop_message(std::string& out, const pop_message_scope& scope, std::int64_t offset,
                        const segment::frame_view& f, std::string_view data) {
    out += "{\"id\":\"" + core::message_id(scope.partition_id, offset) + "\",\"transactionId\":";
    append_json_string(out, f.transaction_id);
    out += ",\"traceId\":";
    if (f.trace_id) append_json_string(out, segment::uuid_to_string(*f.trace_id));
    else out += "null";
    out += ",\"data\":";
    out += data;
    out += ",\"createdAt\":\"" + core::iso_time(f.created_at_us) + "\"";
    out += ",\"offset\":" + std::to_string(offset);
    out += ",\"partitionId\":\"" + std::to_string(scope.partition_id) + "\",\"partition\":";
    append_json_string(out, scope.partition);
    out += ",\"leaseId\":";
    append_json_string(out, scope.lease_id);
    out += ",\"consumerGroup\":";
    append_json_string(out, scope.consumer_group);
    out += ",\"producerSub\":";
    if (f.producer_sub) append_json_string(out, *f.producer_sub);
    else out += "null";
    out += '}';
}

}  // namespace queen::api
