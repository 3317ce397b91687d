//! Empirical privacy audits (the privacy crate's threshold auditor) of the group-thresholds
//! classifier's table release (`dpfair::group_thresholds::table`; docs/privacy.md, "Group
//! thresholds"), under both neighbouring relations, each with an under-noised variant (the
//! release at 2ε, i.e. half its noise) that must be caught. The DP-SGD step is dp-logistic's,
//! audited in docs/audits.md's whole-training rows.
//!
//! Neighbours: three groups × two labels × 10 bins with 10 rows in every cell (600 rows).
//! Replace-one: one row of group 0, label 1, bin 7 becomes a row of group 2, label 0, bin 2 (the
//! row changes all three coordinates). Add/remove: that row is removed. Projection: the
//! difference of the two cells (replace-one; it moves by 2, the sensitivity) or the one cell
//! (add/remove; it moves by 1).
//!
//! Power (the privacy crate's audit docs): a Laplace release at half its scale (true ε = 2 where
//! 1 is claimed) gives ε_lower ≈ 1.88 with 2·10⁴ trials per input at α = 0.01; we use 5·10⁴.

use dpfair::group_thresholds::table::{GroupScoreCounts, ReleasedCounts};
use dpfair_privacy::audit::audit;
use dpfair_privacy::{Ledger, Noise, Relation};

const TRIALS: usize = 50_000;
const BINS: usize = 10;

/// The table of input `input` (module docs); `remove`: input 1 drops the row instead.
fn table(input: usize, remove: bool) -> GroupScoreCounts {
    let (mut g, mut y, mut s) = (Vec::new(), Vec::new(), Vec::new());
    for group in 0..3u32 {
        for label in 0..2u8 {
            for bin in 0..BINS {
                for _ in 0..10 {
                    g.push(group);
                    y.push(label);
                    s.push((bin as f64 + 0.5) / BINS as f64);
                }
            }
        }
    }
    // Row (group 0, label 1, bin 7, first of its cell).
    let row = (BINS + 7) * 10;
    if input == 1 {
        if remove {
            g.remove(row);
            y.remove(row);
            s.remove(row);
        } else {
            (g[row], y[row], s[row]) = (2, 0, 0.25);
        }
    }
    let mut c = GroupScoreCounts::new(3, BINS);
    c.update(&g, &y, &s).unwrap();
    c
}

fn audit_relation(relation: Relation, seed: u64) -> (f64, f64) {
    let remove = relation == Relation::AddRemove;
    let tables = [table(0, remove), table(1, remove)];
    let project = |i: usize, epsilon: f64, nz: &mut Noise| {
        let r: ReleasedCounts = tables[i]
            .release(epsilon, relation, &mut Ledger::unlimited(), nz)
            .unwrap();
        let moved = r.bins_of(0, 1)[7];
        Ok(if remove {
            moved
        } else {
            moved - r.bins_of(2, 0)[2]
        })
    };
    let claimed = 1.0;
    let mut noise = Noise::seeded(seed);
    let honest = audit(&mut noise, TRIALS, 0.0, 0.01, |i, nz| project(i, 1.0, nz)).unwrap();
    assert!(
        honest.epsilon_lower <= claimed,
        "{relation:?} honest: {honest:?}"
    );
    let under = audit(&mut noise, TRIALS, 0.0, 0.01, |i, nz| project(i, 2.0, nz)).unwrap();
    assert!(
        under.epsilon_lower > claimed,
        "{relation:?}: half-scale noise not caught: {under:?}"
    );
    (honest.epsilon_lower, under.epsilon_lower)
}

#[test]
fn table_release_spends_no_more_than_epsilon_under_replace_one_and_half_noise_is_caught() {
    let (honest, under) = audit_relation(Relation::Substitution, 41);
    eprintln!("group-thresholds table, replace-one: ε_lower honest {honest:.3}, at 2ε {under:.3}");
}

#[test]
fn table_release_spends_no_more_than_epsilon_under_add_remove_and_half_noise_is_caught() {
    let (honest, under) = audit_relation(Relation::AddRemove, 42);
    eprintln!("group-thresholds table, add/remove: ε_lower honest {honest:.3}, at 2ε {under:.3}");
}

/// The release is one ledger entry at the asked ε, with the relation's sensitivity (plus the
/// lattice's rounding).
#[test]
fn table_release_is_one_entry_with_the_relations_sensitivity() {
    for (relation, sensitivity) in [(Relation::Substitution, 2.0), (Relation::AddRemove, 1.0)] {
        let mut ledger = Ledger::for_relation(dpfair_privacy::Budget::pure(0.5).unwrap(), relation);
        table(0, false)
            .release(0.5, relation, &mut ledger, &mut Noise::seeded(1))
            .unwrap();
        assert_eq!(ledger.entries().len(), 1);
        let e = &ledger.entries()[0];
        assert_eq!(e.relation, relation);
        // The lattice release declares its rounding on top (a few 10⁻⁶).
        assert!((e.sensitivity - sensitivity).abs() < 1e-5, "{e:?}");
        assert!((ledger.total().unwrap().epsilon - 0.5).abs() < 1e-12);
    }
}
