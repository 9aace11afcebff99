//! Canaries: decoy credentials planted where an agent, or a prompt
//! injection steering one, would look for real ones; a decoy on its way
//! out ends the task.
//!
//! Redaction hides the secrets the runner recognises; nothing in it tells
//! a team that something was *trying* to take one. A canary does: each
//! task gets its own values ([`plant`]), in the variables a credential
//! thief reads first (`AWS_*`, `GITHUB_TOKEN`, `OPENAI_API_KEY`, none of
//! which commands otherwise get: secrets are scrubbed) and in a home of the
//! task's own (`~/.aws/credentials`, `~/.netrc`, `~/.config/gh/hosts.yml`).
//!
//! Where a value is looked for, in its plain, base64 (three alignments),
//! hex, URL-encoded and reversed forms (the forms redaction knows), in any
//! case, by one Aho-Corasick pass over bytes already in hand:
//! - moving out, refused before it leaves, the task failed with tripwire
//!   `canary`: a request through the task's proxy (its line, headers and
//!   body; inside an HTTPS tunnel the proxy reads nothing), a `web_fetch`,
//!   an MCP call's arguments, and the diff (a file written with it);
//! - read by the model: a tool result holding one is an event and a line
//!   in the summary, not a failure (unless `fail_on_read`).
//!
//! The values are fake: redaction leaves them be (a model that reads one
//! reads the decoy), and the transcript keeps their SHA-256, not them.

mod plant;

use std::sync::Mutex;
use std::time::Instant;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use runner_output::{CanaryRecord, CanarySighting, PlantedCanary};

pub use plant::Canary;

/// Two sets of canaries are the same when their values are.
impl PartialEq for Canaries {
    fn eq(&self, other: &Self) -> bool {
        self.list.len() == other.list.len()
            && self
                .list
                .iter()
                .zip(&other.list)
                .all(|(a, b)| a.value == b.value)
    }
}

/// Most sightings kept for a task.
const MOST_SEEN: usize = 100;

/// A task's canaries and what was seen of them.
#[derive(Debug)]
pub struct Canaries {
    list: Vec<Canary>,
    /// Every form of every value; `owner[i]` is pattern i's canary.
    matcher: AhoCorasick,
    owner: Vec<usize>,
    /// `fail_on_read`: a canary the model reads ends the task too.
    pub fail_on_read: bool,
    /// `canaries.file`: where the decoy file goes in the copy.
    file: Option<String>,
    epoch: Instant,
    state: Mutex<State>,
    /// The longest form of any decoy, in bytes.
    longest: usize,
    /// The task's proxy reads HTTPS for them (`inspect_https`).
    pub inspect_https: bool,
}

#[derive(Debug, Default)]
struct State {
    seen: Vec<CanarySighting>,
    /// How many of `seen` were handed out as events.
    told: usize,
    /// The first that moved.
    moved: Option<CanarySighting>,
    /// The first the model read, for `fail_on_read`.
    read: Option<CanarySighting>,
}

impl Canaries {
    /// Fresh decoys for one task run (`epoch`: its start).
    /// `file`: a decoy file's path in the workspace (`canaries.file`).
    pub fn new(fail_on_read: bool, file: Option<String>, epoch: Instant) -> Self {
        let mut list = plant::fresh();
        if let Some(f) = &file {
            list.push(plant::file_decoy(f));
        }
        let mut c = Self::of(list, fail_on_read, epoch);
        c.file = file;
        c
    }

    /// The decoy file to plant in the task's copy, and its text.
    pub fn decoy_file(&self) -> Option<(&str, String)> {
        let path = self.file.as_deref()?;
        Some((path, plant::file_text(path, self.list.last()?)))
    }

