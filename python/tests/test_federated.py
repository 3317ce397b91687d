"""`dpfair.federated`: FDP-Fair's protocol steps from Python are the file protocol's. With the
same seeded noise a Python site writes byte for byte the CLI's transcripts, a run may mix Python
and CLI sites, and a site refuses to release a round twice or under a broadcast that does not
hand back its own round 1."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

from dpfair import federated

BOUNDS = {"x1": (0.0, 1.0), "x2": (0.0, 1.0)}
BASIS = {"bandwidth": 0.2, "frequencies": 64}


def site_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 2))
    group = rng.choice(["a", "b"], size=n)
    label = (x[:, 0] + 0.3 * (group == "b") + rng.normal(0, 0.2, n) > 0.7).astype(int)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "group": group, "label": label})


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("federated")
    paths = {}
    for i, name in enumerate(("A", "B", "C")):
        paths[name] = folder / f"{name}.csv"
        site_frame(900, i).to_csv(paths[name], index=False)
    return paths


def site(name, path, seed=None, **kw):
    return federated.Site.from_csv(
        name,
        path,
        target="label",
        sensitive="group",
        groups=["a", "b"],
        bounds=BOUNDS,
        epsilon=2.0,
        insecure_seed=seed,
        **BASIS,
        **kw,
    )


def cli_site(binary, round_name, name, path, seed, out, *extra):
    args = [
        binary,
        "federated",
        "site",
        round_name,
        *extra,
        "--data",
        str(path),
        "--target",
        "label",
        "--sensitive",
        "group",
        "--groups",
        "a,b",
        "--bounds",
        "x1:0:1,x2:0:1",
        "--epsilon",
        "2",
        "--insecure-seeded-noise",
        str(seed),
        "--site",
        name,
        "--out",
        str(out),
    ]
    if round_name == "round1":
        args += ["--bandwidth", "0.2", "--frequencies", "64", "--run", "r"]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def cli_server(dpfair_bin, tmp_path, csvs, name, *extra):
    """`dpfair federated aggregate round2` at α = 0.15 on the round-2 files in `tmp_path`."""
    out = tmp_path / name
    done = subprocess.run(
        [
            dpfair_bin,
            "federated",
            "aggregate",
            "round2",
            "--global",
            str(tmp_path / "global.json"),
            *[str(tmp_path / f"r2{n}.json") for n in csvs],
            "--alpha",
            "0.15",
            *extra,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_python_sites_write_the_cli_transcripts_byte_for_byte(csvs, dpfair_bin, tmp_path):
    seeds = {"A": 11, "B": 12, "C": 13}
    py = {n: site(n, p, seeds[n]) for n, p in csvs.items()}
    r1 = {n: s.round1(run="r") for n, s in py.items()}
    for n, p in csvs.items():
        assert r1[n] == cli_site(dpfair_bin, "round1", n, p, seeds[n], tmp_path / f"r1{n}.json")
    global_ = federated.aggregate_round1(list(r1.values()), run="r")
    (tmp_path / "global.json").write_text(global_)
    r2 = {n: s.round2(global_) for n, s in py.items()}
    for n, p in csvs.items():
        cli = cli_site(
            dpfair_bin,
            "round2",
            n,
            p,
            seeds[n],
            tmp_path / f"r2{n}.json",
            "--global",
            str(tmp_path / "global.json"),
            "--round1",
            str(tmp_path / f"r1{n}.json"),
        )
        assert r2[n] == cli
    # The Python server's model is the CLI server's model file.
    clf = federated.aggregate_round2(global_, list(r2.values()), alpha=0.15)
    mine = tmp_path / "python-model.json"
    clf.model_.save(str(mine))
    theirs = cli_server(dpfair_bin, tmp_path, csvs, "cli-model.json")
    a, b = json.loads(mine.read_text()), json.loads(theirs.read_text())
    assert (a["model"], a["ledger"], a["schema"]) == (b["model"], b["ledger"], b["schema"])
    assert [s.spent()["epsilon"] for s in py.values()] == pytest.approx([2.0] * 3, rel=1e-9)
    # The paper's selection (no noise margin, τ̃ interpolated) by name, as the CLI's flags.
    paper = federated.aggregate_round2(
        global_, list(r2.values()), alpha=0.15, margin_z=0.0, straddle="interpolate"
    )
    mine = tmp_path / "python-paper.json"
    paper.model_.save(str(mine))
    theirs = cli_server(
        dpfair_bin, tmp_path, csvs, "cli-paper.json", "--margin-z", "0", "--straddle", "interpolate"
    )
    a, b = json.loads(mine.read_text()), json.loads(theirs.read_text())
    assert a["model"] == b["model"]
    assert a["model"]["federated"]["config"]["margin_z"] == 0.0
    assert "mix" not in a["model"]["federated"]["search"]
    with pytest.raises(ValueError, match="straddle"):
        federated.aggregate_round2(global_, list(r2.values()), straddle="sideways")


def test_a_site_releases_each_round_once_and_only_under_its_own_round_1(csvs):
    a, b = site("A", csvs["A"]), site("B", csvs["B"])
    with pytest.raises(ValueError, match="round 2 needs this site's round 1"):
        a.round2("{}")
    g = federated.aggregate_round1([a.round1(), b.round1()])
    with pytest.raises(ValueError, match="round 1 was released already"):
        a.round1()
    # Another `A` (same data, fresh OS noise: another split seed) gets the broadcast of the
    # first: releasing its trees would re-read rows its own round 1 released. Refused.
    impostor = site("A", csvs["A"])
    impostor.round1()
    with pytest.raises(ValueError, match="not what this site.s round 1 sent"):
        impostor.round2(g)
    a.round2(g)
    with pytest.raises(ValueError, match="round 2 was released already"):
        a.round2(g)
    assert a.spent()["epsilon"] == pytest.approx(2.0, rel=1e-9)


def test_the_server_refuses_a_transcript_naming_the_site(csvs):
    a, b = site("A", csvs["A"]), site("B", csvs["B"])
    r1b = json.loads(b.round1())
    r1b["n_rows"] = 10**12  # a site claiming a huge size to take all the weight
    with pytest.raises(ValueError, match="site `B`.*outside the public range"):
        federated.aggregate_round1([a.round1(), json.dumps(r1b)])
