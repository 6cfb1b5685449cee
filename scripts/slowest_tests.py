#!/usr/bin/env python3
"""The slowest GoogleTest tests of a make test run, from its suite logs.

    python3 scripts/slowest_tests.py N LOG...

Reads each suite log, takes GoogleTest's own timing of each finished test
("[       OK ] Suite.Name (1234 ms)", and the same for FAILED), and prints the N slowest, one
per line: seconds, the suite (the log's name) it ran in, the test. A test run in several passes
(stock, queen_ext, sharded) appears once per pass. --self-test checks the parsing.
"""
import pathlib
import re
import sys

LINE = re.compile(r"^\[ +(?:OK|FAILED) +\] (\S+) \((\d+) ms\)$")


def timings(text):
    """(milliseconds, test) for every finished test in one log's text."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line.rstrip())
        if m:
            out.append((int(m.group(2)), m.group(1)))
    return out


def slowest(logs, n):
    rows = []
    for log in map(pathlib.Path, logs):
        if not log.exists():
            continue
        for ms, test in timings(log.read_text(errors="replace")):
            rows.append((ms, log.stem, test))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return rows[:n]


def self_test():
    text = "\n".join([
        "[ RUN      ] A.B",
        "[       OK ] A.B (1500 ms)",
        "[  FAILED  ] C.D (20 ms)",
        "[  FAILED  ] 1 test, listed below:",
        "[       OK ] A.B (1500 ms) trailing",
        "[----------] 2 tests from A (1520 ms total)",
    ])
    assert timings(text) == [(1500, "A.B"), (20, "C.D")], timings(text)
    print("slowest_tests: self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    if len(sys.argv) < 2 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    for ms, log, test in slowest(sys.argv[2:], int(sys.argv[1])):
        print(f"{ms / 1000:8.1f} s  {log:<22} {test}")


if __name__ == "__main__":
    main()
