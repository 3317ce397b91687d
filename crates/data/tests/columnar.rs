//! Parquet and Arrow IPC input: the same data as CSV loads to the same data set, schema and
//! report; read batch by batch it gives the same rows; bad files give errors naming the file,
//! row and column. The columnar files are written here (pandas-like snappy, polars-like zstd,
//! dictionary-encoded strings), never committed.

use arrow::array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{Int32Type, Schema as ArrowSchema};
use dpfair_data::load::{learn_schema, read_batches};
use dpfair_data::{ApplyOptions, DataError, LoadOptions, MissingPolicy, load, load_csv};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Row i of the test data: (id, age, income, sex, workclass, flag, y); `None` is missing.
type Row = (
    i64,
    Option<i64>,
    Option<f64>,
    Option<&'static str>,
    Option<&'static str>,
    bool,
    &'static str,
);

fn rows(n: usize) -> Vec<Row> {
    let work = ["private", "state-gov", "self-emp"];
    (0..n)
        .map(|i| {
            (
                i as i64,
                (i % 17 != 3).then_some(18 + (i * 7 % 60) as i64),
                (i % 23 != 5).then_some((i * 37 % 1000) as f64 / 8.0 - 20.0),
                Some(if i % 3 == 0 { "Female" } else { "Male" }),
                (i % 29 != 7).then_some(work[i * 5 % 3]),
                i % 4 == 1,
                if (i * 11) % 5 < 2 { ">50K" } else { "<=50K" },
            )
        })
        .collect()
}

fn write_csv(path: &Path, rows: &[Row]) {
    let mut s = String::from("id,age,income,sex,workclass,flag,y\n");
    let opt = |v: Option<String>| v.unwrap_or_default();
    for r in rows {
        s += &format!(
            "{},{},{},{},{},{},{}\n",
            r.0,
            opt(r.1.map(|v| v.to_string())),
            opt(r.2.map(|v| v.to_string())),
            opt(r.3.map(String::from)),
            opt(r.4.map(String::from)),
            u8::from(r.5),
            r.6
        );
    }
    std::fs::write(path, s).unwrap();
}

/// The rows as one record batch; `dictionary` writes the string columns dictionary-encoded.
fn batch(rows: &[Row], dictionary: bool) -> RecordBatch {
    let text = |v: Vec<Option<&str>>| -> ArrayRef {
        if dictionary {
            Arc::new(v.into_iter().collect::<DictionaryArray<Int32Type>>())
        } else {
            Arc::new(StringArray::from(v))
        }
    };
    RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
        ),
        (
            "age",
            Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.1))),
        ),
        (
            "income",
            Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.2))),
        ),
        ("sex", text(rows.iter().map(|r| r.3).collect())),
        ("workclass", text(rows.iter().map(|r| r.4).collect())),
        (
            "flag",
            Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.5)))),
        ),
        ("y", text(rows.iter().map(|r| Some(r.6)).collect())),
    ])
    .unwrap()
}

fn write_parquet(path: &Path, batch: &RecordBatch, compression: Compression, group: usize) {
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(group))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn write_ipc(path: &Path, batch: &RecordBatch) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = arrow::ipc::writer::FileWriter::try_new(file, &batch.schema()).unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
}

fn options() -> LoadOptions {
    LoadOptions {
        target: Some("y".into()),
        sensitive: Some("sex".into()),
        ..LoadOptions::default()
    }
}

/// The same rows as CSV and in each columnar flavour.
fn files(dir: &Path, n: usize) -> (PathBuf, Vec<PathBuf>) {
    let rows = rows(n);
    let csv = dir.join("d.csv");
    write_csv(&csv, &rows);
    let plain = batch(&rows, false);
    let dict = batch(&rows, true);
    let snappy = dir.join("pandas.parquet");
    write_parquet(&snappy, &plain, Compression::SNAPPY, 1 << 20);
    let zstd = dir.join("polars.parquet");
    write_parquet(&zstd, &plain, Compression::ZSTD(ZstdLevel::default()), 1000);
    let dictionary = dir.join("dictionary.parquet");
    write_parquet(&dictionary, &dict, Compression::SNAPPY, 1 << 20);
    let ipc = dir.join("d.feather");
    write_ipc(&ipc, &dict);
    (csv, vec![snappy, zstd, dictionary, ipc])
}

