#!/usr/bin/env python3
"""The operation catalogue (sql/operations.json) names every body of every database operation,
and only bodies that exist (sql/README.md, "The operation catalogue"). Without a database:
- every queen.* function the broker's C++ calls (broker/schema/ aside) and every one
  docs/sql-api.md documents is an operation of the catalogue;
- an operation's store callers are exactly the broker files that call it, each holding the
  C++ function named;
- its stock body, shard part, C twin (declared in the extension's script, called by the stock
  body), differential suite and hand-written proxy bodies exist where it says;
- its variants are operations; every repeated-by-design pair names files that exist and the
  test holding them together;
- an error text raised in two files of sql/procedures, sql/shards and ext/ is a repeat by
  design the catalogue lists, with its test;
- docs/architecture.md's store table lists exactly the catalogue's store callers;
- the segment frame limits SQL reads (queen.segment_max_*_bytes in
  sql/procedures/10_codec.sql) are the ones codec/queen_segment.h defines for C.
Prints each problem and exits 1 when there is one.
    python3 scripts/check_operations.py [ROOT]
    python3 scripts/check_operations.py --store-table [ROOT]   (prints the store table)
    python3 scripts/check_operations.py --self-test   (the rules catch what they must)"""
import json
import pathlib
import re
import sys

CALL = re.compile(r"\bqueen\.([a-z_0-9]+)\s*\(")
DOCUMENTED = re.compile(r"\bqueen\.([a-z_0-9]+)\(")
# The migrator and `queen shards init` talk to a database as a whole (they apply the schema).
SKIPPED_DIRS = ("schema/",)
EXTENSION_SCRIPT = "ext/queen_ext--1.4.sql"
REQUIRED = ("function", "does", "routes", "store", "sql_api", "stock", "variants", "c_twin", "shard_part", "proxy")


def code_of(text):
    """C++ text without // comments (a comment may name a function it does not call)."""
    return re.sub(r"//[^\n]*", "", text)


def creations(text, function):
    """How many times SQL text creates the schema-qualified function or procedure."""
    return len(re.findall(r"CREATE (OR REPLACE )?(FUNCTION|PROCEDURE) %s\s*\(" % re.escape(function), text))


def creates(text, function):
    """Whether SQL text creates the schema-qualified function or procedure."""
    return creations(text, function) > 0


def broker_calls(root):
    """{function name: {broker file (relative to the root): code}} for every queen.* call."""
    out = {}
    broker = root / "broker"
    for path in sorted(broker.rglob("*.cpp")):
        rel = path.relative_to(broker).as_posix()
        if rel.startswith(SKIPPED_DIRS):
            continue
        code = code_of(path.read_text())
        for m in CALL.finditer(code):
            out.setdefault("queen." + m.group(1), {})[path.relative_to(root).as_posix()] = code
    return out


def problems(root, catalogue, calls, documented):
    """Every way the catalogue and the code disagree, as sentences."""
    out = []

    def read(rel):
        path = root / rel
        return path.read_text() if path.is_file() else None

    ops = catalogue.get("operations", [])
    names = [op.get("function") for op in ops]
    seen = set()
    for name in names:
        if name in seen:
            out.append(f"{name} is an operation twice")
        seen.add(name)
    for name in sorted(set(calls) - seen):
        out.append(f"{name} is called by {', '.join(sorted(calls[name]))} but is not in sql/operations.json")
    for name in sorted(documented - seen):
        out.append(f"{name} is documented in docs/sql-api.md but is not in sql/operations.json")
    proxy_functions = set()
    for op in ops:
        name = op.get("function", "?")
        missing = [k for k in REQUIRED if k not in op]
        if missing:
            out.append(f"{name}: no {', '.join(missing)}")
            continue
        stock = read(op["stock"])
        if stock is None or not creates(stock, name):
            out.append(f"{name}: its stock body is not in {op['stock']}")
        listed = {s["file"] for s in op["store"]}
        callers = calls.get(name, {})
        for f in sorted(set(callers) - listed):
            out.append(f"{name}: {f} calls it but is not among its store callers")
        for s in op["store"]:
            code = code_of(read(s["file"]) or "")
            if s["file"] not in callers:
                out.append(f"{name}: {s['file']} is listed as a store caller but does not call it")
            if s["function"].split("::")[-1] not in code:
                out.append(f"{name}: {s['file']} has no function {s['function']}")
        if op["sql_api"] and name not in documented:
            out.append(f"{name}: marked sql_api but docs/sql-api.md does not document it")
        for v in op["variants"]:
            if v not in seen:
                out.append(f"{name}: its variant {v} is not an operation")
        twin = op["c_twin"]
        if twin:
            c_file = read(twin["file"])
            c_name = twin["function"].split(".")[-1]
            if c_file is None or c_name not in c_file:
                out.append(f"{name}: its C twin {twin['function']} is not in {twin['file']}")
            declared = creations(read(EXTENSION_SCRIPT) or "", twin["function"])
            if declared == 0:
                out.append(f"{name}: {EXTENSION_SCRIPT} does not declare its C twin {twin['function']}")
            elif declared > 1:
                out.append(f"{name}: {EXTENSION_SCRIPT} declares its C twin {twin['function']} {declared} times: "
                           "the stock body finds it by name (sql/README.md)")
            if stock is not None and twin["function"] not in stock:
                out.append(f"{name}: its stock body in {op['stock']} never calls {twin['function']}")
            if read(twin["differential"]) is None:
                out.append(f"{name}: its C twin's differential suite {twin['differential']} does not exist")
        part = op["shard_part"]
        if part and not creates(read(part["file"]) or "", part["function"]):
            out.append(f"{name}: its shard part {part['function']} is not in {part['file']}")
        if not op["proxy"] and not op.get("direct") and callers:
            out.append(f"{name}: the broker calls it but it has no proxy route (or \"direct\" saying why)")
        for row in op["proxy"]:
            f = row.get("function", "?")
            if f in proxy_functions:
                out.append(f"{f}: routed twice on the proxy")
            proxy_functions.add(f)
            if row.get("route") == "custom":
                if not row.get("file") or not creates(read(row["file"]) or "", f):
                    out.append(f"{name}: its hand-written proxy body {f} is not in {row.get('file')}")
            elif "file" in row:
                out.append(f"{name}: the generated proxy function {f} names a file")
    for pair in catalogue.get("repeated_by_design", []):
        for rel in pair.get("bodies", []) + [pair.get("held_by") or "(none)"]:
            if read(rel) is None:
                out.append(f"repeated by design, {pair.get('what')}: {rel} does not exist")
    return out


