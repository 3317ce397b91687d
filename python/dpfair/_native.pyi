"""Type stubs of `dpfair._native`, the extension module (python/src): its functions and classes.

`tests/test_native_stub.py` checks that every public name of the module is here and nothing
else is.
"""

from collections.abc import Sequence
from os import PathLike
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__version__: str

_Path: TypeAlias = str | PathLike
#: `dpfair._input.Frame` (numeric block, feature columns, sensitive and target columns).
_Frame = Any
#: `(ε, δ, relation in words, private, certified, rule, readable summary)`.
_LedgerTotal = tuple[float, float, str, bool, bool, str, str]
_Bounds: TypeAlias = Sequence[tuple[str, float, float]] | None

class BudgetExceededError(ValueError):
    """A fit would take the privacy session over its budget: refused before any noise."""

class Model:
    """A fitted model and its model file (schema, ledger, configuration, model)."""

    @staticmethod
    def load(path: _Path) -> Model: ...
    @staticmethod
    def from_json(text: str, origin: str) -> Model: ...
    def save(self, path: _Path) -> None: ...
    def to_json(self) -> str: ...
    def predict(self, frame: _Frame, seed: int | None = None) -> dict[str, Any]: ...
    @property
    def constant(self) -> tuple[int | None, float | None] | None: ...
    @property
    def fit_warnings(self) -> list[str]: ...
    @property
    def fairness(self) -> tuple[str, float, float, bool] | None: ...
    @property
    def verified(self) -> bool: ...
    @property
    def method(self) -> str: ...
    @property
    def class_labels(self) -> list[str]: ...
    @property
    def task(self) -> str | None: ...
    @property
    def sensitive(self) -> tuple[str, list[str]] | None: ...
    @property
    def target_name(self) -> str | None: ...
    @property
    def feature_columns(self) -> list[str]: ...
    @property
    def feature_names(self) -> list[str]: ...
    def ledger_json(self) -> str: ...
    def ledger_total(self) -> _LedgerTotal: ...
    def selection_json(self) -> str | None: ...
    def config_json(self) -> str: ...
    def report(
        self,
        out: _Path,
        json: _Path | None = None,
        X: Any = None,
        y: Any = None,
        sensitive_features: Any = None,
        epsilon: float | None = None,
        level: float = 0.95,
        session: Any = None,
        *,
        groups: list[str] | None = None,
        target_range: tuple[float, float] | None = None,
        audit: _Path | None = None,
    ) -> dict[str, Any]:
        """The release report (HTML to `out`, JSON beside it), as `dpfair report` writes it."""

class Session:
    """A privacy budget several fits compose against."""

    def __init__(self, epsilon: float, delta: float, relation_name: str) -> None: ...
    def insecure_seed(self, seed: int) -> None: ...
    def remaining(self) -> tuple[float, float]: ...
    def ledger_json(self) -> str: ...
    def ledger_total(self) -> _LedgerTotal: ...

def fit(
    method: str,
    params: dict[str, Any],
    frame: _Frame,
    coding_options: dict[str, Any],
    session: Session | None = None,
    seed: int | None = None,
    public: _Frame | None = None,
    n_jobs: int | None = None,
) -> Model:
    """Fit `method`; `coding_options` needs `task` (binary, multiclass or regression)."""

def tune(
    method: str,
    candidates: list[dict[str, Any]],
    frame: _Frame,
    coding_options: dict[str, Any],
    selection_fraction: float = 0.2,
    mean_runs: int | None = None,
    session: Session | None = None,
    seed: int | None = None,
) -> Model:
    """A private search among `candidates` of the classifier `method`: one ledger entry."""

def numeric_block_address(frame: _Frame) -> int | None: ...
def intersect_groups(
    parts: Sequence[tuple[str, tuple[npt.NDArray[np.int64], list[str]]]],
) -> tuple[str, list[int], list[str]]: ...
def factorize_arrow_strings(
    chunks: Sequence[tuple[npt.NDArray[Any], npt.NDArray[np.uint8], int, int]],
) -> tuple[npt.NDArray[np.int64], list[str]]: ...

# -- metrics (y_pred and groups as codes) --------------------------------------------------

def demographic_parity_difference(y_pred: npt.ArrayLike, groups: npt.ArrayLike) -> float: ...
def demographic_parity_ratio(y_pred: npt.ArrayLike, groups: npt.ArrayLike) -> float: ...
def demographic_parity_difference_to_overall(
    y_pred: npt.ArrayLike, groups: npt.ArrayLike
) -> float: ...
def demographic_parity_ratio_to_overall(y_pred: npt.ArrayLike, groups: npt.ArrayLike) -> float: ...
def equal_opportunity_difference(
    y_true: npt.ArrayLike, y_pred: npt.ArrayLike, groups: npt.ArrayLike
) -> float: ...
def multiclass_unfairness(y_pred: npt.ArrayLike, k: int, groups: npt.ArrayLike) -> float: ...
def ks_statistical_parity(values: npt.ArrayLike, groups: npt.ArrayLike) -> float: ...
def group_report(
    kind: str,
    y_true: npt.ArrayLike,
    y_pred: npt.ArrayLike,
    groups: npt.ArrayLike,
    group_names: list[str],
    class_labels: list[str] = ...,
) -> tuple[list[str], list[tuple[str, int, list[float | None]]]]: ...

