//! No import cycle among `crates/dpfair`'s top-level modules (issue #39): the methods sit below
//! the model file, the estimator trait, the pipeline and the estimators, and a module may only
//! name modules below it. Read from the source: every `crate::<module>` path outside comments
//! and outside `#[cfg(test)]` code (tests may reach up), then Tarjan's strongly connected
//! components; a component of two or more modules is a cycle, printed with the lines that
//! make it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules: `src/<name>.rs` and `src/<name>/` (lib.rs and main files aside).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_stem()?.to_str()?.to_string();
            let module = path.is_dir() || path.extension().is_some_and(|x| x == "rs");
            (module && name != "lib").then_some(name)
        })
        .collect()
}

/// The source files of `module`: its `.rs` file and everything under its directory.
fn files_of(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = src.join(format!("{module}.rs"));
    if file.exists() {
        out.push(file);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The modules a line names through `crate::x` or `use crate::{x, …}`.
fn named_modules(line: &str, modules: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            found.extend(inner.split(',').map(|part| ident(part.trim())));
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|m| modules.contains(m));
    found
}

/// Edges `module → named module`, each with the first line that makes it.
fn edges(src: &Path, modules: &BTreeSet<String>) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for module in modules {
        for file in files_of(src, module) {
            let text = fs::read_to_string(&file).unwrap();
            // Test code may import anything: cut each file at its first `#[cfg(test)]`.
            let body = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in body.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for to in named_modules(line, modules) {
                    if &to != module {
                        out.entry((module.clone(), to))
                            .or_insert_with(|| format!("{}:{}", file.display(), n + 1));
                    }
                }
            }
        }
    }
    out
}

/// Tarjan's strongly connected components of the graph.
fn components(nodes: &BTreeSet<String>, adj: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        adj: &'a BTreeMap<String, Vec<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on_stack: BTreeSet<String>,
        out: Vec<Vec<String>>,
    }
    fn visit(v: &str, s: &mut State) {
        let i = s.index.len();
        s.index.insert(v.into(), i);
        s.low.insert(v.into(), i);
        s.stack.push(v.into());
        s.on_stack.insert(v.into());
        for w in s.adj.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(w, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let mut s = State {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &mut s);
        }
    }
    s.out
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = top_level_modules(&src);
    assert!(modules.len() > 10, "found only {modules:?}");
    let edges = edges(&src, &modules);
    let mut adj: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        adj.entry(from.clone()).or_default().push(to.clone());
    }
    let cycles: Vec<Vec<String>> = components(&modules, &adj)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    let explain: Vec<String> = cycles
        .iter()
        .flat_map(|c| {
            edges
                .iter()
                .filter(|((a, b), _)| c.contains(a) && c.contains(b))
                .map(|((a, b), at)| format!("{a} -> {b} ({at})"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "module cycles {cycles:?}:\n{}",
        explain.join("\n")
    );
}

#[test]
fn the_reader_sees_a_planted_cycle() {
    // The graph code itself: a → b → a is one component, c alone another.
    let nodes: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let adj: BTreeMap<String, Vec<String>> = [
        ("a".to_string(), vec!["b".to_string()]),
        ("b".to_string(), vec!["a".to_string(), "c".to_string()]),
    ]
    .into();
    let mut comps = components(&nodes, &adj);
    comps.iter_mut().for_each(|c| c.sort());
    assert!(comps.contains(&vec!["a".to_string(), "b".to_string()]));
    assert!(comps.contains(&vec!["c".to_string()]));
    // And the line reader: paths and grouped imports, comments aside by the caller.
    let modules: BTreeSet<String> = ["model", "pipeline"].map(String::from).into();
    assert_eq!(
        named_modules("use crate::{model::X, pipeline};", &modules),
        ["model", "pipeline"]
    );
    assert_eq!(
        named_modules("let f = crate::model::ModelFile::new(", &modules),
        ["model"]
    );
    assert!(named_modules("use crate::error::Result;", &modules).is_empty());
}
