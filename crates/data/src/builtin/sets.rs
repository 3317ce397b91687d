//! The loaders of the built-in data sets, each with the preprocessing of the paper that uses it
//! (see each spec's dataset section, cited per loader).

use super::dir::{DataDir, SourceFile};
use super::error::{CatalogError, Result};
use super::read::{OneHot, Records, number, read};
use super::{Builtin, Info};
use crate::{Dataset, Groups, Target};
use ndarray::Array2;
use std::path::Path;

pub(crate) const ADULT_DATA: SourceFile = SourceFile {
    name: "adult.data",
    sha256: "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    origin: "UCI Adult, https://archive.ics.uci.edu/dataset/2/adult",
};
pub(crate) const ADULT_TEST: SourceFile = SourceFile {
    name: "adult.test",
    sha256: "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    origin: "UCI Adult, https://archive.ics.uci.edu/dataset/2/adult",
};
pub(crate) const COMMUNITIES: SourceFile = SourceFile {
    name: "communities_crime.csv",
    sha256: "6ca7f7a9c71b7aa61b2b0a95769f296e8194ab212b1b2723f2017b8780492fa7",
    origin: "UCI Communities and Crime, https://archive.ics.uci.edu/dataset/183/communities+and+crime (columns with missing values dropped)",
};
pub(crate) const CREDIT: SourceFile = SourceFile {
    name: "credit_card_clients.csv",
    sha256: "7cfc3bb35b6986be40cccb5d490806f082b46f93afafdce27fd7f409eb5abb02",
    origin: "UCI Default of Credit Card Clients, https://archive.ics.uci.edu/dataset/350 (raw columns without ID, as CSV)",
};
pub(crate) const FDP_ADULT: SourceFile = SourceFile {
    name: "fdpfair_adult.csv",
    sha256: "458a8618fa0d4848eb0ac9f6836de9d169f79816e5c96e2189a8f09a4aec060f",
    origin: "the FDP-Fair authors' repository, https://github.com/GengyuXue/DP_Fair_classification (`Real data/income/adult.csv`)",
};
pub(crate) const FDP_LAW: SourceFile = SourceFile {
    name: "fdpfair_law_40000.csv",
    sha256: "c8296374b7fac27db2dc0ecc7a7fb71434ad55e880f8a05c78214b4ba981165c",
    origin: "the FDP-Fair authors' repository, https://github.com/GengyuXue/DP_Fair_classification (`Real data/law/law_unfair_40000.csv`)",
};
pub(crate) const LAW_BAR: SourceFile = SourceFile {
    name: "law_bar_pass.csv",
    sha256: "76ebfdb0427ce8db038d53fa5943180ac77096bffb8264f000ed21e9f0ec82f2",
    origin: "LSAC bar passage study, https://storage.googleapis.com/lawschool_dataset/bar_pass_prediction.csv",
};
pub(crate) const DIABETES_PRI: SourceFile = SourceFile {
    name: "lpct_diabetes_pri.csv",
    sha256: "04879b80ca5c839df7c1f1fef65b8782d2de613030b19e154b38dab78139772e",
    origin: "the LPCT authors' cleaned split, https://github.com/Karlmyh/LPCT (`data/clean/diabetes_pri.csv`)",
};
pub(crate) const DIABETES_PUB: SourceFile = SourceFile {
    name: "lpct_diabetes_pub.csv",
    sha256: "647d89b37f4a94185d38d9daa52b4e2e8ee12af816a4eb5fad36167f7a1c7dce",
    origin: "the LPCT authors' cleaned split, https://github.com/Karlmyh/LPCT (`data/clean/diabetes_pub.csv`)",
};
pub(crate) const PARKINSONS: SourceFile = SourceFile {
    name: "parkinsons_updrs.tsv",
    sha256: "52229b3075c2109a2c144f5584d88cc5ea99022a9a9eaa6d978b2e8e7c6bc501",
    origin: "UCI Parkinsons Telemonitoring, https://archive.ics.uci.edu/dataset/189 (converted to tab-separated)",
};

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

fn ragged(path: &Path, row: usize, expected: usize, found: usize) -> CatalogError {
    CatalogError::Malformed {
        path: path.to_path_buf(),
        line: row as u64,
        reason: format!("{found} fields, expected {expected}"),
    }
}