class PrivateReport:
    """A released private group report and the ledger of its one release."""

    def report_json(self) -> str: ...
    def render(self) -> str: ...
    def ledger_json(self) -> str: ...
    def ledger_total(self) -> _LedgerTotal: ...

def private_group_report(
    y_true: npt.ArrayLike,
    y_pred: npt.ArrayLike,
    groups: npt.ArrayLike,
    group_names: list[str],
    epsilon: float,
    level: float,
    session: Session | None = None,
) -> PrivateReport:
    """One charged release of the group × label × prediction counts, with intervals."""

# -- accounting ----------------------------------------------------------------------------

def sgm_epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float,
    accountant_name: str,
    relation_name: str,
) -> float: ...
def sgm_noise_multiplier(
    epsilon: float,
    delta: float,
    sample_rate: float,
    steps: int,
    accountant_name: str,
    relation_name: str,
) -> float: ...

# -- federated (FDP-Fair's protocol steps) -------------------------------------------------

class SiteData:
    @staticmethod
    def from_frame(
        frame: _Frame,
        *,
        bounds: _Bounds = None,
        positive: str | None = None,
        groups: list[str] | None = None,
        classes: list[str] | None = None,
    ) -> SiteData: ...
    @staticmethod
    def from_csv(
        path: _Path,
        target: str,
        sensitive: str,
        *,
        bounds: _Bounds = None,
        features: list[str] | None = None,
        categorical: list[str] = ...,
        drop: list[str] = ...,
        positive: str | None = None,
        groups: list[str] | None = None,
        classes: list[str] | None = None,
    ) -> SiteData: ...
    @property
    def n_rows(self) -> int: ...

def site_round1(
    data: SiteData,
    site: str,
    epsilon: float,
    *,
    delta: float | None = None,
    accounting: str = "strict",
    bandwidth: float | None = None,
    frequencies: int | None = None,
    basis_seed: int | None = None,
    eta_model: str = "auto",
    empirical_pi: bool = False,
    run: str | None = None,
    insecure_seed: int | None = None,
) -> str: ...
def site_round2(
    global_json: str,
    data: SiteData,
    site: str,
    epsilon: float,
    *,
    round1_json: str,
    delta: float | None = None,
    accounting: str = "strict",
    insecure_seed: int | None = None,
) -> str: ...
def aggregate_round1_json(
    transcripts: list[str],
    *,
    run: str | None = None,
    max_site_rows: int | None = None,
    depth: int | None = None,
    depth_rule: str = "code",
    weights: str = "paper",
) -> str: ...
def aggregate_round2_json(
    global_json: str,
    transcripts: list[str],
    *,
    alpha: float = 0.1,
    rho_star: float = 0.03,
    band: str = "inside",
    margin_z: float = 1.645,
    straddle: str = "randomise",
    c_omega: float = 0.1,
    eta_tol: float = 0.01,
    monotoniser: str = "numerical",
    clip: str | None = None,
    zero_within_band: bool = False,
    clip_tails: bool = False,
) -> Model: ...
def transcript_spend(transcript_json: str) -> _LedgerTotal: ...

# -- accumulators (mergeable exact statistics for distributed engines) ---------------------

class LdpReports:
    def __init__(self, partition_json: str) -> None: ...
    def update(self, rows: npt.ArrayLike, bits: npt.NDArray[np.bool_]) -> None: ...
    def update_file(self, path: _Path) -> int: ...
    def check_metadata(self, metadata: dict[str, str]) -> None: ...
    def merge(self, other: LdpReports) -> None: ...
    def to_bytes(self) -> bytes: ...
    def merge_bytes(self, data: bytes) -> None: ...
    @property
    def n_reports(self) -> int: ...
    @property
    def partition_digest(self) -> str: ...
    def state(self) -> tuple[list[int], list[int]]: ...
    def finalize(self, public_weight: float | None = None, guard: float = 3.0) -> Model: ...

class JointCounts:
    def __init__(
        self, score_column: str, sensitive: str, groups: list[str], lo: float, hi: float, bins: int
    ) -> None: ...
    def update(self, scores: npt.NDArray[np.float64], codes: npt.NDArray[np.uint32]) -> None: ...
    def merge(self, other: JointCounts) -> None: ...
    def to_bytes(self) -> bytes: ...
    def merge_bytes(self, data: bytes) -> None: ...
    def counts(self) -> list[int]: ...
    def finalize(self, alpha: float, epsilon: float, session: Session | None = None) -> Model: ...
