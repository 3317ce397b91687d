//! The release report's private evaluation ([`Evaluation::release`]): the model predicts the
//! evaluation rows and one private report of those predictions is released, chosen from the
//! model's public schema (docs/evaluation.md, "The release report"):
//!
//! * a binary classifier: the private group report ([`crate::evaluation::private_group_report`],
//!   the path of `dpfair evaluate --epsilon`);
//! * DP2DP (even on a binary target) and any multi-class model: [`MulticlassReport`], accuracy
//!   and DP2DP's U from one release of the group × label × prediction counts;
//! * a regressor: [`RegressionReport`], the MSE and the binned KS distance from two releases
//!   (ε/3 and 2ε/3) over the public target range: the model's own (dp-linear's clipping range,
//!   fair regression's grid) or a declared one ([`Declared::target_range`]).
//!
//! The groups are the model's sensitive attribute, or for a model without one (LPCT) declared
//! ([`Declared::sensitive`]); never read from the rows. Everything is one charged spend of ε in
//! the session. Nothing else is computed on the rows: every message here names public facts (the
//! model's schema, the declared options), never a value of a row.

use super::{Evaluation, EvaluationReport};
use crate::error::{Error, Result};
use crate::evaluation::{RELEASE_LABEL, from_fairness};
use crate::model::{FittedModel, ModelFile};
use crate::session::{Session, Spend};
use dpfair_data::schema::{Schema, SensitiveColumn};
use dpfair_data::{Dataset, Target, TaskKind};
use dpfair_fairness::GroupConfusion;
use dpfair_fairness::private_scores::{MulticlassReport, RegressionReport};
use dpfair_privacy::{Noise, Relation};

/// What a front end declares for an evaluation beyond the model's public schema (both public,
/// neither read from the rows).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declared {
    /// The evaluation's sensitive column and its groups, for a model without a sensitive
    /// attribute (`dpfair report --sensitive COL --groups G1,G2,...`; Python `groups=`).
    pub sensitive: Option<(String, Vec<String>)>,
    /// The public range of a real target, for a regressor that carries none
    /// (`--target-range LO:HI`; Python `target_range=`).
    pub target_range: Option<[f64; 2]>,
}

/// Which private report a model gets.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Groups,
    Multiclass,
    Regression([f64; 2]),
}

impl Evaluation {
    /// Checks, from the model's public schema and the `declared` options alone, that a private
    /// evaluation applies to `file`, and returns the schema to read the evaluation rows with
    /// (the model's, with the declared sensitive column when the model has none). Run it before
    /// reading the rows.
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{Declared, Evaluation};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let mut file = est
    ///     .fit(&example_data(500, 2, 1), &mut Session::new(1.0, 1e-5)?)?
    ///     .to_model_file(example_schema(2))?;
    /// assert!(Evaluation::check(&file, &Declared::default()).is_ok());
    /// // Without a sensitive attribute the groups must be declared.
    /// file.schema.sensitive = None;
    /// let e = Evaluation::check(&file, &Declared::default()).unwrap_err();
    /// assert!(e.to_string().contains("--groups"));
    /// let declared = Declared { sensitive: Some(("g".into(), vec!["a".into(), "b".into()])), ..Declared::default() };
    /// assert_eq!(Evaluation::check(&file, &declared)?.sensitive.unwrap().name, "g");
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn check(file: &ModelFile, declared: &Declared) -> Result<Schema> {
        plan(file, declared).map(|(schema, _)| schema)
    }