/// `value` coded by its position in `levels`, or an error naming the column.
fn code(path: &Path, row: usize, column: &str, value: &str, levels: &[&str]) -> Result<u32> {
    levels
        .iter()
        .position(|l| *l == value)
        .map(|p| p as u32)
        .ok_or_else(|| CatalogError::Malformed {
            path: path.to_path_buf(),
            line: row as u64,
            reason: format!(
                "column `{column}`: unexpected value `{value}` (expected one of {levels:?})"
            ),
        })
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
/// `pandas.get_dummies`): 6 + 96 = 102 features; sensitive `sex` (Female = 0, Male = 1, seed 003
/// H5); label income > 50K. Seed 003 spec §4.1, seed 004 spec §4.2 (H21). Both papers z-score the
/// six numeric columns with training-split statistics: see [`Builtin::standardize`].
pub(crate) fn adult(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const COLUMNS: [&str; 15] = [
        "age",
        "workclass",
        "fnlwgt",
        "education",
        "education-num",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
        "native-country",
        "income",
    ];
    const NUMERIC: [usize; 6] = [0, 2, 4, 10, 11, 12];
    const CATEGORICAL: [usize; 7] = [1, 3, 5, 6, 7, 8, 13];
    let mut rows = Vec::new();
    for (file, skip) in [(&ADULT_DATA, 0), (&ADULT_TEST, 1)] {
        let path = dir.verified_path(info.name, file)?;
        let recs = read(&path, b',', false, skip)?;
        for (i, r) in recs.rows.into_iter().enumerate() {
            if r.len() != COLUMNS.len() {
                return Err(ragged(&path, i + 1 + skip, COLUMNS.len(), r.len()));
            }
            if !r.iter().any(|v| v == "?") {
                rows.push((path.clone(), i + 1 + skip, r));
            }
        }
    }
    let encoders: Vec<OneHot> = CATEGORICAL
        .iter()
        .map(|&c| OneHot::fit(COLUMNS[c], rows.iter().map(|(_, _, r)| r[c].as_str())))
        .collect();
    let names = NUMERIC
        .iter()
        .map(|&c| COLUMNS[c].to_string())
        .chain(encoders.iter().flat_map(|e| e.names()))
        .collect();
    let mut b = Builder::new(names);
    let mut labels = Vec::with_capacity(rows.len());
    for (path, line, r) in &rows {
        for &c in &NUMERIC {
            b.values.push(number(path, *line, COLUMNS[c], &r[c])?);
        }
        for (e, &c) in encoders.iter().zip(&CATEGORICAL) {
            e.encode(&r[c], &mut b.values);
        }
        b.groups
            .push(code(path, *line, "sex", &r[9], &["Female", "Male"])?);
        let income = r[14].trim_end_matches('.');
        labels.push(code(path, *line, "income", income, &["<=50K", ">50K"])? as u8);
    }
    let data = b.finish(&["Female", "Male"], Target::Binary(labels));
    Ok(builtin(data, (0..NUMERIC.len()).collect()))
}

/// The FDP-Fair authors' preprocessed files (seed 000 spec §4.6): three raw (unscaled, H15)
/// features, `Sensitive` as the group and `Label` as the binary target.
fn fdp_file(
    dir: &DataDir,
    info: &Info,
    file: &SourceFile,
    features: [&str; 3],
    groups: [&str; 2],
) -> Result<Builtin> {
    let path = dir.verified_path(info.name, file)?;
    let recs = read(&path, b',', true, 0)?;
    let cols: Vec<usize> = features
        .iter()
        .map(|c| recs.column(&path, c))
        .collect::<Result<_>>()?;
    let (s, y) = (
        recs.column(&path, "Sensitive")?,
        recs.column(&path, "Label")?,
    );
    let mut b = Builder::new(features.iter().map(|s| s.to_string()).collect());
    let mut labels = Vec::with_capacity(recs.rows.len());
    for (i, r) in recs.rows.iter().enumerate() {
        let line = i + 2;
        if r.len() != recs.header.len() {
            return Err(ragged(&path, line, recs.header.len(), r.len()));
        }
        for (&c, name) in cols.iter().zip(features) {
            b.values.push(number(&path, line, name, &r[c])?);
        }
        b.groups
            .push(code(&path, line, "Sensitive", &r[s], &["0", "1"])?);
        labels.push(code(&path, line, "Label", &r[y], &["0", "1"])? as u8);
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

/// `law-bar` (seed 001 spec §4.2): rows with `race1` in {asian, black, hisp, white} (21,983),
/// groups coded alphabetically, target `ugpa`. Features are the other columns the authors keep
/// (`dnn_bar_pass_prediction`, `gender` one-hot — 4 rows have it blank and get zeros —, `lsat`,
/// `pass_bar`); the paper's experiments do not use them (`X = Y`, spec §4.1).
pub(crate) fn law_bar(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const RACES: [&str; 4] = ["asian", "black", "hisp", "white"];
    let path = dir.verified_path(info.name, &LAW_BAR)?;
    let recs = read(&path, b',', true, 0)?;
    let col = |c| recs.column(&path, c);
    let (race, ugpa, gender) = (col("race1")?, col("ugpa")?, col("gender")?);
    let numeric = [
        ("dnn_bar_pass_prediction", col("dnn_bar_pass_prediction")?),
        ("lsat", col("lsat")?),
        ("pass_bar", col("pass_bar")?),
    ];
    let gender_levels = OneHot {
        column: "gender".into(),
        levels: vec!["female".into(), "male".into()],
    };
    let names = numeric
        .iter()
        .map(|(n, _)| n.to_string())
        .chain(gender_levels.names())
        .collect();
    let mut b = Builder::new(names);
    let mut y = Vec::new();
    for (i, r) in recs.rows.iter().enumerate() {
        let line = i + 2;
        if r.len() != recs.header.len() {
            return Err(ragged(&path, line, recs.header.len(), r.len()));
        }
        let Some(g) = RACES.iter().position(|&x| x == r[race]) else {
            continue;
        };
        for (n, c) in numeric {
            b.values.push(number(&path, line, n, &r[c])?);
        }
        gender_levels.encode(&r[gender], &mut b.values);
        b.groups.push(g as u32);
        y.push(number(&path, line, "ugpa", &r[ugpa])?);
    }
    Ok(builtin(b.finish(&RACES, Target::Real(y)), vec![0, 1, 2]))
}

/// `communities` (seed 001 spec §4.2, H19): the 99 complete features, target
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
    let path = dir.verified_path(info.name, &COMMUNITIES)?;
    let recs = read(&path, b',', true, 0)?;
    let features: Vec<usize> = (0..recs.header.len())
        .filter(|&c| !NOT_FEATURES.contains(&recs.header[c].as_str()))
        .collect();
    let (target, black) = (
        recs.column(&path, "ViolentCrimesPerPop")?,
        recs.column(&path, "racepctblack")?,
    );
    let mut b = Builder::new(features.iter().map(|&c| recs.header[c].clone()).collect());
    let mut y = Vec::new();
    for (i, r) in recs.rows.iter().enumerate() {
        let line = i + 2;
        if r.len() != recs.header.len() {
            return Err(ragged(&path, line, recs.header.len(), r.len()));
        }
        for &c in &features {
            b.values.push(number(&path, line, &recs.header[c], &r[c])?);
        }
        let share = number(&path, line, "racepctblack", &r[black])?;
        b.groups.push(u32::from(share > 0.06));
        y.push(number(&path, line, "ViolentCrimesPerPop", &r[target])?);
    }
    Ok(builtin(
        b.finish(&["white", "black"], Target::Real(y)),
        vec![],
    ))
}

/// `credit` / `credit-dp2dp` (seed 003 spec §4.1, seed 004 spec §4.2): the DP-FERMI (Lowy et al.)
/// encoding both papers use: 14 numeric columns (LIMIT_BAL, AGE, BILL_AMT1–6, PAY_AMT1–6) and the
/// one-hot encoding of EDUCATION, MARRIAGE, PAY_0, PAY_2–PAY_6. Raw levels give 89 columns; the
/// papers' 85 need four merged levels, done as seed 003 §4.1 suggests: EDUCATION {0, 5, 6} → 4
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
    let path = dir.verified_path(info.name, &CREDIT)?;
    let recs = read(&path, b',', true, 0)?;
    let idx = |names: &[&str]| -> Result<Vec<usize>> {
        names.iter().map(|c| recs.column(&path, c)).collect()
    };
    let (num, cat) = (idx(&NUMERIC)?, idx(&CATEGORICAL)?);
    let (sex, label) = (
        recs.column(&path, "SEX")?,
        recs.column(&path, "default payment")?,
    );
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
            let values: Vec<String> = recs.rows.iter().map(|r| merged(name, &r[c])).collect();
            OneHot::fit(name, values.iter().map(String::as_str))
        })
        .collect();
    let names = NUMERIC
        .iter()
        .map(|s| s.to_string())
        .chain(encoders.iter().flat_map(|e| e.names()))
        .collect();
    let mut b = Builder::new(names);
    let mut y = Vec::new();
    for (i, r) in recs.rows.iter().enumerate() {
        let line = i + 2;
        if r.len() != recs.header.len() {
            return Err(ragged(&path, line, recs.header.len(), r.len()));
        }
        for (&c, name) in num.iter().zip(NUMERIC) {
            b.values.push(number(&path, line, name, &r[c])?);
        }
        for ((e, &c), name) in encoders.iter().zip(&cat).zip(CATEGORICAL) {
            e.encode(&merged(name, &r[c]), &mut b.values);
        }
        b.groups
            .push(1 - code(&path, line, "SEX", &r[sex], &["1", "2"])?);
        y.push(code(&path, line, "default payment", &r[label], &["0", "1"])? as u8);
    }
    Ok(builtin(
        b.finish(&["female", "male"], Target::Binary(y)),
        (0..NUMERIC.len()).collect(),
    ))
}

