//! `--shard K/N`: a stable, balanced partition of tasks (or a fleet's
//! repositories) by name, for CI matrix jobs. The names are ordered by a
//! hash of each (the name breaking ties) and dealt to the shards in turn:
//! a task's shard depends on the set of names alone, never on the order
//! the files are given in, and the shards differ in size by one at most
//! (5 tasks over 3 shards: 2, 2, 1). A hash alone, as before, gave 0, 3
//! and 2.

use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

/// Why a `--shard` value is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("invalid shard `{0}` (expected K/N, e.g. 1/3)")]
    NotKOfN(String),
    #[error("invalid shard index `{0}`")]
    Index(String),
    #[error("invalid shard count `{0}`")]
    Count(String),
    #[error("invalid shard `{0}`: K must be between 1 and N")]
    OutOfRange(String),
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NotKOfN(s.to_string()))?;
        let index: u32 = k
            .trim()
            .parse()
            .map_err(|_| ShardError::Index(k.to_string()))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| ShardError::Count(n.to_string()))?;
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::OutOfRange(s.to_string()));
        }
        Ok(Shard { index, count })
    }
}

/// The shard (from 1) of `count` each of `names` belongs to, in their
/// order.
pub fn shards_of(names: &[&str], count: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| (crate::hash::fnv1a(names[i].as_bytes()), names[i]));
    let mut out = vec![0; names.len()];
    for (turn, i) in order.into_iter().enumerate() {
        out[i] = (turn as u64 % u64::from(count.max(1))) as u32 + 1;
    }
    out
}

/// The items of `items` (named by `name`) that belong to `shard`.
pub fn keep_shard<T>(items: Vec<T>, name: impl Fn(&T) -> &str, shard: Shard) -> Vec<T> {
    let names: Vec<&str> = items.iter().map(&name).collect();
    let shards = shards_of(&names, shard.count);
    items
        .into_iter()
        .zip(shards)
        .filter(|(_, s)| *s == shard.index)
        .map(|(t, _)| t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_balanced_and_independent_of_the_order() {
        let names = ["a", "b", "c", "d", "e"];
        let shards = shards_of(&names, 3);
        let mut sizes = [0; 3];
        for s in &shards {
            sizes[*s as usize - 1] += 1;
        }
        sizes.sort();
        assert_eq!(sizes, [1, 2, 2]);
        let mut reversed = names;
        reversed.reverse();
        let again = shards_of(&reversed, 3);
        for (i, n) in names.iter().enumerate() {
            let j = reversed.iter().position(|r| r == n).unwrap();
            assert_eq!(shards[i], again[j], "{n}");
        }
        for count in 1..=7u32 {
            let names: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let shards = shards_of(&refs, count);
            let sizes: Vec<usize> = (1..=count)
                .map(|k| shards.iter().filter(|s| **s == k).count())
                .collect();
            let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(hi - lo <= 1, "{count}: {sizes:?}");
        }
        let kept = keep_shard(vec!["x", "y"], |n| n, Shard { index: 1, count: 1 });
        assert_eq!(kept, ["x", "y"]);
    }
}