    /// The private report of `file`'s predictions on `data` (rows read with the schema of
    /// [`Evaluation::check`], with the target and the groups), released at ε = `epsilon` in
    /// `session` (its budget, relation and noise; one spend, one or two ledger entries), with
    /// intervals at `level`. A randomized predictor's coin flips come from the operating system
    /// (prediction randomness, not release noise).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{Declared, Evaluation, ReleaseReport};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let file = est
    ///     .fit(&example_data(1_000, 2, 1), &mut Session::new(1.0, 1e-5)?)?
    ///     .to_model_file(example_schema(2))?;
    /// let mut evaluation = Session::new(0.5, 0.0)?;
    /// let rows = example_data(800, 2, 2);
    /// let section = Evaluation::release(&mut evaluation, &file, &Declared::default(), &rows, 0.5, 0.95)?;
    /// assert_eq!(evaluation.remaining().0, 0.0);
    /// let report = ReleaseReport::new(&file, section);
    /// assert!(report.to_html().contains("The evaluation's release"));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn release(
        session: &mut Session,
        file: &ModelFile,
        declared: &Declared,
        data: &Dataset,
        epsilon: f64,
        level: f64,
    ) -> Result<Evaluation> {
        let (schema, kind) = plan(file, declared)?;
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::invalid(
                "epsilon",
                format!("the evaluation's ε must be finite and > 0, got {epsilon}"),
            ));
        }
        let relation = session.ledger().relation();
        if matches!(kind, Kind::Regression(_)) && relation != Relation::Substitution {
            return Err(Error::invalid(
                "add_remove",
                "a regressor's MSE divides by the number of rows, private under add/remove \
                 neighbours: evaluate it for replace-one neighbours (leave out --add-remove)",
            ));
        }
        let Some(groups) = data.groups.as_ref() else {
            return Err(missing(
                "sensitive",
                schema.sensitive.as_ref().map(|s| s.name.as_str()),
            ));
        };
        let target = schema.target.as_ref().map(|t| t.name.as_str());
        let predictions = file.predict(data, &mut Noise::os())?;
        let names = &groups.names;
        let codes = &groups.codes;
        let spend = Spend {
            epsilon,
            delta: 0.0,
            relation,
        };
        let (report, ledger) = match (kind, data.target.as_ref()) {
            (Kind::Groups, Some(Target::Binary(y))) => {
                let yp: Vec<u8> = classes(&predictions)?.iter().map(|&c| c as u8).collect();
                let counts = GroupConfusion::from_rows(names.clone(), y, &yp, codes)
                    .map_err(|e| Error::InvalidData(e.to_string()))?;
                let (r, ledger) =
                    crate::evaluation::private_group_report(session, &counts, epsilon, level)?;
                (EvaluationReport::Groups(r), ledger)
            }
            (Kind::Multiclass, Some(t @ (Target::Binary(_) | Target::Multiclass { .. }))) => {
                let y: Vec<u32> = match t {
                    Target::Binary(y) => y.iter().map(|&v| u32::from(v)).collect(),
                    Target::Multiclass { labels, .. } => labels.clone(),
                    Target::Real(_) => unreachable!("matched above"),
                };
                let p = classes(&predictions)?;
                let class_names = schema.class_labels().to_vec();
                session.run(spend, |ledger, noise| {
                    MulticlassReport::release(
                        ledger,
                        noise,
                        RELEASE_LABEL,
                        names,
                        &class_names,
                        (&y, p, codes),
                        epsilon,
                        level,
                    )
                    .map(EvaluationReport::Multiclass)
                    .map_err(from_fairness)
                })?
            }
            (Kind::Regression(range), Some(Target::Real(y))) => {
                let Some(values) = predictions.values.as_ref() else {
                    return Err(Error::InvalidData("a regressor predicted no values".into()));
                };
                session.run(spend, |ledger, noise| {
                    RegressionReport::release(
                        ledger,
                        noise,
                        "evaluation",
                        names,
                        (y, values, codes),
                        range,
                        epsilon,
                        level,
                    )
                    .map(EvaluationReport::Regression)
                    .map_err(from_fairness)
                })?
            }
            _ => return Err(missing("target", target)),
        };
        Ok(Evaluation::released(report, &ledger))
    }
}

/// The schema to read the rows with and the report `file` gets (the checks of
/// [`Evaluation::check`]).
fn plan(file: &ModelFile, declared: &Declared) -> Result<(Schema, Kind)> {
    let refuse = |reason: String| Err(Error::InvalidData(reason));
    let mut schema = file.schema.clone();
    let kind = match (schema.task(), file.method.as_str()) {
        (None, _) => return refuse("the model has no target to evaluate against".into()),
        (Some(TaskKind::Regression), _) => Kind::Regression(range(file, declared)?),
        (Some(TaskKind::Multiclass), _) | (Some(TaskKind::Binary), "dp2dp") => Kind::Multiclass,
        (Some(TaskKind::Binary), _) => Kind::Groups,
    };
    if !matches!(kind, Kind::Regression(_)) && declared.target_range.is_some() {
        return refuse(
            "--target-range (`target_range`) is for regressors; this model predicts classes".into(),
        );
    }
    match (&schema.sensitive, &declared.sensitive) {
        (Some(own), Some((name, _))) => {
            return refuse(format!(
                "the model has its own sensitive attribute `{}`, so the evaluation's groups are \
                 its groups; leave out --groups (Python: groups=) for `{name}`",
                own.name
            ));
        }
        (None, Some((name, groups))) => {
            schema.sensitive = Some(SensitiveColumn {
                name: name.clone(),
                levels: groups.clone(),
                declared: true,
            });
        }
        (None, None) => {
            return refuse(
                "the model has no sensitive attribute: name the evaluation's groups with \
                 --sensitive COL --groups G1,G2,... (Python: sensitive_features= and groups=); \
                 they are declared, never read from the rows"
                    .into(),
            );
        }
        (Some(_), None) => {}
    }
    if let Some(s) = &schema.sensitive
        && s.levels.len() < 2
    {
        return refuse(format!(
            "the sensitive attribute `{}` declares fewer than 2 groups",
            s.name
        ));
    }
    Ok((schema, kind))
}

