//! One child's run: its model, policy, tools and workspace made from its
//! parent's and its profile, the agent loop under its reserved limits, and
//! its record ([`AgentRun`]) for the parent's `task` call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Delegator;
use super::account::{Account, Hold};
use crate::engine::{
    AgentEnv, AgentLimits, ContextLimits, Conversation, Event, EventSink, TaskHooks, ToolEnv,
    run_agent,
};
use crate::provider::{ToolChoice, Usage};
use crate::report::progress::{AgentOf, Fanout, RunReporter};
use crate::report::transcript::Counts;
use crate::report::{OutcomeStatus, TranscriptRecorder};
use crate::task::Task;
use crate::task::agents::{AgentProfile, Isolation};
use crate::tools::{ToolContext, ToolError, ToolOutput, builtin::TaskTool, typed};
use crate::workspace::IsolatedWorkspace;
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
    let (mut ctx, _tmp) = match super::workspace::child_context(d, &policy, copy.as_ref()) {
        Ok(c) => c,
        Err(e) => return failed(e.to_string()),
    };
    // Its large results beside its parent's, in a folder of its own.
    ctx.spill_dir = d
        .ctx_of
        .spill_dir
        .as_ref()
        .map(|s| s.join(at.id.replace('/', "_").replace('#', "-")));
    let ctx = Arc::new(ctx);
    // One that may start children gets its own delegator, beneath this one.
    let ctx = if p.agents.is_empty() {
        ctx
    } else {
        let below = Delegator::new(
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
        Arc::new(ctx.with_delegate(Arc::new(below)))
    };
    Child {
        d,
        p,
        task: &task,
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
        parent_root: &parent_root,
    }
    .run()
    .await
}

fn failed(why: String) -> Ran {
    Ran {
        result: Err(ToolError::execution(why)),
        turns: 0,
        usage: Usage::default(),
    }
}

/// What a child is made of, ready to run.
struct Child<'a> {
    d: &'a Delegator,
    p: &'a AgentProfile,
    task: &'a Task,
    at: &'a AgentOf,
    hold: Hold,
    started: Instant,
    timeout: Duration,
    policy: Arc<PolicySet>,
    policies: Vec<String>,
    registry: crate::tools::Registry,
    ctx: Arc<ToolContext>,
    account: Arc<Account>,
    copy: Option<IsolatedWorkspace>,
    parent_root: &'a std::path::Path,
}

impl Child<'_> {
    /// Runs the agent loop under its limits and records it.
    async fn run(self) -> Ran {
        let Child {
            d,
            p,
            task,
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
            parent_root,
        } = self;
        let tree = &d.tree;
        // Children ask at once (a parent waiting on them holds no batch).
        let provider = match super::super::models::make_provider(task, 0, None) {
            Ok((pr, _)) => pr,
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
            tripwires: tree.tripwires.clone(),
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
                shadow: None,
            },
            turn_log: None,
        };
        let mut conv = Conversation::new(task.prompt.clone());
        let mut usage = Usage {
            cost_usd: task.pricing.map(|_| 0.0),
            ..Usage::default()
        };
        let stop = tokio::time::timeout(
            timeout,
            crate::telemetry::context::in_agent(
                &at.id,
                run_agent(&env, &mut conv, &limits, &mut usage, None, 0),
            ),
        )
        .await;
        let (turns, calls) = recorder.take();
        // Its children's spending is its own.
        let (child_turns, _) = crate::engine::Spending::children(account.as_ref());
        account.add_children_to(&mut usage);
        let spent_turns = turns.len() as u32 + child_turns;
        let (outcome, answer, output) = super::ending::outcome_of(stop, p, hold, timeout);
        let merge = copy.as_ref().map(|iso| {
            if outcome.status == OutcomeStatus::Passed {
                super::ending::merge_back(iso, parent_root)
            } else {
                super::ending::Merge::NotFinished
            }
        });
        let conflict = merge.as_ref().is_some_and(super::ending::Merge::failed);
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
            merge: merge.as_ref().map(ToString::to_string),
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
                    "the child `{}` finished, but its changes did not come back: {}\n\nIts answer:\n{text}",
                    at.id,
                    merge.map(|m| m.to_string()).unwrap_or_default()
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
}
