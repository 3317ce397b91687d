//! How a ledger's entries compose into one total (the rules are in the module docs of
//! [`super`]): the items to compose, the pure-ε, RDP and basic-composition bounds, and the memo of
//! accountant evaluations they need.

use super::{Composition, Cost, Entry, Total};
use crate::accounting::{self, Accountant};
use crate::error::{Result, invalid};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;

/// The composition tree of a ledger's entries: a node holds the costs that compose
/// sequentially in it and the parallel partitions made inside it (keyed by
/// [`super::Partition::key`] and name), each a map from its parts to their nodes. The root is the
/// whole data set; a partition made inside a part of another ([`super::Ledger::in_part`] within
/// `in_part`) is a child of that part's node.
#[derive(Default)]
pub(super) struct Node {
    costs: Vec<Cost>,
    partitions: BTreeMap<(u64, String), BTreeMap<String, Node>>,
}

impl Node {
    /// The parts' nodes of every partition in this node.
    fn parts(&self) -> impl Iterator<Item = &BTreeMap<String, Node>> {
        self.partitions.values()
    }

    /// Whether some cost in this node or below needs a share of δ.
    fn needs_delta(&self) -> bool {
        self.costs.iter().any(needs_delta)
            || self.parts().flat_map(|p| p.values()).any(Node::needs_delta)
    }

    /// How many of this node's children share its δ: its costs that need one, and its
    /// partitions that hold such a cost.
    fn delta_slots(&self) -> usize {
        self.costs.iter().filter(|c| needs_delta(c)).count()
            + self
                .parts()
                .filter(|parts| parts.values().any(Node::needs_delta))
                .count()
    }

    fn is_empty(&self) -> bool {
        self.costs.is_empty() && self.partitions.is_empty()
    }
}

/// The composition tree of `entries` (see [`Node`]).
pub(super) fn tree(entries: &[Entry]) -> Node {
    let mut root = Node::default();
    for e in entries {
        let mut node = &mut root;
        if let Composition::Parallel {
            partition,
            part,
            key,
            within,
        } = &e.composition
        {
            let scopes = within
                .iter()
                .map(|s| (s.key, &s.partition, &s.part))
                .chain([(*key, partition, part)]);
            for (key, partition, part) in scopes {
                node = node
                    .partitions
                    .entry((key, partition.clone()))
                    .or_default()
                    .entry(part.clone())
                    .or_default();
            }
        }
        node.costs.push(e.cost.clone());
    }
    root
}

/// Whether the tree holds no entry.
pub(super) fn is_empty(root: &Node) -> bool {
    root.is_empty()
}

/// Whether every cost is pure ε.
pub(super) fn all_pure(node: &Node) -> bool {
    node.costs.iter().all(|c| matches!(c, Cost::Pure { .. }))
        && node.parts().flat_map(|p| p.values()).all(all_pure)
}

/// Σ ε of a node's pure costs, plus each partition's worst part.
fn pure_epsilon(node: &Node) -> f64 {
    pure_sum(&node.costs)
        + node
            .parts()
            .map(|parts| parts.values().map(pure_epsilon).fold(0.0, f64::max))
            .sum::<f64>()
}

/// Basic composition of pure ε: Σ over the root's costs and partitions (a partition: its worst
/// part's Σ ε, recursively).
pub(super) fn pure_total(root: &Node) -> Total {
    Total {
        epsilon: pure_epsilon(root),
        delta: 0.0,
        rule: "basic composition of pure ε (parallel parts: worst part)".into(),
    }
}

/// Memo of the accountant evaluations the total needs, keyed by the subsampled-Gaussian
/// parameters (and the δ of the conversion): a PRV ε costs ≈ 0.15 s of CPU and an RDP curve a
/// few ms, and a ledger's total is asked for on every charge, by `summary()` and when a model is
/// saved. Entries are append-only and costs immutable, so a memoised value never goes stale; the
/// values are bit-identical to a fresh evaluation (the same function on the same inputs).
/// Not serialised; ignored by equality.
#[derive(Default)]
pub(super) struct ConversionCache {
    epsilon: Mutex<HashMap<SgmKey, (f64, f64)>>,
    rdp: Mutex<HashMap<SgmKey, Vec<f64>>>,
}

