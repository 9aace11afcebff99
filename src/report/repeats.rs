//! A task run N times (`runner run --repeat N`): its attempts, the task
//! folders `TASK/attempt-K`, taken as one: how often it passes, pass@k
//! (the unbiased estimator of the Codex paper, 1 - C(n-c, k)/C(n, k)),
//! whether it is flaky (its outcomes differ), and the medians of its
//! turns and cost. JUnit and the summary show a repeated task so.

use super::transcript::{OutcomeStatus, Transcript};

/// One task's attempts, in attempt order.
pub struct Repeated<'a> {
    pub task: String,
    pub attempts: Vec<&'a Transcript>,
}

/// `TASK/attempt-K` as `(TASK, K)`.
pub fn attempt_of(name: &str) -> Option<(&str, u32)> {
    let (task, k) = name.rsplit_once("/attempt-")?;
    Some((task, k.parse().ok()?))
}

/// The run's tasks as repeated ones, when every transcript is an attempt.
pub fn group<'a>(ts: &[&'a Transcript]) -> Option<Vec<Repeated<'a>>> {
    let mut out: Vec<(String, Vec<(u32, &'a Transcript)>)> = Vec::new();
    for t in ts {
        let (task, k) = attempt_of(&t.task)?;
        match out.iter_mut().find(|(n, _)| n == task) {
            Some((_, a)) => a.push((k, t)),
            None => out.push((task.to_string(), vec![(k, t)])),
        }
    }
    (!out.is_empty()).then(|| {
        out.into_iter()
            .map(|(task, mut a)| {
                a.sort_by_key(|(k, _)| *k);
                // Attempts that never ran (best-of-N's after a pass, the
                // run's budget spent) are no outcome of the task's.
                if a.iter()
                    .any(|(_, t)| t.outcome.status != OutcomeStatus::Skipped)
                {
                    a.retain(|(_, t)| t.outcome.status != OutcomeStatus::Skipped);
                }
                Repeated {
                    task,
                    attempts: a.into_iter().map(|(_, t)| t).collect(),
                }
            })
            .collect()
    })
}

/// pass@k of `n` attempts of which `c` passed: the chance that at least
/// one of `k` drawn from them passed.
pub fn pass_at(n: u32, c: u32, k: u32) -> f64 {
    if n < k || n == 0 {
        return f64::NAN;
    }
    if n - c < k {
        return 1.0;
    }
    1.0 - (n - c + 1..=n)
        .map(|i| 1.0 - f64::from(k) / f64::from(i))
        .product::<f64>()
}

/// The median of `v`; none when it is empty.
pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

impl Repeated<'_> {
    /// How many attempts passed.
    pub fn passed(&self) -> u32 {
        self.attempts
            .iter()
            .filter(|t| t.outcome.status == OutcomeStatus::Passed)
            .count() as u32
    }

    pub fn runs(&self) -> u32 {
        self.attempts.len() as u32
    }

    pub fn pass_rate(&self) -> f64 {
        f64::from(self.passed()) / f64::from(self.runs().max(1))
    }

    /// Whether its outcomes differ.
    pub fn flaky(&self) -> bool {
        let c = self.passed();
        c > 0 && c < self.runs()
    }

    pub fn median_turns(&self) -> f64 {
        median(
            self.attempts
                .iter()
                .map(|t| f64::from(t.counts.turns))
                .collect(),
        )
        .unwrap_or(0.0)
    }

    /// The median cost; none when an attempt's is unknown.
    pub fn median_cost(&self) -> Option<f64> {
        let costs: Option<Vec<f64>> = self.attempts.iter().map(|t| t.usage.cost_usd).collect();
        median(costs?)
    }

    /// The smallest and largest turns, for the spread.
    pub fn turns_range(&self) -> (u32, u32) {
        let turns = self.attempts.iter().map(|t| t.counts.turns);
        (turns.clone().min().unwrap_or(0), turns.max().unwrap_or(0))
    }
}

/// The rows of a table of repeated tasks, flaky ones first, and the k of
/// the pass@k columns (up to the most attempts, at most 5).
pub fn rows_and_ks<'g, 'a>(groups: &'g [Repeated<'a>]) -> (Vec<&'g Repeated<'a>>, Vec<u32>) {
    let mut rows: Vec<&Repeated> = groups.iter().collect();
    rows.sort_by_key(|r| (!r.flaky(), r.task.clone()));
    let most = rows.iter().map(|r| r.runs()).max().unwrap_or(1);
    (rows, (1..=most.min(5)).collect())
}

/// The summary's table of repeated tasks, flaky ones first.
pub fn summary_table(groups: &[Repeated]) -> String {
    let (rows, ks) = rows_and_ks(groups);
    let mut s = String::from("\n### Repeated tasks\n\n| task | passed | pass rate |");
    for k in &ks {
        s.push_str(&format!(" pass@{k} |"));
    }
    s.push_str(" flaky | attempts | turns (median, range) | cost (median) |\n|---|---:|---:|");
    s.push_str(&"---:|".repeat(ks.len()));
    s.push_str("---|---|---|---:|\n");
    for r in rows {
        let (n, c) = (r.runs(), r.passed());
        s.push_str(&format!(
            "| {} | {c}/{n} | {:.2} |",
            r.task.replace('|', "\\|"),
            r.pass_rate()
        ));
        for &k in &ks {
            let p = pass_at(n, c, k);
            s.push_str(&if p.is_nan() {
                " |".to_string()
            } else {
                format!(" {p:.2} |")
            });
        }
        let marks: String = r
            .attempts
            .iter()
            .map(|t| {
                if t.outcome.status == OutcomeStatus::Passed {
                    "✅"
                } else {
                    "❌"
                }
            })
            .collect();
        let (lo, hi) = r.turns_range();
        s.push_str(&format!(
            " {} | {marks} | {:.1} ({lo}-{hi}) | {} |\n",
            if r.flaky() { "yes" } else { "no" },
            r.median_turns(),
            super::money::cost(r.median_cost())
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_at_k_is_the_unbiased_estimator() {
        assert!((pass_at(4, 2, 1) - 0.5).abs() < 1e-12);
        assert!((pass_at(4, 2, 2) - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!(pass_at(4, 4, 1), 1.0);
        assert_eq!(pass_at(4, 0, 3), 0.0);
        assert_eq!(pass_at(4, 3, 2), 1.0);
        assert!(pass_at(2, 1, 3).is_nan());
        assert_eq!(attempt_of("fix/typos/attempt-12"), Some(("fix/typos", 12)));
        assert_eq!(attempt_of("fix"), None);
    }
}
