#!/usr/bin/env python3
"""Point the code's references to the founding DESIGN.md at docs/design.md.

    python3 tools/point-at-design.py            # rewrite, then check
    python3 tools/point-at-design.py --dry-run  # show the diff, write nothing
    python3 tools/point-at-design.py --check    # only check the citations

The founding design document (DESIGN.md) is not in the repository; the
project's own design is docs/design.md. This script rewrites, in every *.rs
and *.md file of the repository (target/, .git/, node_modules/ and
docs/design.md itself excepted):

- a few known phrasings, so that each reads well and names the section of
  docs/design.md it means (see CONTEXTUAL below);
- `DESIGN.md "X"` -> `docs/design.md "Y"`, Y = SECTIONS[X] (X may be wrapped
  over a comment line break, as in `DESIGN.md "Benchmark\n//! protocol"`;
  a name that does not change keeps its line break);
- `docs/design.md "X"` -> `docs/design.md "Y"` when X is an old name;
- any other `DESIGN.md` -> `docs/design.md`.

It is idempotent: a second run finds no DESIGN.md and changes nothing. Then it
checks that every `docs/design.md "Y"` cited anywhere names a heading of
docs/design.md (a leading "1." or "5a." numbering of a heading is optional)
and exits 1 if one does not. Files are read and written as UTF-8 with their
line endings kept. Python 3.8+, standard library only.
"""

import argparse
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN = os.path.join(ROOT, "docs", "design.md")
SKIP_DIRS = {"target", ".git", "node_modules"}
EXTENSIONS = (".rs", ".md")

# Old section names (DESIGN.md's headings and the names the code used for
# them) -> headings of docs/design.md.
SECTIONS = {
    "Users and their three doors": "Purpose and users",
    "Purpose and users": "Purpose and users",
    "Layout": "Layout",
    "Layout (Cargo workspace)": "Layout",
    "Conventions": "Conventions",
    "mirror rule": "Mirror rule",
    "Mirror rule": "Mirror rule",
    "Seams": "Seams",
    "Parity": "Parity",
    "Determinism": "Determinism",
    "File formats": "File formats",
    "Limits": "Limits",
    "Bake pipeline": "Bake pipeline",
    "Baked GLB": "Baked GLB",
    "Metrics": "Metrics",
    "boundary_velocity_jump": "Metrics",
    "Benchmark protocol": "Benchmark protocol",
    "separated": "Benchmark protocol",
    "Infeasibility": "Infeasibility",
    "Runtime": "Runtime",
}

# Whitespace between two words of a phrase: spaces, or a line break followed
# by the next line's indentation and comment marker (`//`, `///`, `//!`, `*`).
SEP = r"(?:[ \t]*\r?\n[ \t]*(?:(?://[/!]?|\*)[ \t]*)?|[ \t]+)"

# Known phrasings, rewritten first: (regex, replacement). Groups keep the
# original whitespace and line breaks.
CONTEXTUAL = [
    # edit.rs, compose.rs, model.rs: `(DESIGN.md mirror rule)`.
    (rf"DESIGN\.md({SEP})mirror({SEP})rule", r'docs/design.md\1"Mirror\2rule"'),
    # runtime/src/world.rs: `against the mirror rule\n/// (DESIGN.md): across the edge`.
    (r"\(DESIGN\.md\):", r'(docs/design.md "Mirror rule"):'),
    # runtime/src/seam.rs: `(DESIGN.md `boundary_velocity_jump`)`.
    (rf"DESIGN\.md({SEP})`boundary_velocity_jump`", r'docs/design.md "Metrics",\1`boundary_velocity_jump`'),
    # src/model.rs: `in the patch frame (as DESIGN.md states)`.
    (rf"\(as({SEP})DESIGN\.md({SEP})states\)", r'(docs/design.md "Velocity frames")'),
    # src/collision/infeasibility.rs: `DESIGN.md's\n/// criterion `|p₁ − p₂| + …``.
    (rf"DESIGN\.md's({SEP})criterion", r'The point\1criterion (docs/design.md "Infeasibility")'),
    # src/collision/infeasibility.rs: `proven: DESIGN.md's\n/// 1.5 m/s at the default …`.
    (rf"DESIGN\.md's({SEP})1\.5 m/s", r'the 1.5 m/s of\1docs/design.md "Infeasibility"'),
    # tests/bench.rs: `/// DESIGN.md's sufficient criterion `…``.
    (rf"DESIGN\.md's({SEP})sufficient({SEP})criterion",
     r'The\1sufficient\2point criterion (docs/design.md "Infeasibility")'),
    # tests/bench.rs: `every\n/// patch DESIGN.md calls infeasible`.
    (rf"DESIGN\.md({SEP})calls({SEP})infeasible", r'docs/design.md "Infeasibility"\1calls\2infeasible'),
    # tests/bench.rs: `// Every pair keeps the DESIGN.md separation, and …`.
    (rf"the({SEP})DESIGN\.md({SEP})separation", r'the\1separation of docs/design.md "Benchmark protocol"'),
    # src/bench.rs: `… ≥ 4r` (DESIGN.md), and they are not`.
    (rf"\(DESIGN\.md\),({SEP})and({SEP})they", r'(docs/design.md "Benchmark protocol"),\1and\2they'),
    # src/compose.rs: `(Δt periodic; DESIGN.md "separated" benchmark variant)`.
    (rf'DESIGN\.md({SEP})"separated"({SEP})benchmark({SEP})variant',
     r'the *separated* variant\1of docs/design.md "Benchmark protocol"'),
    # README.md (now docs/benchmarks.md): `(DESIGN.md's 56%\ncounts the points alone)`.
    (rf"\(DESIGN\.md's({SEP})56%({SEP})counts",
     r'(the 56% of docs/design.md\1"Benchmark protocol"\2counts'),
]

