#!/usr/bin/env python3
"""The store-layer rule (docs/architecture.md, "Processes and layers"), checked on the broker's source:
SQL text lives only in broker/store/, and every statement there calls queen.* functions
(SELECT, never a table) or queen.* procedures (CALL), or is one of the kinds allowed elsewhere,
each kept in one place:
  broker/schema/migrator.cpp   the schema migrator (any statement, its advisory lock)
  broker/schema/shard_proxy_installer.cpp   `queen shards init` (any statement: the shards' and proxy's DDL)
  broker/db/pg_listener.cpp    LISTEN / UNLISTEN
  broker/db/pg_pool.cpp, broker/db/pg_connection.cpp   session SET and transaction control
and in broker/store/ the election's advisory locks. Adjacent string literals are joined
before they are read. Prints each violation with file:line and exits 1 when there is one.
    python3 scripts/check_sql_placement.py [BROKER_DIR]
    python3 scripts/check_sql_placement.py --self-test   (the rule catches what it must)"""
import pathlib
import re
import sys

KEYWORDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "LISTEN", "UNLISTEN", "NOTIFY", "SET", "RESET",
            "BEGIN", "COMMIT", "ROLLBACK", "CREATE", "DROP", "ALTER", "TRUNCATE", "COPY", "CALL", "DO", "VACUUM",
            "ANALYZE", "LOCK", "PREPARE", "EXECUTE", "DECLARE", "FETCH", "GRANT", "REVOKE")
STATEMENT = re.compile(r"^\s*(%s)\b" % "|".join(KEYWORDS))
TRANSACTION = re.compile(r"^\s*(BEGIN|COMMIT|ROLLBACK|SET|RESET)\b")
ADVISORY = re.compile(r"^\s*SELECT\s+pg_(try_)?advisory_(un)?lock\(")
PROCEDURE_CALL = re.compile(r"^\s*CALL\s+queen\.\w+\s*\([^;]*\)\s*$")
ALLOWED_ELSEWHERE = {
    "schema/migrator.cpp": re.compile(r"."),
    "schema/shard_proxy_installer.cpp": re.compile(r"."),
    "db/pg_listener.cpp": re.compile(r"^\s*(UN)?LISTEN\b"),
    "db/pg_pool.cpp": TRANSACTION,
    "db/pg_connection.cpp": TRANSACTION,
}
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def statements(text):
    """(line, joined literal) for each run of adjacent string literals outside comments."""
    code = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), text)
    code = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code, flags=re.S)
    out, run, start, end = [], [], None, None
    for m in LITERAL.finditer(code):
        if run and code[end:m.start()].strip() == "":
            run.append(m.group(1))
        else:
            if run:
                out.append((start, "".join(run)))
            run, start = [m.group(1)], code.count("\n", 0, m.start()) + 1
        end = m.end()
    if run:
        out.append((start, "".join(run)))
    return out


def store_violation(sql):
    if TRANSACTION.match(sql) or ADVISORY.match(sql) or PROCEDURE_CALL.match(sql):
        return None
    if not sql.lstrip().startswith("SELECT"):
        return "only SELECT calls of queen.* functions (and CALL of queen.* procedures) belong in the store"
    names = re.findall(r"\b(\w+)\.(\w+)\s*(\()?", sql)
    called = [n for n in names if n[0] == "queen" and n[2]]
    if not called:
        return "calls no queen.* function"
    tables = [f"{s}.{t}" for s, t, paren in names if s in ("queen", "pg_catalog") and not paren]
    if tables:
        return "reads " + ", ".join(tables) + " directly"
    return None


def main(root):
    root = pathlib.Path(root)
    problems = []
    for path in sorted(list(root.rglob("*.cpp")) + list(root.rglob("*.hpp"))):
        rel = path.relative_to(root).as_posix()
        for line, sql in statements(path.read_text(encoding="utf-8")):
            if not STATEMENT.match(sql):
                continue
            if rel.startswith("store/"):
                why = store_violation(sql)
            elif rel in ALLOWED_ELSEWHERE:
                why = None if ALLOWED_ELSEWHERE[rel].match(sql) else "not a kind allowed in this file"
            else:
                why = "SQL outside broker/store/"
            if why:
                problems.append(f"{root.name}/{rel}:{line}: {why}: {sql[:90]}")
    for p in problems:
        print(p)
    print(f"check-sql: {len(problems)} statement(s) break the store-layer rule")
    return 1 if problems else 0


def self_test():
    """Plants one violation of each kind in a scratch tree and checks that each is reported."""
    import tempfile
    cases = {
        "api/handler.cpp": 'auto r = pool.exec("SELECT queen.pop($1)");',
        "store/reads_table.cpp": 'pool.exec("SELECT id FROM queen.queues WHERE name = $1");',
        "store/not_a_call.cpp": 'pool.exec("UPDATE queen.log_consumers SET committed = 1");',
        "store/split.cpp": 'pool.exec("SELECT a, b "\n          "FROM queen.log_segments s");',
        "db/pg_listener.cpp": 'conn.exec("SELECT queen.notify_brokers($1)");',
        "store/calls_other.cpp": 'conn.exec("CALL public.compact()");',
    }
    allowed = {
        "store/ok.cpp": 'pool.exec("SELECT a FROM queen.f($1) LEFT JOIN LATERAL queen.g($2) ON true");',
        "store/procedure.cpp": 'conn.exec("CALL queen.raise_claim_floors()");',
        "db/pg_pool.cpp": 'conn.exec("ROLLBACK");',
        "api/message.cpp": 'throw bad_request("set the queue first"); // SELECT in a comment',
    }
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d) / "broker"
        for rel, text in {**cases, **allowed}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text + "\n")
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(root)
        report = out.getvalue()
    missed = [rel for rel in cases if f"broker/{rel}:" not in report]
    wrong = [rel for rel in allowed if f"broker/{rel}:" in report]
    if status != 1 or missed or wrong:
        print(f"check-sql self-test FAILED: missed {missed}, wrongly reported {wrong}\n{report}")
        return 1
    print(f"check-sql self-test: {len(cases)} planted violations found, {len(allowed)} allowed statements passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "broker"))
