//! Cutting a turn's calls into batches: a run of concurrency-safe calls runs
//! in parallel, every other call alone, results in the model's order.
//!
//! Consecutive concurrency-safe calls form one batch that runs in parallel
//! (up to a cap); every other call is a batch of its own. Batches run one
//! after another, and results keep the model's order.

/// Groups call indices: `safe[i]` says whether call `i` may run in parallel.
pub fn partition(safe: &[bool]) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    for (i, &s) in safe.iter().enumerate() {
        if s {
            run.push(i);
        } else {
            if !run.is_empty() {
                batches.push(std::mem::take(&mut run));
            }
            batches.push(vec![i]);
        }
    }
    if !run.is_empty() {
        batches.push(run);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_unsafe_calls() {
        assert_eq!(
            partition(&[true, true, false, true]),
            vec![vec![0, 1], vec![2], vec![3]]
        );
        assert_eq!(partition(&[false, false]), vec![vec![0], vec![1]]);
        assert_eq!(partition(&[]), Vec::<Vec<usize>>::new());
    }
}
