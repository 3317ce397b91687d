"""Privacy accounting of DP-SGD runs, with Opacus's argument names.

A DP-SGD run is `steps` Poisson-subsampled Gaussian steps: each row is in a batch with
probability `sample_rate`, and the clipped gradient sum gets Gaussian noise of standard deviation
`noise_multiplier` × the clipping norm. `get_epsilon` is the ε of such a run at `delta`;
`get_noise_multiplier` the smallest noise multiplier whose run meets a target (ε, δ). As in
Opacus, `epochs` stands for `steps = int(epochs / sample_rate)`.

Accountants: `"rdp"` (Rényi DP, a certified upper bound, a few percent loose; the default),
`"prv"` (privacy random variables: certified and within about 0.2% of the exact ε, slower) and
`"gdp"` (the Gaussian-DP central-limit approximation: fast, **not** a certified bound).
Neighbouring relation: `"add-remove"` (one row added or removed; Opacus's) or
`"substitution"` (one row replaced; dpfair's default for its fits: twice the noise for the same ε).

Example:
    >>> from dpfair.accounting import get_epsilon, get_noise_multiplier
    >>> eps = get_epsilon(noise_multiplier=1.1, sample_rate=256 / 60000, epochs=60, delta=1e-5)
    >>> round(eps, 1)
    2.6
    >>> z = get_noise_multiplier(target_epsilon=eps, target_delta=1e-5,
    ...                          sample_rate=256 / 60000, epochs=60)
    >>> abs(z - 1.1) < 0.01
    True

"""

from __future__ import annotations

from dpfair import _native

__all__ = ["get_epsilon", "get_noise_multiplier"]


def _check_positive(name: str, value: float, upper: float | None = None) -> float:
    """`value` as a float in (0, upper] (or (0, ∞)), else a ValueError naming `name`."""
    v = float(value)
    if not (v > 0 and (upper is None or v <= upper)) or v != v:
        domain = f"(0, {upper:g}]" if upper is not None else "> 0"
        raise ValueError(f"`{name}` must be {domain}, got {value!r}")
    return v


def _steps(sample_rate: float, steps: int | None, epochs: float | None) -> int:
    _check_positive("sample_rate", sample_rate, 1.0)
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of `steps` and `epochs`")
    if steps is not None:
        if isinstance(steps, bool) or int(steps) != steps or steps < 1:
            raise ValueError(f"`steps` must be a positive integer, got {steps!r}")
        return int(steps)
    _check_positive("epochs", epochs)
    return max(1, int(epochs / sample_rate))


def get_epsilon(
    *,
    noise_multiplier: float,
    sample_rate: float,
    delta: float,
    steps: int | None = None,
    epochs: float | None = None,
    accountant: str = "rdp",
    relation: str = "add-remove",
) -> float:
    """ε at `delta` of a DP-SGD run (module docs); give `steps` or `epochs`.

    Example:
        >>> round(get_epsilon(noise_multiplier=1.0, sample_rate=0.01, steps=1000, delta=1e-5), 2)
        2.1

    """
    n = _steps(sample_rate, steps, epochs)
    _check_positive("noise_multiplier", noise_multiplier)
    return _native.sgm_epsilon(
        float(noise_multiplier), float(sample_rate), n, float(delta), accountant, relation
    )


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    steps: int | None = None,
    epochs: float | None = None,
    accountant: str = "rdp",
    relation: str = "add-remove",
) -> float:
    """The smallest noise multiplier whose run meets (`target_epsilon`, `target_delta`).

    The result is within a relative 10⁻⁴ of the smallest and errs on the safe side: a run
    with it has `get_epsilon(...) <= target_epsilon`.

    Example:
        >>> z = get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5,
        ...                          sample_rate=0.01, steps=1000)
        >>> get_epsilon(noise_multiplier=z, sample_rate=0.01, steps=1000, delta=1e-5) <= 1.0
        True

    """
    n = _steps(sample_rate, steps, epochs)
    return _native.sgm_noise_multiplier(
        float(target_epsilon), float(target_delta), float(sample_rate), n, accountant, relation
    )