#[test]
fn columnar_files_load_as_the_csv_does() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, columnar) = files(dir.path(), 500);
    let from_csv = load_csv(&csv, &options()).unwrap();
    // The id column is left out by name, the text column one-hot, missing values filled (every
    // row kept): the same decisions in every format.
    assert_eq!(from_csv.report.skipped_ids, ["id"]);
    assert_eq!(from_csv.report.text_columns, ["workclass"]);
    assert_eq!(from_csv.report.dropped, 0);
    assert_eq!(from_csv.dataset.n_rows(), 500);
    assert!(
        from_csv
            .report
            .missing_by_column
            .iter()
            .any(|(_, k)| *k > 0)
    );
    for path in &columnar {
        let l = load(path, &options()).unwrap();
        assert_eq!(l.schema, from_csv.schema, "{}", path.display());
        assert_eq!(l.dataset, from_csv.dataset, "{}", path.display());
        assert_eq!(l.report.rows, from_csv.report.rows);
        assert_eq!(l.report.dropped, from_csv.report.dropped);
        assert_eq!(
            l.report.missing_by_column,
            from_csv.report.missing_by_column
        );
        assert_eq!(l.report.skipped_ids, from_csv.report.skipped_ids);
        assert_eq!(l.report.text_columns, from_csv.report.text_columns);
        // The stored schema applied to the file (prediction) reads the same rows.
        let apply = ApplyOptions {
            with_target: true,
            ..ApplyOptions::default()
        };
        let applied = l.schema.load(path, &apply).unwrap();
        assert_eq!(applied.dataset, from_csv.dataset);
    }
}

#[test]
fn a_file_read_batch_by_batch_gives_the_rows_of_the_whole_load() {
    // More rows than one batch, in row groups that do not align with batches.
    let dir = tempfile::tempdir().unwrap();
    let n = dpfair_data::load::columnar::BATCH_ROWS + 1234;
    let (csv, columnar) = files(dir.path(), n);
    let whole = load_csv(&csv, &options()).unwrap();
    let apply = ApplyOptions {
        with_target: true,
        ..ApplyOptions::default()
    };
    for path in &columnar[1..] {
        let header = learn_schema(path, &options()).unwrap();
        let schema = header.schema;
        assert_eq!(schema, whole.schema);
        assert_eq!(header.report.dropped, whole.report.dropped);
        assert_eq!(header.dataset.n_rows(), 0);
        let mut parts = Vec::new();
        let streamed = read_batches(path, &schema, &apply, |b| {
            parts.push(b);
            Ok::<(), DataError>(())
        })
        .unwrap();
        let sizes: Vec<usize> = parts.iter().map(|b| b.n_rows()).collect();
        assert!(parts.len() >= 2, "{} batches: {sizes:?}", parts.len());
        assert_eq!(streamed.dropped, whole.report.dropped);
        let x: Vec<f64> = parts
            .iter()
            .flat_map(|b| b.features.iter().copied())
            .collect();
        assert_eq!(
            x,
            whole.dataset.features.iter().copied().collect::<Vec<_>>()
        );
        let g: Vec<u32> = parts
            .iter()
            .flat_map(|b| b.groups.as_ref().unwrap().codes.clone())
            .collect();
        assert_eq!(g, whole.dataset.groups.as_ref().unwrap().codes);
    }
}