STORE_TABLE_HEADER = "| store file | its functions → the `queen.*` functions they call |"
STORE_PAIR = re.compile(r"`([^`]+)` → `(queen\.[a-z_0-9]+)`")


def store_pairs(catalogue):
    """{store file under broker/: {(C++ function, queen.* function)}} from the catalogue."""
    out = {}
    for op in catalogue.get("operations", []):
        for s in op.get("store", []):
            out.setdefault(s["file"].removeprefix("broker/"), set()).add((s["function"], op["function"]))
    return out


def store_table(catalogue):
    """docs/architecture.md's store table, made from the catalogue."""
    lines = [STORE_TABLE_HEADER, "|---|---|"]
    for f, pairs in sorted(store_pairs(catalogue).items()):
        lines.append(f"| `{f}` | " + ", ".join(f"`{cpp}` → `{sql}`" for cpp, sql in sorted(pairs)) + " |")
    return "\n".join(lines)


def store_table_problems(doc, catalogue):
    """Every difference between the store table in `doc` and the catalogue's store callers."""
    if STORE_TABLE_HEADER not in doc:
        return ["docs/architecture.md has no store table (" + STORE_TABLE_HEADER + ")"]
    listed = {}
    for line in doc.split(STORE_TABLE_HEADER, 1)[1].splitlines()[2:]:
        if not line.startswith("| `"):
            break
        f, cell = line.split("|")[1:3]
        listed[f.strip().strip("`")] = set(STORE_PAIR.findall(cell))
    expected = store_pairs(catalogue)
    if listed == expected:
        return []
    return ["docs/architecture.md's store table differs from sql/operations.json "
            "(python3 scripts/check_operations.py --store-table prints it)"]


SQL_RAISE = re.compile(r"RAISE EXCEPTION\s+'((?:[^']|'')*)'")
C_RAISE = re.compile(r'(?:errmsg|push_bad_argument|ext_bad_argument)\("((?:[^"\\]|\\.)*)"')


def raised_texts(root):
    """{error text: {files raising it}} over sql/procedures, sql/shards and ext/*.c."""
    out = {}
    for pattern, regex in (("sql/procedures/*.sql", SQL_RAISE), ("sql/shards/*.sql", SQL_RAISE), ("ext/*.c", C_RAISE)):
        for path in sorted(root.glob(pattern)):
            for m in regex.finditer(path.read_text()):
                out.setdefault(m.group(1).replace("''", "'"), set()).add(path.relative_to(root).as_posix())
    return out


def repeat_problems(texts, catalogue):
    """Every error text raised in several files that no repeated-by-design pair covers."""
    pairs = [set(p.get("bodies", [])) for p in catalogue.get("repeated_by_design", [])]
    return [f"the error text {text!r} is written in {', '.join(sorted(files))}: define it once, or list the "
            "repeat under repeated_by_design with its test"
            for text, files in sorted(texts.items()) if len(files) > 1 and not any(files <= p for p in pairs)]


# The segment limits: (C macro in codec/queen_segment.h, SQL function in 10_codec.sql).
LIMITS = (("QSEG_MAX_TXID", "queen.segment_max_txid_bytes"), ("QSEG_MAX_PRODUCER", "queen.segment_max_producer_bytes"))


