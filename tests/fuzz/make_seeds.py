#!/usr/bin/env python3
"""Writes the generated part of the fuzz seed corpus (too large to commit): deep nesting,
long strings, many items and huge numbers as push bodies, and raw segments whose stored
payloads are deep or long, for the pop answer renderer.
    python3 tests/fuzz/make_seeds.py OUT_DIR      (writes OUT_DIR/push, segment, token and header)
Every seed stays under run-fuzz.sh's -max_len."""
import base64
import json
import os
import struct
import sys


def push(payloads):
    items = ",".join('{"queue":"q","partition":"p%d","payload":%s}' % (i % 7, p) for i, p in enumerate(payloads))
    return '{"items":[%s]}' % items


def segment(payloads):
    frames = b""
    for i, p in enumerate(payloads):
        txid = ("tx-%d" % i).encode()
        body = struct.pack(">qH", 1767225600000000 + i, len(txid)) + txid + b"\x00" + struct.pack(">H", 0xFFFF)
        body += struct.pack(">I", len(p)) + p
        frames += struct.pack(">I", len(body)) + body
    return b"QSEG" + bytes([1, 0]) + b"\x00\x00" + struct.pack(">II", len(payloads), len(frames)) + frames


def main(out):
    deep = {
        "deep-arrays-1000": "[" * 1000 + "]" * 1000,
        "deep-arrays-1001": "[" * 1001 + "]" * 1001,
        "deep-arrays-100k": "[" * 100000 + "]" * 100000,
        "deep-objects-30k": '{"a":' * 30000 + "1" + "}" * 30000,
        "deep-mixed-unclosed": '[{"k":' * 60000,
    }
    push_seeds = {name: push([text]) for name, text in deep.items()}
    push_seeds["long-string-512k"] = push([json.dumps("x" * 524288)])
    push_seeds["long-key-64k"] = push(['{%s:1}' % json.dumps("k" * 65536)])
    push_seeds["many-items-5000"] = push(['{"n":%d}' % i for i in range(5000)])
    push_seeds["huge-numbers"] = push(["1e308", "1e309", "-1e-400", "123456789012345678901234567890",
                                       "0." + "9" * 20000, "1" * 20000])
    push_seeds["nul-then-junk"] = push(["1"]) + "\x00" + push(["2"])
    push_seeds["escapes"] = push(['"\\u0000"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"\\\\ud800"'])
    segment_seeds = {
        "stored-deep-100k": segment([b"[" * 100000 + b"]" * 100000]),
        "stored-deep-and-plain": segment([b'{"a":1}', b"[" * 20000 + b"]" * 20000, b'"\\u0000"']),
        "stored-long-string": segment([json.dumps("y" * 300000).encode()]),
        "stored-many-frames": segment([b"%d" % i for i in range(3000)]),
        "stored-nul-after-value": segment([b'"y"\x00"z"', b"[1]"]),
    }
    b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    token_seeds = {
        "deep-header": "Bearer " + b64(b'{"alg":' + b"[" * 5000 + b"]" * 5000 + b"}") + ".e30.",
        "deep-claims": b64(b'{"alg":"HS256"}') + "." + b64(b"[" * 5000) + ".AAAA",
        "long-token-20k": "Bearer " + "a" * 10000 + "." + "b" * 10000 + ".c",
        "many-dots": "." * 1000,
        "deep-jwks": '{"keys":' + "[" * 50000 + "]" * 50000 + "}",
    }
    request = lambda target, fields: "GET %s HTTP/1.1\r\n%s\r\n" % (target, "".join(f + "\r\n" for f in fields))
    header_seeds = {
        "many-fields-40": request("/health", ["X-%d: v" % i for i in range(40)]),
        "long-field-4k": request("/health", ["X-Long: " + "a" * 4096]),
        "just-under-2k": request("/" + "p" * 1990, []),
        "long-query": request("/api/v1/pop/queue/q?" + "&".join("k%d=%%zz%d" % (i, i) for i in range(200)), []),
        "percent-escapes": request("/api/v1/pop/queue/%41%2f%00%ff/partition/%", ["Host: x"]),
    }
    for sub, seeds in (("push", push_seeds), ("segment", segment_seeds), ("token", token_seeds),
                       ("header", header_seeds)):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(out, sub, name), "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)


if __name__ == "__main__":
    main(sys.argv[1])
