#include "render/record_writer.hpp"

namespace queen::render {

namespace {

std::vector<std::string_view> split_path(std::string_view name) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        auto dot = name.find('.', start);
        parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) return parts;
        start = dot + 1;
    }
}

// A SQL number's text is valid JSON unless it is NaN or ±Infinity.
bool finite_number_text(std::string_view t) {
    return !t.empty() && t.find_first_of("aAnN") == std::string_view::npos;
}

void write_value(json_writer& out, db::value_kind kind, const std::optional<std::string>& v) {
    if (!v) {
        out.value(nullptr);
        return;
    }
    switch (kind) {
        case db::value_kind::integer:
        case db::value_kind::number:
            if (finite_number_text(*v))
                out.raw(*v);
            else
                out.value(nullptr);
            return;
        case db::value_kind::boolean:
            out.value(*v == "t" || *v == "true");
            return;
        case db::value_kind::text:
            out.value(*v);
            return;
    }
}

}  // namespace

void write_members(json_writer& out, const db::record_set& records, std::size_t row, std::string_view prefix) {
    std::vector<std::string_view> open;  // the nested objects now open, outermost first
    for (std::size_t c = 0; c < records.columns.size(); ++c) {
        std::string_view name = records.columns[c];
        if (!name.starts_with(prefix)) continue;
        const auto parts = split_path(name.substr(prefix.size()));
        const std::size_t depth = parts.size() - 1;
        std::size_t common = 0;
        while (common < open.size() && common < depth && open[common] == parts[common]) ++common;
        while (open.size() > common) {
            out.end_object();
            open.pop_back();
        }
        for (std::size_t i = common; i < depth; ++i) {
            out.dynamic_key(parts[i]).begin_object();
            open.push_back(parts[i]);
        }
        out.dynamic_key(parts.back());
        write_value(out, records.kinds[c], records.rows[row][c]);
    }
    for (std::size_t i = 0; i < open.size(); ++i) out.end_object();
}

void write_record(json_writer& out, const db::record_set& records, std::size_t row, std::string_view prefix) {
    out.begin_object();
    write_members(out, records, row, prefix);
    out.end_object();
}

void write_member(json_writer& out, const db::record_set& records, std::size_t row, std::string_view column) {
    const std::size_t c = records.column(column);
    out.dynamic_key(column);
    write_value(out, records.kinds[c], records.rows[row][c]);
}

void write_records(json_writer& out, const db::record_set& records) {
    out.begin_array();
    for (std::size_t r = 0; r < records.size(); ++r) write_record(out, records, r);
    out.end_array();
}

}  // namespace queen::render
