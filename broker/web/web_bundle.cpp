#include "web/web_bundle.hpp"

#include <utility>
#include <algorithm>
#include <array>

namespace queen::web {

const web_file* find_web_file(std::string_view path) noexcept {
    const auto files = embedded_web_files();
    const auto it = std::lower_bound(files.begin(), files.end(), path,
                                     [](const web_file& f, std::string_view p) { return f.path < p; });
    return it != files.end() && it->path == path ? &*it : nullptr;
}

std::string_view content_type_of(std::string_view path) noexcept {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> types{{
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".json", "application/json"},
        {".map", "application/json"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    }};
    for (const auto& [ext, type] : types) {
        if (path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext) return type;
    }
    return "application/octet-stream";
}

}  // namespace queen::web
