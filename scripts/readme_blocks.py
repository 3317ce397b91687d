#!/usr/bin/env python3
"""Run every block of README.md as written, in order, as a reader would in one shell.

    scripts/readme_blocks.py [--data DIR] [--slow] [--python | --venv DIR] [--flower] [--keep]

What it does (issue #43, "every README block runs as written"):

* Reads the fenced blocks of README.md (```sh, ```python, ```rust; indented ones too) and runs
  them in README order in one bash process started in the repository, with `set -e -o pipefail`:
  the first command that exits non-zero fails the run, naming its block and README line.
* Data: the README's placeholder `/path/to/datasets` becomes a folder of small synthetic stand-ins
  with the real files' names and columns (written by this script: no real person's data), or
  `--data DIR` (e.g. the real files).
* Scratch: the README's `/tmp/dpfair-*` folders, the temporary folder (TMPDIR) and HOME (so the
  Flower block's `~/.flwr/config.toml` is a scratch one) all live in one scratch folder, removed at
  the end (`--keep` keeps it). Nothing else in the commands is changed.
* `dpfair` is taken off PATH first, so the README itself must put it there; DPFAIR_DATA_DIR is
  unset, so the README must set it where it needs it.
* Afterwards `git status --porcelain --ignored` (outside `target/` and `.venv/`) must be what it
  was before: the README's commands leave nothing in the working tree.

Blocks that build or download a lot run only when asked; the others are always run:

* `--slow`: `.ci/run` (the whole test suite) and the Rust library example (`csv_pipeline`, which
  the README's Rust block mirrors; without `--slow` only its `use` lines are checked against it).
* `--python`: the Python set-up (`python3 -m venv .venv && pip install ...`, a release build of
  the extension) and the Python quick start with that venv. `--venv DIR` instead uses an existing
  venv that has the `dpfair` package (e.g. `target/python-venv` after `.ci/python`): lines with
  `pip install` are skipped and the README's `$REPO/.venv` is DIR.
* `--flower`: the Flower block (needs `flwr`; with `--python` it is installed as the README says),
  run twice, as a reader might after a failure, then `~/.flwr/config.toml` must hold one
  `[superlink.mine]`.

Without those flags, the skipped blocks are still parsed (`bash -n`, Python's `compile`).
Exit status: 0 when every block run passed and the tree is unchanged, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PLACEHOLDER = "/path/to/datasets"
TOUR_TMP = "/tmp/dpfair-"
EXAMPLE = REPO / "crates" / "dpfair" / "examples" / "csv_pipeline.rs"


@dataclass
class Block:
    """One fenced block of the README."""

    lang: str
    line: int  # 1-based line of the opening fence
    heading: str
    text: str

    @property
    def kind(self) -> str:
        """What the block needs: fast, tests, python-install, flower, python, rust."""
        if self.lang == "python":
            return "python"
        if self.lang == "rust":
            return "rust"
        if "flower-superlink" in self.text:
            return "flower"
        if ".ci/run" in self.text:
            return "tests"
        if "pip install" in self.text:
            return "python-install"
        return "fast"

    def label(self) -> str:
        """Where the block is, for messages."""
        return f"README.md:{self.line} ({self.lang}, {self.heading})"


def blocks(readme: Path) -> list[Block]:
    """The fenced blocks, their indentation removed (a block inside a list item is indented)."""
    out: list[Block] = []
    heading, fence, body, start, lang = "", None, [], 0, ""
    for n, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None:
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
            m = re.match(r"^(\s*)```(\w*)\s*$", line)
            if m:
                fence, lang, start, body = m.group(1), m.group(2), n, []
        elif re.match(r"^\s*```\s*$", line):
            text = "\n".join(b.removeprefix(fence) for b in body)
            out.append(Block(lang or "text", start, heading, text + "\n"))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        raise SystemExit(f"README.md:{start}: a fence that is never closed")
    return out


# ---------------------------------------------------------------------------------------------
# Synthetic stand-ins for the data files the README names (same names, columns and formats).


def _write(path: Path, header: list[str] | None, rows: list[list[object]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        if header:
            f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


def _adult_raw(rng: random.Random, n: int, test: bool) -> str:
    """Rows in the UCI `adult.data` format: no header, `, ` separated, text columns, `?`."""
    work = ["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "?"]
    edu = [
        ("HS-grad", 9),
        ("Bachelors", 13),
        ("Some-college", 10),
        ("Masters", 14),
        ("11th", 7),
    ]
    marital = ["Never-married", "Married-civ-spouse", "Divorced"]
    occupation = ["Adm-clerical", "Exec-managerial", "Craft-repair", "Sales", "?"]
    relationship = ["Husband", "Wife", "Not-in-family", "Own-child"]
    race = ["White", "Black", "Asian-Pac-Islander", "Other"]
    lines = ["|1x3 Cross validator"] if test else []
    for _ in range(n):
        age = rng.randint(17, 90)
        e, num = rng.choice(edu)
        sex = rng.choice(["Male", "Female"])
        hours = max(1, min(99, int(rng.gauss(40, 12))))
        gain = rng.choice([0] * 9 + [rng.randint(1, 99999)])
        score = 0.08 * (num - 10) + 0.03 * (age - 38) / 5 + 0.02 * (hours - 40) / 5
        score += 0.25 * (sex == "Male") + rng.gauss(0, 0.35) + (gain > 5000)
        label = ">50K" if score > 0.45 else "<=50K"
        row = [
            age,
            rng.choice(work),
            rng.randint(20000, 900000),
            e,
            num,
            rng.choice(marital),
            rng.choice(occupation),
            rng.choice(relationship),
            rng.choice(race),
            sex,
            gain,
            rng.choice([0] * 19 + [rng.randint(1, 4356)]),
            hours,
            "United-States",
            label + ("." if test else ""),
        ]
        lines.append(", ".join(str(v) for v in row))
    return "\n".join(lines) + "\n"


def synthetic_data(folder: Path, seed: int = 43) -> None:
    """Small files named and shaped as the README's data files (a few thousand rows each)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for _ in range(4000):
        age, work, edu, s = (
            rng.randint(17, 90),
            rng.randint(0, 8),
            rng.randint(1, 16),
            rng.randint(0, 1),
        )
        p = 0.1 * (edu - 9) + 0.01 * (age - 38) + 0.3 * s + rng.gauss(0, 0.4)
        rows.append([age, work, edu, s, int(p > 0.3)])
    _write(
        folder / "fdpfair_adult.csv",
        ["Age", "Workclass", "Education-Num", "Sensitive", "Label"],
        rows,
    )
    rows = []
    for _ in range(4000):
        race = rng.choices(
            ["white", "black", "hisp", "asian", "other"], [70, 8, 7, 10, 5]
        )[0]
        lsat, ugpa = rng.randint(10, 48), round(rng.uniform(1, 4), 1)
        fam, full = rng.randint(1, 5), rng.randint(1, 2)
        z = (
            0.06 * (lsat - 36)
            + 0.5 * (ugpa - 3.2)
            + 0.3 * (race == "white")
            + rng.gauss(0, 0.8)
        )
        z = max(-4.0, min(4.0, z))
        gpa = max(0.0, min(4.0, round(3.2 + 0.3 * z + rng.gauss(0, 0.2), 1)))
        rows.append([race, lsat, ugpa, round(z, 2), full, fam, gpa])
    _write(
        folder / "law_bar_pass.csv",
        ["race1", "lsat", "ugpa", "zfygpa", "fulltime", "fam_inc", "gpa"],
        rows,
    )
    for name, n in [("lpct_diabetes_pub.csv", 200), ("lpct_diabetes_pri.csv", 2000)]:
        rows = []
        for _ in range(n):
            glucose, bmi, age = (
                rng.randint(60, 200),
                round(rng.uniform(18, 50), 1),
                rng.randint(21, 80),
            )
            y = int(0.03 * (glucose - 120) + 0.05 * (bmi - 32) + rng.gauss(0, 0.8) > 0)
            rows.append(
                [
                    y,
                    rng.randint(0, 12),
                    glucose,
                    rng.randint(40, 110),
                    rng.randint(0, 60),
                    rng.randint(0, 400),
                    bmi,
                    round(rng.uniform(0.08, 2.4), 3),
                    age,
                ]
            )
        _write(folder / name, None, rows)
    (folder / "adult.data").write_text(
        _adult_raw(rng, 4000, test=False), encoding="utf-8"
    )
    (folder / "adult.test").write_text(
        _adult_raw(rng, 2000, test=True), encoding="utf-8"
    )