/// `parkinsons` (seed 004 spec §4.2, H22): the tab-separated UCI file; 19 features (all but
/// `subject#`, `sex`, `total_UPDRS`; `motor_UPDRS` kept as Lowy et al. do), label
/// `total_UPDRS > 27.576` (the median, strict), sensitive `sex` (0 = male, 1 = female).
pub(crate) fn parkinsons(dir: &DataDir, info: &Info) -> Result<Builtin> {
    const MEDIAN: f64 = 27.576;
    let path = dir.verified_path(info.name, &PARKINSONS)?;
    let recs = read(&path, b'\t', true, 0)?;
    let (subject, sex, total) = (
        recs.column(&path, "subject#")?,
        recs.column(&path, "sex")?,
        recs.column(&path, "total_UPDRS")?,
    );
    let features: Vec<usize> = (0..recs.header.len())
        .filter(|c| ![subject, sex, total].contains(c))
        .collect();
    let mut b = Builder::new(features.iter().map(|&c| recs.header[c].clone()).collect());
    let mut y = Vec::new();
    for (i, r) in recs.rows.iter().enumerate() {
        let line = i + 2;
        if r.len() != recs.header.len() {
            return Err(ragged(&path, line, recs.header.len(), r.len()));
        }
        for &c in &features {
            b.values.push(number(&path, line, &recs.header[c], &r[c])?);
        }
        b.groups
            .push(code(&path, line, "sex", &r[sex], &["0", "1"])?);
        y.push(u8::from(
            number(&path, line, "total_UPDRS", &r[total])? > MEDIAN,
        ));
    }
    let d = features.len();
    Ok(builtin(
        b.finish(&["male", "female"], Target::Binary(y)),
        (0..d).collect(),
    ))
}

