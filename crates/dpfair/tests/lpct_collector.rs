//! LPCT's collector (`dpfair::lpct::collector`): Hadamard reports split into random parts, each
//! folded separately (some through Arrow report files), merged in random orders, give the
//! bit-identical statistic and the identical model of the one-pass fit; and the decoded per-leaf
//! sums are unbiased.

use dpfair::lpct::collector::{HadamardSums, ReportSums};
use dpfair::lpct::privatiser::{HadamardRelease, hadamard_sums};
use dpfair::lpct::report_file::{ReportFormat, ReportSink, ReportsHeader, read_reports_into};
use dpfair::lpct::{self, LeafSums, Mechanism, TreeSettings};
use dpfair_data::synthetic::{Design, LpctDesign};
use dpfair_privacy::{Ledger, Noise};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const EPS: f64 = 1.5;

fn one_pass(reports: &[(u32, bool)], leaves: usize) -> HadamardSums {
    let mut s = HadamardSums::new(EPS, leaves).unwrap();
    for &(r, b) in reports {
        s.add(r, b).unwrap();
    }
    s
}

/// Folds `part` through an in-memory Arrow report file.
fn through_arrow(part: &[(u32, bool)], header: &ReportsHeader) -> ReportSums {
    let mut sink = ReportSink::new(Vec::new(), ReportFormat::Arrow, header).unwrap();
    for &(r, b) in part {
        sink.push_hadamard(r, b).unwrap();
    }
    let bytes = sink.finish().unwrap();
    let mut sums = ReportSums::new(Mechanism::Hadamard, EPS, header.n_leaves).unwrap();
    read_reports_into(std::io::Cursor::new(bytes), header, &mut sums).unwrap();
    sums
}

#[test]
fn any_split_merged_in_any_order_gives_the_one_pass_statistic_and_model() {
    let d = LpctDesign::default();
    let private = d.generate(3000, 1).unwrap();
    let public = d.public(300, 1).unwrap();
    let settings = TreeSettings::default();
    let tree = lpct::partition(&settings, 4, &public).unwrap();
    let leaves = tree.n_leaves();
    let (x, y) = lpct::binary_xy(&private, "private").unwrap();
    let release = HadamardRelease::new(EPS, leaves).unwrap();
    let mut noise = Noise::seeded(3);
    let reports: Vec<(u32, bool)> = tree
        .leaves_of(x)
        .unwrap()
        .iter()
        .zip(y)
        .map(|(&j, &yi)| release.report(&mut noise, j as usize, yi).unwrap())
        .collect();
    let (xq, yq) = lpct::binary_xy(&public, "public").unwrap();
    let public_counts = tree.leaf_counts(xq, yq).unwrap();
    let model = |s: &HadamardSums| {
        let mut ledger = Ledger::unlimited();
        let sums = LeafSums {
            private: s.finalize(&mut ledger, "reports").unwrap(),
            public: public_counts.clone(),
        };
        let lambda = lpct::theory_lambda_for(Mechanism::Hadamard, leaves, EPS);
        (
            sums.private.clone(),
            lpct::model_from_sums(tree.clone(), &sums, lambda, &settings).unwrap(),
        )
    };
    let whole = one_pass(&reports, leaves);
    let (whole_sums, whole_model) = model(&whole);
    let header = ReportsHeader {
        mechanism: Mechanism::Hadamard,
        epsilon: EPS,
        n_leaves: leaves,
        partition: "sha256:test".into(),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..12 {
        // A random split: each report to one of k parts, in a shuffled order.
        let k = rng.random_range(1..8usize);
        let mut shuffled = reports.clone();
        shuffled.shuffle(&mut rng);
        let mut parts = vec![Vec::new(); k];
        for r in shuffled {
            parts[rng.random_range(0..k)].push(r);
        }
        let mut folded: Vec<ReportSums> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i % 2 == 0 {
                    through_arrow(p, &header)
                } else {
                    ReportSums::Hadamard(one_pass(p, leaves))
                }
            })
            .collect();
        folded.shuffle(&mut rng);
        let mut total = ReportSums::new(Mechanism::Hadamard, EPS, leaves).unwrap();
        for f in &folded {
            total.merge(f).unwrap();
        }
        let ReportSums::Hadamard(total) = total else {
            panic!("Hadamard sums")
        };
        assert_eq!(total, whole, "the integer statistic differs");
        let (sums, m) = model(&total);
        assert_eq!(sums, whole_sums);
        assert_eq!(m, whole_model);
    }
}

/// The decoded per-leaf sums are unbiased: S̃_P^j = n̂_(j,0) + n̂_(j,1) has mean n_j and
/// variance 2n/α² − n_j, Ñ_P^j has mean n_(j,1) and variance n/α² − n_(j,1) (the cells'
/// estimates are uncorrelated; `dpfair_privacy::mechanisms::HadamardResponse`). Over T
/// independent queries the mean error has sd √(variance/T); the test allows 5 sd per sum
/// (normal tail 6·10⁻⁷ each, 16 sums; the central limit theorem over T·n bounded terms).
#[test]
fn decoded_leaf_sums_are_unbiased() {
    let d = LpctDesign::default();
    let private = d.generate(200, 2).unwrap();
    let public = d.public(100, 2).unwrap();
    let tree = lpct::partition(&TreeSettings::default(), 3, &public).unwrap();
    let (x, y) = lpct::binary_xy(&private, "private").unwrap();
    let truth = tree.leaf_counts(x, y).unwrap();
    let (t, n) = (1500, private.n_rows() as f64);
    let alpha2 = (EPS / 2.0).tanh().powi(2);
    let l = tree.n_leaves();
    let (mut count, mut positive) = (vec![0.0; l], vec![0.0; l]);
    let mut noise = Noise::seeded(5);
    for _ in 0..t {
        let s = hadamard_sums(&tree, x, y, EPS, &mut Ledger::unlimited(), &mut noise, "q").unwrap();
        for j in 0..l {
            count[j] += s.count[j];
            positive[j] += s.positive[j];
        }
    }
    for j in 0..l {
        let (nj, pj) = (truth.count[j] as f64, truth.positive[j] as f64);
        let sd_count = ((2.0 * n / alpha2 - nj) / t as f64).sqrt();
        let sd_pos = ((n / alpha2 - pj) / t as f64).sqrt();
        let (mc, mp) = (count[j] / t as f64, positive[j] / t as f64);
        assert!(
            (mc - nj).abs() < 5.0 * sd_count,
            "leaf {j}: count {mc} vs {nj}"
        );
        assert!(
            (mp - pj).abs() < 5.0 * sd_pos,
            "leaf {j}: positive {mp} vs {pj}"
        );
    }
}