# ---------------------------------------------------------------------------------------------


def tree_state() -> list[str]:
    """`git status --porcelain --ignored` outside the build folder and the README's venv."""
    # -z: paths as they are (no quotes around names with spaces, such as setuptools' files in
    # the venv), each entry ended by NUL.
    out = subprocess.run(
        ["git", "status", "--porcelain", "-z", "--ignored", "--untracked-files=all"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    skip = ("target/", ".venv/")
    return sorted(
        entry for entry in out.split("\0") if entry and not entry[3:].startswith(skip)
    )


def path_without_dpfair() -> str:
    """PATH without the folders that hold a `dpfair` executable: the README must add it."""
    keep = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not os.access(os.path.join(d, "dpfair"), os.X_OK)
    ]
    return os.pathsep.join(keep)


def prepare(block: Block, data: Path, scratch: Path, venv: Path | None) -> str:
    """The block's text with the documented substitutions only (module docs)."""
    text = block.text.replace(TOUR_TMP, f"{scratch}/tmp/dpfair-").replace(
        PLACEHOLDER, str(data)
    )
    if venv is not None:
        text = (
            "\n".join(line for line in text.splitlines() if "pip install" not in line)
            + "\n"
        )
        text = text.replace('"$REPO/.venv', f'"{venv}').replace(
            "$REPO/.venv", str(venv)
        )
    return text


def parse_check(block: Block) -> str | None:
    """None when the block parses (bash -n, Python compile), else the error."""
    if block.lang == "python":
        try:
            compile(block.text, block.label(), "exec")
        except SyntaxError as e:
            return str(e)
        return None
    if block.lang == "sh":
        r = subprocess.run(
            ["bash", "-n"],
            check=False,
            input=block.text,
            capture_output=True,
            text=True,
        )
        return r.stderr.strip() or None
    return None


def rust_block_matches_example(block: Block) -> str | None:
    """The README's Rust block is `csv_pipeline.rs` in short: its `use` lines must be there."""
    example = EXAMPLE.read_text(encoding="utf-8")
    missing = [
        line
        for line in block.text.splitlines()
        if line.startswith("use ") and line not in example
    ]
    return f"not in {EXAMPLE.relative_to(REPO)}: {missing}" if missing else None


def driver(steps: list[tuple[Block, str]], scratch: Path, python: str) -> str:
    """One bash script that runs the steps in order in one shell, as a reader would.

    The Flower block runs twice (as after a failure): it must still work, its config stay valid.
    """
    lines = [
        "set -eE -o pipefail",
        "trap 'echo \"readme_blocks: FAILED in $BLOCK at: $BASH_COMMAND\" >&2' ERR",
        # Whatever a failed block left running (the Flower block's servers) is stopped.
        "trap 'trap - ERR; jobs -p | xargs -r kill 2>/dev/null; true' EXIT",
        f"cd {sh(str(REPO))}",
    ]
    for i, (block, text) in enumerate(steps):
        path = (
            scratch / "blocks" / f"{i:02d}.{'py' if block.lang == 'python' else 'sh'}"
        )
        path.write_text(text, encoding="utf-8")
        runs = 2 if block.kind == "flower" else 1
        lines.append(f"BLOCK={sh(block.label())}")
        for r in range(runs):
            lines.append(f'echo "::: $BLOCK{" (again)" if r else ""}" >&2')
            lines.append("__t=$SECONDS")
            if block.lang == "python":
                lines.append(f"{sh(python)} {sh(str(path))}")
            else:
                lines.append(f"source {sh(str(path))}")
            lines.append('echo "::: done in $((SECONDS - __t)) s" >&2')
        if block.kind == "flower":
            lines.append(
                "test \"$(grep -c '^\\[superlink\\.mine\\]' ~/.flwr/config.toml)\" = 1 || "
                '{ echo "readme_blocks: ~/.flwr/config.toml has not exactly one '
                '[superlink.mine]" >&2; false; }'
            )
    return "\n".join(lines) + "\n"


def sh(s: str) -> str:
    """A single-quoted shell word."""
    return "'" + s.replace("'", "'\\''") + "'"


def main() -> int:
    """Parse, prepare the data and the scratch folder, run the blocks, check the tree."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data", type=Path, help="data folder instead of synthetic stand-ins"
    )
    ap.add_argument(
        "--slow", action="store_true", help="also .ci/run and the Rust example"
    )
    ap.add_argument(
        "--python", action="store_true", help="also the Python set-up and quick start"
    )
    ap.add_argument(
        "--venv", type=Path, help="an existing venv with dpfair, instead of --python's"
    )
    ap.add_argument(
        "--flower", action="store_true", help="also the Flower block, run twice"
    )
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument(
        "--list", action="store_true", help="list the blocks and what they need"
    )
    args = ap.parse_args()
    if args.python and args.venv:
        ap.error(
            "--python builds the README's .venv; --venv uses another: one or the other"
        )

    found = blocks(README)
    if args.list:
        for b in found:
            print(f"{b.kind:15} {b.label()}")
        return 0

    failures: list[str] = []
    for b in found:
        err = parse_check(b) or (
            rust_block_matches_example(b) if b.lang == "rust" else None
        )
        if err:
            failures.append(f"{b.label()}: {err}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1

    venv = args.venv.resolve() if args.venv else None
    wanted = {"fast"}
    if args.slow:
        wanted.add("tests")
    if args.python:
        wanted |= {"python-install", "python"}
    if venv is not None:
        wanted |= {"python"}
    if args.flower:
        wanted.add("flower")

    scratch = Path(tempfile.mkdtemp(prefix="readme-blocks-"))
    for d in ("blocks", "tmp", "home"):
        (scratch / d).mkdir()
    data = args.data.resolve() if args.data else scratch / "data"
    if args.data is None:
        synthetic_data(data)
    steps = [(b, prepare(b, data, scratch, venv)) for b in found if b.kind in wanted]
    skipped = [b for b in found if b.kind not in wanted and b.lang != "rust"]
    python = (
        str(venv / "bin" / "python") if venv else str(REPO / ".venv" / "bin" / "python")
    )
    script = driver(steps, scratch, python=python)
    (scratch / "driver.sh").write_text(script, encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if k not in ("DPFAIR_DATA_DIR", "REPO")}
    # cargo and rustup keep their homes when HOME moves to the scratch folder.
    home = Path.home()
    env.setdefault("CARGO_HOME", str(home / ".cargo"))
    env.setdefault("RUSTUP_HOME", str(home / ".rustup"))
    env.update(
        PATH=path_without_dpfair(),
        HOME=str(scratch / "home"),
        TMPDIR=str(scratch / "tmp"),
    )

    before = tree_state()
    start = time.monotonic()
    run = subprocess.run(
        ["bash", str(scratch / "driver.sh")], check=False, env=env, cwd=REPO
    )
    seconds = time.monotonic() - start
    after = tree_state()

    ok = run.returncode == 0
    # A status line the run added is a file the README's commands wrote into the repository (or,
    # in a checkout someone edits meanwhile, their work: the list says which files). Lines that
    # went away are someone else's commits, never the README's doing.
    added, gone = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    if added:
        ok = False
        print(
            "readme_blocks: the working tree changed during the run:", file=sys.stderr
        )
        for line in added:
            print(f"  + {line}", file=sys.stderr)
    if gone:
        print(
            f"readme_blocks: note: {len(gone)} status line(s) went away (commits meanwhile)",
            file=sys.stderr,
        )
    if args.slow and ok:
        ok = run_example(data, env)
    if run.returncode != 0:
        print(f"readme_blocks: the blocks exited {run.returncode}", file=sys.stderr)
    print(
        f"readme_blocks: {len(steps)} block(s) run, {len(skipped)} parsed only "
        f"({', '.join(sorted({b.kind for b in skipped})) or 'none'}), {seconds:.0f} s: "
        f"{'passed' if ok else 'FAILED'}",
        file=sys.stderr,
    )
    if args.keep or not ok:
        print(f"readme_blocks: scratch folder kept: {scratch}", file=sys.stderr)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


def run_example(data: Path, env: dict[str, str]) -> bool:
    """The runnable twin of the README's Rust block, on the same data."""
    cmd = ["cargo", "run", "--release", "-p", "dpfair", "--example", "csv_pipeline"]
    r = subprocess.run(
        cmd, check=False, cwd=REPO, env={**env, "DPFAIR_DATA_DIR": str(data)}
    )
    if r.returncode != 0:
        print(f"readme_blocks: {' '.join(cmd)} exited {r.returncode}", file=sys.stderr)
    return r.returncode == 0


if __name__ == "__main__":
    sys.exit(main())
