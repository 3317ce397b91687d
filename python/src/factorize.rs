//! Text columns held as Arrow strings (pandas' default `str` columns under pyarrow, Arrow
//! tables, polars) factorized here, from the Arrow buffers themselves: a code per row and the
//! distinct values in order of first appearance, what `pandas.factorize` gives
//! (`dpfair/_input.py` falls back to it for every other kind of column), with the data crate's
//! [`TextIndex`] on the bytes in place: about a third of `pandas.factorize`'s time on the same
//! column (BENCHMARKS.md, "Python overhead").

use dpfair_data::factorize::TextIndex;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

/// The offsets of one chunk: `string` arrays have 32-bit offsets, `large_string` 64-bit.
#[derive(FromPyObject)]
pub enum Offsets<'py> {
    Large(PyReadonlyArray1<'py, i64>),
    Small(PyReadonlyArray1<'py, i32>),
}

/// One Arrow chunk without nulls: its offsets buffer, its data buffer, and the chunk's slice of
/// them (`offset`, `len` rows: row i is `data[offsets[offset + i]..offsets[offset + i + 1]]`).
type Chunk<'py> = (Offsets<'py>, PyReadonlyArray1<'py, u8>, usize, usize);

/// The byte ranges of a chunk's rows, checked against its buffers.
fn row_bounds(offsets: &[i64], data_len: usize, offset: usize, len: usize) -> PyResult<&[i64]> {
    let bounds = offset
        .checked_add(len)
        .and_then(|end| offsets.get(offset..=end))
        .ok_or_else(|| crate::error::value_error("Arrow strings: offsets shorter than the rows"))?;
    let ordered = bounds.windows(2).all(|w| 0 <= w[0] && w[0] <= w[1]);
    if !ordered || bounds.last().is_some_and(|&e| e as u64 > data_len as u64) {
        return Err(crate::error::value_error(
            "Arrow strings: offsets out of order or past the data",
        ));
    }
    Ok(bounds)
}

/// `(codes, uniques)` of a text column given as Arrow chunks without nulls (see [`Chunk`]):
/// int64 codes, distinct values in order of first appearance.
#[pyfunction]
pub fn factorize_arrow_strings<'py>(
    py: Python<'py>,
    chunks: Vec<Chunk<'py>>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Vec<String>)> {
    let rows: usize = chunks.iter().map(|c| c.3).sum();
    let mut codes = Vec::with_capacity(rows);
    let mut index = TextIndex::new();
    let views: Vec<_> = chunks
        .iter()
        .map(|(offsets, data, offset, len)| (offsets, data.as_slice(), *offset, *len))
        .collect();
    let mut widened = Vec::new();
    for (offsets, data, offset, len) in views {
        let data =
            data.map_err(|_| crate::error::value_error("Arrow strings: data not contiguous"))?;
        let not_contiguous = |_| crate::error::value_error("Arrow strings: offsets not contiguous");
        let offsets: &[i64] = match offsets {
            Offsets::Large(o) => o.as_slice().map_err(not_contiguous)?,
            Offsets::Small(o) => {
                let small = o.as_slice().map_err(not_contiguous)?;
                widened.clear();
                widened.extend(small.iter().map(|&v| i64::from(v)));
                &widened
            }
        };
        let bounds = row_bounds(offsets, data.len(), offset, len)?;
        for w in bounds.windows(2) {
            let (start, end) = (w[0] as usize, w[1] as usize);
            codes.push(index.code_at(data, start, end - start));
        }
    }
    let uniques = index
        .distinct()
        .map(|d| {
            std::str::from_utf8(d)
                .map(str::to_owned)
                .map_err(|e| crate::error::value_error(format!("Arrow strings: not UTF-8 ({e})")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((codes.into_pyarray(py), uniques))
}
