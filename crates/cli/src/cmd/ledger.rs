//! `dpfair ledger`: print the privacy ledger stored in a model file (or in any JSON file holding a
//! `ledger` object, or a bare ledger), followed by the public schema information the model
//! relies on at no privacy cost.

use crate::error::{CliError, CliResult};
use dpfair::model::{FORMAT, ModelFile};
use dpfair_data::{BoundSource, FeatureColumn, Scaling, Schema};
use dpfair_privacy::Ledger;
use std::path::PathBuf;

const AFTER_LONG_HELP: &str = "\
Prints the neighbouring relation the ledger certifies and where the release noise came from, \
every release the fit made (mechanism, sensitivity, noise scale, cost), the composed total with \
the rule that produced it, whether the total is a certified bound (not when a DP-SGD run used the \
GDP approximation, and never when the noise was seeded: --insecure-seeded-noise makes a model NOT \
PRIVATE), and the public schema facts the model relies on at no privacy cost. A model file whose \
content does not match its digest (edited by hand) is refused.

Example:
  dpfair ledger model.json";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// A model file (or a JSON file with a `ledger` object, or a bare ledger).
    #[arg(value_name = "MODEL.json")]
    pub file: PathBuf,
}

pub fn run(args: Args) -> CliResult {
    let path = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| CliError::BadInput(format!("cannot read {path}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| CliError::BadInput(format!("{path} is not JSON: {e}")))?;
    if value.get("format").and_then(|f| f.as_str()) == Some(FORMAT) {
        let model = ModelFile::from_json(&text, &path)?;
        println!("model: {} ({})", model.method, model.created_by);
        print!("{}", model.ledger.summary());
        if model.is_verified() {
            println!("{}", model.ledger.guarantee());
        } else {
            println!(
                "guarantee: UNVERIFIED (a version-1 file, written before model files carried a \
                 digest: nothing checks that this ledger is the one the fit wrote)"
            );
        }
        print!("{}", public_information(&model.schema));
        return Ok(());
    }
    let ledger_value = value.get("ledger").cloned().unwrap_or(value);
    let ledger: Ledger = serde_json::from_value(ledger_value).map_err(|e| {
        CliError::BadInput(format!(
            "{path} is neither a dpfair model file nor a ledger: {e}"
        ))
    })?;
    print!("{}", ledger.summary());
    println!(
        "guarantee: UNVERIFIED (a ledger outside a model file carries no digest: nothing checks \
         that it is the one a fit wrote)"
    );
    Ok(())
}

/// The schema facts a model uses as public (no ledger entry): levels, labels, bound origins.
fn public_information(schema: &Schema) -> String {
    let mut s = String::from("public schema information (no privacy cost):\n");
    if let Some(t) = &schema.target {
        let labels = t.encoding.labels();
        if labels.is_empty() {
            s.push_str(&format!("  target `{}`: real-valued\n", t.name));
        } else {
            s.push_str(&format!(
                "  target `{}` classes: {}\n",
                t.name,
                labels.join(", ")
            ));
        }
    }
    if let Some(g) = &schema.sensitive {
        let origin = if g.declared {
            "declared"
        } else {
            "found in the data"
        };
        s.push_str(&format!(
            "  sensitive `{}` groups ({origin}): {}\n",
            g.name,
            g.levels.join(", ")
        ));
    }
    for f in &schema.features {
        if let FeatureColumn::Categorical { name, levels } = f {
            s.push_str(&format!(
                "  categorical `{name}` levels (found in the data): {}\n",
                levels.join(", ")
            ));
        }
    }
    match &schema.scaling {
        Scaling::None => s.push_str("  feature scaling: none\n"),
        Scaling::Standardize(_) => s.push_str("  feature scaling: standardisation\n"),
        Scaling::MinMax(m) => {
            let names = schema.feature_names();
            let pick = |want: fn(&BoundSource) -> bool| {
                let v: Vec<&str> = m
                    .sources
                    .iter()
                    .zip(&names)
                    .filter(|(src, _)| want(src))
                    .map(|(_, n)| n.as_str())
                    .collect();
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(", ")
                }
            };
            s.push_str(&format!(
                "  min-max bounds, public (--bounds): {}\n",
                pick(|b| matches!(b, BoundSource::Public))
            ));
            s.push_str(&format!(
                "  min-max bounds, estimated privately (charged in the ledger above): {}\n",
                pick(|b| matches!(b, BoundSource::Private { .. }))
            ));
            s.push_str(&format!(
                "  min-max bounds [0, 1] of 0/1 columns (their type): {}\n",
                pick(|b| matches!(b, BoundSource::Binary))
            ));
        }
    }
    s
}
