// Reading a Prometheus text exposition (GET /metrics/prometheus) in integration tests.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace queen::test {

using labels = std::map<std::string, std::string>;

struct sample {
    std::string name;
    labels label;
    double value = 0;
};

// The samples of a text exposition (comments skipped); label values hold no quote here.
inline std::vector<sample> parse_exposition(const std::string& text) {
    std::vector<sample> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        sample s;
        auto brace = line.find('{');
        auto space = line.rfind(' ');
        if (brace != std::string::npos && brace < space) {
            s.name = line.substr(0, brace);
            auto close = line.find('}', brace);
            std::string body = line.substr(brace + 1, close - brace - 1);
            std::size_t pos = 0;
            while (pos < body.size()) {
                auto eq = body.find('=', pos);
                auto q1 = body.find('"', eq);
                auto q2 = body.find('"', q1 + 1);
                s.label[body.substr(pos, eq - pos)] = body.substr(q1 + 1, q2 - q1 - 1);
                pos = q2 + 2;  // past the quote and the comma
            }
        } else {
            s.name = line.substr(0, space);
        }
        s.value = std::stod(line.substr(space + 1));
        out.push_back(std::move(s));
    }
    return out;
}

// The value of the one sample with this name and exactly these labels; nullopt when absent.
inline std::optional<double> value_of(const std::vector<sample>& samples, const std::string& name, const labels& l) {
    for (const auto& s : samples)
        if (s.name == name && s.label == l) return s.value;
    return std::nullopt;
}

}  // namespace queen::test
