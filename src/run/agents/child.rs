//! One child's run: its model, policy, tools and workspace made from its
//! parent's and its profile, the agent loop under its reserved limits, and
//! its record ([`AgentRun`]) for the parent's `task` call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Delegator;
use super::account::{Account, Hold};
use crate::engine::{
    AgentEnv, AgentLimits, AgentStop, ContextLimits, Conversation, Event, EventSink, TaskHooks,
    ToolEnv, run_agent,
};
use crate::provider::{ToolChoice, Usage};
use crate::report::progress::{AgentOf, Fanout, RunReporter};
use crate::report::transcript::Counts;
use crate::report::{Outcome, OutcomeStatus, TranscriptRecorder};
use crate::task::Task;
use crate::task::agents::{AgentProfile, Isolation};
use crate::tools::{ToolContext, ToolError, ToolOutput, builtin::TaskTool, typed};
use crate::workspace::{IsolatedWorkspace, Workspace, apply_changes};
use runner_output::AgentRun;
use runner_policy::PolicySet;

/// What a child's run left: its result for the parent's call, and what
/// it spent against its hold.
pub struct Ran {
    pub result: Result<ToolOutput, ToolError>,
    pub turns: u32,
    /// Its tokens and cost, its children's included.
    pub usage: Usage,
}

/// A child's events, to the run's reporters with its place in the tree.
struct AgentEvents {
    task: String,
    at: AgentOf,
    reporter: Arc<dyn RunReporter>,
}

impl EventSink for AgentEvents {
    fn emit(&self, event: &Event) {
        self.reporter.agent_event(&self.task, &self.at, event);
    }
}

/// The task as the child sees it: the profile's model, script, limits
/// and schema in place of the task's.
fn child_task(task: &Task, p: &AgentProfile, prompt: &str) -> Task {
    let mut t = task.clone();
    if let Some(m) = &p.model {
        t.model = m.clone();
        t.fallback = Vec::new();
        // A scripted child is priced as its task (how tests spend money).
        t.pricing = if m.is_scripted() {
            task.pricing
        } else {
            p.pricing
        };
        if !m.is_scripted() {
            t.context_window = crate::provider::models::context_window(&m.model);
        }
    }
    if !p.script.is_empty() {
        t.script = Arc::clone(&p.script);
    }
    t.prompt = prompt.to_string();
    t.checks = Vec::new();
    t.output_schema = p.output_schema.clone();
    t
}

