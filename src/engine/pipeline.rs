//! One tool call, step by step: lookup, argument validation, input (path)
//! validation, the permission decision, execution, result spilling.
//! Each failure becomes an error result for the model, never a crash.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::events::{CallStatus, StartedCall, ToolCallRecord};
use crate::provider::ToolCallRequest;
use crate::tools::{
    DynTool, PreparedCall, Registry, ToolContext, ToolError, ToolOutput, spill_if_large,
};
use runner_output::HookEffect;
use runner_policy::{Decision, PolicySet, Risk, Signature, Verdict};

/// A call that passed validation and the policy, ready to run.
pub struct Approved {
    pub prepared: Box<dyn PreparedCall>,
    /// Shared by the call's start event and its record.
    pub decision: Arc<Decision>,
}

/// The outcome of the checks before execution.
pub enum Gate {
    Run(Approved),
    Refused {
        error: ToolError,
        decision: Option<Arc<Decision>>,
    },
}

/// Validates and decides a call. Cheap and synchronous.
pub fn gate(
    req: &ToolCallRequest,
    registry: &Registry,
    policy: &PolicySet,
    ctx: &ToolContext,
) -> Gate {
    let tool = match registry.get(&req.name) {
        Ok(t) => t,
        Err(e) => {
            return Gate::Refused {
                error: ToolError::validation(e.to_string()),
                decision: None,
            };
        }
    };
    let empty = Value::Object(Default::default());
    let args = match (&req.arguments, &req.invalid_arguments) {
        (Some(v), _) => v,
        (None, Some(raw)) => {
            let why = match serde_json::from_str::<Value>(raw) {
                Err(e) => format!("are not valid JSON ({e})"),
                Ok(_) => "are not a JSON object".to_string(),
            };
            return Gate::Refused {
                error: ToolError::validation(format!(
                    "the arguments of call {} to {} {why}; send a JSON object",
                    req.id, req.name
                )),
                decision: None,
            };
        }
        (None, None) => &empty,
    };
    let (prepared, decision) = match decide_call(tool.as_ref(), args, policy, ctx) {
        Ok(x) => x,
        // Bad arguments, or a path outside the workspace: refused before
        // the policy is asked.
        Err(error) => {
            return Gate::Refused {
                error,
                decision: None,
            };
        }
    };
    if decision.verdict == Verdict::Deny {
        // A denied call that carries a decoy credential was an attempt to
        // move it: the task's canary trips as if it had gone out.
        if let Some(k) = &ctx.canaries {
            let bytes = serde_json::to_vec(args).unwrap_or_default();
            k.moving(&bytes, || {
                format!("the denied call {} ({})", req.id, req.name)
            });
        }
        let why = decision
            .reason
            .clone()
            .unwrap_or_else(|| "denied by policy".into());
        return Gate::Refused {
            error: ToolError::permission(format!("{why}. Choose another way to reach the goal.")),
            decision: Some(Arc::new(decision)),
        };
    }
    Gate::Run(Approved {
        prepared,
        decision: Arc::new(decision),
    })
}

/// Validates one call of `tool` and decides it: argument validation, input
/// validation (paths), signatures, the policy. The one gate that a run,
/// `runner check` and the corpus tests all go through. An error is a call
/// refused before the policy was asked (bad arguments, a path that leaves
/// the workspace); a denial is a [`Decision`].
pub fn decide_call(
    tool: &dyn DynTool,
    args: &Value,
    policy: &PolicySet,
    ctx: &ToolContext,
) -> Result<(Box<dyn PreparedCall>, Decision), ToolError> {
    // Validation and signatures resolve the same paths: once is enough
    // within these synchronous checks. Execution resolves afresh.
    let _memo = crate::workspace::ResolveMemo::start();
    let prepared = tool.prepare(args, ctx)?;
    let sigs = prepared.signatures(ctx);
    let decision = decide_signatures(policy, tool.name(), tool.risk(), sigs);
    Ok((prepared, decision))
}

