//! Python inputs as a [`Frame`]: the Python layer (`dpfair/_input.py`) reduces numpy arrays,
//! pandas and polars DataFrames and Arrow tables to one numeric block (a 2-D float64 array, read
//! in place when it is already float64) and factorized text columns (int64 codes, read in
//! place, and the distinct values); this module borrows them.

use dpfair_data::frame::{Column, Frame};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

/// Where a feature column's values are.
#[derive(FromPyObject)]
pub enum Source<'py> {
    /// Column `j` of the numeric block.
    Numeric(usize),
    /// A factorized column: codes per row and distinct values (numeric when its values are
    /// numbers, else one-hot encoded: `dpfair_data::frame`).
    Factor((PyReadonlyArray1<'py, i64>, Vec<String>)),
}

/// The values of a sensitive or target column.
#[derive(FromPyObject)]
pub enum Labels<'py> {
    Factor((PyReadonlyArray1<'py, i64>, Vec<String>)),
    Numeric(PyReadonlyArray1<'py, f64>),
}

/// The attributes of `dpfair._input.Frame`.
#[derive(FromPyObject)]
pub struct FrameInput<'py> {
    /// The numeric block (n × p), borrowed.
    pub numeric: Option<PyReadonlyArray2<'py, f64>>,
    /// Feature columns in order: a name and where the values are.
    pub features: Vec<(String, Source<'py>)>,
    pub sensitive: Option<(String, Labels<'py>)>,
    pub target: Option<(String, Labels<'py>)>,
    /// Text feature columns declared categorical (pandas `category`, polars `Categorical`).
    pub categorical: Vec<String>,
}

fn column<'a>(name: &str, labels: &'a Labels<'_>) -> Column<'a> {
    match labels {
        Labels::Factor((codes, uniques)) => Column::factor(name, codes.as_array(), uniques),
        Labels::Numeric(a) => Column::numeric(name, a.as_array()),
    }
}

impl FrameInput<'_> {
    /// The frame, borrowing every column (numeric columns are strided views of the block).
    pub fn frame(&self) -> PyResult<Frame<'_>> {
        let block = self.numeric.as_ref().map(|a| a.as_array());
        let mut features = Vec::with_capacity(self.features.len());
        for (name, source) in &self.features {
            features.push(match source {
                Source::Numeric(j) => {
                    let block =
                        block.ok_or_else(|| crate::error::value_error("no numeric block"))?;
                    if *j >= block.ncols() {
                        return Err(crate::error::value_error(format!(
                            "column `{name}`: index {j} outside the numeric block"
                        )));
                    }
                    Column::numeric(name, block.index_axis_move(ndarray::Axis(1), *j))
                }
                Source::Factor((codes, uniques)) => Column::factor(name, codes.as_array(), uniques),
            });
        }
        Ok(Frame {
            features,
            sensitive: self.sensitive.as_ref().map(|(n, l)| column(n, l)),
            target: self.target.as_ref().map(|(n, l)| column(n, l)),
            categorical: self.categorical.clone(),
        })
    }
}

/// The address of the first value of the numeric block as Rust sees it (the test that
/// float64 C-contiguous input reaches the library without a copy compares it with numpy's).
#[pyfunction]
pub fn numeric_block_address(frame: FrameInput<'_>) -> Option<usize> {
    frame
        .numeric
        .as_ref()
        .map(|a| a.as_array().as_ptr() as usize)
}

/// An intersectional sensitive attribute from several factorized group columns
/// (`dpfair_data::frame::intersect`, the CSV loader's `--sensitive race,sex`): its name, each
/// row's code (−1: a part is missing) and the distinct combinations.
#[pyfunction]
pub fn intersect_groups(
    parts: Vec<(String, Labels<'_>)>,
) -> PyResult<(String, Vec<i64>, Vec<String>)> {
    let columns: Vec<Column<'_>> = parts.iter().map(|(n, l)| column(n, l)).collect();
    dpfair_data::frame::intersect(&columns).map_err(crate::error::data_error)
}
