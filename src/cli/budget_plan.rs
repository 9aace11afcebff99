//! What `--max-cost` will buy, said before anything runs, and what it did
//! not buy, said at the end (issue 75 item 5).
//!
//! A run's budget covers every task, attempt and variant together (they
//! are tasks of one run), and a task that has not started when the
//! budget is spent is skipped. Up front, the plan bounds each run's cost
//! where the task bounds it: `max_cost`, or `max_tokens_total` at the
//! model's dearest token price; a scripted model costs nothing. Each
//! stops after the turn that passes its bound, so a bound is an estimate
//! by one turn; the runs of one task spend its `max_cost` together. Runs
//! in the order they start, each bounded, give the number that start
//! whatever the others spend.

use crate::task::Task;

/// The most one run of `t` is expected to cost (USD), where the task
/// bounds it.
fn bound(t: &Task) -> Option<f64> {
    if t.model.is_scripted() {
        return Some(0.0);
    }
    let by_tokens = (t.max_tokens_total > 0)
        .then_some(t.pricing.as_ref())
        .flatten()
        .map(|p| {
            let dearest = [p.input, p.output, p.cache_write.unwrap_or(p.input)]
                .into_iter()
                .fold(0.0, f64::max);
            t.max_tokens_total as f64 * dearest / 1_000_000.0
        });
    match (t.max_cost, by_tokens) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The plan's line for `runs` (in the order they start) under a budget
/// of `max` USD.
/// The runs of one task spend its `max_cost` together, so their bounds
/// add up to it at most.
pub(super) fn plan_line(runs: &[Task], max: f64) -> String {
    let mut groups: std::collections::HashMap<_, f64> = std::collections::HashMap::new();
    let bounds: Vec<(&str, Option<f64>)> = runs
        .iter()
        .map(|t| {
            let b = bound(t);
            let shared = t.max_cost.zip(crate::run::group_of(t));
            let b = match (b, shared) {
                (Some(b), Some((cap, key))) => {
                    let used = groups.entry(key).or_default();
                    let b = b.min((cap - *used).max(0.0));
                    *used += b;
                    Some(b)
                }
                (b, _) => b,
            };
            (t.name.as_str(), b)
        })
        .collect();
    describe(&bounds, max)
}

fn describe(bounds: &[(&str, Option<f64>)], max: f64) -> String {
    let n = bounds.len();
    let head = format!(
        "plan: {n} run{} under --max-cost ${max}",
        if n == 1 { "" } else { "s" }
    );
    // Run i starts for sure while what the runs before it can spend
    // stays under the budget.
    let mut before = 0.0;
    let mut sure = 0;
    let mut unbounded = None;
    for (name, b) in bounds {
        if before >= max {
            break;
        }
        sure += 1;
        match b {
            Some(b) => before += b,
            None => {
                unbounded = Some(*name);
                break;
            }
        }
    }
    if let Some(name) = unbounded {
        return format!(
            "{head}: at least {sure} start; `{name}` has no max_cost or max_tokens_total to bound it, so how many more fit is known only as they spend, and those not started once ${max} is spent are skipped"
        );
    }
    if sure == n && before <= max {
        return format!("{head}: all fit (at most about ${before:.2} in all)");
    }
    format!(
        "{head}: about {sure} fit, each run at most about its bound (max_cost, or max_tokens_total at the model's price); those not started once ${max} is spent are skipped"
    )
}

/// The closing line when the budget left runs unstarted.
pub(super) fn spent_line(results: &[crate::run::TaskResult]) -> Option<String> {
    let skipped = results
        .iter()
        .filter(|r| crate::report::skipped_by_budget(&r.transcript))
        .count();
    (skipped > 0).then(|| {
        format!(
            "runner: {skipped} of {} runs not started: the run's --max-cost was spent",
            results.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn the_plan_counts_the_runs_that_start_whatever_the_others_spend() {
        let b = |v: &[Option<f64>]| -> Vec<(&'static str, Option<f64>)> {
            v.iter().map(|b| ("t", *b)).collect()
        };
        assert_eq!(
            describe(&b(&[Some(0.0); 3]), 1.0),
            "plan: 3 runs under --max-cost $1: all fit (at most about $0.00 in all)"
        );
        // 0.4 each under 1.0: the third starts (0.8 spent before it), the
        // fourth may not (1.2).
        let four = describe(&b(&[Some(0.4); 4]), 1.0);
        assert!(
            four.starts_with("plan: 4 runs under --max-cost $1: about 3 fit"),
            "{four}"
        );
        let unknown = describe(&[("a", Some(0.4)), ("b", None), ("c", Some(0.1))], 1.0);
        assert!(
            unknown.starts_with(
                "plan: 3 runs under --max-cost $1: at least 2 start; `b` has no max_cost"
            ),
            "{unknown}"
        );
        assert!(describe(&b(&[None]), 0.5).contains("at least 1 start"));
    }
}
