"""Inputs: numpy arrays, pandas and polars DataFrames and Arrow tables as one `Frame`.

A `Frame` holds one numeric block (a 2-D float64 array, passed to Rust without a copy when the
input already is float64) and the other columns, *factorized* (a code per row into the column's
distinct values, as `pandas.factorize` gives them). The library decides and codes a factorized
column exactly as `dpfair fit` does the same CSV column (`dpfair_data::frame`): one whose
values are numbers (an `object` column of numbers, a mixed read) is numeric, parsed; a text
column is one-hot encoded, its levels sorted and recorded in the model's schema as public (at
most 100 levels). A pandas `category` or polars `Categorical`/`Enum` column is declared
categorical, as `--categorical` (one-hot whatever its values, no level cap). Integer, boolean
and float32 columns are converted to float64. Missing values (None, NaN, nulls, and the CSV
reader's missing-value tokens: empty, `?`, `NA`) are filled by the library's public per-row rule,
as in the CLI (docs/privacy.md, "Failures and messages"); infinities are refused with the column
and row named.

Labels (the sensitive groups and a class target) are passed as text: integers as `0`, `1`;
floats as Python writes them (`1.0`); booleans as `False`, `True`; strings as they are. The
library then codes them as the CLI codes the same CSV column (numbers compared as numbers, the
positive class of a binary target is the larger label unless `pos_label` says otherwise).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpfair import _native


@dataclass
class Frame:
    """Columns ready for the native module (see the module docs).

    `features` lists `(name, j)` for column j of `numeric`, or `(name, (codes, uniques))` for a
    text column; `sensitive` is `(name, (codes, uniques))`; `target` is `(name, (codes,
    uniques))` or `(name, float64 array)` for a regression.
    """

    numeric: np.ndarray | None
    features: list = field(default_factory=list)
    sensitive: tuple | None = None
    target: tuple | None = None
    n_rows: int = 0
    #: The target's distinct values and their text, for `classes_` (not sent to Rust).
    target_labels: tuple | None = None
    #: X's column names before the sensitive column was taken out (not sent to Rust), and
    #: whether X named them (a DataFrame or table) rather than dpfair (`x0`, `x1`, … for arrays).
    columns: list = field(default_factory=list)
    named_columns: bool = False
    #: Factorized feature columns declared categorical (one-hot whatever their values).
    categorical: list = field(default_factory=list)


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _missing_error(column: str, row: int) -> ValueError:
    return ValueError(f"column `{column}`, row {row}: missing value (None/NaN) refused")


def _as_numpy_1d(values: Any, what: str) -> np.ndarray:
    """A 1-D numpy array from a list, numpy array, pandas/polars Series or Arrow array.

    A column (n × 1) is taken as its values; for `y`, with scikit-learn's
    `DataConversionWarning` (a `UserWarning` without scikit-learn).
    """
    mod = _module(values)
    if mod == "polars":
        values = values.to_numpy()
    elif mod == "pyarrow":
        values = values.to_numpy(zero_copy_only=False)
    elif mod == "pandas":
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
        if what == "y":
            _column_vector_warning()
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one column, got shape {arr.shape}")
    return arr


def _column_vector_warning() -> None:
    try:
        from sklearn.exceptions import DataConversionWarning as category
    except ImportError:  # scikit-learn is optional
        category = UserWarning
    warnings.warn(
        "A column-vector y was passed when a 1d array was expected: y is read as its one "
        "column (pass y.ravel() to silence this)",
        category,
        stacklevel=6,
    )


def _label_text(value: Any) -> str:
    """A value as text (module docs); a non-finite float is an error (raised by the caller)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a label")
        return repr(float(value))
    return str(value)


