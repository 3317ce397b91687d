#!/usr/bin/env python3
"""Write docs/report-example.html and .png: the release report of one synthetic fit.

The example of docs/evaluation.md, "The release report".

Synthetic Adult-like rows (age, hours, job; groups `sex`; target `income`), drawn from a fixed
seed (public, made-up data), train a CDP-Fair classifier with public feature bounds; `dpfair
report` then evaluates it on fresh synthetic rows with the private group report at ε = 1 (with
its plots) and shows `dpfair audit cdp-fair --json`'s bound. Every release draws its noise from
the operating system (a real, private fit: each run differs). The screenshot is headless
Chromium's (a 1000 × 3400 page at scale 0.8: 800 × 2720 pixels), when /usr/bin/chromium is
installed.

Usage, from the repository: python3 scripts/report_example.py [--dpfair target/release/dpfair]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
# Headless, without a sandbox (CI runs as root), a GPU or the browser's own network services.
HEADLESS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(*args: str) -> bytes:
    """Run headless Chromium on `args` with a fresh profile; its stdout (an error if it fails).

    python/tests/test_report_browser.py renders the reports with it too.
    """
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [str(CHROMIUM), *HEADLESS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=120,
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"chromium failed: {done.stderr.decode(errors='replace')[-2000:]}"
        )
    return done.stdout


def rows(n: int, seed: int) -> str:
    """`n` synthetic rows as CSV text: income depends on age, hours, job and (unfairly) sex."""
    rng = random.Random(seed)
    lines = ["age,hours,job,sex,income"]
    for _ in range(n):
        sex = "Male" if rng.random() < 0.6 else "Female"
        age, hours = rng.randint(17, 90), rng.randint(1, 99)
        job = rng.choice(["clerical", "craft", "sales"])
        score = (
            (age - 17) / 73
            + hours / 99
            + 0.35 * (sex == "Male")
            + 0.2 * (job == "sales")
        )
        income = ">50K" if score + rng.gauss(0, 0.25) > 1.0 else "<=50K"
        lines.append(f"{age},{hours},{job},{sex},{income}")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Fit, report and screenshot (module docs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dpfair", default=str(REPO / "target" / "release" / "dpfair"))
    parser.add_argument("--out", default=str(REPO / "docs" / "report-example.html"))
    args = parser.parse_args()
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        train, test, model = (
            Path(tmp, "train.csv"),
            Path(tmp, "test.csv"),
            Path(tmp, "m.json"),
        )
        train.write_text(rows(6000, 1))
        test.write_text(rows(3000, 2))
        run = [
            args.dpfair,
            "fit",
            "cdp-fair",
            "--data",
            str(train),
            "--target",
            "income",
        ]
        run += [
            "--sensitive",
            "sex",
            "--categorical",
            "job",
            "--bounds",
            "age:17:90,hours:1:99",
        ]
        run += ["--alpha", "0.05", "--epsilon", "1", "--out", str(model)]
        subprocess.run(run, check=True)
        audit = Path(tmp, "audit.json")
        found = subprocess.run(
            [args.dpfair, "audit", "cdp-fair", "--json"],
            check=True,
            stdout=subprocess.PIPE,
        )
        audit.write_bytes(found.stdout)
        report = [
            args.dpfair,
            "report",
            str(model),
            "--evaluate",
            str(test),
            "--epsilon",
            "1",
        ]
        report += ["--audit", str(audit)]
        report += ["--out", str(out), "--json", str(Path(tmp, "report.json"))]
        subprocess.run(report, check=True)
        if not CHROMIUM.is_file():
            print(f"wrote {out}; no screenshot: /usr/bin/chromium is not installed")
            return
        shot = out.with_suffix(".png")
        scale = "--force-device-scale-factor=0.8"
        chromium(f"--screenshot={shot}", scale, "--window-size=1000,3400", out.as_uri())
        print(f"wrote {out} and {shot}")


if __name__ == "__main__":
    main()
