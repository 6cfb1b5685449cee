#!/usr/bin/env python3
"""Every queen.* function the broker calls has a route on a shard proxy (docs/scaling.md):
a row in sql/shards/02_generator.sql's queen_proxy.api_routes (the one description the
proxy's functions are generated from), and no function there is described twice. Prints each
missing or doubled function and exits 1 when there is one.
    python3 scripts/check_shard_routes.py [ROOT]
    python3 scripts/check_shard_routes.py --self-test   (the rule catches what it must)"""
import pathlib
import re
import sys

CALL = re.compile(r"\bqueen\.([a-z_0-9]+)\s*\(")
ROUTE = re.compile(r"\(\s*'(queen(?:_proxy)?\.[a-z_0-9]+)'\s*,\s*'([a-z_]+)'")
# Called on a shard's own connection, never through the proxy: the housekeeping each broker
# runs on every shard database (docs/scaling.md, "Where state lives"); and the proxy's own
# queen.shard_databases (sql/shards/00_cluster.sql).
DIRECT = {"run_housekeeping", "raise_claim_floors", "shard_databases"}
# Files that talk to a database as a whole, not through the proxy: the migrator,
# `queen shards init`, and `queen shards move` (its calls run on each shard database and on
# each proxy by name).
SKIPPED = {"schema/migrator.cpp", "schema/shard_proxy_installer.cpp", "store/shard_move_store.cpp"}


def called(broker_dir):
    names = set()
    for path in sorted(pathlib.Path(broker_dir).rglob("*.cpp")):
        if path.relative_to(broker_dir).as_posix() in SKIPPED:
            continue
        code = re.sub(r"//[^\n]*", "", path.read_text())
        names.update(m.group(1) for m in CALL.finditer(code))
    return names


def routes(generator_text):
    return [m.group(1) for m in ROUTE.finditer(generator_text)]


def problems(called_names, described):
    out = []
    seen = set()
    for name in described:
        if name in seen:
            out.append(f"{name} is described twice")
        seen.add(name)
    for name in sorted(called_names - DIRECT):
        if f"queen.{name}" not in seen:
            out.append(f"queen.{name} is called by the broker but has no route in sql/shards/02_generator.sql")
    return out


def self_test():
    described = routes("('queen.push', 'custom', NULL, NULL), ('queen.pop', 'first', NULL, NULL), "
                       "('queen.pop', 'refuse', NULL, NULL)")
    found = problems({"push", "ack"}, described)
    assert any("queen.ack is called" in p for p in found), found
    assert any("queen.pop is described twice" in p for p in found), found
    assert not problems({"push"}, routes("('queen.push', 'custom', NULL, NULL)"))
    print("check-shard-routes self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    described = routes((root / "sql/shards/02_generator.sql").read_text())
    found = problems(called(root / "broker"), described)
    for p in found:
        print(p)
    print(f"check-shard-routes: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
