//! Write a synthetic Parquet file of N rows for the streaming benchmarks (bench/parquet_fit.sh):
//! a score in [0, 1] shifted by group, a dictionary-encoded group column, a binary label.
//! Written batch by batch (memory independent of N), zstd-compressed; seeded, so reruns give
//! the same file.
//!
//! ```text
//! cargo run --release -p dpfair-data --example synthetic_parquet -- 10000000 target/tmp/big.parquet [--csv] [--two-groups]
//! ```
//!
//! `--two-groups` draws the group from `a`, `b` only (the decoupled classifier needs two).

use arrow::array::{ArrayRef, DictionaryArray, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::Int32Type;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use rand::{RngExt, SeedableRng};
use std::io::Write;
use std::sync::Arc;

const GROUPS: [&str; 3] = ["a", "b", "c"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(path)) = (args.get(1), args.get(2)) else {
        return Err("usage: synthetic_parquet N OUT.parquet [--csv] [--two-groups]".into());
    };
    let n: usize = n.parse()?;
    let flag = |f: &str| args.iter().skip(3).any(|a| a == f);
    let csv = flag("--csv");
    let n_groups = if flag("--two-groups") { 2 } else { 3 };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let file = std::fs::File::create(path)?;
    let mut parquet: Option<ArrowWriter<std::fs::File>> = None;
    let mut text = (csv).then(|| std::io::BufWriter::new(file.try_clone().expect("file")));
    if let Some(w) = text.as_mut() {
        writeln!(w, "score,group,label")?;
    }
    let batch_rows = 1 << 16;
    let mut done = 0;
    while done < n {
        let m = batch_rows.min(n - done);
        let groups: Vec<usize> = (0..m).map(|_| rng.random_range(0..n_groups)).collect();
        let scores: Vec<f64> = groups
            .iter()
            .map(|&g| (rng.random::<f64>() * 0.8 + 0.1 * g as f64).min(1.0))
            .collect();
        let labels: Vec<i64> = scores
            .iter()
            .map(|&s| i64::from(rng.random::<f64>() < s))
            .collect();
        if let Some(w) = text.as_mut() {
            for i in 0..m {
                writeln!(w, "{},{},{}", scores[i], GROUPS[groups[i]], labels[i])?;
            }
        } else {
            let group: DictionaryArray<Int32Type> = groups.iter().map(|&g| GROUPS[g]).collect();
            let batch = RecordBatch::try_from_iter([
                ("score", Arc::new(Float64Array::from(scores)) as ArrayRef),
                ("group", Arc::new(group) as ArrayRef),
                ("label", Arc::new(Int64Array::from(labels)) as ArrayRef),
            ])?;
            let w = match parquet.as_mut() {
                Some(w) => w,
                None => parquet.insert(ArrowWriter::try_new(
                    file.try_clone()?,
                    batch.schema(),
                    Some(props.clone()),
                )?),
            };
            w.write(&batch)?;
        }
        done += m;
    }
    if let Some(w) = parquet {
        w.close()?;
    }
    if let Some(mut w) = text {
        w.flush()?;
    }
    eprintln!("wrote {path} ({n} rows)");
    Ok(())
}
