#pragma once
// A one-shot result that one coroutine awaits and another party completes, from any thread.
// The awaiting coroutine resumes on its own executor. (Boost 1.74 has no channels or
// any_completion_handler, so the handler is kept behind a shared_ptr.)
#include <utility>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <functional>
#include <memory>

namespace queen::util {

template <typename T>
using completer = std::function<void(std::exception_ptr, T)>;

// Calls register_fn with a completer and suspends until it is called once; returns the
// value or rethrows the exception given to it.
template <typename T>
boost::asio::awaitable<T> await_completion(std::function<void(completer<T>)> register_fn) {
    return boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(std::exception_ptr, T)>(
        [register_fn = std::move(register_fn)](auto handler) mutable {
            using handler_t = decltype(handler);
            auto shared = std::make_shared<handler_t>(std::move(handler));
            register_fn([shared](std::exception_ptr e, T value) {
                auto executor = boost::asio::get_associated_executor(*shared);
                boost::asio::post(executor,
                                  [shared, e, value = std::move(value)]() mutable { (*shared)(e, std::move(value)); });
            });
        },
        boost::asio::use_awaitable);
}

}  // namespace queen::util