/// (q, z, T, accountant, δ or 0) as exact bits.
type SgmKey = (u64, u64, u64, Accountant, u64);

impl ConversionCache {
    fn key(c: &Cost, delta: f64) -> Option<SgmKey> {
        match c {
            Cost::SubsampledGaussian {
                sampling_rate,
                noise_multiplier,
                steps,
                accountant,
            } => Some((
                sampling_rate.to_bits(),
                noise_multiplier.to_bits(),
                *steps,
                *accountant,
                delta.to_bits(),
            )),
            _ => None,
        }
    }

    /// [`Cost::to_dp`], memoised for subsampled-Gaussian costs.
    fn to_dp(&self, c: &Cost, delta: f64) -> Result<(f64, f64)> {
        let Some(key) = Self::key(c, delta) else {
            return c.to_dp(delta);
        };
        if let Some(v) = lock(&self.epsilon).get(&key) {
            return Ok(*v);
        }
        let v = c.to_dp(delta)?;
        lock(&self.epsilon).insert(key, v);
        Ok(v)
    }

    /// [`Cost::rdp_curve`] over the ledger's [`default_orders`], memoised for
    /// subsampled-Gaussian costs (`orders` must always be the same grid).
    fn rdp_curve(&self, c: &Cost, orders: &[f64]) -> Option<Result<Vec<f64>>> {
        let Some(key) = Self::key(c, 0.0) else {
            return c.rdp_curve(orders);
        };
        if let Some(v) = lock(&self.rdp).get(&key) {
            return Some(Ok(v.clone()));
        }
        let v = c.rdp_curve(orders)?;
        if let Ok(curve) = &v {
            lock(&self.rdp).insert(key, curve.clone());
        }
        Some(v)
    }

    pub(super) fn len(&self) -> usize {
        lock(&self.epsilon).len() + lock(&self.rdp).len()
    }
}

/// The map behind a mutex; a poisoned lock only means another thread panicked mid-insert of a
/// complete value, so its content is still valid.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Clone for ConversionCache {
    fn clone(&self) -> Self {
        ConversionCache {
            epsilon: Mutex::new(lock(&self.epsilon).clone()),
            rdp: Mutex::new(lock(&self.rdp).clone()),
        }
    }
}

impl PartialEq for ConversionCache {
    /// A memo never changes what the ledger means.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for ConversionCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConversionCache({} values)", self.len())
    }
}

/// Σ ε of the pure costs of a part.
fn pure_sum(part: &[Cost]) -> f64 {
    part.iter()
        .map(|c| match c {
            Cost::Pure { epsilon } => *epsilon,
            _ => 0.0,
        })
        .sum()
}

/// Whether a cost must be converted at a share of the ledger's δ (not pure, not approximate).
fn needs_delta(c: &Cost) -> bool {
    !matches!(c, Cost::Pure { .. } | Cost::Approx { .. })
}

/// A node's RDP curve: its costs' curves added up, plus each partition's order-wise worst part.
pub(super) fn rdp_curve(
    node: &Node,
    orders: &[f64],
    cache: &ConversionCache,
) -> Option<Result<Vec<f64>>> {
    let mut sum = vec![0.0; orders.len()];
    for c in &node.costs {
        match cache.rdp_curve(c, orders)? {
            Ok(curve) => sum.iter_mut().zip(curve).for_each(|(s, v)| *s += v),
            Err(e) => return Some(Err(e)),
        }
    }
    for parts in node.parts() {
        let mut worst = vec![0.0f64; orders.len()];
        for part in parts.values() {
            match rdp_curve(part, orders, cache)? {
                Ok(curve) => worst.iter_mut().zip(curve).for_each(|(w, v)| *w = w.max(v)),
                Err(e) => return Some(Err(e)),
            }
        }
        sum.iter_mut().zip(worst).for_each(|(s, v)| *s += v);
    }
    Some(Ok(sum))
}