def limit_problems(header, codec_sql):
    """Every segment limit whose SQL value is not the C header's, as sentences."""
    out = []
    for macro, function in LIMITS:
        c = re.search(r"#define %s (\d+)" % macro, header)
        sql = re.search(r"FUNCTION %s\(\) RETURNS integer\s+LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT (\d+)'"
                        % re.escape(function), codec_sql)
        if not c or not sql or c.group(1) != sql.group(1):
            out.append(f"{function} ({sql.group(1) if sql else 'missing'}) is not {macro} "
                       f"({c.group(1) if c else 'missing'}) of codec/queen_segment.h")
    return out


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "broker/store").mkdir(parents=True)
        (root / "sql/procedures").mkdir(parents=True)
        (root / "sql/procedures/40_push.sql").write_text("CREATE OR REPLACE FUNCTION queen.push(a int)")
        (root / "broker/store/push_store.cpp").write_text(
            "void push_store::push() { q(\"SELECT queen.push($1)\"); }\n// queen.gone(\n")
        (root / "broker/store/ack_store.cpp").write_text("void ack() { q(\"SELECT queen.ack($1)\"); }")
        op = {"function": "queen.push", "does": "x", "routes": [], "sql_api": False,
              "store": [{"file": "broker/store/push_store.cpp", "function": "push_store::push"}],
              "stock": "sql/procedures/40_push.sql", "variants": [], "c_twin": None, "shard_part": None,
              "proxy": [{"function": "queen.push", "route": "custom", "file": "sql/procedures/40_push.sql"}]}
        calls = broker_calls(root)
        assert "queen.gone" not in calls, calls
        found = problems(root, {"operations": [op]}, calls, {"queen.api"})
        assert any("queen.ack is called by broker/store/ack_store.cpp" in p for p in found), found
        assert any("queen.api is documented" in p for p in found), found
        assert not [p for p in found if p.startswith("queen.push")], found
        bad = dict(op, stock="sql/procedures/41_none.sql", variants=["queen.pop"],
                   store=[{"file": "broker/store/ack_store.cpp", "function": "nothing"}],
                   shard_part={"function": "queen.push_part", "file": "sql/procedures/40_push.sql"},
                   c_twin={"function": "queen_ext.push", "file": "ext/push.c", "differential": "regress/x.sql"})
        found = problems(root, {"operations": [bad, dict(op)]}, calls, set())
        for expected in ("is an operation twice", "stock body is not in", "push_store.cpp calls it",
                         "ack_store.cpp is listed as a store caller but does not call it", "has no function nothing",
                         "variant queen.pop", "C twin queen_ext.push is not in", "differential suite",
                         "shard part queen.push_part", "routed twice"):
            assert any(expected in p for p in found), (expected, found)
    assert creations("CREATE FUNCTION queen_ext.push(a int); CREATE FUNCTION queen_ext.push(a text)",
                     "queen_ext.push") == 2
    sql = ("FUNCTION queen.segment_max_txid_bytes() RETURNS integer\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS "
           "'SELECT 255'; FUNCTION queen.segment_max_producer_bytes() RETURNS integer\nLANGUAGE sql IMMUTABLE "
           "PARALLEL SAFE AS 'SELECT 1024'")
    assert not limit_problems("#define QSEG_MAX_TXID 255\n#define QSEG_MAX_PRODUCER 1024", sql)
    found = limit_problems("#define QSEG_MAX_TXID 128\n#define QSEG_MAX_PRODUCER 1024", sql)
    assert len(found) == 1 and "segment_max_txid_bytes (255) is not QSEG_MAX_TXID (128)" in found[0], found
    texts = {"push: bad": {"sql/procedures/40_push.sql", "ext/push.c"}, "once": {"ext/push.c"}}
    assert len(repeat_problems(texts, {})) == 1
    assert not repeat_problems(texts, {"repeated_by_design": [{"bodies": ["ext/push.c", "sql/procedures/40_push.sql"]}]})
    cat = {"operations": [dict(op)]}
    doc = "x\n" + store_table(cat) + "\n\nmore"
    assert not store_table_problems(doc, cat), store_table_problems(doc, cat)
    assert store_table_problems(doc.replace("`queen.push`", "`queen.pop`"), cat)
    assert store_table_problems("no table", cat)
    print("check-operations self-test: ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    args = [a for a in sys.argv[1:] if a != "--store-table"]
    root = pathlib.Path(args[0] if args else ".")
    catalogue = json.loads((root / "sql/operations.json").read_text())
    if "--store-table" in sys.argv[1:]:
        print(store_table(catalogue))
        return 0
    documented = {"queen." + m.group(1) for m in DOCUMENTED.finditer((root / "docs/sql-api.md").read_text())}
    found = problems(root, catalogue, broker_calls(root), documented)
    found += limit_problems((root / "codec/queen_segment.h").read_text(),
                            (root / "sql/procedures/10_codec.sql").read_text())
    found += repeat_problems(raised_texts(root), catalogue)
    found += store_table_problems((root / "docs/architecture.md").read_text(), catalogue)
    for p in found:
        print(p)
    print(f"check-operations: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