def _arrow_string_chunks(values: Any) -> list | None:
    """The chunks of a text column held as Arrow strings without nulls, else `None`.

    Each chunk as `(offsets, data, offset, length)`: numpy views of its Arrow buffers (no copy)
    and its slice of them, for `_native.factorize_arrow_strings`. Covers pandas' `str` and
    `string[pyarrow]` columns, Arrow arrays and chunked arrays, and polars text columns whose
    Arrow form is `string` or `large_string`.
    """
    mod = _module(values)
    if mod not in ("pandas", "polars", "pyarrow"):
        return None
    try:
        import pyarrow as pa
    except ImportError:  # text without pyarrow is never held as Arrow strings
        return None
    if mod == "pandas":
        # Arrow-backed text only: `str`/`string[pyarrow]` (storage "pyarrow") or `ArrowDtype`
        # (pandas' python-backed strings also have `__arrow_array__`, which copies).
        dtype = getattr(values, "dtype", None)
        if getattr(dtype, "storage", None) != "pyarrow" and not hasattr(dtype, "pyarrow_dtype"):
            return None
        values = values.array.__arrow_array__()
    elif mod == "polars" and hasattr(values, "to_arrow"):
        values = values.to_arrow()

    chunks = getattr(values, "chunks", [values])
    if not chunks or not all(isinstance(c, pa.Array) for c in chunks):
        return None
    kind = chunks[0].type
    if pa.types.is_large_string(kind):
        width = np.int64
    elif pa.types.is_string(kind):
        width = np.int32
    else:
        return None
    if any(c.type != kind or c.null_count for c in chunks):
        return None  # nulls: the general path reports them
    parts = []
    for c in chunks:
        _, offsets, data = c.buffers()
        if offsets is None:
            return None
        ends = np.frombuffer(offsets, dtype=width, count=c.offset + len(c) + 1)
        data = np.empty(0, np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8)
        parts.append((ends, data, c.offset, len(c)))
    return parts


def factorize(values: Any, what: str) -> tuple:
    """Factorize a column: `(codes, uniques, texts)`.

    int64 codes per row (−1 for a missing value), the distinct values in order of first
    appearance, and their text (module docs). Arrow-held text is factorized natively from its
    buffers (the same codes, in a fraction of the time).
    """
    chunks = _arrow_string_chunks(values)
    if chunks is not None:
        codes, uniques = _native.factorize_arrow_strings(chunks)
        return codes, uniques, list(uniques)
    # A pandas Series is factorized as it is (fast for Arrow-backed strings).
    is_series = _module(values) == "pandas" and getattr(values, "ndim", 0) == 1
    arr = values if is_series else _as_numpy_1d(values, what)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is the usual companion
        pd = None
    if pd is not None:
        codes, uniques = pd.factorize(arr, use_na_sentinel=True)
        uniques = list(np.asarray(uniques, dtype=object))
    else:  # pragma: no cover
        missing = [i for i, v in enumerate(arr.tolist()) if v is None or v != v]
        if missing:
            raise _missing_error(what, missing[0])
        uniques_arr, codes = np.unique(arr, return_inverse=True)
        uniques = uniques_arr.tolist()
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    texts = []
    for j, u in enumerate(uniques):
        try:
            texts.append(_label_text(u))
        except ValueError:
            row = int(np.flatnonzero(codes == j)[0])
            raise ValueError(f"{what}, row {row}: {u} is not a label (NaN or infinite)") from None
    return codes, uniques, texts


def labels_as_text(values: Any, what: str) -> list:
    """Group names or class labels as text per row (module docs), refusing missing values."""
    codes, _, texts = factorize(values, what)
    if codes.size and codes.min() < 0:
        raise _missing_error(what, int(np.flatnonzero(codes < 0)[0]))
    return [texts[c] for c in codes.tolist()]


def name_of(values: Any, default: str) -> str:
    """The name of a Series (pandas, polars), else `default`."""
    name = getattr(values, "name", None)
    return name if isinstance(name, str) and name else default


def numbers(values: Any, what: str) -> np.ndarray:
    """A real-valued column as float64 (NaN: a missing value), refusing infinities."""
    arr = _as_numpy_1d(values, what)
    if arr.dtype.kind == "O":  # numbers held as Python objects
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"{what} must be numeric, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = np.flatnonzero(np.isinf(arr))
    if bad.size:
        raise ValueError(f"{what}, row {bad[0]}: not finite (NaN is a missing value)")
    return arr