/// Runs the child; never fails the parent: every problem is the result.
pub async fn run(d: &Delegator, p: &AgentProfile, prompt: &str, at: &AgentOf, hold: Hold) -> Ran {
    let started = Instant::now();
    let tree = &d.tree;
    let task = child_task(&tree.task, p, prompt);
    if task.model.is_scripted() && task.script.is_empty() {
        return failed(format!(
            "the profile `{}` has no model of its own and the task's is `scripted`: give it `model: scripted` and a script",
            p.name
        ));
    }
    // Authority only narrows: the parent's layers, then the profile's.
    let mut layers = d.policy.layers().to_vec();
    let mut policies: Vec<String> = layers.iter().map(|l| l.source.clone()).collect();
    if let Some(pp) = &p.policy {
        policies.push(pp.source.clone());
        layers.push(pp.clone());
    }
    let policy = Arc::new(PolicySet::new(layers).with_backstops(d.policy.backstops()));
    // Its tools: the parent's, narrowed to the profile's list; `task` only
    // for the profiles it may start.
    let mut registry = d.registry.clone();
    registry.drop_named(&["task"]);
    if let Some(names) = &p.tools {
        registry.retain_named(names);
    }
    if !p.agents.is_empty() {
        let tool = TaskTool {
            profiles: p
                .agents
                .iter()
                .filter_map(|n| tree.agents.profiles.get(n))
                .map(|c| (c.name.clone(), c.description.clone()))
                .collect(),
        };
        let _ = registry.register(typed(tool));
    }
    let remaining = d.account.deadline.saturating_duration_since(Instant::now());
    let timeout = p.timeout.map_or(remaining, |t| t.min(remaining));
    let account = Arc::new(Account::new(
        hold.turns,
        hold.cost,
        Instant::now() + timeout,
    ));
    // Its workspace: the parent's copy, or a copy of that copy. A copy is
    // made of a pristine one kept beside it, which its changes are
    // compared with: the parent's files may change meanwhile, and the
    // merge needs what the child started from.
    let parent_root = d.ctx_of.workspace.root().to_path_buf();
    let (_base, copy) = match p.isolation {
        Isolation::Shared => (None, None),
        Isolation::Copy => {
            let root = parent_root.clone();
            let made = tokio::task::spawn_blocking(move || {
                let base = IsolatedWorkspace::create(&root, &[])?;
                let work = IsolatedWorkspace::create(base.path(), &[])?;
                Ok::<_, std::io::Error>((base, work))
            })
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r);
            match made {
                Ok((base, work)) => (Some(base), Some(work)),
                Err(e) => {
                    return failed(format!("could not copy the workspace for the child: {e}"));
                }
            }
        }
    };
    let (mut ctx, _tmp) = match child_context(d, &policy, copy.as_ref()) {
        Ok(c) => c,
        Err(e) => return failed(e),
    };
    // Its large results beside its parent's, in a folder of its own.
    ctx.spill_dir = d
        .ctx_of
        .spill_dir
        .as_ref()
        .map(|s| s.join(at.id.replace('/', "_").replace('#', "-")));
    let ctx = Arc::new(ctx);
    if !p.agents.is_empty() {
        let grandparent = Delegator::new(
            Arc::clone(tree),
            Some(at.id.clone()),
            d.depth + 1,
            p.agents.clone(),
            Arc::clone(&policy),
            registry.clone(),
            Arc::clone(&ctx),
            d.hooks.clone(),
            Arc::clone(&account),
        );
        // The context is shared with the delegator, which needs it: set
        // once, before any call runs.
        let mut c = ToolContext::new(ctx.workspace.clone());
        copy_context(&ctx, &mut c);
        c.delegate = Some(Arc::new(grandparent));
        return run_in(
            d,
            p,
            &task,
            at,
            hold,
            started,
            timeout,
            policy,
            policies,
            registry,
            Arc::new(c),
            account,
            copy,
            &parent_root,
        )
        .await;
    }
    run_in(
        d,
        p,
        &task,
        at,
        hold,
        started,
        timeout,
        policy,
        policies,
        registry,
        ctx,
        account,
        copy,
        &parent_root,
    )
    .await
}

/// A child's own temp folder for its commands (removed on drop).
type TempFolder = Option<(tempfile::TempDir, crate::cleanup::Registered)>;

/// The child's tool context: the parent's, or one for its own copy (with
/// its commands' temp folder, kept until the child ends).
fn child_context(
    d: &Delegator,
    policy: &Arc<PolicySet>,
    copy: Option<&IsolatedWorkspace>,
) -> Result<(ToolContext, TempFolder), String> {
    let parent = &d.ctx_of;
    let Some(iso) = copy else {
        let mut c = ToolContext::new(parent.workspace.clone());
        copy_context(parent, &mut c);
        c.policy = Some(Arc::clone(policy));
        c.visibility = Some(policy.clone());
        return Ok((c, None));
    };
    let ws =
        Workspace::new(iso.path()).map_err(|e| format!("could not open the child's copy: {e}"))?;
    let mut sandbox = d.tree.task.sandbox.clone();
    sandbox.proxy_port = d.tree.proxy_port;
    let setup = crate::contain::CommandSetup::new(
        iso.path(),
        iso.git_dir().as_deref(),
        &d.tree.task.env,
        &sandbox,
        None,
    )
    .map_err(|e| format!("could not set up the child's commands: {e}"))?;
    let mut c = ToolContext::new(ws).with_spill_dir(d.tree.spill_dir.clone());
    c.env = Some(setup.env);
    c.confine = setup.confine.map(Arc::new);
    c.net_log = parent.net_log.clone();
    c.policy = Some(Arc::clone(policy));
    c.visibility = Some(policy.clone());
    Ok((c, Some((setup.tmp, setup.registered))))
}