fn one_column_parquet(dir: &Path, name: &str, column: ArrayRef) -> PathBuf {
    let n = column.len();
    let y: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| i % 2)));
    let b = RecordBatch::try_from_iter([("x", column), ("y", y)]).unwrap();
    let path = dir.join(name);
    write_parquet(&path, &b, Compression::SNAPPY, 1 << 20);
    path
}

fn y_only() -> LoadOptions {
    LoadOptions {
        target: Some("y".into()),
        ..LoadOptions::default()
    }
}

#[test]
fn bad_values_are_named_by_file_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    // NaN in a float column: non-finite, as `NaN` in a CSV.
    let p = one_column_parquet(
        dir.path(),
        "nan.parquet",
        Arc::new(Float64Array::from(vec![1.0, 2.0, f64::NAN, 4.0])),
    );
    let e = load(&p, &y_only()).unwrap_err().to_string();
    assert!(e.contains("nan.parquet: data row 3, column `x`"), "{e}");
    assert!(e.contains("not finite"), "{e}");
    // A string column mixing numbers and text stays numeric: the text is an error.
    let p = one_column_parquet(
        dir.path(),
        "mixed.parquet",
        Arc::new(StringArray::from(vec!["1", "2.5", "3,5", "4"])),
    );
    let e = load(&p, &y_only()).unwrap_err().to_string();
    assert!(
        e.contains("data row 3, column `x`: a value that is not a number") && !e.contains("3,5"),
        "{e}"
    );
    // A null under --no-missing.
    let p = one_column_parquet(
        dir.path(),
        "null.parquet",
        Arc::new(Float64Array::from(vec![
            Some(1.0),
            None,
            Some(3.0),
            Some(4.0),
        ])),
    );
    let refuse = LoadOptions {
        missing: MissingPolicy::Refuse,
        ..y_only()
    };
    let e = load(&p, &refuse).unwrap_err().to_string();
    assert!(
        e.contains("data row 2, column `x`: a missing value, refused"),
        "{e}"
    );
    // An unknown column: the CSV's message, with the file's columns.
    let e = load(
        &p,
        &LoadOptions {
            sensitive: Some("race".into()),
            ..y_only()
        },
    )
    .unwrap_err();
    assert!(matches!(e, DataError::UnknownColumn { .. }), "{e}");
    assert!(e.to_string().contains("columns are: x, y"), "{e}");
    // Not a Parquet file at all.
    let fake = dir.path().join("fake.parquet");
    std::fs::write(&fake, "a,b\n1,2\n").unwrap();
    let e = load(&fake, &y_only()).unwrap_err().to_string();
    assert!(e.contains("fake.parquet: cannot read as Parquet"), "{e}");
    let fake = dir.path().join("fake.arrow");
    std::fs::write(&fake, "a,b\n1,2\n").unwrap();
    let e = load(&fake, &y_only()).unwrap_err().to_string();
    assert!(e.contains("fake.arrow: cannot read as Arrow IPC"), "{e}");
    // No rows.
    let p = one_column_parquet(
        dir.path(),
        "empty.parquet",
        Arc::new(Float64Array::from(Vec::<f64>::new())),
    );
    let e = load(&p, &y_only()).unwrap_err().to_string();
    assert!(e.contains("has no data rows"), "{e}");
}

#[test]
fn pandas_index_columns_are_left_out_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let x: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0]));
    let idx: ArrayRef = Arc::new(Int64Array::from(vec![10, 11, 12, 13]));
    let y: ArrayRef = Arc::new(Int64Array::from(vec![0, 1, 0, 1]));
    let b = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Float64, false),
            arrow::datatypes::Field::new("y", arrow::datatypes::DataType::Int64, false),
            arrow::datatypes::Field::new(
                "__index_level_0__",
                arrow::datatypes::DataType::Int64,
                false,
            ),
        ])),
        vec![x, y, idx],
    )
    .unwrap();
    let path = dir.path().join("indexed.parquet");
    write_parquet(&path, &b, Compression::SNAPPY, 1 << 20);
    let l = load(&path, &y_only()).unwrap();
    assert_eq!(l.dataset.feature_names, ["x"]);
    assert_eq!(l.report.skipped_ids, ["__index_level_0__"]);
}