def _factor(values: Any, what: str) -> tuple:
    """`(codes, texts)` of a text column for the native module."""
    codes, _, texts = factorize(values, what)
    return codes, texts


def _from_numpy(X: np.ndarray) -> Frame:
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (rows × columns), got shape {X.shape}. Reshape your data: "
            "X.reshape(-1, 1) for a single feature, X.reshape(1, -1) for a single row"
        )
    names = [f"x{j}" for j in range(X.shape[1])]
    if X.dtype.kind in "OUS":
        cols = [(n, _factor(X[:, j], n)) for j, n in enumerate(names)]
        return Frame(numeric=None, features=cols, n_rows=X.shape[0])
    if X.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: X has dtype {X.dtype}")
    if X.dtype.kind not in "iufb":
        raise TypeError(f"X has dtype {X.dtype}: expected numbers or text")
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    return Frame(numeric=X, features=[(n, j) for j, n in enumerate(names)], n_rows=X.shape[0])


def _from_pandas(df: Any, skip: str | None = None) -> Frame:
    import pandas as pd

    numeric_cols, features, categorical = [], [], []
    for name, dtype in df.dtypes.items():
        label = str(name)
        if label == skip:
            continue
        is_numeric = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        if isinstance(dtype, pd.CategoricalDtype):
            categorical.append(label)
        if is_numeric and not isinstance(dtype, pd.CategoricalDtype):
            features.append((label, len(numeric_cols)))
            numeric_cols.append(df[name])
        else:
            features.append((label, _factor(df[name], label)))
    numeric = None
    if len(numeric_cols) == len(df.columns):
        # All numeric: one conversion (a float64 frame's block is read without a copy).
        numeric = df.to_numpy(dtype=np.float64, na_value=np.nan)
    elif numeric_cols:
        # Column by column into one block (cheaper than selecting a sub-frame first).
        numeric = np.empty((len(df), len(numeric_cols)))
        for j, col in enumerate(numeric_cols):
            numeric[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
    return Frame(numeric=numeric, features=features, n_rows=len(df), categorical=categorical)


def _from_polars(df: Any, skip: str | None = None) -> Frame:
    numeric_names, features, categorical = [], [], []
    for name, dtype in df.schema.items():
        if name == skip:
            continue
        if str(dtype).startswith(("Categorical", "Enum")):
            categorical.append(name)
        if dtype.is_numeric() or str(dtype) == "Boolean":
            features.append((name, len(numeric_names)))
            numeric_names.append(name)
        else:
            features.append((name, _factor(df.get_column(name), name)))
    numeric = None
    if numeric_names:
        numeric = df.select(numeric_names).cast(float).to_numpy()
    return Frame(numeric=numeric, features=features, n_rows=df.height, categorical=categorical)


def _from_arrow(table: Any) -> Frame:
    import pyarrow as pa

    if not isinstance(table, pa.Table):
        table = pa.table(table)
    numeric_cols, features = [], []
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
            # Nulls become NaN: missing values, filled by the library's rule.
            values = col.cast(pa.float64()) if col.null_count else col
            features.append((name, len(numeric_cols)))
            numeric_cols.append(values.to_numpy().astype(np.float64, copy=False))
        else:
            features.append((name, _factor(col, name)))
    numeric = np.column_stack(numeric_cols) if numeric_cols else None
    return Frame(numeric=numeric, features=features, n_rows=table.num_rows)


def features_frame(X: Any, skip: str | None = None) -> Frame:
    """The feature columns of `X` (numpy, pandas, polars, Arrow, or nested lists).

    `skip`: a column of a DataFrame left out unread (the sensitive column, read on its own);
    `columns` still lists it.
    """
    mod = _module(X)
    skipped = False
    as_array = isinstance(X, (list, tuple)) or (
        not isinstance(X, np.ndarray)
        and mod not in ("pandas", "polars", "pyarrow")
        and hasattr(X, "__array__")
        and not hasattr(X, "__arrow_c_stream__")
    )
    if _is_sparse(X):
        raise TypeError(
            f"X is a sparse matrix ({type(X).__name__}): dpfair estimators need dense input "
            "(the library's releases are calibrated per column); convert it with X.toarray()"
        )
    if isinstance(X, np.ndarray):
        frame = _from_numpy(X)
    elif mod == "pandas" and hasattr(X, "columns"):
        skipped = skip is not None and skip in [str(c) for c in X.columns]
        frame = _from_pandas(X, skip)
    elif mod == "polars" and hasattr(X, "schema"):
        skipped = skip is not None and skip in X.schema
        frame = _from_polars(X, skip)
    elif hasattr(X, "__arrow_c_stream__") or mod == "pyarrow":
        frame = _from_arrow(X)
    elif as_array:
        # Nested lists and array-likes (`__array__`), converted as scikit-learn converts them.
        frame = _from_numpy(np.asarray(X))
    else:
        raise TypeError(
            f"X of type {type(X).__name__}: expected a numpy array, a pandas or polars "
            "DataFrame, or an Arrow table (anything with __arrow_c_stream__)"
        )
    if skipped:
        frame.columns = [str(c) for c in X.columns]
    else:
        frame.columns = [name for name, _ in frame.features]
    if frame.n_rows == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=(0, {len(frame.columns)})) while a minimum "
            "of 1 is required: X has no rows"
        )
    if not frame.columns:
        raise ValueError(
            f"Found array with 0 feature(s) (shape=({frame.n_rows}, 0)) while a minimum of 1 "
            "is required: X has no columns"
        )
    frame.named_columns = not (as_array or isinstance(X, np.ndarray))
    return frame


