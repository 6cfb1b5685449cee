#pragma once
// Inside the store layer only: the six parallel arrays in which queen.ack and
// queen.transaction take acknowledgements.
#include "db/pg_array.hpp"
#include "store/acks_store.hpp"

namespace queen::store::detail {

struct ack_arrays {
    db::pg_array_builder partition_ids, transaction_ids, offsets, lease_ids, statuses, errors;

    void add(const ack_request& a) {
        partition_ids.add(a.partition_id);
        transaction_ids.add(a.transaction_id);
        if (a.offset)
            offsets.add(*a.offset);
        else
            offsets.add_null();
        if (a.lease_id)
            lease_ids.add(*a.lease_id);
        else
            lease_ids.add_null();
        statuses.add(std::string_view(a.status));
        if (a.error)
            errors.add(*a.error);
        else
            errors.add_null();
    }
};

}  // namespace queen::store::detail
