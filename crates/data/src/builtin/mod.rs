//! Built-in data sets of the papers, read from a data directory and verified by sha256.
//!
//! ```no_run
//! use dpfair_data::builtin::{self, DataDir};
//! # fn main() -> dpfair_data::builtin::Result<()> {
//! let dir = DataDir::resolve(None)?; // --data-dir, else DPFAIR_DATA_DIR, else ~/.cache/dpfair
//! let adult = builtin::load("adult", &dir)?; // 45,222 × 102, groups = sex
//! let data = &adult.dataset;
//! # Ok(()) }
//! ```
//!
//! Every loader checks the row and feature counts stated in the papers ([`Info::rows`],
//! [`Info::features`]) and fails with [`CatalogError::UnexpectedShape`] otherwise. Files are
//! never downloaded: a missing one is an error that names its public origin. The sha256 values are
//! those of the data directory's `README.md`.

mod dir;
pub mod error;
mod read;
mod sets;

pub use dir::{DATA_DIR_VAR, DataDir, FileStatus, SourceFile, sha256_file};
pub use error::{CatalogError, Result};

use crate::Dataset;

/// A catalogue entry: what the data set is and what loading it gives.
#[derive(Debug)]
pub struct Info {
    /// The name `dpfair datasets` and [`load`] use.
    pub name: &'static str,
    /// The paper(s) and preprocessing it follows.
    pub paper: &'static str,
    pub description: &'static str,
    /// Rows after preprocessing (the private rows for `diabetes-lpct`).
    pub rows: usize,
    /// Features after preprocessing.
    pub features: usize,
    /// Public rows (`diabetes-lpct` only).
    pub public_rows: usize,
    /// The sensitive attribute, if any.
    pub sensitive: Option<&'static str>,
    /// Group names in code order.
    pub groups: &'static [&'static str],
    /// The target and its encoding.
    pub target: &'static str,
    /// The experimental protocol the paper applies after loading (split, scaling).
    pub protocol: &'static str,
    pub files: &'static [&'static SourceFile],
    loader: fn(&DataDir, &Info) -> Result<Builtin>,
}

/// A loaded built-in data set.
#[derive(Clone, Debug)]
pub struct Builtin {
    pub dataset: Dataset,
    /// The public sample, for data sets that have one (`diabetes-lpct`).
    pub public: Option<Dataset>,
    /// Feature columns the paper standardises with *training-split* statistics (fit the data
    /// crate's standardiser on the training rows after splitting, then apply it to every split).
    /// Not standardised here, because the statistics depend on the split.
    pub standardize: Vec<usize>,
}

use sets::*;