    /// Canaries with these values.
    pub fn of(list: Vec<Canary>, fail_on_read: bool, epoch: Instant) -> Self {
        let mut forms = Vec::new();
        let mut owner = Vec::new();
        for (i, c) in list.iter().enumerate() {
            for f in crate::contain::redact::forms::forms(&c.value) {
                forms.push(f);
                owner.push(i);
            }
        }
        // A contiguous NFA: built in a fraction of a DFA's time (this is
        // on the way to the task's first request), and it scans a tool's
        // result (kilobytes) in microseconds all the same.
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            // Whatever the case: a host name carries a decoy lower-cased
            // (DNS ignores case), and a value of twenty random characters
            // or more matches nothing else by chance, in any case.
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&forms)
            .expect("an automaton of literal values");
        Self {
            list,
            matcher,
            owner,
            fail_on_read,
            file: None,
            epoch,
            state: Mutex::default(),
            longest: forms.iter().map(String::len).max().unwrap_or(0),
            inspect_https: false,
        }
    }

    /// The longest form any decoy takes (plain, base64, hex, URL-encoded),
    /// in bytes: how much of a stream's end a scan must keep.
    pub fn longest_form(&self) -> usize {
        self.longest
    }

    /// The decoys.
    pub fn list(&self) -> &[Canary] {
        &self.list
    }

    /// The variables commands get: the decoys named as variables.
    pub fn variables(&self) -> Vec<(String, String)> {
        plant::variables(&self.list)
    }

    /// The value of decoy `name` (empty when there is none).
    pub fn value(&self, name: &str) -> &str {
        plant::value(&self.list, name)
    }

    /// Makes `home`, the commands' home: the decoys' files, and a link to
    /// every other entry of `real` (the runner's home), so that what
    /// commands found in their home they find still, behind the same
    /// walls (a link is decided where it leads).
    pub fn make_home(
        &self,
        home: &std::path::Path,
        real: Option<&std::path::Path>,
    ) -> std::io::Result<()> {
        plant::home_of(&self.list, home, real)
    }

    /// The canary whose value (in one of its forms) `bytes` holds first.
    pub fn find(&self, bytes: &[u8]) -> Option<&Canary> {
        let m = self.matcher.find(bytes)?;
        Some(&self.list[self.owner[m.pattern().as_usize()]])
    }

    /// Looks for a canary in `bytes`, on its way out through `seen_in`
    /// (called only if one is there): true when one is, recorded as moved
    /// (the first one moved trips the task).
    pub fn moving(&self, bytes: &[u8], seen_in: impl FnOnce() -> String) -> bool {
        let Some(c) = self.find(bytes) else {
            return false;
        };
        let s = self.sighting(c, seen_in(), true);
        let mut st = self.lock();
        st.moved.get_or_insert_with(|| s.clone());
        push(&mut st, s);
        true
    }

    /// [`Canaries::moving`], as a refusal: why the thing carrying one is
    /// refused, or none.
    pub fn refuse(&self, bytes: &[u8], seen_in: impl FnOnce() -> String) -> Option<String> {
        self.moving(bytes, seen_in)
            .then(|| "it carries a decoy credential (a canary): the task ends here".to_string())
    }

    /// Looks for a canary in what the model is about to read: the result
    /// of `call` (`c3 (bash)`), `seen_in` saying where; recorded when one
    /// is there.
    pub fn read(&self, text: &str, call: &str, seen_in: impl FnOnce() -> String) {
        let Some(c) = self.find(text.as_bytes()) else {
            return;
        };
        let mut s = self.sighting(c, seen_in(), false);
        s.calls = vec![call.to_string()];
        let mut st = self.lock();
        st.read.get_or_insert_with(|| s.clone());
        push(&mut st, s);
    }

    /// The sighting that trips the task: the first canary that moved, or
    /// under `fail_on_read` the first the model read.
    pub fn tripped(&self) -> Option<CanarySighting> {
        let st = self.lock();
        st.moved
            .clone()
            .or_else(|| st.read.clone().filter(|_| self.fail_on_read))
    }

    /// The first canary the model read.
    pub fn first_read(&self) -> Option<CanarySighting> {
        self.lock().read.clone()
    }

    /// Whether one moved (the proxy then refuses everything).
    pub fn has_moved(&self) -> bool {
        self.lock().moved.is_some()
    }

    /// The sightings not handed out yet (for the task's events), those
    /// made while turn `turn`'s `calls` ran (`c3 (bash)`) given to them.
    pub fn news(&self, turn: u32, calls: &[String]) -> Vec<CanarySighting> {
        let mut st = self.lock();
        let told = st.told;
        let attribute = |s: &mut CanarySighting| {
            if s.turn.is_none() {
                s.turn = Some(turn);
                if s.calls.is_empty() {
                    s.calls = calls.to_vec();
                }
            }
        };
        for s in &mut st.seen[told..] {
            attribute(s);
        }
        if let Some(m) = st.moved.as_mut() {
            attribute(m);
        }
        if let Some(r) = st.read.as_mut() {
            attribute(r);
        }
        let new = st.seen[told..].to_vec();
        st.told = st.seen.len();
        new
    }

    /// What the transcript keeps: names, hashes, sightings.
    pub fn record(&self) -> CanaryRecord {
        CanaryRecord {
            planted: self
                .list
                .iter()
                .map(|c| PlantedCanary {
                    name: c.name.clone(),
                    sha256: plant::sha256_hex(&c.value),
                })
                .collect(),
            seen: self.lock().seen.clone(),
        }
    }

    fn sighting(&self, c: &Canary, seen_in: String, moved: bool) -> CanarySighting {
        CanarySighting {
            canary: c.name.clone(),
            seen_in,
            moved,
            time_ms: self.epoch.elapsed().as_millis() as u64,
            turn: None,
            calls: Vec::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A task's outcome reason for sighting `s`: `canary: NAME moved: ...`.
pub fn reason(s: &CanarySighting) -> String {
    let by = match (s.turn, s.calls.as_slice()) {
        (Some(t), []) => format!(" (turn {t})"),
        (Some(t), calls) => format!(" (turn {t}, {})", calls.join(", ")),
        (None, _) => String::new(),
    };
    if s.moved {
        format!(
            "canary: the decoy credential {} was on its way out, refused: {}{by}",
            s.canary, s.seen_in
        )
    } else {
        format!(
            "canary: the model read the decoy credential {} (fail_on_read): {}",
            s.canary, s.seen_in
        )
    }
}

fn push(st: &mut State, s: CanarySighting) {
    if st.seen.len() < MOST_SEEN {
        st.seen.push(s);
    }
}

#[cfg(test)]
mod tests;