/// The policy's decision on a call of `tool` with `risk` whose signatures
/// are `sigs`; MCP tools (`server__tool`) may have their risk overridden
/// by a layer's `mcp:`.
fn decide_signatures(policy: &PolicySet, tool: &str, risk: Risk, sigs: Vec<Signature>) -> Decision {
    policy.decide_with(tool, tool.contains("__"), risk, sigs)
}

/// Decides a recorded call again from the signatures its transcript kept
/// (`runner replay`, `runner policy suggest`): no workspace and no tool
/// needed. A built-in tool has its own risk; any other (an MCP tool's) is
/// medium, as [`crate::mcp`] declares them.
pub fn decide_recorded(
    policy: &PolicySet,
    registry: &Registry,
    tool: &str,
    sigs: Vec<Signature>,
) -> Decision {
    let risk = registry.get(tool).map_or(Risk::Medium, |t| t.risk());
    decide_signatures(policy, tool, risk, sigs)
}

/// Records what the shadow policy `shadow` would have decided on call
/// `rec`, from the signatures its decision kept (as `runner replay`
/// does). A call refused before any policy was asked, or denied by a
/// `pre_tool` hook, gets none.
pub fn decide_shadow(shadow: &PolicySet, registry: &Registry, rec: &mut ToolCallRecord) {
    let Some(run) = rec.decision.as_deref() else {
        return;
    };
    // The shadow stands in for the policy, not for a `pre_tool` hook: a
    // call a hook denied would stay denied.
    if run.policy.is_none() || rec.hooks.iter().any(|h| h.effect == HookEffect::Denied) {
        return;
    }
    let d = decide_recorded(shadow, registry, &rec.tool, run.signatures.clone());
    rec.shadow = Some(runner_output::ShadowDecision::of(&d));
}

/// Runs an approved call and spills a large result.
pub async fn execute(
    approved: Approved,
    req: &ToolCallRequest,
    registry: &Registry,
    ctx: Arc<ToolContext>,
) -> Result<ToolOutput, ToolError> {
    let Approved { prepared, .. } = approved;
    let mut result = prepared.run(ctx.clone()).await;
    // Secrets never reach the model, a spill file or the transcript.
    match &mut result {
        Ok(out) => {
            redact_in_place(&mut out.content);
            redact_in_place(&mut out.display);
        }
        Err(e) => redact_in_place(&mut e.message),
    }
    if let Ok(out) = &mut result {
        let max = registry
            .get(&req.name)
            .ok()
            .and_then(|t| t.max_result_chars());
        if let Err(e) = spill_if_large(
            out,
            max,
            ctx.spill_dir.as_deref(),
            &req.name,
            ctx.next_seq(),
        ) {
            result = Err(ToolError::execution(format!(
                "the result was too large and could not be saved: {e}"
            )));
        }
    }
    result
}

fn redact_in_place(s: &mut String) {
    if let std::borrow::Cow::Owned(r) = crate::contain::redact(s) {
        *s = r;
    }
}

/// Builds the record of a finished call.
/// The arguments as recorded: the JSON, or the text when it was not JSON.
pub fn call_arguments(req: &ToolCallRequest) -> Value {
    req.arguments
        .clone()
        .unwrap_or_else(|| Value::String(req.invalid_arguments.clone().unwrap_or_default()))
}

/// The record of a finished call: what its start event carried, and how
/// it ended (`started` is when it started).
pub fn record(
    call: &StartedCall,
    started: Instant,
    result: Result<ToolOutput, ToolError>,
) -> ToolCallRecord {
    let (status, error_kind, content, display, metadata) = match result {
        Ok(o) => (CallStatus::Ok, None, o.content, o.display, o.metadata),
        Err(e) => {
            let denied = call
                .decision
                .as_ref()
                .is_some_and(|d| d.verdict == Verdict::Deny);
            let display = if denied {
                format!("denied: {}", call.tool)
            } else {
                format!("{} failed: {}", call.tool, e.kind.as_str())
            };
            (
                if denied {
                    CallStatus::Denied
                } else {
                    CallStatus::Error
                },
                Some(e.kind),
                e.to_model_text(),
                display,
                e.metadata,
            )
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    call.ended(status, error_kind, content, display, metadata, duration_ms)
}