def _is_sparse(X: Any) -> bool:
    """Whether `X` is a scipy sparse matrix or array (scipy itself is not imported)."""
    return _module(X) == "scipy" and hasattr(X, "tocsr") and hasattr(X, "nnz")


def check_class_target(y: np.ndarray) -> None:
    """Refuse a continuous target for a classifier, as scikit-learn's `type_of_target` does.

    Real numbers that are not all integers (0.5, 1.7, …) are a regression target: a
    `ValueError` with scikit-learn's wording (`Unknown label type: continuous`). Integers,
    booleans, text and integral floats (0.0, 1.0) are class labels.
    """
    if y.dtype.kind != "f":
        return
    finite = y[np.isfinite(y)]
    if finite.size and np.any(finite != np.round(finite)):
        raise ValueError(
            "Unknown label type: continuous. Maybe you are trying to fit a classifier, which "
            "expects discrete classes on a regression target with continuous values (y has "
            "real values such as "
            f"{finite[finite != np.round(finite)][0]!r}; use a regressor)."
        )


def _drop_feature(frame: Frame, name: str) -> bool:
    """Remove feature column `name` (used as the sensitive column); whether it was there."""
    if name in frame.categorical:
        frame.categorical.remove(name)
    for k, (n, _) in enumerate(frame.features):
        if n == name:
            del frame.features[k]
            return True
    return False


def _column_values(X: Any, name: str) -> Any:
    mod = _module(X)
    if mod in ("pandas", "polars"):
        return X[name]
    import pyarrow as pa

    table = X if isinstance(X, pa.Table) else pa.table(X)
    return table.column(name)


def _rows(values: Any) -> int:
    return len(values) if hasattr(values, "__len__") else len(np.asarray(values))


def _sensitive_columns(values: Any) -> list | None:
    """The columns `(name, values)` of sensitive features with several columns, else `None`.

    A DataFrame or a 2-D array of several columns forms intersectional groups (each combination
    of their values a group, as `--sensitive a,b`); one column is read as it is.
    """
    if _module(values) in ("pandas", "polars") and hasattr(values, "columns"):
        names = [str(c) for c in values.columns]
        if len(names) > 1:
            return [(name, values[c]) for name, c in zip(names, values.columns)]
        return None
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[1] > 1:
        return [(f"sensitive{j}", values[:, j]) for j in range(values.shape[1])]
    return None


