#pragma once
// Typed reads of an environment map that remember which variable set each value: a setting
// may have several names (QUEEN_* first, then a Queen deployment's), and the first one set
// wins. Bad values throw std::invalid_argument naming the variable.
#include <initializer_list>
#include <map>
#include <optional>
#include <string>

namespace queen::config {

using env_map = std::map<std::string, std::string>;

// The first of `names` set (non-empty) in `env`: its name and value.
struct env_value {
    std::string name;
    std::string value;
};
std::optional<env_value> first_set(const env_map& env, std::initializer_list<const char*> names);

class env_reader {
public:
    // Records into `sources` (label -> variable) for every value read.
    env_reader(const env_map& env, std::map<std::string, std::string>& sources) : env_(env), sources_(sources) {}

    std::optional<std::string> text(const char* label, std::initializer_list<const char*> names);
    // An integer in [min, max].
    std::optional<long long> number(const char* label, std::initializer_list<const char*> names, long long min,
                                    long long max);
    // 1/true/on/yes or 0/false/off/no.
    std::optional<bool> boolean(const char* label, std::initializer_list<const char*> names);

    const env_map& env() const noexcept { return env_; }
    void note(const std::string& label, const std::string& source) { sources_[label] = source; }

private:
    const env_map& env_;
    std::map<std::string, std::string>& sources_;
};

long long parse_number(const std::string& key, const std::string& value, long long min, long long max);
bool parse_bool(const std::string& key, const std::string& value);

}  // namespace queen::config