# A quoted section name, possibly wrapped once over a comment line break.
NAME = r'[^"\n]+?(?:\r?\n[ \t]*(?:(?://[/!]?|\*)[ \t]*)?[^"\n]+?)?'
QUOTED = re.compile(rf'(DESIGN\.md|docs/design\.md)({SEP})"({NAME})"')
POSSESSIVE = re.compile(r"(?<![\w/])DESIGN\.md's")
BARE = re.compile(r"(?<![\w/])DESIGN\.md")
CITATION = re.compile(rf'docs/design\.md({SEP})"({NAME})"')


def normalise(name):
    """A section name with its line breaks and comment markers collapsed."""
    return re.sub(SEP, " ", name).strip()


def rewrite(text, warnings, where):
    """The text with every DESIGN.md reference pointed at docs/design.md."""
    for pattern, replacement in CONTEXTUAL:
        text = re.sub(pattern, replacement, text)

    def quoted(m):
        doc, sep, raw = m.group(1), m.group(2), m.group(3)
        old = normalise(raw)
        new = SECTIONS.get(old)
        if new is None:
            if doc == "DESIGN.md":
                warnings.append(f"{where}: DESIGN.md \"{old}\" has no mapping; kept the name")
            return f'docs/design.md{sep}"{raw}"'
        if new == old:
            return f'docs/design.md{sep}"{raw}"'
        return f'docs/design.md{sep}"{new}"'

    text = QUOTED.sub(quoted, text)
    text = POSSESSIVE.sub("docs/design.md's", text)
    text = BARE.sub("docs/design.md", text)
    return text


def files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(EXTENSIONS) and os.path.abspath(path) != DESIGN:
                yield path


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def headings():
    """The heading titles of docs/design.md, with and without numbering."""
    names = set()
    for line in read(DESIGN).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            title = m.group(1)
            names.add(title)
            names.add(re.sub(r"^\d+[a-z]?\.\s+", "", title))
    return names


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    ap.add_argument("--check", action="store_true", help="only check the citations")
    args = ap.parse_args()
    if not os.path.isfile(DESIGN):
        sys.exit(f"{DESIGN} is missing")

    warnings = []
    changed = 0
    texts = {}
    for path in files():
        rel = os.path.relpath(path, ROOT)
        old = read(path)
        new = old if args.check else rewrite(old, warnings, rel)
        texts[rel] = new
        if new == old:
            continue
        changed += 1
        n = old.count("DESIGN.md")
        if args.dry_run:
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
                )
            )
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(new)
            print(f"{rel}: {n} reference(s) rewritten")
        for i, line in enumerate(new.splitlines(), 1):
            if "docs/design.md" in line and rel.endswith(".rs") and len(line) > 120:
                warnings.append(f"{rel}:{i}: line longer than 120 characters ({len(line)})")

    known = headings()
    missing = []
    left = []
    for rel, text in sorted(texts.items()):
        for m in CITATION.finditer(text):
            name = normalise(m.group(2))
            if name not in known:
                missing.append(f'{rel}:{line_of(text, m.start())}: docs/design.md "{name}" is not a heading')
        for m in BARE.finditer(text):
            left.append(f"{rel}:{line_of(text, m.start())}: DESIGN.md is still cited")

    verb = "would change" if args.dry_run else "changed"
    if not args.check:
        print(f"{verb} {changed} file(s)", file=sys.stderr)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    for m in missing:
        print(f"error: {m}", file=sys.stderr)
    if args.check or args.dry_run:
        for m in left:
            print(f"note: {m}", file=sys.stderr)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
