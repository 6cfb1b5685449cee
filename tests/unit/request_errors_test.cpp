// The 400 texts for a request the broker cannot frame or the parser refused: ours, naming the
// part, never Beast's message.
#include "http/message_framing.hpp"
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

namespace queen::http {
namespace {

// A request header with these Transfer-Encoding values (and a Content-Length when length >= 0).
bhttp::request_header<> framed(std::vector<std::string> codings, unsigned version = 11, long length = -1) {
    bhttp::request_header<> h;
    h.version(version);
    for (const auto& c : codings) h.insert(bhttp::field::transfer_encoding, c);
    if (length >= 0) h.set(bhttp::field::content_length, std::to_string(length));
    return h;
}

TEST(MessageFraming, OnlyOneFinalChunkedInHttp11IsFramed) {
    EXPECT_FALSE(framing_refusal(framed({})));
    EXPECT_FALSE(framing_refusal(framed({}, 10, 5)));
    EXPECT_FALSE(framing_refusal(framed({"chunked"})));
    EXPECT_FALSE(framing_refusal(framed({" Chunked ;x=1"})));
    EXPECT_EQ(framing_refusal(framed({"gzip"})), "Transfer-Encoding gzip is not supported (only chunked)");
    EXPECT_EQ(framing_refusal(framed({"gzip, chunked"})), "Transfer-Encoding gzip is not supported (only chunked)");
    EXPECT_EQ(framing_refusal(framed({"chunked", "chunked"})), "Transfer-Encoding must be chunked, once");
    EXPECT_EQ(framing_refusal(framed({""})), "Transfer-Encoding must be chunked, once");
    EXPECT_EQ(framing_refusal(framed({"chunked"}, 10)), "Transfer-Encoding is not allowed in an HTTP/1.0 request");
    EXPECT_EQ(framing_refusal(framed({"identity"}, 11, 4)),
              "a request may not carry both Transfer-Encoding and Content-Length");
}

}  // namespace
}  // namespace queen::http
