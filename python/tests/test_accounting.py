"""dpfair.accounting: Opacus's argument names over the privacy crate's accountants."""

from __future__ import annotations

import pytest

from dpfair.accounting import get_epsilon, get_noise_multiplier


@pytest.mark.parametrize("accountant", ["rdp", "prv"])
def test_noise_multiplier_meets_its_target(accountant):
    q, steps, delta = 0.01, 1000, 1e-5
    z = get_noise_multiplier(
        target_epsilon=1.0, target_delta=delta, sample_rate=q, steps=steps, accountant=accountant
    )
    eps = get_epsilon(
        noise_multiplier=z, sample_rate=q, steps=steps, delta=delta, accountant=accountant
    )
    assert eps <= 1.0
    # The smallest such z, up to the search's relative tolerance 10⁻⁴: a little less noise misses.
    less = get_epsilon(
        noise_multiplier=z * (1 - 2e-4),
        sample_rate=q,
        steps=steps,
        delta=delta,
        accountant=accountant,
    )
    assert less > 1.0


def test_epochs_are_steps_over_the_sample_rate():
    a = get_epsilon(noise_multiplier=1.1, sample_rate=0.02, epochs=3, delta=1e-5)
    b = get_epsilon(noise_multiplier=1.1, sample_rate=0.02, steps=150, delta=1e-5)
    assert a == b


def test_substitution_needs_twice_the_noise():
    kw = dict(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.01, steps=500)
    z_ar = get_noise_multiplier(**kw)
    z_sub = get_noise_multiplier(**kw, relation="substitution")
    assert z_sub == pytest.approx(2 * z_ar, rel=1e-12)
    e_sub = get_epsilon(
        noise_multiplier=2 * z_ar, sample_rate=0.01, steps=500, delta=1e-5, relation="substitution"
    )
    e_ar = get_epsilon(noise_multiplier=z_ar, sample_rate=0.01, steps=500, delta=1e-5)
    assert e_sub == pytest.approx(e_ar, rel=1e-12)


def test_more_noise_less_epsilon():
    eps = [
        get_epsilon(noise_multiplier=z, sample_rate=0.01, steps=1000, delta=1e-5)
        for z in (0.8, 1.0, 1.5, 3.0)
    ]
    assert eps == sorted(eps, reverse=True)


def test_bad_arguments():
    with pytest.raises(ValueError, match="exactly one of"):
        get_epsilon(noise_multiplier=1.0, sample_rate=0.01, delta=1e-5)
    with pytest.raises(ValueError, match="accountant `moments`"):
        get_epsilon(
            noise_multiplier=1.0, sample_rate=0.01, steps=10, delta=1e-5, accountant="moments"
        )
    with pytest.raises(ValueError, match="`sample_rate` must be"):
        get_epsilon(noise_multiplier=1.0, sample_rate=1.5, steps=10, delta=1e-5)
    with pytest.raises(ValueError, match="`noise_multiplier` must be"):
        get_epsilon(noise_multiplier=-1.0, sample_rate=0.1, steps=10, delta=1e-5)