static CATALOG: [Info; 9] = [
    Info {
        name: "adult",
        paper: "seeds 003 (decoupled) and 004 (DP2DP): raw UCI train + test, '?' rows dropped",
        description: "UCI Adult census income, one-hot encoded (DP-FERMI / Lowy et al. encoding)",
        rows: 45_222,
        features: 102,
        public_rows: 0,
        sensitive: Some("sex"),
        groups: &["Female", "Male"],
        target: "binary: income > 50K",
        protocol: "Ghoukasian & Asoodeh: 50/25/25 train/post-processing/test; Say et al.: 55/20/25; z-score the 6 numeric columns on the training split",
        files: &[&ADULT_DATA, &ADULT_TEST],
        loader: adult,
    },
    Info {
        name: "adult-fdp",
        paper: "Xue & Yu (FDP-Fair), §5.2: the authors' 3-feature Adult file",
        description: "Adult with Age, Workclass (label-encoded), Education-Num; unscaled",
        rows: 48_842,
        features: 3,
        public_rows: 0,
        sensitive: Some("sex"),
        groups: &["female", "male"],
        target: "binary: income > 50K",
        protocol: "70/30 train/test per repetition; features not rescaled (docs/deviations.md#fdp-fair-real-data-outside-the-unit-cube)",
        files: &[&FDP_ADULT],
        loader: adult_fdp,
    },
    Info {
        name: "law-admissions",
        paper: "Xue & Yu (FDP-Fair), §5.2: the authors' 40,000-row law-school subset",
        description: "LSAC admissions: LSAT, GPA, resident; unscaled",
        rows: 40_000,
        features: 3,
        public_rows: 0,
        sensitive: Some("race (white)"),
        groups: &["non-white", "white"],
        target: "binary: admitted",
        protocol: "70/30 train/test per repetition; features not rescaled (docs/deviations.md#fdp-fair-real-data-outside-the-unit-cube)",
        files: &[&FDP_LAW],
        loader: law_admissions,
    },
    Info {
        name: "law-bar",
        paper: "Xian et al., experiments: race1 in {asian, black, hisp, white}",
        description: "LSAC bar passage study; the experiments use only (ugpa, race1)",
        rows: 21_983,
        features: 5,
        public_rows: 0,
        sensitive: Some("race1"),
        groups: &["asian", "black", "hisp", "white"],
        target: "real: ugpa in [1, 4]",
        protocol: "70/30 train/test, seeds 33..83; the post-processor acts on Y itself (X = Y)",
        files: &[&LAW_BAR],
        loader: law_bar,
    },
    Info {
        name: "communities",
        paper: "Xian et al., experiments: 99 complete features",
        description: "UCI Communities and Crime",
        rows: 1_994,
        features: 99,
        public_rows: 0,
        sensitive: Some("racepctblack > 0.06"),
        groups: &["white", "black"],
        target: "real: ViolentCrimesPerPop in [0, 1]",
        protocol: "70/30 train/test, seeds 33..83; the post-processor acts on Y itself (X = Y)",
        files: &[&COMMUNITIES],
        loader: communities,
    },
    Info {
        name: "credit",
        paper: "Ghoukasian & Asoodeh, Appendix B: DP-FERMI encoding, 85 features",
        description: "UCI default of credit card clients (Taiwan)",
        rows: 30_000,
        features: 85,
        public_rows: 0,
        sensitive: Some("SEX"),
        groups: &["female", "male"],
        target: "binary: default payment next month",
        protocol: "75/25 split, then 2/3 : 1/3 of the 75% (50/25/25); z-score the 14 numeric columns on the training split; the base model also takes A as an input",
        files: &[&CREDIT],
        loader: credit,
    },
    Info {
        name: "credit-dp2dp",
        paper: "Say et al., experiments: Lowy et al. encoding, 85 features (the same encoding as `credit`)",
        description: "UCI default of credit card clients (Taiwan)",
        rows: 30_000,
        features: 85,
        public_rows: 0,
        sensitive: Some("SEX (S = +1 male)"),
        groups: &["female", "male"],
        target: "binary: default payment next month",
        protocol: "55/20/25 labelled/unlabelled/test; z-score the 14 numeric columns on the training split; S is not a feature",
        files: &[&CREDIT],
        loader: credit,
    },
    Info {
        name: "parkinsons",
        paper: "Say et al., experiments: Lowy et al. preprocessing, 19 features",
        description: "UCI Parkinsons telemonitoring (42 subjects)",
        rows: 5_875,
        features: 19,
        public_rows: 0,
        sensitive: Some("sex"),
        groups: &["male", "female"],
        target: "binary: total_UPDRS > 27.576 (median)",
        protocol: "55/20/25 labelled/unlabelled/test; z-score all 19 features on the training split",
        files: &[&PARKINSONS],
        loader: parkinsons,
    },
    Info {
        name: "diabetes-lpct",
        paper: "Ma & Yang (LPCT), Section 7: the authors' cleaned public/private split",
        description: "Kaggle Healthcare-Diabetes: 200 public + 2,568 private rows, 8 features",
        rows: 2_568,
        features: 8,
        public_rows: 200,
        sensitive: None,
        groups: &[],
        target: "binary: diabetes outcome",
        protocol: "private rows re-split 80/20 train/test per repetition; min-max scaling fitted on the public X",
        files: &[&DIABETES_PRI, &DIABETES_PUB],
        loader: diabetes,
    },
];

