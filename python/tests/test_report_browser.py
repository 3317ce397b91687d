"""The release report in a real browser: `dpfair report` writes the page for a model of every
method `dpfair fit` has, each with its private evaluation (the group report of a binary
classifier, the multi-class report of DP2DP, the MSE and KS of a regressor; LPCT's groups
declared), headless Chromium renders it, the rendered DOM holds the ledger, schema, digest,
evaluation sections and plots, and the screenshot is a picture, not a blank page.

The screenshots are this test's artefacts: `target/report-screenshots/<method>.png` in the
repository (1200 × 2400 pixels), rewritten on each run. Skipped, and saying so, when
/usr/bin/chromium is not installed (`.ci/python` installs it when it can) or the `dpfair` binary
is not built."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import zlib

import numpy as np
import pytest
from conftest import REPO

# How Chromium runs: scripts/report_example.py's (it renders docs/report-example.png the same way).
_spec = importlib.util.spec_from_file_location(
    "report_example", REPO / "scripts" / "report_example.py"
)
report_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_example)
SHOTS = REPO / "target" / "report-screenshots"
WIDTH, HEIGHT = 1200, 2400

# Every `dpfair fit` method (test_the_methods_are_the_clis checks the list against the CLI).
METHODS = [
    "dp-logistic",
    "dp-linear",
    "decoupled",
    "cdp-fair",
    "fdp-fair",
    "fair-regression",
    "lpct",
    "lpct-prune",
    "dp2dp",
    "group-thresholds",
]
# A figure each method's private evaluation shows (its report's kind).
FIGURE = {
    "dp2dp": "multiclass_unfairness_u",
    "dp-linear": "ks_distance",
    "fair-regression": "ks_distance",
}


@pytest.fixture(scope="module")
def chromium():
    if not report_example.CHROMIUM.is_file():
        pytest.skip(
            "chromium not installed (/usr/bin/chromium): the release report was not checked "
            "in a browser"
        )
    return report_example.chromium


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> dict:
    """2,000 rows of x1, x2, grp (a/b), y (yes/no), r (real); LPCT's public and private split."""
    folder = tmp_path_factory.mktemp("report-browser")
    lines = ["x1,x2,grp,y,r"]
    for i in range(2000):
        x1, x2 = (i * 37 % 101) / 100, (i * 53 % 97) / 96
        group = "b" if i % 3 == 0 else "a"
        label = "yes" if x1 + 0.1 * x2 > 0.55 else "no"
        lines.append(f"{x1},{x2},{group},{label},{2 * x1 - x2 + 0.5 * (group == 'b'):.4f}")
    files = {
        "data": lines,
        "public": lines[:601],
        "private": lines[:1] + lines[601:],
    }
    paths = {name: folder / f"{name}.csv" for name in files}
    for name, text in files.items():
        paths[name].write_text("\n".join(text) + "\n")
    paths["folder"] = folder
    return paths


def _fit_args(method: str, rows: dict) -> list:
    """`dpfair fit METHOD`'s data options for the rows."""
    if method.startswith("lpct"):
        public, private = str(rows["public"]), str(rows["private"])
        return ["--public", public, "--private", private, "--target", "y"]
    data = ["--data", str(rows["data"]), "--sensitive", "grp"]
    if method == "dp-linear":
        return data + ["--target", "r", "--features", "x1,x2", "--target-range", "-1,3"]
    if method == "fair-regression":
        return data + ["--target", "r", "--base", "dp-linear", "--range", "-1,3"]
    return data + ["--target", "y"]


def _pixels(png: bytes) -> np.ndarray:
    """The pixels of an 8-bit RGB or RGBA PNG (no interlace) as a height × width × channels
    array: the chunks read with struct, the image data inflated with zlib and unfiltered."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, header, data = 8, None, b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            data += body
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(data)
    assert len(raw) == (stride + 1) * height
    out = np.zeros((height, stride), dtype=np.uint8)
    above = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        if kind == 0:
            row = line
        elif kind == 2:  # Up
            row = (line + above) % 256
        elif kind == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(width, channels), axis=0).reshape(-1) % 256
        else:  # Average (3) or Paeth (4): sequential along the row
            row = np.zeros(stride, dtype=np.int64)
            prev = above.tolist()
            cur = line.tolist()
            for i in range(stride):
                a = int(row[i - channels]) if i >= channels else 0
                b = prev[i]
                if kind == 3:
                    pred = (a + b) // 2
                else:
                    c = prev[i - channels] if i >= channels else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (cur[i] + pred) % 256
        out[y] = row
        above = row
    return out.reshape(height, width, channels)


def test_the_methods_are_the_clis(dpfair_bin):
    help_text = subprocess.run(
        [dpfair_bin, "fit", "--help"], check=True, capture_output=True, text=True
    ).stdout
    section = help_text.split("Commands:\n")[1].split("\n\n")[0]
    listed = [
        line.split()[0]
        for line in section.splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]
    assert sorted(m for m in listed if m != "help") == sorted(METHODS)


@pytest.mark.parametrize("method", METHODS)
def test_the_report_renders_in_chromium(method, chromium, dpfair_bin, rows):
    folder = rows["folder"]
    model, page = folder / f"{method}.model.json", folder / f"{method}.html"
    subprocess.run(
        [dpfair_bin, "fit", method, "--epsilon", "2", "--out", str(model)]
        + _fit_args(method, rows),
        check=True,
        capture_output=True,
    )
    report = [dpfair_bin, "report", str(model), "--out", str(page)]
    report += ["--evaluate", str(rows["data"]), "--epsilon", "1"]
    if method.startswith("lpct"):  # no sensitive attribute: the groups are declared
        report += ["--sensitive", "grp", "--groups", "a,b"]
    subprocess.run(report, check=True, capture_output=True)

    dom = chromium("--dump-dom", page.as_uri()).decode()
    digest = json.loads(model.read_text())["digest"]
    ledger = json.loads(model.read_text())["ledger"]["entries"]
    for section in (
        "<h2>Method</h2>",
        "<h2>Public schema</h2>",
        "<h2>The fit's releases (privacy ledger)</h2>",
        "<h2>Model file</h2>",
        "<h2>Private evaluation</h2>",
    ):
        assert section in dom, f"{method}: no {section} in the rendered page"
    assert digest.startswith("sha256:") and digest in dom, method
    assert "<th>release</th>" in dom and "Total: ε = 2" in dom, method
    assert len(ledger) > 0 and dom.count('<td class="num">') >= len(ledger), method
    assert "<code>grp</code>" in dom or method.startswith("lpct"), method
    assert "<h2>The evaluation's release</h2>" in dom, method
    figure = FIGURE.get(method, "demographic_parity")
    for cell in ("<td>a</td>", "<td>b</td>", figure, '<svg class="plot"', "<circle"):
        assert cell in dom, f"{method}: no {cell} in the evaluation"

    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{method}.png"
    shot.unlink(missing_ok=True)
    chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri())
    assert shot.is_file(), f"{method}: no screenshot"
    pixels = _pixels(shot.read_bytes())
    assert pixels.shape[:2] == (HEIGHT, WIDTH), pixels.shape
    packed = np.zeros(pixels.shape[:2], dtype=np.uint32)
    for channel in range(pixels.shape[2]):
        packed = (packed << 8) | pixels[:, :, channel]
    colours, counts = np.unique(packed, return_counts=True)
    ink = 1 - counts.max() / counts.sum()
    # A blank page is one colour; the report's text, rules and tables cover a few per cent.
    assert len(colours) > 10 and ink > 0.01, (method, len(colours), ink)
