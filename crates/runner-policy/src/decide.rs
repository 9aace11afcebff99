//! Decisions: one call's signatures against every layer of policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::backstop::Backstops;
use crate::credentials::{CREDENTIALS_LAYER, credentials_layer, may_match, waived};
use crate::model::DefaultDecision;
use crate::pattern::Subject;
use crate::policy::{Policy, Rule};
use crate::risk::Risk;
use crate::signature::{Family, Signature};

mod connections;
mod queries;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
/// Whether a call may run.
pub enum Verdict {
    /// The call runs.
    Allow,
    /// The call is refused; the model is told why.
    Deny,
}

/// The decision on one call, as the transcript and `runner check` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// Allow or deny.
    #[serde(rename = "decision")]
    pub verdict: Verdict,
    /// The call's signatures, as decided.
    pub signatures: Vec<Signature>,
    /// The rule that decided (`deny Bash(rm:*)`), or null for low risk or
    /// the default.
    pub rule: Option<String>,
    /// Why, in words for the model and the reviewer.
    pub reason: Option<String>,
    /// The policy layer that decided; null for a call refused before any
    /// policy was asked (a path that leaves the workspace).
    #[serde(default)]
    pub policy: Option<String>,
    /// The line of `rule` in the layer's file (the task file for an inline
    /// policy); absent for a default, low risk or a refusal by no rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl Decision {
    /// A call refused before any policy was asked: its arguments name a
    /// path that leaves the workspace, so it has no signatures to decide.
    pub fn refused(reason: impl Into<String>) -> Self {
        Self {
            verdict: Verdict::Deny,
            signatures: vec![],
            rule: None,
            reason: Some(reason.into()),
            policy: None,
            line: None,
        }
    }
}

/// The task's policy plus any `--policy` files. Each layer decides on its
/// own; a call runs only when every layer allows it.
#[derive(Debug, Clone)]
pub struct PolicySet {
    layers: Vec<Policy>,
    backstops: Backstops,
    /// Whether every deny rule has a backstop (see [`Backstops`]); when
    /// not, why, for the reason of a refusal.
    unbacked: Option<String>,
}

struct LayerResult {
    allow: bool,
    rule: Option<String>,
    reason: Option<String>,
    /// The line of the deciding rule.
    line: Option<u64>,
}

/// The rule that decided (`allow PATTERN`, `default allow`) and its line.
type Deciding = (String, Option<u64>);

/// How much a layer's allow says: 2 for an allow rule, 1 for the layer's
/// default, 0 for low risk (no rule at all).
fn strength(r: &LayerResult) -> u8 {
    match r.rule.as_deref() {
        Some(rule) if rule.starts_with("allow ") => 2,
        Some(_) => 1,
        None => 0,
    }
}

/// The refusal by the first deny rule of `layer` that matches `sig`;
/// `shown` is how the signature is named in the reason.
fn denied_by(layer: &Policy, sig: &Signature, shown: &Signature) -> Option<LayerResult> {
    let subject = Subject::new(sig);
    let rule = layer
        .rules
        .iter()
        .find(|r| !r.allow && r.pattern.matches_subject(&subject, true))?;
    Some(LayerResult {
        allow: false,
        line: Some(rule.line),
        rule: Some(format!("deny {}", rule.pattern.text)),
        reason: Some(match &rule.reason {
            Some(r) => format!("{shown} is denied by `{}`: {r}", rule.pattern.text),
            None => format!("{shown} is denied by `{}`", rule.pattern.text),
        }),
    })
}

/// How `layer` decides the opaque command `text` (opaque for `why`) when
/// every deny rule has a backstop: each simple command of a plain list
/// like any command (a deny rule, else an allow rule, else the default);
/// anything else by the default alone. The deciding rule, or the refusal.
fn opaque_under_backstops(
    layer: &Policy,
    text: &str,
    why: &str,
    starts: bool,
) -> Result<Deciding, LayerResult> {
    let default_deny = |what: &str| LayerResult {
        allow: false,
        line: None,
        rule: Some("default deny".into()),
        reason: Some(format!(
            "no rule allows {what}, which cannot be checked safely ({why}), and the default of {} is deny",
            layer.source
        )),
    };
    let default_allows = layer.default == DefaultDecision::Allow;
    // A program the words show being started is not the allowed program's
    // own code: no rule allowing that program covers it.
    if starts {
        return match default_allows {
            true => Ok(("default allow".into(), None)),
            false => Err(LayerResult {
                reason: Some(format!(
                    "no rule allows Bash({text}): it starts a program its words show ({why}), which the rule allowing its own program does not cover, and the default of {} is deny",
                    layer.source
                )),
                ..default_deny("")
            }),
        };
    }
    let Some(commands) = crate::plain_list::simple_commands(text) else {
        return match default_allows {
            true => Ok(("default allow".into(), None)),
            false => Err(default_deny(&format!("Bash({text})"))),
        };
    };
    let mut first: Option<Deciding> = None;
    for command in commands {
        let plain = Signature::new(Family::Bash, command);
        if let Some(denied) = denied_by(layer, &plain, &plain) {
            return Err(denied);
        }
        let subject = Subject::new(&plain);
        match layer
            .rules
            .iter()
            .find(|r| r.allow && r.pattern.matches_subject(&subject, false))
        {
            Some(r) => {
                first.get_or_insert((format!("allow {}", r.pattern.text), Some(r.line)));
            }
            None if default_allows => {
                first.get_or_insert(("default allow".into(), None));
            }
            None => return Err(default_deny(&plain.to_string())),
        }
    }
    Ok(first.expect("at least one command"))
}

