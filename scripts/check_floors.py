#!/usr/bin/env python3
"""The floors rule (docs/architecture.md, the table after `<!-- floors: read by scripts/check_floors.py -->`):
the broker's C++ sources include each other only downward. Each unit of that table (a folder or file
under broker/, the longest entry that holds a source) has a floor; a quoted `#include "a/b.hpp"` that
crosses units must name a strictly lower floor. Also reported: a source in no unit, an include of a
broker path that does not exist, a table entry that names no path, a unit listed twice. Prints each
violation with file:line and exits 1 when there is one.
    python3 scripts/check_floors.py [REPO_ROOT]
    python3 scripts/check_floors.py --self-test   (the rule catches what it must)"""
import pathlib
import re
import sys

MARKER = "<!-- floors: read by scripts/check_floors.py -->"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]*/[^"]*)"')
SOURCES = (".cpp", ".hpp", ".h")
DOC = "docs/architecture.md"


def read_table(text, problems):
    """{unit: floor} from the table after MARKER in text; appends what is wrong with it to problems."""
    lines = text.splitlines()
    if MARKER not in (line.strip() for line in lines):
        problems.append(f"{DOC}: no floors table (no line {MARKER})")
        return {}
    start = [line.strip() for line in lines].index(MARKER) + 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    floors = {}
    number = start + 2  # the header and the |---| line come first
    while number < len(lines) and lines[number].lstrip().startswith("|"):
        cells = [c.strip() for c in lines[number].strip().strip("|").split("|")]
        number += 1
        if not cells[0].isdigit() or len(cells) < 2:
            problems.append(f"{DOC}:{number}: a floors row needs a floor number and its units")
            continue
        for unit in re.findall(r"`([^`]+)`", cells[1]):
            unit = unit.strip().strip("/")
            if unit in floors:
                problems.append(f"{DOC}:{number}: {unit} is listed twice (floors {floors[unit]} and {cells[0]})")
            floors[unit] = int(cells[0])
    return floors


def unit_of(rel, floors):
    """The longest table entry equal to rel or a folder holding it, or None."""
    held = [u for u in floors if rel == u or rel.startswith(u + "/")]
    return max(held, key=len) if held else None


def main(root):
    """Checks the repository at root; prints the violations or one summary line; returns the exit code."""
    root = pathlib.Path(root)
    broker, problems = root / "broker", []
    floors = read_table((root / DOC).read_text(encoding="utf-8"), problems)
    if not floors:  # nothing below can be judged without the table
        print("\n".join(problems or [f"{DOC}: the floors table lists no units"]))
        return 1
    problems += [f"{DOC}: the floors table names {u}, which is not under broker/"
                 for u in floors if not (broker / u).exists()]
    tops = {p.name for p in broker.iterdir()}
    sources = sorted(p for p in broker.rglob("*") if p.suffix in SOURCES and p.is_file())
    includes, unplaced = 0, set()
    for path in sources:
        rel = path.relative_to(broker).as_posix()
        unit = unit_of(rel, floors)
        if unit is None:
            folder = path.parent.relative_to(broker).as_posix()
            what = f"folder {folder}" if folder != "." else f"file {rel}"
            if what not in unplaced:  # once per folder, naming its first file
                problems.append(f"broker/{rel}: {what} has no floor in {DOC}")
            unplaced.add(what)
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1).split("/")[0] not in tops:
                continue  # no include of ours: another library's header
            includes += 1
            target, where = m.group(1), f"broker/{rel}:{number}: includes \"{m.group(1)}\""
            other = unit_of(target, floors)
            if not (broker / target).is_file():
                problems.append(f"{where}, which is not under broker/ (unknown include)")
            elif other is None:
                problems.append(f"{where}, whose folder has no floor in {DOC}")
            elif other != unit and floors[other] >= floors[unit]:
                problems.append(f"{where} (floor {floors[other]}, {other}) from floor {floors[unit]} ({unit}): "
                                "a folder may include only lower floors")
    for p in problems:
        print(p)
    if problems:
        print(f"check_floors: {len(problems)} violation(s) of the floors in {DOC}")
        return 1
    print(f"check_floors: {len(sources)} files, {includes} includes, {len(set(floors.values()))} floors: ok")
    return 0


def self_test():
    """Builds a scratch repository per case and checks that each case passes or fails as it must."""
    import contextlib
    import io
    import tempfile
    rows = ["| 1 | `util` | none |", "| 2 | `api/shared`, `store` | values |", "| 3 | `api` | routes |", "| 4 | `main.cpp` | entry |"]
    base = {
        "util/strings.hpp": "#pragma once\n#include <string>",
        "util/strings.cpp": '#include "util/strings.hpp"\n#include "queen_segment.h"',
        "store/db.hpp": '#include "util/strings.hpp"\n#include "pqxx/pqxx.h"',
        "api/shared/reply.hpp": '#include "util/strings.hpp"',
        "api/routes.hpp": '#include "api/shared/reply.hpp"\n#include "store/db.hpp"',
        "main.cpp": '#include "api/routes.hpp"\n#include <vector>',
    }
    cases = [  # (name, files to add or replace, table rows, the text the report must hold, or None to pass)
        ("clean tree", {}, rows, None),
        ("upward include", {"util/strings.cpp": '#include "util/strings.hpp"\n#include "store/db.hpp"'}, rows,
         'broker/util/strings.cpp:2: includes "store/db.hpp" (floor 2, store) from floor 1 (util)'),
        ("same floor, two units", {"store/db.cpp": '#include "api/shared/reply.hpp"'}, rows,
         'broker/store/db.cpp:1: includes "api/shared/reply.hpp" (floor 2, api/shared) from floor 2 (store)'),
        ("include inside one unit", {"store/db.cpp": '#include "store/db.hpp"'}, rows, None),
        ("folder missing from table", {"cache/lru.cpp": '#include "util/strings.hpp"'}, rows,
         "broker/cache/lru.cpp: folder cache has no floor"),
        ("nested unit, longest entry", {"api/shared/reply.hpp": '#include "api/routes.hpp"'}, rows,
         'broker/api/shared/reply.hpp:1: includes "api/routes.hpp" (floor 3, api) from floor 2 (api/shared)'),
        ("table entry for a missing folder", {}, rows + ["| 5 | `metrics` | gone |"], "names metrics"),
        ("unknown include", {"main.cpp": '#include "store/nope.hpp"'}, rows, 'includes "store/nope.hpp"'),
        ("unit listed twice", {}, rows + ["| 5 | `util` | again |"], "util is listed twice"),
    ]
    failed = []
    for name, files, table, expect in cases:
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            doc = ["# Architecture", "", MARKER, "| Floor | Folders | What |", "|---|---|---|", *table, ""]
            for rel, text in {DOC: "\n".join(doc), **{"broker/" + k: v for k, v in {**base, **files}.items()}}.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text + "\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = main(root)
            if (status, expect is None or expect in out.getvalue()) != (0 if expect is None else 1, True):
                failed.append(f"{name}: exit {status}, wanted {expect or 'a pass'}\n{out.getvalue()}")
    if failed:
        print("check_floors self-test FAILED:\n" + "\n".join(failed))
        return 1
    print("check_floors self-test: ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent))
