#include "api/delivery/pop_answer.hpp"

#include "domain/message_id.hpp"

namespace queen::api {

void write_pop_message(render::json_writer& out, const pop_message_scope& scope, std::int64_t offset,
                       const segment::frame_view& f, std::string_view data) {
    out.begin_object()
        .field("id", domain::message_id(scope.partition_id, offset))
        .field("transactionId", f.transaction_id)
        .key("traceId");
    if (f.trace_id)
        out.value(segment::uuid_to_string(*f.trace_id));
    else
        out.value(nullptr);
    out.raw_field("data", data)
        .field("createdAt", domain::iso_time(f.created_at_us))
        .field("offset", offset)
        .field("partitionId", std::to_string(scope.partition_id))
        .field("partition", scope.partition)
        .field("leaseId", scope.lease_id)
        .field("consumerGroup", scope.consumer_group)
        .field("producerSub", f.producer_sub)
        .end_object();
}

}  // namespace queen::api
