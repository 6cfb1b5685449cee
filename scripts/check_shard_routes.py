#!/usr/bin/env python3
"""Every queen.* function the broker calls has a route on a shard proxy (docs/scaling.md):
a proxy row in sql/operations.json (the catalogue the proxy's functions are generated from),
unless the catalogue marks it "direct" (called on a shard database's own connection); and no
proxy function is described twice. Prints each missing or doubled function and exits 1 when
there is one.
    python3 scripts/check_shard_routes.py [ROOT]
    python3 scripts/check_shard_routes.py --self-test   (the rule catches what it must)"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_operations import broker_calls  # noqa: E402  (the one scan of the broker's queen.* calls)


def called(root):
    """The bare names of the queen.* functions the broker calls (broker/schema/ aside)."""
    return {name.split(".", 1)[1] for name in broker_calls(pathlib.Path(root))}


def routes(catalogue):
    """The proxy functions the catalogue describes (a name twice when described twice), and the
    operations it marks direct (bare names)."""
    described = [row["function"] for op in catalogue["operations"] for row in op.get("proxy", [])]
    direct = {op["function"].split(".", 1)[1] for op in catalogue["operations"] if op.get("direct")}
    return described, direct


def problems(called_names, described, direct):
    out = []
    seen = set()
    for name in described:
        if name in seen:
            out.append(f"{name} is described twice")
        seen.add(name)
    for name in sorted(called_names - direct):
        if f"queen.{name}" not in seen:
            out.append(f"queen.{name} is called by the broker but has no proxy route in sql/operations.json")
    return out


def self_test():
    def op(name, *rows, direct=None):
        o = {"function": name, "proxy": [{"function": r, "route": "custom"} for r in rows]}
        if direct:
            o["direct"] = direct
        return o

    described, direct = routes({"operations": [op("queen.push", "queen.push"), op("queen.pop", "queen.pop"),
                                               op("queen.pop_fused", "queen.pop"),
                                               op("queen.run_housekeeping", direct="on each shard")]})
    found = problems({"push", "ack", "run_housekeeping"}, described, direct)
    assert any("queen.ack is called" in p for p in found), found
    assert any("queen.pop is described twice" in p for p in found), found
    assert not any("run_housekeeping" in p for p in found), found
    assert not problems({"push"}, *routes({"operations": [op("queen.push", "queen.push")]}))
    print("check-shard-routes self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    described, direct = routes(json.loads((root / "sql/operations.json").read_text()))
    found = problems(called(root), described, direct)
    for p in found:
        print(p)
    print(f"check-shard-routes: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