/// `diabetes-lpct` (seed 002 spec §4.2): the LPCT authors' cleaned split, label first, no header;
/// the private file is the data set and the public one [`Builtin::public`]. No groups.
/// LPCT min-max scales with the public sample's range at fit time (spec §2.6), not here.
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
        let path = dir.verified_path(info.name, file)?;
        let Records { rows, .. } = read(&path, b',', false, 0)?;
        let mut values = Vec::with_capacity(rows.len() * NAMES.len());
        let mut y = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            if r.len() != NAMES.len() + 1 {
                return Err(ragged(&path, i + 1, NAMES.len() + 1, r.len()));
            }
            y.push(code(&path, i + 1, "label", &r[0], &["0", "1"])? as u8);
            for (v, name) in r[1..].iter().zip(NAMES) {
                values.push(number(&path, i + 1, name, v)?);
            }
        }
        Ok(Dataset {
            features: Array2::from_shape_vec((y.len(), NAMES.len()), values).expect("8 per row"),
            feature_names: NAMES.iter().map(|s| s.to_string()).collect(),
            groups: None,
            target: Some(Target::Binary(y)),
        })
    };
    let private = load(&DIABETES_PRI)?;
    let public = load(&DIABETES_PUB)?;
    Ok(Builtin {
        dataset: private,
        public: Some(public),
        standardize: vec![],
    })
}
