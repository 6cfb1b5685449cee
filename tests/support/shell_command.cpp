#include "shell_command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace queen::test {

shell_result run_shell(const std::string& command) {
    std::unique_ptr<FILE, decltype(&::pclose)> pipe(::popen(command.c_str(), "r"), &::pclose);
    if (!pipe) throw std::runtime_error("cannot run: " + command);
    shell_result r;
    std::array<char, 4096> chunk{};
    std::size_t n = 0;
    while ((n = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0) r.out.append(chunk.data(), n);
    const int status = ::pclose(pipe.release());
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

}  // namespace queen::test
