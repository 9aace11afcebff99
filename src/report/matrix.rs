//! A run under several models (`runner run --models`): its tasks set side
//! by side, rows the tasks, columns the variants (the models), each cell
//! the variant's runs of the task (several with `--repeat`): how many
//! passed, their median cost and turns. The last rows say how many tasks
//! each variant passed and what it spent per passing run.

use super::repeats::median;
use super::transcript::{OutcomeStatus, Transcript};

/// The run's tasks in a matrix.
pub struct Matrix<'a> {
    /// The variants, in the order first seen (the order given).
    pub variants: Vec<String>,
    pub rows: Vec<Row<'a>>,
}

/// One task: its runs under each variant (`cells[i]` for `variants[i]`).
pub struct Row<'a> {
    pub task: String,
    pub cells: Vec<Vec<&'a Transcript>>,
}

/// The matrix of the run's transcripts; none when no task is a cell of
/// one.
pub fn group<'a>(ts: &[&'a Transcript]) -> Option<Matrix<'a>> {
    let mut m = Matrix {
        variants: Vec::new(),
        rows: Vec::new(),
    };
    for t in ts {
        let Some(cell) = &t.matrix else { continue };
        let v = match m.variants.iter().position(|v| *v == cell.variant) {
            Some(i) => i,
            None => {
                m.variants.push(cell.variant.clone());
                m.variants.len() - 1
            }
        };
        let row = match m.rows.iter().position(|r| r.task == cell.task) {
            Some(i) => i,
            None => {
                m.rows.push(Row {
                    task: cell.task.clone(),
                    cells: Vec::new(),
                });
                m.rows.len() - 1
            }
        };
        let cells = &mut m.rows[row].cells;
        cells.resize_with(cells.len().max(v + 1), Vec::new);
        cells[v].push(t);
    }
    if m.rows.is_empty() {
        return None;
    }
    let width = m.variants.len();
    for r in &mut m.rows {
        r.cells.resize_with(width, Vec::new);
        for runs in &mut r.cells {
            // Attempts that never ran are no outcome of the variant's.
            if runs
                .iter()
                .any(|t| t.outcome.status != OutcomeStatus::Skipped)
            {
                runs.retain(|t| t.outcome.status != OutcomeStatus::Skipped);
            }
        }
    }
    Some(m)
}

/// What a cell's runs came to.
pub struct CellStats {
    pub passed: usize,
    pub runs: usize,
    /// The median cost; none when a run's is unknown.
    pub cost: Option<f64>,
    pub turns: f64,
}

pub fn stats(runs: &[&Transcript]) -> CellStats {
    let costs: Option<Vec<f64>> = runs.iter().map(|t| t.usage.cost_usd).collect();
    CellStats {
        passed: runs
            .iter()
            .filter(|t| t.outcome.status == OutcomeStatus::Passed)
            .count(),
        runs: runs.len(),
        cost: costs.and_then(median),
        turns: median(runs.iter().map(|t| f64::from(t.counts.turns)).collect()).unwrap_or(0.0),
    }
}

/// For each variant: the tasks it passed every run of, and its whole cost
/// over its passed runs (none when a cost is unknown or nothing passed).
pub fn totals(m: &Matrix) -> Vec<(usize, Option<f64>)> {
    (0..m.variants.len())
        .map(|v| {
            let runs: Vec<&Transcript> = m
                .rows
                .iter()
                .flat_map(|r| r.cells[v].iter().copied())
                .collect();
            let tasks = (m.rows.iter())
                .filter(|r| {
                    let s = stats(&r.cells[v]);
                    s.runs > 0 && s.passed == s.runs
                })
                .count();
            let passed = runs
                .iter()
                .filter(|t| t.outcome.status == OutcomeStatus::Passed)
                .count();
            let spent: Option<f64> = runs.iter().map(|t| t.usage.cost_usd).sum();
            let per_pass = spent.filter(|_| passed > 0).map(|s| s / passed as f64);
            (tasks, per_pass)
        })
        .collect()
}

/// A cell in words: `✅ 2/2 · $0.0012 · 3 turns`.
pub fn cell_text(s: &CellStats) -> String {
    if s.runs == 0 {
        return "not run".into();
    }
    let mark = match (s.passed, s.runs) {
        (p, r) if p == r => "✅",
        (0, _) => "❌",
        _ => "⚠️",
    };
    format!(
        "{mark} {}/{} · {} · {} turns",
        s.passed,
        s.runs,
        super::money::cost(s.cost),
        s.turns
    )
}

/// The summary's table.
pub fn summary_table(m: &Matrix) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut s = String::from("\n### Models side by side\n\n| task |");
    for v in &m.variants {
        s.push_str(&format!(" {} |", esc(v)));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(m.variants.len()));
    s.push('\n');
    for r in &m.rows {
        s.push_str(&format!("| {} |", esc(&r.task)));
        for runs in &r.cells {
            s.push_str(&format!(" {} |", cell_text(&stats(runs))));
        }
        s.push('\n');
    }
    let totals = totals(m);
    s.push_str("| **tasks passed** |");
    for (tasks, _) in &totals {
        s.push_str(&format!(" {tasks}/{} |", m.rows.len()));
    }
    s.push_str("\n| **cost per passing run** |");
    for (_, per_pass) in &totals {
        s.push_str(&format!(
            " {} |",
            per_pass.map_or("—".to_string(), super::money::usd)
        ));
    }
    s.push('\n');
    s
}
