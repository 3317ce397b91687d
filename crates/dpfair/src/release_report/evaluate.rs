//! The release report's private evaluation ([`Evaluation::release`]): the model predicts the
//! evaluation rows, the group × label × prediction counts are released once through
//! [`crate::evaluation::private_group_report`] (the path of `dpfair evaluate --epsilon` and
//! `dpfair.metrics.private_group_report`), and the section holds that report and the ledger of
//! its one release. Nothing else is computed on the rows: every message here names public facts
//! (the model's schema), never a value of a row.

use super::Evaluation;
use crate::model::ModelFile;
use crate::{Error, Result, Session};
use dpfair_data::{Dataset, Target, TaskKind};
use dpfair_fairness::GroupConfusion;
use dpfair_privacy::Noise;

impl Evaluation {
    /// Checks, from the model's public schema alone, that a private evaluation applies to `file`:
    /// a binary classifier with a sensitive attribute of at least 2 groups (the report's groups
    /// and classes are the model's). Run it before reading the evaluation rows.
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::Evaluation;
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let mut file = est
    ///     .fit(&example_data(500, 2, 1), &mut Session::new(1.0, 1e-5)?)?
    ///     .to_model_file(example_schema(2))?;
    /// assert!(Evaluation::check(&file).is_ok());
    /// // Without a sensitive attribute there are no groups to report on.
    /// file.schema.sensitive = None;
    /// assert!(Evaluation::check(&file).is_err());
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn check(file: &ModelFile) -> Result<()> {
        let refuse = |reason: String| Err(Error::InvalidData(reason));
        if file.schema.task() != Some(TaskKind::Binary) {
            return refuse(format!(
                "the private group report is for binary classifiers; this is a {} model",
                file.schema
                    .task()
                    .map_or("target-less".into(), |t| t.to_string())
            ));
        }
        let Some(sensitive) = &file.schema.sensitive else {
            return refuse(
                "the model has no sensitive attribute, so there are no groups to report on".into(),
            );
        };
        if sensitive.levels.len() < 2 {
            return refuse(format!(
                "the model's sensitive attribute `{}` declares fewer than 2 groups",
                sensitive.name
            ));
        }
        Ok(())
    }

    /// The private group report of `file`'s predictions on `data` (rows coded with the model's
    /// schema, with the target and the groups), released once at ε = `epsilon` in `session`
    /// (its budget, relation and noise; [`crate::evaluation::private_group_report`]), with
    /// intervals at `level`. A randomized predictor's coin flips come from the operating system
    /// (prediction randomness, not release noise).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{Evaluation, ReleaseReport};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let file = est
    ///     .fit(&example_data(1_000, 2, 1), &mut Session::new(1.0, 1e-5)?)?
    ///     .to_model_file(example_schema(2))?;
    /// let mut evaluation = Session::new(0.5, 0.0)?;
    /// let section = Evaluation::release(&mut evaluation, &file, &example_data(800, 2, 2), 0.5, 0.95)?;
    /// assert_eq!(evaluation.remaining().0, 0.0);
    /// let report = ReleaseReport::new(&file, section);
    /// assert!(report.to_html().contains("The evaluation's release"));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn release(
        session: &mut Session,
        file: &ModelFile,
        data: &Dataset,
        epsilon: f64,
        level: f64,
    ) -> Result<Evaluation> {
        Self::check(file)?;
        let counts = counts(file, data)?;
        let (report, ledger) =
            crate::evaluation::private_group_report(session, &counts, epsilon, level)?;
        Ok(Evaluation::released(report, &ledger))
    }
}

/// The exact group × label × prediction counts of `file` on `data`: private, released only by
/// [`Evaluation::release`].
fn counts(file: &ModelFile, data: &Dataset) -> Result<GroupConfusion> {
    let missing = |what: &str, name: Option<&str>| {
        Err(Error::InvalidData(format!(
            "the evaluation rows have no {what} column `{}`",
            name.unwrap_or_default()
        )))
    };
    let Some(Target::Binary(y)) = data.target.as_ref() else {
        return missing(
            "target",
            file.schema.target.as_ref().map(|t| t.name.as_str()),
        );
    };
    let Some(groups) = data.groups.as_ref() else {
        return missing(
            "sensitive",
            file.schema.sensitive.as_ref().map(|s| s.name.as_str()),
        );
    };
    let predictions = file.predict(data, &mut Noise::os())?;
    let Some(classes) = predictions.classes else {
        return Err(Error::InvalidData(
            "a binary model predicted no classes".into(),
        ));
    };
    let yp: Vec<u8> = classes.iter().map(|&c| c as u8).collect();
    GroupConfusion::from_rows(groups.names.clone(), y, &yp, &groups.codes)
        .map_err(|e| Error::InvalidData(e.to_string()))
}
