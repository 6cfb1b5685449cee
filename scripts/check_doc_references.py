#!/usr/bin/env python3
"""The docs stand on their own (docs/README.md): no tracked file points at a document outside
the repository (the team's contract files API.md, API-OPERATOR.md, DESIGN.md, CLIENTS.md,
STYLE.md, or anything under ../shared/), and every `docs/<page>.md` a file names exists. The
frozen fixture tests/fixtures/ is exempt, and so is this script, which names what it looks
for. Prints each violation with file:line and exits 1 when there is one.
    python3 scripts/check_doc_references.py [REPO_ROOT]
    python3 scripts/check_doc_references.py --self-test   (the rule catches what it must)"""
import pathlib
import re
import subprocess
import sys

OUTSIDE = re.compile(r"\.\./shared/|(?<![\w/-])(?:API|API-OPERATOR|DESIGN|CLIENTS|STYLE)\.md\b")
DOC_PAGE = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)\b")
EXEMPT = ("tests/fixtures/", "scripts/check_doc_references.py")  # the frozen fixture; this check itself
TEXT_SUFFIXES = {".md", ".cpp", ".hpp", ".c", ".h", ".sql", ".out", ".py", ".sh", ".mjs", ".js", ".txt",
                 ".cmake", ".spec", ".awk", ""}


def files(root):
    """The repository's tracked files, or every file when it is no git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
        return [root / line for line in out.stdout.splitlines()]
    except (subprocess.CalledProcessError, FileNotFoundError):
        return [p for p in root.rglob("*") if p.is_file()]


def main(root):
    root = pathlib.Path(root)
    problems = []
    for path in files(root):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(EXEMPT) or path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        if rel.startswith("web/dist/") or path.name in ("package-lock.json",):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if m := OUTSIDE.search(line):
                problems.append(f"{rel}:{number}: names {m.group(0)}, which is not in the repository")
            for page in DOC_PAGE.findall(line):
                if not (root / "docs" / page).exists():
                    problems.append(f"{rel}:{number}: names docs/{page}, which does not exist")
    for p in problems:
        print(p)
    print(f"check-docs: {len(problems)} reference(s) to documents the repository does not hold")
    return 1 if problems else 0


def self_test():
    """Plants each kind of violation in a scratch tree and checks that each is reported."""
    import contextlib
    import io
    import tempfile
    cases = {
        "broker/a.cpp": "// the window of API-OPERATOR.md, \"Time windows\"",
        "docs/b.md": "The design is `../shared/DESIGN.md`.",
        "sql/c.sql": "-- as API.md spells it",
        "tests/d.cpp": "// see docs/no-such-page.md",
    }
    allowed = {
        "docs/README.md": "Read docs/http-api.md first.",
        "docs/http-api.md": "The HTTP API.",
        "tests/fixtures/old.sql": "-- API.md, frozen",
        "broker/e.cpp": "// my_API.md_parser and docs/http-api.md",
    }
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for rel, text in {**cases, **allowed}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text + "\n")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(root)
        report = out.getvalue()
    missed = [rel for rel in cases if f"{rel}:" not in report]
    wrong = [rel for rel in allowed if f"{rel}:" in report]
    if status != 1 or missed or wrong:
        print(f"check-docs self-test FAILED: missed {missed}, wrongly reported {wrong}\n{report}")
        return 1
    print("check-docs self-test: every planted reference reported, nothing else")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent))