fn copy_context(from: &ToolContext, to: &mut ToolContext) {
    to.spill_dir = from.spill_dir.clone();
    to.visibility = from.visibility.clone();
    to.env = from.env.clone();
    to.confine = from.confine.clone();
    to.policy = from.policy.clone();
    to.net_log = from.net_log.clone();
}

fn failed(why: String) -> Ran {
    Ran {
        result: Err(ToolError::execution(why)),
        turns: 0,
        usage: Usage::default(),
    }
}

#[allow(clippy::too_many_arguments)]
async fn run_in(
    d: &Delegator,
    p: &AgentProfile,
    task: &Task,
    at: &AgentOf,
    hold: Hold,
    started: Instant,
    timeout: Duration,
    policy: Arc<PolicySet>,
    policies: Vec<String>,
    registry: crate::tools::Registry,
    ctx: Arc<ToolContext>,
    account: Arc<Account>,
    copy: Option<IsolatedWorkspace>,
    parent_root: &std::path::Path,
) -> Ran {
    let tree = &d.tree;
    let provider = match super::super::task_run::make_provider(task, 0) {
        Ok(pr) => pr,
        Err(e) => return failed(format!("the child's model: {e}")),
    };
    let mut system = super::super::prompt::system_prompt(task, &registry, &policy);
    if !p.prompt.is_empty() {
        system.push_str("\n\n");
        system.push_str(&p.prompt);
    }
    let recorder = TranscriptRecorder::new(tree.epoch);
    let events = AgentEvents {
        task: tree.task.name.clone(),
        at: at.clone(),
        reporter: Arc::clone(&tree.reporter),
    };
    let sink = Fanout(vec![&recorder, &events]);
    let mut hooks = d.hooks.clone();
    if let Some(pp) = &p.policy {
        hooks.extend(&pp.hooks);
    }
    let hooks = TaskHooks::new(&tree.task.name, hooks);
    let limits = AgentLimits {
        max_turns: hold.turns,
        max_parallel: tree.max_parallel_calls,
        max_tokens_total: 0,
        context: ContextLimits {
            window: task.context_window,
            compact_at: task.compact_at,
        },
        pricing: task.pricing,
        max_cost: hold.cost,
        output: p.output_schema.clone(),
        tool_choice: ToolChoice::Auto,
        spending: (!p.agents.is_empty())
            .then(|| account.clone() as Arc<dyn crate::engine::Spending>),
    };
    let env = AgentEnv {
        provider: provider.as_ref(),
        system: &system,
        tools: ToolEnv {
            registry: &registry,
            policy: &policy,
            ctx: Arc::clone(&ctx),
            sink: &sink,
            epoch: tree.epoch,
            hooks: &hooks,
        },
    };
    let mut conv = Conversation::new(task.prompt.clone());
    let mut usage = Usage {
        cost_usd: task.pricing.map(|_| 0.0),
        ..Usage::default()
    };
    let stop = tokio::time::timeout(
        timeout,
        run_agent(&env, &mut conv, &limits, &mut usage, None, 0),
    )
    .await;
    let (turns, calls) = recorder.take();
    // Its children's spending is its own.
    let (child_turns, _) = crate::engine::Spending::children(account.as_ref());
    let theirs = account.children_usage();
    if theirs.total() > 0 || theirs.cost_usd.is_some_and(|c| c > 0.0) {
        let own = usage.cost_usd;
        usage.add(theirs);
        usage.cost_usd = Some(own.unwrap_or(0.0) + theirs.cost_usd.unwrap_or(0.0));
    }
    let spent_turns = turns.len() as u32 + child_turns;
    let (outcome, answer, output) = outcome_of(stop, p, hold, timeout);
    let merge = match &copy {
        None => None,
        Some(iso) if outcome.status == OutcomeStatus::Passed => Some(merge_back(iso, parent_root)),
        Some(_) => Some("not merged: the child did not finish".to_string()),
    };
    let conflict = merge.as_deref().is_some_and(|m| m.starts_with("conflict"));
    let counts = Counts::from(1, &turns, &calls);
    let record = AgentRun {
        id: at.id.clone(),
        profile: p.name.clone(),
        parent: at.parent.clone(),
        depth: d.depth + 1,
        model: task.model.to_string(),
        isolation: p.isolation.as_str().to_string(),
        policies,
        reserved: Account::reserved(hold, timeout.as_millis() as u64),
        started_ms: started.saturating_duration_since(tree.epoch).as_millis() as u64,
        duration_ms: started.elapsed().as_millis() as u64,
        system_prompt: system,
        messages: conv.into_log(),
        turns,
        tool_calls: calls,
        usage,
        counts,
        outcome: outcome.clone(),
        final_answer: answer.clone(),
        output,
        merge: merge.clone(),
    };
    let meta = serde_json::json!({ "agent": record });
    let mut text = answer;
    if let Some(m) = &merge {
        text.push_str(&format!("\n\n[workspace: {m}]"));
    }
    let result = if outcome.status == OutcomeStatus::Passed && !conflict {
        Ok(ToolOutput::new(text, format!("{} finished", at.id)).with_metadata(meta))
    } else {
        let why = if conflict {
            format!(
                "the child `{}` finished, but its changes conflict with the workspace: {}\n\nIts answer:\n{text}",
                at.id,
                merge.unwrap_or_default()
            )
        } else {
            format!(
                "the child `{}` stopped: {}\n\nIts last answer:\n{text}",
                at.id, outcome.reason
            )
        };
        Err(ToolError::execution(why).with_metadata(meta))
    };
    Ran {
        result,
        turns: spent_turns,
        usage,
    }
}

