"""`PrivacySession`: one privacy budget that several fits compose against."""

from __future__ import annotations

from typing import Any

from dpfair import _native
from dpfair._ledger import Ledger


class PrivacySession:
    """A privacy budget (ε, δ), the ledger of every fit made in it, and the release noise.

    Pass it to estimators as `session=`: each fit declares what it will spend before it reads
    its data, and a fit that would take the session over its budget raises
    `dpfair.BudgetExceededError` before any noise is drawn. The fits' releases compose in
    `session.ledger`. Release noise comes from the operating system's CSPRNG.

    `relation`: `"substitution"` (one row replaced; dpfair's default) or `"add-remove"`.
    A session is shared, not copied: `copy.deepcopy` and `sklearn.base.clone` of an estimator
    keep the same session, so the clone's fits are charged to the same budget. It cannot be
    pickled (a copy in another process would spend the budget again unseen): scikit-learn's
    tools must run with `n_jobs=1` when an estimator has a session.

    Example:
        >>> import dpfair
        >>> session = dpfair.PrivacySession(epsilon=2.0, delta=1e-5)
        >>> session.remaining
        (2.0, 1e-05)

    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, relation: str = "substitution"):
        self._native = _native.Session(float(epsilon), float(delta), relation)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.relation = relation

    @classmethod
    def insecure_seeded(
        cls, epsilon: float, delta: float = 0.0, *, seed: int, relation: str = "substitution"
    ) -> PrivacySession:
        """**Not private**: release noise reproducible from `seed`.

        For tests and simulations only: the ledgers of its fits say NOT PRIVATE.
        """
        session = cls(epsilon, delta, relation=relation)
        session._native.insecure_seed(int(seed))
        return session

    @property
    def remaining(self) -> tuple:
        """(ε, δ) left under basic composition of what was spent."""
        return self._native.remaining()

    @property
    def ledger(self) -> Ledger:
        """Every release of every fit made in this session, and their total."""
        return Ledger(self._native)

    def __deepcopy__(self, memo: Any) -> PrivacySession:
        return self

    def __copy__(self) -> PrivacySession:
        return self

    def __reduce__(self) -> Any:
        raise TypeError(
            "a dpfair.PrivacySession cannot be pickled: its budget lives in this process, and "
            "a copy in another (e.g. a worker of n_jobs > 1 in cross_val_score or GridSearchCV) "
            "would spend it again unseen; run such tools with n_jobs=1 when a session is given"
        )

    def __repr__(self) -> str:
        eps, delta = self.remaining
        return (
            f"PrivacySession(epsilon={self.epsilon}, delta={self.delta}; "
            f"left ε={eps:.6g}, δ={delta:.6g})"
        )