/// The public range of a regressor's target: the model's own, or the declared one.
fn range(file: &ModelFile, declared: &Declared) -> Result<[f64; 2]> {
    let own = match &file.model {
        FittedModel::DpLinear(m) => Some(m.target_range),
        FittedModel::FairRegression(m) => Some([m.grid.lo, m.grid.hi]),
        _ => None,
    };
    match (own, declared.target_range) {
        (Some(own), Some(given)) if own != given => Err(Error::invalid(
            "target_range",
            format!(
                "--target-range {}:{}: the model carries its own public range [{}, {}]; leave \
                 the option out",
                given[0], given[1], own[0], own[1]
            ),
        )),
        (Some(r), _) | (None, Some(r)) if r[0].is_finite() && r[1].is_finite() && r[0] < r[1] => {
            Ok(r)
        }
        (None, None) => Err(Error::invalid(
            "target_range",
            "a regressor's private evaluation clips predictions and targets to the target's \
             public range, and this model carries none: give --target-range LO:HI (Python: \
             target_range=(LO, HI))",
        )),
        (Some(r), _) | (None, Some(r)) => Err(Error::invalid(
            "target_range",
            format!("[{}, {}] is not a range (finite, LO < HI)", r[0], r[1]),
        )),
    }
}

/// The predicted classes.
fn classes(p: &crate::model::Predictions) -> Result<&[u32]> {
    p.classes
        .as_deref()
        .ok_or_else(|| Error::InvalidData("a classifier predicted no classes".into()))
}

/// The refusal of rows without the model's `what` column `name`.
fn missing(what: &str, name: Option<&str>) -> Error {
    Error::InvalidData(format!(
        "the evaluation rows have no {what} column `{}`",
        name.unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::{DpLogistic, example_data, example_schema};
    use crate::{Estimator, Params};
    use dpfair_data::schema::TargetEncoding;

    fn logistic() -> ModelFile {
        let est = DpLogistic::params().epsilon(1.0).check().unwrap();
        est.fit(
            &example_data(500, 2, 1),
            &mut Session::new(1.0, 1e-5).unwrap(),
        )
        .unwrap()
        .to_model_file(example_schema(2))
        .unwrap()
    }

    #[test]
    fn the_report_follows_the_models_task_and_a_range_must_be_public() {
        let mut file = logistic();
        let none = Declared::default();
        assert_eq!(plan(&file, &none).unwrap().1, Kind::Groups);
        file.method = "dp2dp".into();
        assert_eq!(plan(&file, &none).unwrap().1, Kind::Multiclass);
        // A regressor whose model carries no range: refused, naming the option to add.
        file.schema.target.as_mut().unwrap().encoding = TargetEncoding::Real;
        let e = plan(&file, &none).unwrap_err().to_string();
        assert!(
            e.contains("--target-range LO:HI") && e.contains("target_range="),
            "{e}"
        );
        let declared = Declared {
            target_range: Some([0.0, 2.0]),
            ..Declared::default()
        };
        assert_eq!(
            plan(&file, &declared).unwrap().1,
            Kind::Regression([0.0, 2.0])
        );
        let backwards = Declared {
            target_range: Some([2.0, 0.0]),
            ..Declared::default()
        };
        assert!(
            plan(&file, &backwards)
                .unwrap_err()
                .to_string()
                .contains("not a range")
        );
        // A class model refuses a target range.
        assert!(
            plan(&logistic(), &declared)
                .unwrap_err()
                .to_string()
                .contains("regressors")
        );
    }
}
