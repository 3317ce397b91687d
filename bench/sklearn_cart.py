"""scikit-learn DecisionTreeClassifier on the data written by `crates/learn/benches/cart.rs`
(run that with CART_DUMP=DIR first). Same configurations, median of 3 fits, test accuracy.

    python3 bench/sklearn_cart.py DIR        (pip install numpy scikit-learn, in a venv under /tmp)
"""
import os
import sys
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier

d = sys.argv[1]
xtr = np.fromfile(f"{d}/x_train.f64", dtype="<f8").reshape(-1, 20)
ytr = np.fromfile(f"{d}/y_train.f64", dtype="<f8").astype(np.int64)
xte = np.fromfile(f"{d}/x_test.f64", dtype="<f8").reshape(-1, 20)
yte = np.fromfile(f"{d}/y_test.f64", dtype="<f8").astype(np.int64)
import sklearn
fits = int(os.environ.get("CART_FITS", "3"))
print(f"scikit-learn {sklearn.__version__}, DecisionTreeClassifier, {xtr.shape[0]} x 20 rows (median of {fits} fits)")
for criterion, depth in [("gini", 8), ("gini", 16), ("gini", None)]:
    times = []
    for seed in range(fits):
        clf = DecisionTreeClassifier(criterion=criterion, max_depth=depth, random_state=seed)
        t0 = time.perf_counter()
        clf.fit(xtr, ytr)
        times.append(time.perf_counter() - t0)
    times.sort()
    acc = (clf.predict(xte) == yte).mean()
    print(f"{criterion} max_depth {depth}: {times[len(times) // 2]:.3f} s (min {times[0]:.3f}), test accuracy {acc:.4f}, "
          f"depth {clf.get_depth()}, leaves {clf.get_n_leaves()}")