/// Why some deny rule of `layers` has no backstop; `None` when every one
/// has.
fn unbacked(b: Backstops, layers: &[Policy]) -> Option<String> {
    if !b.confined {
        return Some(String::new());
    }
    b.unbacked_deny(layers)
        .map(|(rule, _)| format!(" (`{rule}` has no backstop in this task)"))
}

impl PolicySet {
    /// Layers `layers` (the built-in default when empty).
    pub fn new(layers: Vec<Policy>) -> Self {
        let layers = if layers.is_empty() {
            vec![Policy::builtin_default()]
        } else {
            layers
        };
        let unbacked = unbacked(Backstops::default(), &layers);
        Self {
            layers,
            backstops: Backstops::default(),
            unbacked,
        }
    }

    /// The set, deciding with the backstops this run holds: with one
    /// behind every deny rule, opaque commands are decided by the allow
    /// rules and the default, and with the read backstop a recursive read
    /// by its folder alone.
    pub fn with_backstops(mut self, backstops: Backstops) -> Self {
        self.backstops = backstops;
        self.unbacked = unbacked(backstops, &self.layers);
        self
    }

    /// The backstops the decisions count on.
    pub fn backstops(&self) -> Backstops {
        self.backstops
    }

    /// The layers, in the order they decide.
    pub fn layers(&self) -> &[Policy] {
        &self.layers
    }

    /// The risk of a tool in one layer, after that layer's overrides.
    fn risk_in(layer: &Policy, tool: &str, is_mcp: bool, base: Risk) -> Risk {
        if let Some(r) = layer.risk.get(tool) {
            return *r;
        }
        if is_mcp && let Some(r) = layer.risk.get("mcp") {
            return *r;
        }
        base
    }

    /// Decides a call of `tool` (with its default `risk`) whose signatures
    /// are `sigs`.
    pub fn decide(&self, tool: &str, risk: Risk, sigs: Vec<Signature>) -> Decision {
        self.decide_with(tool, false, risk, sigs)
    }

    /// [`PolicySet::decide`] for MCP tools, whose risk `mcp:` may override.
    pub fn decide_with(
        &self,
        tool: &str,
        is_mcp: bool,
        risk: Risk,
        sigs: Vec<Signature>,
    ) -> Decision {
        if let Some(r) = self.credential_refusal(&sigs) {
            return Decision {
                verdict: Verdict::Deny,
                signatures: sigs,
                rule: r.rule,
                reason: r.reason,
                policy: Some(CREDENTIALS_LAYER.to_string()),
                line: None,
            };
        }
        let mut first_allow: Option<(LayerResult, &str)> = None;
        for layer in &self.layers {
            let risk = Self::risk_in(layer, tool, is_mcp, risk);
            let r = self.decide_layer(layer, risk, &sigs);
            if !r.allow {
                return Decision {
                    verdict: Verdict::Deny,
                    signatures: sigs,
                    rule: r.rule,
                    reason: r.reason,
                    policy: Some(layer.source.clone()),
                    line: r.line,
                };
            }
            // The layer that allowed by a rule of its own is named over one
            // that allowed by its default, which is named over low risk.
            if first_allow
                .as_ref()
                .is_none_or(|(f, _)| strength(&r) > strength(f))
            {
                first_allow = Some((r, &layer.source));
            }
        }
        let (r, src) = first_allow.expect("at least one layer");
        Decision {
            verdict: Verdict::Allow,
            signatures: sigs,
            rule: r.rule,
            reason: r.reason,
            policy: Some(src.to_string()),
            line: r.line,
        }
    }

    /// The built-in credentials layer's refusal of one of `sigs`, unless an
    /// explicit allow of a layer gives that path back. A recursive read is
    /// decided by its folder alone: the files are absent from every copy
    /// (but for a read of history without [`Backstops::history`]).
    fn credential_refusal(&self, sigs: &[Signature]) -> Option<LayerResult> {
        let layer = credentials_layer();
        sigs.iter().find_map(|sig| {
            // A read of all history the copy's view does not make safe is
            // decided on all it may reach: a credentials file committed
            // once is in every commit before its removal. (Narrowed to a
            // pathspec, it is decided as the policy's own rules are.)
            let strict = sig.history
                && !self.backstops.history
                && matches!(sig.specifier.as_deref(), Some("." | "./" | ""));
            if !matches!(sig.family, Family::Read | Family::Edit)
                || !(strict || sig.specifier.as_deref().is_some_and(may_match))
            {
                return None;
            }
            let folder;
            let plain = if sig.tree && !strict {
                folder = Signature::new(sig.family, sig.specifier.clone().unwrap_or_default());
                &folder
            } else {
                sig
            };
            denied_by(layer, plain, sig).filter(|_| !waived(&self.layers, plain))
        })
    }