def to_frame(
    X: Any,
    y: Any = None,
    sensitive_features: Any = None,
    *,
    regression: bool = False,
    target_name: str = "y",
) -> Frame:
    """The frame of a fit or predict call.

    `sensitive_features` is an array-like of group labels or the name of a column of X; the
    group column is never a feature (a column of X with its name is left out, as in the CLI).
    A DataFrame or 2-D array of several columns forms intersectional groups: each combination
    of their values is a group, named by the values joined by ` × ` (`White × F`), through the
    library's code for `--sensitive race,sex`.
    `y` is coded as labels, or as numbers when `regression`; it is named after the Series, or
    `y` when X has a column of that name.
    """
    if _module(X) not in ("numpy", "pandas", "polars") and hasattr(X, "__arrow_c_stream__"):
        import pyarrow as pa

        X = pa.table(X)  # a stream may be read once: read it into a table first
    by_name = sensitive_features if isinstance(sensitive_features, str) else None
    frame = features_frame(X, skip=by_name)
    n = frame.n_rows
    if sensitive_features is not None:
        if by_name is not None:
            name = by_name
            if name not in frame.columns:
                raise ValueError(f"sensitive_features=`{name}` is not a column of X")
            _drop_feature(frame, name)  # numpy or Arrow input: read as a feature first
            values = _column_values(X, name)
        else:
            name, values = name_of(sensitive_features, "sensitive"), sensitive_features
        if _rows(values) != n:
            raise ValueError(f"sensitive_features has {_rows(values)} rows, X has {n}")
        parts = _sensitive_columns(values)
        # A group column that is also a column of X is not a feature (as in the CLI).
        for part, _ in parts or [(name, None)]:
            _drop_feature(frame, part)
        if parts is None:
            frame.sensitive = (name, _factor(values, "sensitive_features"))
        else:
            factored = [(part, _factor(v, f"sensitive_features `{part}`")) for part, v in parts]
            name, codes, uniques = _native.intersect_groups(factored)
            frame.sensitive = (name, (np.asarray(codes, dtype=np.int64), uniques))
    if y is not None and (isinstance(y, (list, tuple)) or getattr(y, "ndim", 1) != 1):
        y = _as_numpy_1d(y, "y")  # once: a column vector warns once
    if y is not None:
        taken = {n for n, _ in frame.features} | {frame.sensitive[0] if frame.sensitive else None}
        name = name_of(y, target_name)
        for candidate in (name, target_name, "target"):
            if candidate not in taken:
                name = candidate
                break
        else:
            raise ValueError(f"y's name `{name}` is also the name of a column of X")
        if _rows(y) != n:
            raise ValueError(f"y has {_rows(y)} rows, X has {n}")
        if regression:
            frame.target = (name, numbers(y, "y"))
        else:
            check_class_target(_as_numpy_1d(y, "y"))
            codes, uniques, texts = factorize(y, "y")
            frame.target = (name, (codes, texts))
            frame.target_labels = (uniques, texts)
    if not frame.features:
        raise ValueError("X has no feature columns besides the sensitive column")
    return frame


def original_labels(y: Any, labels: list, known: tuple | None = None) -> np.ndarray:
    """The model's class labels (text, in code order) as the values of `y` they stand for.

    `known`: `y`'s distinct values and their text, when already factorized.
    """
    if known is None:
        arr = _as_numpy_1d(y, "y")
        uniques, texts = factorize(arr, "y")[1:]
        dtype = arr.dtype
    else:
        # y was factorized already: its distinct values give the dtype (no pass over y).
        uniques, texts = known
        dtype = np.asarray(uniques).dtype if uniques else np.dtype(object)
    by_text = dict(zip(texts, uniques))
    values = [by_text.get(label, label) for label in labels]
    return np.array(values, dtype=dtype if dtype.kind in "iufb" else object)
