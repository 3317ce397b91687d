//! The loaders of the built-in data sets, each with the preprocessing of the paper that uses it
//! (cited per loader).

use super::dir::{DataDir, SourceFile};
use super::error::Result;
use super::read::{OneHot, code, code_of, column, number, read};
use super::{Builtin, Info};
use crate::table::Table;
use crate::{Dataset, Groups, Target};
use ndarray::Array2;

/// A source file of the catalogue: name, sha256 (as in the data directory's `README.md`), origin.
const fn source(name: &'static str, sha256: &'static str, origin: &'static str) -> SourceFile {
    SourceFile {
        name,
        sha256,
        origin,
    }
}

const UCI_ADULT: &str = "UCI Adult, https://archive.ics.uci.edu/dataset/2/adult";

#[rustfmt::skip]
pub(crate) const ADULT_DATA: SourceFile = source("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", UCI_ADULT);
#[rustfmt::skip]
pub(crate) const ADULT_TEST: SourceFile = source("adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", UCI_ADULT);
#[rustfmt::skip]
pub(crate) const COMMUNITIES: SourceFile = source("communities_crime.csv", "6ca7f7a9c71b7aa61b2b0a95769f296e8194ab212b1b2723f2017b8780492fa7", "UCI Communities and Crime, https://archive.ics.uci.edu/dataset/183/communities+and+crime (columns with missing values dropped)");
#[rustfmt::skip]
pub(crate) const CREDIT: SourceFile = source("credit_card_clients.csv", "7cfc3bb35b6986be40cccb5d490806f082b46f93afafdce27fd7f409eb5abb02", "UCI Default of Credit Card Clients, https://archive.ics.uci.edu/dataset/350 (raw columns without ID, as CSV)");
#[rustfmt::skip]
pub(crate) const FDP_ADULT: SourceFile = source("fdpfair_adult.csv", "458a8618fa0d4848eb0ac9f6836de9d169f79816e5c96e2189a8f09a4aec060f", "the FDP-Fair authors' repository, https://github.com/GengyuXue/DP_Fair_classification (`Real data/income/adult.csv`)");
#[rustfmt::skip]
pub(crate) const FDP_LAW: SourceFile = source("fdpfair_law_40000.csv", "c8296374b7fac27db2dc0ecc7a7fb71434ad55e880f8a05c78214b4ba981165c", "the FDP-Fair authors' repository, https://github.com/GengyuXue/DP_Fair_classification (`Real data/law/law_unfair_40000.csv`)");
#[rustfmt::skip]
pub(crate) const LAW_BAR: SourceFile = source("law_bar_pass.csv", "76ebfdb0427ce8db038d53fa5943180ac77096bffb8264f000ed21e9f0ec82f2", "LSAC bar passage study, https://storage.googleapis.com/lawschool_dataset/bar_pass_prediction.csv");
#[rustfmt::skip]
pub(crate) const DIABETES_PRI: SourceFile = source("lpct_diabetes_pri.csv", "04879b80ca5c839df7c1f1fef65b8782d2de613030b19e154b38dab78139772e", "the LPCT authors' cleaned split, https://github.com/Karlmyh/LPCT (`data/clean/diabetes_pri.csv`)");
#[rustfmt::skip]
pub(crate) const DIABETES_PUB: SourceFile = source("lpct_diabetes_pub.csv", "647d89b37f4a94185d38d9daa52b4e2e8ee12af816a4eb5fad36167f7a1c7dce", "the LPCT authors' cleaned split, https://github.com/Karlmyh/LPCT (`data/clean/diabetes_pub.csv`)");
#[rustfmt::skip]
pub(crate) const PARKINSONS: SourceFile = source("parkinsons_updrs.tsv", "52229b3075c2109a2c144f5584d88cc5ea99022a9a9eaa6d978b2e8e7c6bc501", "UCI Parkinsons Telemonitoring, https://archive.ics.uci.edu/dataset/189 (converted to tab-separated)");

