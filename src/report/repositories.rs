//! A fleet run's transcripts (`runner run --repos`) grouped by their
//! repository, with what each repository's row says: one grouping for
//! junit.xml, summary.md and report.html.

use std::collections::HashMap;

use super::transcript::{OutcomeStatus, Transcript};
use runner_output::Repository;

/// One repository of a fleet run and its tasks.
pub struct Group<'a> {
    pub repo: &'a Repository,
    /// The indexes of its transcripts, in the run's order.
    pub tasks: Vec<usize>,
    /// How many of them passed.
    pub passed: usize,
    /// The files they changed.
    pub changed: usize,
    /// What they cost (none when a price is unknown).
    pub cost: Option<f64>,
}

impl Group<'_> {
    /// `URL` or `URL@REF`, as listed.
    pub fn name(&self) -> String {
        match &self.repo.git_ref {
            Some(g) => format!("{}@{g}", self.repo.url),
            None => self.repo.url.clone(),
        }
    }

    /// The commit its tasks ran on, shortened, or `not fetched`.
    pub fn commit(&self) -> &str {
        self.repo
            .commit
            .as_deref()
            .map_or("not fetched", |c| &c[..c.len().min(12)])
    }

    /// Whether every task of it passed.
    pub fn green(&self) -> bool {
        self.passed == self.tasks.len()
    }
}

/// The repositories of `transcripts`, in the order they first come (one
/// lookup a transcript); none unless every transcript names one (a run
/// that is not a fleet's).
pub fn group<'a>(transcripts: &[&'a Transcript]) -> Option<Vec<Group<'a>>> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for (i, t) in transcripts.iter().enumerate() {
        let repo = t.repository.as_ref()?;
        let g = *at.entry(repo.folder.as_str()).or_insert_with(|| {
            groups.push(Group {
                repo,
                tasks: Vec::new(),
                passed: 0,
                changed: 0,
                cost: Some(0.0),
            });
            groups.len() - 1
        });
        let g = &mut groups[g];
        g.tasks.push(i);
        g.passed += usize::from(t.outcome.status == OutcomeStatus::Passed);
        g.changed += t.changes.len();
        g.cost = g.cost.zip(t.usage.cost_usd).map(|(a, b)| a + b);
    }
    (!groups.is_empty()).then_some(groups)
}