/// The child's changes into its parent's workspace (three ways where the
/// parent changed a file meanwhile; all or nothing).
fn merge_back(iso: &IsolatedWorkspace, parent_root: &std::path::Path) -> String {
    let changes = match iso.changes() {
        Ok(c) => c,
        Err(e) => return format!("conflict: its changes could not be read: {e}"),
    };
    if changes.is_empty() {
        return "no changes".into();
    }
    match apply_changes(parent_root, &changes) {
        Ok(n) => format!("{n} change(s) merged"),
        Err(e) => format!("conflict: {e}"),
    }
}

fn outcome_of(
    stop: Result<AgentStop, tokio::time::error::Elapsed>,
    p: &AgentProfile,
    hold: Hold,
    timeout: Duration,
) -> (Outcome, String, Option<serde_json::Value>) {
    let failed = |reason: String| Outcome {
        status: OutcomeStatus::Failed,
        reason,
        error_class: None,
    };
    let Ok(stop) = stop else {
        return (
            Outcome {
                status: OutcomeStatus::Timeout,
                reason: format!("timed out after {} s", timeout.as_secs()),
                error_class: None,
            },
            String::new(),
            None,
        );
    };
    match stop {
        AgentStop::Finished { text, output } => (
            Outcome {
                status: OutcomeStatus::Passed,
                reason: "the child finished".into(),
                error_class: None,
            },
            text,
            output,
        ),
        AgentStop::NoValidOutput(e) => (
            failed(format!(
                "ran out of turns without an answer valid against the profile's output_schema: {e}"
            )),
            String::new(),
            None,
        ),
        AgentStop::MaxTurns => (
            failed(format!(
                "used the {} turn(s) reserved for it{}",
                hold.turns,
                p.max_turns
                    .map_or(String::new(), |m| format!(" (max_turns {m})"))
            )),
            String::new(),
            None,
        ),
        AgentStop::CostBudget(c) => (
            failed(format!(
                "spent ${c:.4}, past the ${:.4} reserved for it",
                hold.cost.unwrap_or_default()
            )),
            String::new(),
            None,
        ),
        AgentStop::TokenBudget => (
            failed("the token budget is spent".into()),
            String::new(),
            None,
        ),
        AgentStop::HookFailed(why) => (failed(why), String::new(), None),
        AgentStop::ContextOverflow(e) => (
            failed(format!("the conversation does not fit: {e}")),
            String::new(),
            None,
        ),
        AgentStop::ProviderFailed(e) => (
            Outcome {
                status: OutcomeStatus::Error,
                reason: format!("its model provider failed: {e}"),
                error_class: Some(e.class),
            },
            String::new(),
            None,
        ),
    }
}