    /// The credentials layer's rule that denies reading `rel`, if any.
    fn credential_rule(&self, rel: &str) -> Option<&'static Rule> {
        if !may_match(rel) {
            return None;
        }
        let sig = Signature::new(Family::Read, rel);
        credentials_layer()
            .rules
            .iter()
            .find(|r| r.pattern.matches(&sig, true))
            .filter(|_| !waived(&self.layers, &sig))
    }

    fn decide_layer(&self, layer: &Policy, risk: Risk, sigs: &[Signature]) -> LayerResult {
        // 1. Any deny rule matching any signature denies. With read-denied
        // files absent, a recursive read is denied by its folder alone; so
        // is a read of history where the copy's git view holds none of
        // them.
        for sig in sigs {
            let folder;
            let backed = if sig.history {
                self.backstops.history
            } else {
                self.backstops.reads
            };
            let sig_for_deny = if sig.tree && sig.family == Family::Read && backed {
                folder = Signature::new(Family::Read, sig.specifier.clone().unwrap_or_default());
                &folder
            } else {
                sig
            };
            if let Some(denied) = denied_by(layer, sig_for_deny, sig) {
                return denied;
            }
        }
        // 2. Every signature must be allowed.
        let mut deciding: Option<Deciding> = None;
        let mut backed: Option<String> = None;
        for sig in sigs.iter().filter(|s| !s.deny_only) {
            if sig.unless_confined && self.backstops.confined {
                // What only confinement makes safe (a login shell's startup
                // files, words split from a producer's paths).
                backed.get_or_insert(format!(
                    "{}: {}; commands in this task are confined, so it reaches nothing the policy denies",
                    sig.specifier.as_deref().unwrap_or("the command"),
                    sig.opaque.as_deref().unwrap_or("it depends on what the walls keep")
                ));
                continue;
            }
            let allows = layer.rules.iter().filter(|r| r.allow);
            // Signatures that only a special kind of allow rule may allow:
            // which kind, and what the model is told when none does.
            if let Some(why) = &sig.opaque
                && self.unbacked.is_none()
            {
                // Whatever the code does, what the rules deny cannot happen
                // or leave the copy: decided like any command.
                // Each simple command of a plain list is allowed on its own
                // (a rule covers one program's own code); anything else
                // only by the default.
                let text = sig.specifier.as_deref().unwrap_or("");
                let by = match opaque_under_backstops(layer, text, why, sig.starts) {
                    Ok(by) => by,
                    Err(refusal) => return refusal,
                };
                deciding.get_or_insert(by);
                backed.get_or_insert(format!(
                    "the command cannot be checked safely ({why}), but {}",
                    self.backstops.describe()
                ));
                continue;
            }
            if self.backstops.private_tmp && crate::needs::in_private_tmp(sig) {
                // The task's own scratch folder: no deny rule named it.
                backed.get_or_insert(format!(
                    "{sig} is in the task's own /tmp, which only its commands see and which goes with it"
                ));
                continue;
            }
            let special = crate::needs::needs(sig, self.unbacked.as_deref());
            let subject = Subject::new(sig);
            if let Some((needs, refusal)) = special {
                match allows
                    .clone()
                    .find(|r| needs.admits(r) && r.pattern.matches_subject(&subject, false))
                {
                    Some(r) => {
                        deciding.get_or_insert((format!("allow {}", r.pattern.text), Some(r.line)));
                        continue;
                    }
                    None => {
                        return LayerResult {
                            allow: false,
                            line: None,
                            rule: None,
                            reason: Some(refusal),
                        };
                    }
                }
            }
            if let Some(r) = allows
                .clone()
                .find(|r| r.pattern.matches_subject(&subject, false))
            {
                deciding.get_or_insert((format!("allow {}", r.pattern.text), Some(r.line)));
                continue;
            }
            // A Read signature never needs an allow rule on its own: readers'
            // file operands can only make a decision stricter.
            if risk == Risk::Low || sig.family == Family::Read {
                continue;
            }
            if layer.default == DefaultDecision::Allow {
                deciding.get_or_insert(("default allow".to_string(), None));
                continue;
            }
            return LayerResult {
                allow: false,
                line: None,
                rule: Some("default deny".into()),
                reason: Some(format!(
                    "no rule allows {sig} ({risk} risk) and the default of {} is deny",
                    layer.source
                )),
            };
        }
        let line = deciding.as_ref().and_then(|(_, line)| *line);
        LayerResult {
            allow: true,
            line,
            rule: deciding.clone().map(|(rule, _)| rule),
            reason: if backed.is_some() {
                backed
            } else if deciding.is_none() {
                Some(if sigs.is_empty() {
                    "nothing to check".into()
                } else {
                    "low risk".into()
                })
            } else {
                None
            },
        }
    }
}