/// Rows of features being assembled, with their groups and target.
struct Builder {
    names: Vec<String>,
    values: Vec<f64>,
    groups: Vec<u32>,
}

impl Builder {
    fn new(names: Vec<String>) -> Self {
        Builder {
            names,
            values: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Feature names: the numeric columns', then each encoder's one-hot columns.
    fn numeric_then_one_hot(numeric: &[&str], encoders: &[OneHot]) -> Self {
        Builder::new(
            numeric
                .iter()
                .map(|s| s.to_string())
                .chain(encoders.iter().flat_map(|e| e.names()))
                .collect(),
        )
    }

    /// Append the numbers in columns `cols` of row `r`.
    fn push_numbers(&mut self, t: &Table, r: usize, cols: &[usize]) -> Result<()> {
        for &c in cols {
            self.values.push(number(t, r, c)?);
        }
        Ok(())
    }

    fn finish(self, group_names: &[&str], target: Target) -> Dataset {
        let n = self.groups.len();
        let d = self.names.len();
        Dataset {
            features: Array2::from_shape_vec((n, d), self.values).expect("rows of d values"),
            feature_names: self.names,
            groups: Some(Groups {
                codes: self.groups,
                names: group_names.iter().map(|s| s.to_string()).collect(),
            }),
            target: Some(target),
        }
    }
}

fn builtin(dataset: Dataset, standardize: Vec<usize>) -> Builtin {
    Builtin {
        dataset,
        public: None,
        standardize,
    }
}

/// `adult`: raw UCI train + test, rows with `?` dropped (45,222), six numeric columns and the
/// one-hot encoding of the seven other non-sensitive categorical columns (levels sorted, as
/// `pandas.get_dummies`): 6 + 96 = 102 features; sensitive `sex` (Female = 0, Male = 1,
/// `docs/deviations.md#decoupled-group-encoding`); label income > 50K. Ghoukasian & Asoodeh,
/// Appendix B; Say et al. (`docs/deviations.md#dp2dp-adult-size`). Both papers z-score the
/// six numeric columns with training-split statistics: see [`Builtin::standardize`].
pub(crate) fn adult(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const NUMERIC: [usize; 6] = [0, 2, 4, 10, 11, 12];
    const CATEGORICAL: [(usize, &str); 7] = [
        (1, "workclass"),
        (3, "education"),
        (5, "marital-status"),
        (6, "occupation"),
        (7, "relationship"),
        (8, "race"),
        (13, "native-country"),
    ];
    const NUMERIC_NAMES: [&str; 6] = [
        "age",
        "fnlwgt",
        "education-num",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
    ];
    let (sex, income) = (9, 14);
    let tables = [
        read(&dir.verified_path(info.name, &ADULT_DATA)?, b',', false, 0)?,
        read(&dir.verified_path(info.name, &ADULT_TEST)?, b',', false, 1)?,
    ];
    // Rows without a missing value, as (table, row).
    let mut rows = Vec::new();
    for (k, t) in tables.iter().enumerate() {
        if t.columns.len() != 15 {
            return Err(super::CatalogError::UnexpectedShape {
                dataset: info.name.into(),
                what: "columns in adult.data / adult.test",
                expected: 15,
                found: t.columns.len(),
            });
        }
        rows.extend(
            (0..t.n_rows())
                .filter(|&r| (0..15).all(|c| t.get(r, c) != "?"))
                .map(|r| (k, r)),
        );
    }
    let encoders: Vec<OneHot> = CATEGORICAL
        .iter()
        .map(|&(c, name)| OneHot::fit(name, rows.iter().map(|&(k, r)| tables[k].get(r, c))))
        .collect();
    let mut b = Builder::numeric_then_one_hot(&NUMERIC_NAMES, &encoders);
    let mut labels = Vec::with_capacity(rows.len());
    for &(k, r) in &rows {
        let t = &tables[k];
        b.push_numbers(t, r, &NUMERIC)?;
        for (e, &(c, _)) in encoders.iter().zip(&CATEGORICAL) {
            e.encode(t.get(r, c), &mut b.values);
        }
        b.groups.push(code(t, r, sex, &["Female", "Male"])?);
        let label = t.get(r, income).trim_end_matches('.');
        labels.push(code_of(t, r, income, label, &["<=50K", ">50K"])? as u8);
    }
    let data = b.finish(&["Female", "Male"], Target::Binary(labels));
    Ok(builtin(data, (0..NUMERIC.len()).collect()))
}

/// The FDP-Fair authors' preprocessed files (Xue & Yu, §5.2): three raw (unscaled, `docs/deviations.md#fdp-fair-real-data-outside-the-unit-cube`)
/// features, `Sensitive` as the group and `Label` as the binary target.
fn fdp_file(
    dir: &DataDir,
    info: &Info,
    file: &SourceFile,
    features: [&str; 3],
    groups: [&str; 2],
) -> Result<Builtin> {
    let t = read(&dir.verified_path(info.name, file)?, b',', true, 0)?;
    let cols: Vec<usize> = features
        .iter()
        .map(|c| column(&t, c))
        .collect::<Result<_>>()?;
    let (s, y) = (column(&t, "Sensitive")?, column(&t, "Label")?);
    let mut b = Builder::new(features.iter().map(|s| s.to_string()).collect());
    let mut labels = Vec::with_capacity(t.n_rows());
    for r in 0..t.n_rows() {
        b.push_numbers(&t, r, &cols)?;
        b.groups.push(code(&t, r, s, &["0", "1"])?);
        labels.push(code(&t, r, y, &["0", "1"])? as u8);
    }
    Ok(builtin(b.finish(&groups, Target::Binary(labels)), vec![]))
}

/// `adult-fdp`: Age, Workclass (label-encoded), Education-Num; Sensitive = sex (1 = male).
pub(crate) fn adult_fdp(dir: &DataDir, info: &Info) -> Result<Builtin> {
    fdp_file(
        dir,
        info,
        &FDP_ADULT,
        ["Age", "Workclass", "Education-Num"],
        ["female", "male"],
    )
}

/// `law-admissions`: LSAT, GPA, resident; Sensitive = white (1) vs non-white (0).
pub(crate) fn law_admissions(dir: &DataDir, info: &Info) -> Result<Builtin> {
    fdp_file(
        dir,
        info,
        &FDP_LAW,
        ["LSAT", "GPA", "resident"],
        ["non-white", "white"],
    )
}

/// `law-bar` (Xian et al.): rows with `race1` in {asian, black, hisp, white} (21,983),
/// groups coded alphabetically, target `ugpa`. Features are the other columns the authors keep
/// (`dnn_bar_pass_prediction`, `lsat`, `pass_bar`, `gender` one-hot — 4 rows have it blank and
/// get zeros); the paper's experiments do not use them (`X = Y`, Xian et al., Section 4).
pub(crate) fn law_bar(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const RACES: [&str; 4] = ["asian", "black", "hisp", "white"];
    const NUMERIC: [&str; 3] = ["dnn_bar_pass_prediction", "lsat", "pass_bar"];
    let t = read(&dir.verified_path(info.name, &LAW_BAR)?, b',', true, 0)?;
    let (race, ugpa, gender) = (
        column(&t, "race1")?,
        column(&t, "ugpa")?,
        column(&t, "gender")?,
    );
    let numeric: Vec<usize> = NUMERIC
        .iter()
        .map(|c| column(&t, c))
        .collect::<Result<_>>()?;
    let gender_levels = OneHot {
        column: "gender".into(),
        levels: vec!["female".into(), "male".into()],
    };
    let mut b = Builder::numeric_then_one_hot(&NUMERIC, std::slice::from_ref(&gender_levels));
    let mut y = Vec::new();
    for r in 0..t.n_rows() {
        let Some(g) = RACES.iter().position(|&x| x == t.get(r, race)) else {
            continue;
        };
        b.push_numbers(&t, r, &numeric)?;
        gender_levels.encode(t.get(r, gender), &mut b.values);
        b.groups.push(g as u32);
        y.push(number(&t, r, ugpa)?);
    }
    Ok(builtin(b.finish(&RACES, Target::Real(y)), vec![0, 1, 2]))
}

/// `communities` (Xian et al., `docs/deviations.md#fair-regression-data-set-subtleties`): the 99 complete features, target
/// `ViolentCrimesPerPop` (normalised to [0, 1]), group 1 ("black") iff `racepctblack > 0.06`
/// (970 vs 1,024). `state`, `communityname`, `fold` and the extra `Black`, `class` columns are
/// not features.
pub(crate) fn communities(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const NOT_FEATURES: [&str; 6] = [
        "state",
        "communityname",
        "fold",
        "ViolentCrimesPerPop",
        "Black",
        "class",
    ];
    let t = read(&dir.verified_path(info.name, &COMMUNITIES)?, b',', true, 0)?;
    let features: Vec<usize> = (0..t.columns.len())
        .filter(|&c| !NOT_FEATURES.contains(&t.columns[c].as_str()))
        .collect();
    let (target, black) = (
        column(&t, "ViolentCrimesPerPop")?,
        column(&t, "racepctblack")?,
    );
    let mut b = Builder::new(features.iter().map(|&c| t.columns[c].clone()).collect());
    let mut y = Vec::new();
    for r in 0..t.n_rows() {
        b.push_numbers(&t, r, &features)?;
        b.groups.push(u32::from(number(&t, r, black)? > 0.06));
        y.push(number(&t, r, target)?);
    }
    Ok(builtin(
        b.finish(&["white", "black"], Target::Real(y)),
        vec![],
    ))
}

/// `credit` / `credit-dp2dp` (Ghoukasian & Asoodeh, Appendix B; Say et al.): the DP-FERMI (Lowy et al.)
/// encoding both papers use: 14 numeric columns (LIMIT_BAL, AGE, BILL_AMT1–6, PAY_AMT1–6) and the
/// one-hot encoding of EDUCATION, MARRIAGE, PAY_0, PAY_2–PAY_6. Raw levels give 89 columns; the
/// papers' 85 need four merged levels, done as Ghoukasian & Asoodeh's Appendix B suggests: EDUCATION {0, 5, 6} → 4
/// ("others") and MARRIAGE 0 → 3 ("others"). Sensitive `SEX`: 2 (female) = 0, 1 (male) = 1.
pub(crate) fn credit(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const NUMERIC: [&str; 14] = [
        "LIMIT_BAL",
        "AGE",
        "BILL_AMT1",
        "BILL_AMT2",
        "BILL_AMT3",
        "BILL_AMT4",
        "BILL_AMT5",
        "BILL_AMT6",
        "PAY_AMT1",
        "PAY_AMT2",
        "PAY_AMT3",
        "PAY_AMT4",
        "PAY_AMT5",
        "PAY_AMT6",
    ];
    const CATEGORICAL: [&str; 8] = [
        "EDUCATION",
        "MARRIAGE",
        "PAY_0",
        "PAY_2",
        "PAY_3",
        "PAY_4",
        "PAY_5",
        "PAY_6",
    ];
    let t = read(&dir.verified_path(info.name, &CREDIT)?, b',', true, 0)?;
    let idx =
        |names: &[&str]| -> Result<Vec<usize>> { names.iter().map(|c| column(&t, c)).collect() };
    let (num, cat) = (idx(&NUMERIC)?, idx(&CATEGORICAL)?);
    let (sex, label) = (column(&t, "SEX")?, column(&t, "default payment")?);
    let merged = |name: &str, v: &str| -> String {
        match (name, v) {
            ("EDUCATION", "0" | "5" | "6") => "4".into(),
            ("MARRIAGE", "0") => "3".into(),
            _ => v.to_string(),
        }
    };
    let encoders: Vec<OneHot> = CATEGORICAL
        .iter()
        .zip(&cat)
        .map(|(name, &c)| {
            let values: Vec<String> = (0..t.n_rows()).map(|r| merged(name, t.get(r, c))).collect();
            OneHot::fit(name, values.iter().map(String::as_str))
        })
        .collect();
    let mut b = Builder::numeric_then_one_hot(&NUMERIC, &encoders);
    let mut y = Vec::new();
    for r in 0..t.n_rows() {
        b.push_numbers(&t, r, &num)?;
        for ((e, &c), name) in encoders.iter().zip(&cat).zip(CATEGORICAL) {
            e.encode(&merged(name, t.get(r, c)), &mut b.values);
        }
        b.groups.push(1 - code(&t, r, sex, &["1", "2"])?);
        y.push(code(&t, r, label, &["0", "1"])? as u8);
    }
    Ok(builtin(
        b.finish(&["female", "male"], Target::Binary(y)),
        (0..NUMERIC.len()).collect(),
    ))
}

/// `parkinsons` (Say et al., `docs/deviations.md#dp2dp-parkinsons-label`): the tab-separated UCI file; 19 features (all but
/// `subject#`, `sex`, `total_UPDRS`; `motor_UPDRS` kept as Lowy et al. do), label
/// `total_UPDRS > 27.576` (the median, strict), sensitive `sex` (0 = male, 1 = female).
pub(crate) fn parkinsons(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const MEDIAN: f64 = 27.576;
    let t = read(&dir.verified_path(info.name, &PARKINSONS)?, b'\t', true, 0)?;
    let (subject, sex, total) = (
        column(&t, "subject#")?,
        column(&t, "sex")?,
        column(&t, "total_UPDRS")?,
    );
    let features: Vec<usize> = (0..t.columns.len())
        .filter(|c| ![subject, sex, total].contains(c))
        .collect();
    let mut b = Builder::new(features.iter().map(|&c| t.columns[c].clone()).collect());
    let mut y = Vec::new();
    for r in 0..t.n_rows() {
        b.push_numbers(&t, r, &features)?;
        b.groups.push(code(&t, r, sex, &["0", "1"])?);
        y.push(u8::from(number(&t, r, total)? > MEDIAN));
    }
    let d = features.len();
    Ok(builtin(
        b.finish(&["male", "female"], Target::Binary(y)),
        (0..d).collect(),
    ))
}

/// `diabetes-lpct` (Ma & Yang, Section 7.1): the LPCT authors' cleaned split, label first, no header;
/// the private file is the data set and the public one [`Builtin::public`]. No groups.
/// LPCT min-max scales with the public sample's range at fit time (Ma & Yang, Section 4.3), not here.
pub(crate) fn diabetes(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const NAMES: [&str; 8] = [
        "Pregnancies",
        "Glucose",
        "BloodPressure",
        "SkinThickness",
        "Insulin",
        "BMI",
        "DiabetesPedigreeFunction",
        "Age",
    ];
    let load = |file: &SourceFile| -> Result<Dataset> {
        let t = read(&dir.verified_path(info.name, file)?, b',', false, 0)?;
        if t.columns.len() != NAMES.len() + 1 {
            return Err(super::CatalogError::UnexpectedShape {
                dataset: info.name.into(),
                what: "columns (label + 8 features)",
                expected: NAMES.len() + 1,
                found: t.columns.len(),
            });
        }
        let mut values = Vec::with_capacity(t.n_rows() * NAMES.len());
        let mut y = Vec::with_capacity(t.n_rows());
        for r in 0..t.n_rows() {
            y.push(code(&t, r, 0, &["0", "1"])? as u8);
            for c in 1..=NAMES.len() {
                values.push(number(&t, r, c)?);
            }
        }
        Ok(Dataset {
            features: Array2::from_shape_vec((y.len(), NAMES.len()), values).expect("8 per row"),
            feature_names: NAMES.iter().map(|s| s.to_string()).collect(),
            groups: None,
            target: Some(Target::Binary(y)),
        })
    };
    Ok(Builtin {
        dataset: load(&DIABETES_PRI)?,
        public: Some(load(&DIABETES_PUB)?),
        standardize: vec![],
    })
}
