//! An agent's budget, shared with the children it starts (issue 32).
//!
//! Starting a child reserves its share of what the agent has left (turns,
//! USD) under one lock, so children started in parallel cannot together
//! reserve more than there is; when the child ends its reservation is
//! replaced by what it spent, and the rest is free again. The agent's own
//! loop publishes its turns and cost each turn and counts its children's
//! against its limits ([`crate::engine::Spending`]).

use std::sync::Mutex;
use std::time::Instant;

use crate::engine::Spending;
use runner_output::{Reserved, Usage};

#[derive(Debug, Default)]
struct State {
    own_turns: u32,
    own_cost: f64,
    /// Spent by children that ended.
    spent_turns: u32,
    spent_cost: f64,
    /// Held by children running.
    held_turns: u32,
    held_cost: f64,
    /// The tokens of children that ended.
    tokens: Usage,
}

/// One agent's budget.
#[derive(Debug)]
pub struct Account {
    pub max_turns: u32,
    pub max_cost: Option<f64>,
    pub deadline: Instant,
    state: Mutex<State>,
}

/// Why a child cannot start: its parent has nothing left to give.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoBudget {
    #[error("no turns left to give a child (max_turns {0} is spent or held)")]
    Turns(u32),
    #[error("no money left to give a child (max_cost ${0} is spent or held)")]
    Cost(f64),
}

/// What a child holds until it ends.
#[derive(Debug, Clone, Copy)]
pub struct Hold {
    pub turns: u32,
    pub cost: Option<f64>,
}

impl Account {
    pub fn new(max_turns: u32, max_cost: Option<f64>, deadline: Instant) -> Self {
        Self {
            max_turns,
            max_cost,
            deadline,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves a child's turns and cost: what it asks for (its profile's
    /// limits) or, when it names none, `1/share` of what is neither spent
    /// nor the agent's own (so siblings started together get equal
    /// shares); never more than is left. `Err` says what is spent.
    pub fn reserve(
        &self,
        turns: Option<u32>,
        cost: Option<f64>,
        share: usize,
    ) -> Result<Hold, NoBudget> {
        let mut s = self.state();
        let used_turns = s.own_turns + s.spent_turns + s.held_turns;
        let left_turns = self.max_turns.saturating_sub(used_turns);
        if left_turns == 0 {
            return Err(NoBudget::Turns(self.max_turns));
        }
        let share = share.max(1) as u32;
        let unheld = self.max_turns.saturating_sub(s.own_turns + s.spent_turns);
        let turns = turns.unwrap_or((unheld / share).max(1)).min(left_turns);
        let cost = match self.max_cost {
            None => cost,
            Some(max) => {
                let left = max - s.own_cost - s.spent_cost - s.held_cost;
                if left <= 0.0 {
                    return Err(NoBudget::Cost(max));
                }
                let unheld = max - s.own_cost - s.spent_cost;
                Some(cost.unwrap_or(unheld / f64::from(share)).min(left))
            }
        };
        s.held_turns += turns;
        s.held_cost += cost.unwrap_or(0.0);
        Ok(Hold { turns, cost })
    }

    /// A child ended: its hold is replaced by what it spent.
    pub fn settle(&self, hold: Hold, turns: u32, usage: &Usage) {
        let mut s = self.state();
        s.held_turns = s.held_turns.saturating_sub(hold.turns);
        s.held_cost = (s.held_cost - hold.cost.unwrap_or(0.0)).max(0.0);
        s.spent_turns += turns;
        s.spent_cost += usage.cost_usd.unwrap_or(0.0);
        s.tokens.add(Usage {
            cost_usd: None,
            ..*usage
        });
    }

    /// Adds what the children that ended used to an agent's own `usage`:
    /// their tokens, and their cost to a known cost (an unpriced child's
    /// counts as 0; an unknown cost stays unknown).
    pub fn add_children_to(&self, usage: &mut Usage) {
        let s = self.state();
        let own = usage.cost_usd;
        usage.add(s.tokens);
        usage.cost_usd = own.map(|c| c + s.spent_cost);
    }

    /// The record of a hold.
    pub fn reserved(hold: Hold, timeout_ms: u64) -> Reserved {
        Reserved {
            turns: hold.turns,
            cost_usd: hold.cost,
            timeout_ms,
        }
    }
}

impl Spending for Account {
    fn publish(&self, turns: u32, cost: Option<f64>) {
        let mut s = self.state();
        s.own_turns = turns;
        s.own_cost = cost.unwrap_or(0.0);
    }

    fn children(&self) -> (u32, f64) {
        let s = self.state();
        (s.spent_turns + s.held_turns, s.spent_cost + s.held_cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_children_cannot_reserve_more_than_is_left() {
        let a = Account::new(20, Some(1.0), Instant::now());
        a.publish(2, Some(0.2));
        let one = a.reserve(None, None, 4).unwrap();
        assert_eq!(one.turns, 4); // 18 left / 4
        assert!((one.cost.unwrap() - 0.2).abs() < 1e-9); // 0.8 / 4
        // A sibling started with it gets the same share.
        let two = a.reserve(None, None, 4).unwrap();
        assert_eq!(two.turns, 4);
        let big = a.reserve(Some(100), Some(5.0), 4).unwrap();
        assert_eq!(big.turns, 10);
        assert!((big.cost.unwrap() - 0.4).abs() < 1e-9);
        assert!(a.reserve(None, None, 4).is_err());
        // What a child did not spend comes back.
        a.settle(
            big,
            3,
            &Usage {
                cost_usd: Some(0.1),
                ..Usage::default()
            },
        );
        let (turns, cost) = a.children();
        assert_eq!(turns, 4 + 4 + 3);
        assert!((cost - (0.2 + 0.2 + 0.1)).abs() < 1e-9, "{cost}");
        assert!(a.reserve(Some(2), None, 4).is_ok());
    }
}