/// Issue #41 part 8: pandas/pyarrow's default Feather (lz4) and zstd-compressed Arrow IPC files
/// load as the uncompressed file does (the `arrow` crate's `ipc_compression` feature).
#[test]
fn compressed_arrow_ipc_files_load() {
    use arrow::ipc::CompressionType;
    use arrow::ipc::writer::{FileWriter, IpcWriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let b = batch(&rows(300), true);
    let plain = dir.path().join("plain.feather");
    write_ipc(&plain, &b);
    let want = load(&plain, &options()).unwrap();
    for (name, codec) in [
        ("lz4.feather", CompressionType::LZ4_FRAME),
        ("zstd.arrow", CompressionType::ZSTD),
    ] {
        let path = dir.path().join(name);
        let opts = IpcWriteOptions::default()
            .try_with_compression(Some(codec))
            .unwrap();
        let file = std::fs::File::create(&path).unwrap();
        let mut w = FileWriter::try_new_with_options(file, &b.schema(), opts).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        let got = load(&path, &options()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got.dataset, want.dataset, "{name}");
        assert_eq!(got.schema, want.schema, "{name}");
    }
}

/// A nested column (struct, list) that a load does not use is ignored (left out of the default
/// features, never decoded); one named as a feature is refused naming it. Missing values in an
/// unused column refuse nothing; a refusal of a used one names its column.
#[test]
fn unused_nested_columns_and_their_missing_values_are_ignored() {
    use arrow::array::{ListArray, StructArray};
    use arrow::datatypes::{DataType, Field};
    let dir = tempfile::tempdir().unwrap();
    let n = 6;
    let x: ArrayRef = Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64)));
    let y: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| i % 2)));
    let list: ArrayRef = Arc::new(ListArray::from_iter_primitive::<
        arrow::datatypes::Int32Type,
        _,
        _,
    >((0..n as i32).map(|i| Some(vec![Some(i), None]))));
    let inner: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(1.0),
        None,
        None,
        Some(2.0),
        None,
        None,
    ]));
    let st: ArrayRef = Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("v", DataType::Float64, true)),
        inner,
    )]));
    let gaps: ArrayRef = Arc::new(Float64Array::from(vec![
        None,
        Some(1.0),
        None,
        None,
        None,
        None,
    ]));
    let b = RecordBatch::try_from_iter([
        ("x", x),
        ("tags", list),
        ("meta", st),
        ("notes", gaps),
        ("y", y),
    ])
    .unwrap();
    let pq = dir.path().join("nested.parquet");
    write_parquet(&pq, &b, Compression::SNAPPY, 1 << 20);
    let ipc = dir.path().join("nested.arrow");
    write_ipc(&ipc, &b);
    let refuse = LoadOptions {
        missing: MissingPolicy::Refuse,
        features: Some(vec!["x".into()]),
        ..y_only()
    };
    for path in [&pq, &ipc] {
        // Default features: the nested columns are left out; `notes` is used and filled.
        let got = load(path, &y_only()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            got.dataset.feature_names,
            vec!["x", "notes"],
            "{}",
            path.display()
        );
        // Only x used: nothing is missing, nothing refused.
        let got = load(path, &refuse).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(got.dataset.n_rows(), n);
        // `notes` used under --no-missing: refused naming it, never its values.
        let e = load(
            path,
            &LoadOptions {
                features: Some(vec!["x".into(), "notes".into()]),
                ..refuse.clone()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `notes`"), "{e}");
        // A nested column named as a feature: refused naming it.
        let e = load(
            path,
            &LoadOptions {
                features: Some(vec!["x".into(), "tags".into()]),
                ..y_only()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`tags` is nested"), "{e}");
    }
}
