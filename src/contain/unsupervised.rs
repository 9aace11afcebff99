//! What the platforms without a supervisor or a process bound (macOS, the
//! portable build) share of the `os` API: nothing to watch, nothing left
//! on the machine.

use super::{ExecRefusal, RefusedCall};

/// No process bound here.
#[derive(Debug)]
pub struct ProcessBound;

/// Nothing is left on the machine.
pub fn remove_leftovers() {}

/// No supervisor here: never made.
pub enum Watch {}

impl Watch {
    pub fn spawned(&mut self, _pid: Option<u32>) {
        match *self {}
    }

    pub fn exec_refusals(&self) -> Vec<ExecRefusal> {
        match *self {}
    }

    pub fn refused_calls(&self) -> Vec<RefusedCall> {
        match *self {}
    }

    pub fn end_escapes(&self) {
        match *self {}
    }
}
