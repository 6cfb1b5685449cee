#pragma once
// The dashboard's built files (web/dist) embedded at build time (cmake/embed_web.cmake):
// index.html and everything under assets/, looked up by their path relative to web/dist.
#include <span>
#include <string_view>

namespace queen::web {

struct web_file {
    std::string_view path;  // "index.html", "assets/app-3F2A.js"
    std::string_view etag;  // a quoted strong validator from the file's SHA-256
    std::string_view body;
};

// Every embedded file, sorted by path.
std::span<const web_file> embedded_web_files();

// The embedded file at `path` (relative to web/dist), or nullptr.
const web_file* find_web_file(std::string_view path) noexcept;

// The Content-Type for a file name, from its extension; application/octet-stream when unknown.
std::string_view content_type_of(std::string_view path) noexcept;

}  // namespace queen::web
