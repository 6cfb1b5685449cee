// The 400 text for a request the parser refused: ours, naming the part, never Beast's message.
#include "http/request_errors.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include <gtest/gtest.h>

namespace queen {
namespace {

namespace bhttp = boost::beast::http;

TEST(MalformedRequestText, NamesThePartThatIsWrong) {
    EXPECT_EQ(http::malformed_request_text(bhttp::error::bad_value), "malformed HTTP request: bad header field value");
    EXPECT_EQ(http::malformed_request_text(bhttp::error::bad_version), "malformed HTTP request: bad HTTP version");
    EXPECT_EQ(http::malformed_request_text(bhttp::error::bad_obs_fold),
              "malformed HTTP request: obsolete header line folding");
}

TEST(MalformedRequestText, AnythingElseGetsTheGenericText) {
    EXPECT_EQ(http::malformed_request_text(bhttp::error::stale_parser), "malformed HTTP request");
    EXPECT_EQ(http::malformed_request_text(boost::asio::error::connection_reset), "malformed HTTP request");
}

}  // namespace
}  // namespace queen
