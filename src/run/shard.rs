//! `--shard K/N`: a stable partition of tasks by name, for CI matrix jobs.
//! A task always lands in the same shard, whatever order the files are
//! given in, because the shard is a hash of its name.

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

/// Whether the task named `name` belongs to `shard`.
pub fn in_shard(name: &str, shard: Shard) -> bool {
    shard_of(name, shard.count) == shard.index
}

/// The shard (from 1) of `count` that the task named `name` belongs to.
pub fn shard_of(name: &str, count: u32) -> u32 {
    (crate::hash::fnv1a(name.as_bytes()) % count as u64) as u32 + 1
}