/// RDP bound: `None` when some cost has no RDP curve.
pub(super) fn rdp_total(
    root: &Node,
    orders: &[f64],
    delta: f64,
    cache: &ConversionCache,
) -> Option<Result<Total>> {
    let sum = match rdp_curve(root, orders, cache)? {
        Ok(sum) => sum,
        Err(e) => return Some(Err(e)),
    };
    Some(
        accounting::rdp_to_dp(orders, &sum, delta).map(|epsilon| Total {
            epsilon,
            delta,
            rule: format!(
                "RDP composition over {} orders, converted to (ε, δ) at δ = {delta}",
                orders.len()
            ),
        }),
    )
}

/// The δ a node's approximate-DP entries use (a partition: its largest part's).
fn approx_delta(node: &Node) -> f64 {
    let own: f64 = node
        .costs
        .iter()
        .map(|c| match c {
            Cost::Approx { delta, .. } => *delta,
            _ => 0.0,
        })
        .sum();
    own + node
        .parts()
        .map(|parts| parts.values().map(approx_delta).fold(0.0, f64::max))
        .sum::<f64>()
}

/// A node's (ε, δ) by basic composition, its zCDP/RDP/DP-SGD costs and partitions sharing
/// `share` of δ equally (a partition passes its share to every part: parts are disjoint).
fn basic_node(node: &Node, share: f64, cache: &ConversionCache) -> Result<(f64, f64)> {
    let each = share / node.delta_slots().max(1) as f64;
    let (mut eps, mut del) = (0.0, 0.0);
    for c in &node.costs {
        let (e, d) = cache.to_dp(c, each)?;
        eps += e;
        del += d;
    }
    for parts in node.parts() {
        let (mut e_max, mut d_max) = (0.0f64, 0.0f64);
        for part in parts.values() {
            let (e, d) = part_dp(part, each, cache)?;
            e_max = e_max.max(e);
            d_max = d_max.max(d);
        }
        eps += e_max;
        del += d_max;
    }
    Ok((eps, del))
}

/// One part's (ε, δ) at δ-share `share`: the smaller ε of two valid bounds, the part's basic
/// composition ([`basic_node`]) and, when it needs δ and every cost in it has an RDP curve, its
/// own RDP composition converted at `share` plus its approximate entries' δ. A partition's
/// parts are then combined by their largest ε and δ (parallel composition), so a part that an
/// RDP accountant admitted keeps its ε beside a part of another kind (e.g. a pure-ε check).
fn part_dp(part: &Node, share: f64, cache: &ConversionCache) -> Result<(f64, f64)> {
    let basic = basic_node(part, share, cache)?;
    let approx = approx_delta(part);
    if share <= 0.0 || !part.needs_delta() || approx > 0.0 {
        return Ok(basic);
    }
    let orders = crate::accounting::default_orders();
    match rdp_curve(part, &orders, cache) {
        Some(Ok(curve)) => match accounting::rdp_to_dp(&orders, &curve, share) {
            Ok(e) if e < basic.0 => Ok((e, share)),
            _ => Ok(basic),
        },
        _ => Ok(basic),
    }
}

/// Basic composition of (ε_i, δ_i), converting zCDP / RDP / DP-SGD costs at equal shares of
/// what the approximate-DP entries leave of `delta` (module docs of [`super`]).
pub(super) fn basic_total(root: &Node, delta: f64, cache: &ConversionCache) -> Result<Total> {
    let approx = approx_delta(root);
    let left = delta - approx;
    if root.needs_delta() && left <= 0.0 {
        return Err(invalid(
            "delta",
            format!(
                "the ledger's δ = {delta} leaves nothing to convert zCDP/RDP/DP-SGD costs after approximate-DP entries use {approx}"
            ),
        ));
    }
    let share = if root.needs_delta() { left } else { 0.0 };
    let (epsilon, del) = basic_node(root, share, cache)?;
    let top = share / root.delta_slots().max(1) as f64;
    Ok(Total {
        epsilon,
        delta: del,
        rule: format!(
            "basic composition of (ε_i, δ_i); zCDP/RDP/DP-SGD items converted at δ_i = {top:.3e} each"
        ),
    })
}