/// Every built-in data set.
pub fn catalog() -> &'static [Info] {
    &CATALOG
}

/// The catalogue entry named `name`.
pub fn info(name: &str) -> Result<&'static Info> {
    CATALOG
        .iter()
        .find(|i| i.name == name)
        .ok_or_else(|| CatalogError::UnknownDataset {
            name: name.to_string(),
            known: CATALOG
                .iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl Info {
    /// Load this data set from `dir` (files verified, preprocessing applied, shape checked).
    pub fn load(&self, dir: &DataDir) -> Result<Builtin> {
        let b = (self.loader)(dir, self)?;
        let shape = |what, expected, found| {
            if expected == found {
                Ok(())
            } else {
                Err(CatalogError::UnexpectedShape {
                    dataset: self.name.to_string(),
                    what,
                    expected,
                    found,
                })
            }
        };
        shape("rows", self.rows, b.dataset.n_rows())?;
        shape("features", self.features, b.dataset.n_features())?;
        shape(
            "public rows",
            self.public_rows,
            b.public.as_ref().map_or(0, Dataset::n_rows),
        )?;
        Ok(b)
    }

    /// The status of each of this data set's files in `dir`.
    pub fn file_status(&self, dir: &DataDir) -> Vec<(&'static SourceFile, FileStatus)> {
        self.files.iter().map(|f| (*f, dir.status(f))).collect()
    }

    /// Whether every file is present and verified.
    pub fn available(&self, dir: &DataDir) -> bool {
        self.file_status(dir)
            .iter()
            .all(|(_, s)| *s == FileStatus::Verified)
    }
}

/// Load the built-in data set `name` from `dir`.
pub fn load(name: &str, dir: &DataDir) -> Result<Builtin> {
    info(name)?.load(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Target;

    /// The data directory of a test gated on the files of the data sets it loads
    /// (`cfg(dpfair_data = …)`, see [`crate::testdata`]).
    fn data_dir() -> DataDir {
        DataDir::new(crate::testdata::dir())
    }

    fn counts(codes: &[u32], k: usize) -> Vec<usize> {
        let mut c = vec![0; k];
        codes.iter().for_each(|&g| c[g as usize] += 1);
        c
    }

    fn positives(t: &Option<Target>) -> usize {
        match t {
            Some(Target::Binary(y)) => y.iter().map(|&v| v as usize).sum(),
            _ => panic!("binary target expected"),
        }
    }

    #[test]
    fn unknown_names_list_the_catalogue() {
        let e = info("adulte").unwrap_err().to_string();
        assert!(e.contains("adult, adult-fdp"), "{e}");
        assert_eq!(catalog().len(), 9);
    }

    #[test]
    fn missing_file_error_names_its_origin() {
        let dir = DataDir::new("/nonexistent/dpfair-data");
        let e = load("parkinsons", &dir).unwrap_err().to_string();
        assert!(
            e.contains("parkinsons_updrs.tsv") && e.contains("archive.ics.uci.edu/dataset/189"),
            "{e}"
        );
        assert!(!info("credit").unwrap().available(&dir));
    }

    #[test]
    #[cfg_attr(
        not(all(dpfair_data = "adult.data", dpfair_data = "adult.test")),
        ignore = "needs adult.data and adult.test in DPFAIR_DATA_DIR"
    )]
    fn adult_has_45222_rows_and_102_features() {
        let b = load("adult", &data_dir()).unwrap();
        let g = &b.dataset.groups.as_ref().unwrap().codes;
        // Ghoukasian & Asoodeh, Appendix B; Say et al.: Female 14,695, Male 30,527; > 50K: 11,208.
        assert_eq!(counts(g, 2), vec![14_695, 30_527]);
        assert_eq!(positives(&b.dataset.target), 11_208);
        assert_eq!(b.standardize, (0..6).collect::<Vec<_>>());
    }

    /// Xue & Yu, §5.2: cell counts (A, Y) of the authors' files.
    fn check_fdp_fair_counts(name: &str, a1: usize, pos: usize) {
        let b = load(name, &data_dir()).unwrap();
        let g = &b.dataset.groups.as_ref().unwrap().codes;
        assert_eq!(counts(g, 2)[1], a1, "{name}");
        assert_eq!(positives(&b.dataset.target), pos, "{name}");
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "fdpfair_adult.csv"),
        ignore = "needs fdpfair_adult.csv in DPFAIR_DATA_DIR"
    )]
    fn fdp_fair_adult_matches_the_papers_counts() {
        check_fdp_fair_counts("adult-fdp", 32_650, 1_769 + 9_918);
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "fdpfair_law_40000.csv"),
        ignore = "needs fdpfair_law_40000.csv in DPFAIR_DATA_DIR"
    )]
    fn fdp_fair_law_matches_the_papers_counts() {
        check_fdp_fair_counts("law-admissions", 30_588, 3_438 + 4_245);
    }

    /// Group counts and the response range of Xian et al.'s data sets.
    fn check_regression_set(name: &str, groups: &[usize], range: (f64, f64)) {
        let b = load(name, &data_dir()).unwrap();
        let g = &b.dataset.groups.as_ref().unwrap().codes;
        assert_eq!(counts(g, groups.len()), groups, "{name}");
        let Some(Target::Real(y)) = &b.dataset.target else {
            panic!("{name}: real target expected")
        };
        assert!(y.iter().all(|v| (range.0..=range.1).contains(v)), "{name}");
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "law_bar_pass.csv"),
        ignore = "needs law_bar_pass.csv in DPFAIR_DATA_DIR"
    )]
    fn law_bar_groups_match_the_paper() {
        check_regression_set("law-bar", &[897, 1_343, 1_027, 18_716], (1.0, 4.0));
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "communities_crime.csv"),
        ignore = "needs communities_crime.csv in DPFAIR_DATA_DIR"
    )]
    fn communities_groups_match_the_paper() {
        check_regression_set("communities", &[1_024, 970], (0.0, 1.0));
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "credit_card_clients.csv"),
        ignore = "needs credit_card_clients.csv in DPFAIR_DATA_DIR"
    )]
    fn credit_variants_have_85_features_and_the_papers_counts() {
        for name in ["credit", "credit-dp2dp"] {
            let b = load(name, &data_dir()).unwrap();
            let g = &b.dataset.groups.as_ref().unwrap().codes;
            // Ghoukasian & Asoodeh, Appendix B: Male 11,888, Female 18,112; positive rate 22.1%.
            assert_eq!(counts(g, 2), vec![18_112, 11_888]);
            assert_eq!(positives(&b.dataset.target), 6_636);
            assert_eq!(b.standardize.len(), 14);
        }
    }

    #[test]
    #[cfg_attr(
        not(dpfair_data = "parkinsons_updrs.tsv"),
        ignore = "needs parkinsons_updrs.tsv in DPFAIR_DATA_DIR"
    )]
    fn parkinsons_label_and_groups_match_the_paper() {
        let b = load("parkinsons", &data_dir()).unwrap();
        let g = &b.dataset.groups.as_ref().unwrap().codes;
        // Say et al.: Male 4,008 / Female 1,867; 2,934 Yes.
        assert_eq!(counts(g, 2), vec![4_008, 1_867]);
        assert_eq!(positives(&b.dataset.target), 2_934);
        assert!(
            !b.dataset
                .feature_names
                .iter()
                .any(|n| n == "total_UPDRS" || n == "sex")
        );
    }

    #[test]
    #[cfg_attr(
        not(all(
            dpfair_data = "lpct_diabetes_pri.csv",
            dpfair_data = "lpct_diabetes_pub.csv"
        )),
        ignore = "needs lpct_diabetes_pri.csv and lpct_diabetes_pub.csv in DPFAIR_DATA_DIR"
    )]
    fn diabetes_has_public_and_private_rows() {
        let b = load("diabetes-lpct", &data_dir()).unwrap();
        assert_eq!(b.public.as_ref().unwrap().n_features(), 8);
        assert!(b.dataset.groups.is_none());
    }
}
