// `queen`'s arguments (broker/app/command_line.hpp): only no argument serves; `shards`,
// `--help` and `--version` are recognised; anything else is a usage error.
#include "app/command_line.hpp"

#include <gtest/gtest.h>

namespace queen {
namespace {

using app::command_kind;

TEST(CommandLine, OnlyNoArgumentServes) {
    EXPECT_EQ(app::parse_command_line({}).kind, command_kind::serve);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--port", "1"}, {"serve"}, {"-v"}, {""}}) {
        const auto cmd = app::parse_command_line(args);
        EXPECT_EQ(cmd.kind, command_kind::usage_error) << args.front();
        EXPECT_NE(cmd.problem.find("unknown argument '" + args.front() + "'"), std::string::npos) << cmd.problem;
    }
}

TEST(CommandLine, HelpVersionAndShardsAreRecognised) {
    EXPECT_EQ(app::parse_command_line({"--help"}).kind, command_kind::help);
    EXPECT_EQ(app::parse_command_line({"-h"}).kind, command_kind::help);
    EXPECT_EQ(app::parse_command_line({"--version"}).kind, command_kind::version);
    EXPECT_EQ(app::parse_command_line({"--version", "x"}).kind, command_kind::usage_error);
    const auto shards = app::parse_command_line({"shards", "status", "--proxy", "u"});
    EXPECT_EQ(shards.kind, command_kind::shards);
    EXPECT_EQ(shards.rest, (std::vector<std::string>{"status", "--proxy", "u"}));
    EXPECT_NE(app::usage_text().find("queen shards move"), std::string::npos);
    EXPECT_EQ(app::version_text().rfind(std::string("queen ") + QUEEN_VERSION + "\n", 0), 0u) << app::version_text();
    EXPECT_NE(app::version_text().find("schema version "), std::string::npos);
}

}  // namespace
}  // namespace queen
