//! A private search against the default fit at the same ε, on example data: held-out accuracy
//! of both over repetitions (`cargo run --release -p dpfair --example tune_vs_default`).
use dpfair::estimators::DpLogistic;
use dpfair::pipeline::Scaling;
use dpfair::tune::{Search, tune};
use dpfair::{Params, Session};

fn main() -> Result<(), dpfair::Error> {
    let schema = dpfair::estimators::example_schema(3);
    for rep in 0..3u64 {
        let train = dpfair::estimators::example_data(1_500, 3, rep);
        let test = dpfair::estimators::example_data(2_000, 3, 100 + rep);
        let acc = |p: &dpfair::predictor::Output| {
            let y = match &test.target {
                Some(dpfair::data::Target::Binary(y)) => y.clone(),
                _ => unreachable!(),
            };
            p.classes()
                .unwrap()
                .iter()
                .zip(&y)
                .filter(|(a, b)| **a == u32::from(**b))
                .count() as f64
                / y.len() as f64
        };
        let eps = 1.0;
        let default = DpLogistic::params()
            .epsilon(eps)
            .substitution(true)
            .check()?;
        let mut loaded = dpfair::data::Loaded::in_memory(train.clone(), schema.clone());
        let mut s = Session::new(eps, 1e-5)?;
        let f = dpfair::pipeline::fit(&default, &mut loaded, &Scaling::None, &mut s)?;
        let a0 = acc(&f.predict(&test, s.noise())?);
        let grid: Vec<_> = [0.1, 0.5, 2.0]
            .iter()
            .flat_map(|lr| [2usize, 10].map(move |ep| (*lr, ep)))
            .map(|(lr, ep)| {
                DpLogistic::params()
                    .epsilon(eps)
                    .substitution(true)
                    .learning_rate(lr)
                    .epochs(ep)
                    .check()
            })
            .collect::<Result<_, _>>()?;
        let mut loaded = dpfair::data::Loaded::in_memory(train, schema.clone());
        let mut s = Session::new(eps, 1e-5)?;
        let t = tune(
            &grid,
            &mut loaded,
            &Scaling::None,
            &mut s,
            &Search::default(),
        )?;
        let a1 = acc(&t.fitted.predict(&test, s.noise())?);
        println!(
            "rep {rep}: default {a0:.4}  tuned {a1:.4}  run ε {:.3}  chosen {}  noisy {:.3} total {}",
            t.selection.run_epsilon,
            t.selection.chosen,
            t.selection.noisy_accuracy,
            s.ledger().total()?.epsilon
        );
        for (i, c) in grid.iter().enumerate() {
            let mut loaded = dpfair::data::Loaded::in_memory(
                dpfair::estimators::example_data(1_500, 3, rep),
                schema.clone(),
            );
            let mut s = Session::unlimited();
            let f = dpfair::pipeline::fit(
                &dpfair::Estimator::with_epsilon(c, t.selection.run_epsilon)?,
                &mut loaded,
                &Scaling::None,
                &mut s,
            )?;
            println!(
                "   cand {i}: {:.4} check {:?}",
                acc(&f.predict(&test, s.noise())?),
                f.check.as_ref().map(|c| c.constant)
            );
        }
    }
    Ok(())
}
