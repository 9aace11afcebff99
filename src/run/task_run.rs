//! One task from start to finish.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::checks::{feedback, run_checks};
use super::denied_changes::revert_denied_changes;
use super::models::make_provider;
use super::prepare::CopyPlan;
use super::prompt::system_prompt;
use crate::engine::{
    AgentEnv, AgentLimits, AgentStop, ContextLimits, Conversation, Event, EventSink, FirstTurn,
    TaskHooks, ToolEnv, ask_first, run_agent,
};
use crate::mcp::McpServers;
use crate::provider::{Message, Provider, Usage};
use crate::report::progress::{Fanout, RunReporter, TaskEvents};
use crate::report::transcript::{ChangedFile, Counts, TRANSCRIPT_VERSION};
use crate::report::{CheckRecord, Outcome, OutcomeStatus, Transcript, TranscriptRecorder};
use crate::task::{Mode, Task};
use crate::tools::Registry;
use crate::workspace::{FileChange, IsolatedWorkspace, render_git_diff};
use runner_output::Violation;
use runner_policy::{Policy, PolicySet};

/// Options shared by every task of a run.
#[derive(Clone)]
pub struct RunOptions {
    pub out_dir: PathBuf,
    /// `--policy` layers, added to each task's policy.
    pub extra_policies: Vec<Policy>,
    /// Told about every task and event (progress lines, bars, JSON).
    pub reporter: Arc<dyn RunReporter>,
    pub max_parallel_calls: usize,
    /// Fired by SIGINT/SIGTERM: tasks stop and record `cancelled`.
    pub cancel: super::Cancel,
    /// `--max-cost`: what the whole run may spend.
    pub budget: Option<Arc<RunBudget>>,
    /// The run's telemetry, when it exports any: tasks run under their
    /// trace context and record their ids.
    pub telemetry: Option<Arc<crate::telemetry::Telemetry>>,
    /// `--resume`: `out_dir` holds an earlier run to go on from.
    pub resume: bool,
}

/// `runner run --max-cost`: once the tasks that ran have spent it, the
/// tasks not yet started are skipped.
#[derive(Debug)]
pub struct RunBudget {
    /// USD.
    pub max: f64,
    spent: std::sync::Mutex<f64>,
}

impl RunBudget {
    pub fn new(max: f64) -> Self {
        Self {
            max,
            spent: std::sync::Mutex::new(0.0),
        }
    }

    /// What the finished tasks cost so far.
    pub fn spent(&self) -> f64 {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, usd: f64) {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += usd;
    }
}

/// What a task produced.
pub struct TaskResult {
    pub transcript: Transcript,
    pub diff: String,
    pub changes: Vec<FileChange>,
    /// The original workspace, for `--apply`.
    pub workspace: PathBuf,
}

impl TaskResult {
    pub fn passed(&self) -> bool {
        self.transcript.outcome.status == OutcomeStatus::Passed
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The tools a task gets: its `tools:` list, read-only ones in plan mode.
pub fn task_registry(task: &Task, base: &Registry) -> Registry {
    let mut r = base.clone();
    match &task.tools {
        Some(names) => r.retain_named(names),
        None => r.drop_named(crate::tools::builtin::OPT_IN),
    }
    // A task with profiles gets the tool that starts them.
    if let Some(agents) = &task.agents {
        let tool = crate::tools::builtin::TaskTool {
            profiles: agents
                .profiles
                .values()
                .map(|p| (p.name.clone(), p.description.clone()))
                .collect(),
        };
        let _ = r.register(crate::tools::typed(tool));
    }
    if task.mode == Mode::Plan {
        r.read_only()
    } else {
        r
    }
}

/// Why a task could not start.
enum SetupError {
    Failure(String),
    Cancelled(String),
    Skipped(String),
}
use SetupError::{Cancelled, Failure, Skipped};

impl From<SetupError> for Outcome {
    fn from(e: SetupError) -> Self {
        match e {
            Failure(reason) => Outcome {
                status: OutcomeStatus::Error,
                reason,
                error_class: None,
            },
            Cancelled(reason) => Outcome {
                status: OutcomeStatus::Cancelled,
                reason,
                error_class: None,
            },
            Skipped(reason) => Outcome {
                status: OutcomeStatus::Skipped,
                reason,
                error_class: None,
            },
        }
    }
}

/// One task's run as it goes: what it gathers for its transcript.
struct TaskRun<'t> {
    task: &'t Task,
    opts: &'t RunOptions,
    epoch: Instant,
    started_at: String,
    task_out: PathBuf,
    policy: Arc<PolicySet>,
    registry: Registry,
    conversation: Conversation,
    checks: Vec<CheckRecord>,
    usage: Usage,
    final_answer: String,
    attempts: u32,
    system: String,
    changes: Vec<FileChange>,
    /// Changes to paths the policy denies editing, reverted.
    violations: Vec<Violation>,
    diff_prefix: String,
    sandbox_note: String,
    mcp_sandbox: BTreeMap<String, String>,
    /// What the copy left out because it holds a credential.
    credentials_removed: Vec<String>,
    warnings: Vec<String>,
    /// The answer valid against the output schema.
    output: Option<serde_json::Value>,
    /// What the model's server taught the runner (see `provider::learn`).
    server_adaptations: Vec<String>,
    /// The earlier run's transcript of a resumed task, and its changes.
    prior: Option<Box<Transcript>>,
    prior_diff: String,
    /// The turn the agent goes on from (a resumed task's last).
    start_turn: u32,
    /// The task's connection decisions (proxy and `web_fetch`).
    net_log: Arc<crate::net::NetLog>,
    /// The budget the task's agent shares with its children, when it has
    /// `agents:`.
    agents_account: Option<Arc<super::agents::account::Account>>,
}

/// Runs one task. Never fails: problems become the outcome.
pub async fn run_task(task: &Task, opts: &RunOptions) -> TaskResult {
    let mut run = TaskRun::new(task, opts);
    opts.reporter.task_started(&task.name);
    if opts.resume {
        use super::resume::{Previous, previous};
        match previous(&opts.out_dir, &task.name) {
            Previous::Keep(transcript, diff) => {
                opts.reporter.task_finished(&transcript);
                return TaskResult {
                    transcript: *transcript,
                    diff,
                    // Applied (or not) by the run that made them.
                    changes: Vec::new(),
                    workspace: task.workspace.clone(),
                };
            }
            Previous::Resume(t, diff) => run.resume_from(t, diff),
            Previous::Fresh => {}
        }
    }
    let recorder = TranscriptRecorder::new(run.epoch);
    let progress = TaskEvents {
        task: &task.name,
        reporter: opts.reporter.as_ref(),
    };
    let sink = Fanout(vec![&recorder, &progress]);
    let trace = opts.telemetry.as_ref().map(|t| t.task_context(&task.name));
    let outcome = match run.admit() {
        Err(e) => e.into(),
        Ok(provider) => {
            let o =
                crate::telemetry::context::in_task(trace, run.work(provider.as_ref(), &sink)).await;
            // The children's tokens and cost are the task's.
            if let Some(a) = &run.agents_account {
                a.add_children_to(&mut run.usage);
            }
            // What was decided after the last batch of calls (checks, the
            // MCP servers' start), or before a task ended early.
            crate::engine::emit_connections(&run.net_log, &sink);
            run.server_adaptations = provider.adaptations();
            o
        }
    };
    let result = run.finish(outcome, &recorder);
    if let (Some(b), Some(cost)) = (&opts.budget, result.transcript.usage.cost_usd) {
        b.add(cost);
    }
    opts.reporter.task_finished(&result.transcript);
    if let Some(t) = &opts.telemetry {
        t.task_finished(&result.transcript);
    }
    result
}

impl<'t> TaskRun<'t> {
    fn new(task: &'t Task, opts: &'t RunOptions) -> Self {
        let mut layers = vec![task.policy.clone()];
        layers.extend(opts.extra_policies.iter().cloned());
        let epoch = Instant::now();
        Self {
            task,
            opts,
            epoch,
            net_log: Arc::new(crate::net::NetLog::new(epoch)),
            agents_account: None,
            started_at: now_rfc3339(),
            task_out: opts.out_dir.join(&task.name),
            policy: Arc::new(PolicySet::new(layers)),
            registry: task_registry(task, &Registry::builtin()),
            conversation: Conversation::new(task.prompt.clone()),
            checks: Vec::new(),
            // A priced model's cost starts at 0; an unknown price stays null.
            usage: Usage {
                cost_usd: task.pricing.map(|_| 0.0),
                ..Usage::default()
            },
            final_answer: String::new(),
            attempts: 0,
            system: String::new(),
            changes: Vec::new(),
            violations: Vec::new(),
            diff_prefix: String::new(),
            sandbox_note: String::new(),
            mcp_sandbox: BTreeMap::new(),
            credentials_removed: Vec::new(),
            warnings: Vec::new(),
            output: None,
            server_adaptations: Vec::new(),
            prior: None,
            prior_diff: String::new(),
            start_turn: 0,
        }
    }

    /// Goes on from an earlier run's transcript (`runner run --resume`):
    /// its conversation, system prompt, spending, checks and violations.
    fn resume_from(&mut self, t: Box<Transcript>, diff: String) {
        self.conversation = Conversation::resumed(super::resume::conversation(&t));
        self.system = t.system_prompt.clone();
        self.usage = t.usage;
        self.attempts = t.counts.attempts.saturating_sub(1);
        self.checks = t.checks.clone();
        self.violations = t.violations.clone();
        self.warnings = t.warnings.clone();
        self.started_at = t.started_at.clone();
        self.start_turn = t.turns.iter().map(|r| r.turn).max().unwrap_or(0);
        self.prior_diff = diff;
        self.prior = Some(t);
    }

    /// The task's model, unless the run was cancelled or its budget spent
    /// before the task started. The provider first: a task that cannot
    /// reach its model should not pay for a copy of the workspace.
    fn admit(&self) -> Result<Box<dyn Provider>, SetupError> {
        if let Some(why) = self.opts.cancel.reason() {
            return Err(Cancelled(format!("cancelled before it started ({why})")));
        }
        if let Some(b) = &self.opts.budget
            && b.spent() >= b.max
        {
            return Err(Skipped(format!(
                "the run's --max-cost of ${} was spent (${:.4}) before it started",
                b.max,
                b.spent()
            )));
        }
        let done = self.prior.as_ref().map_or(0, |t| t.turns.len());
        make_provider(self.task, done).map_err(|e| Failure(e.to_string()))
    }

    /// What the task's workspace is made from.
    fn copy_plan(&self) -> CopyPlan {
        CopyPlan {
            workspace: self.task.workspace.clone(),
            excludes: self.opts.out_dir.canonicalize().into_iter().collect(),
            policy: self.policy.clone(),
            env: self.task.env.clone(),
            sandbox: self.task.sandbox.clone(),
            spill_dir: self.task_out.join("tool-results"),
            net_log: self.net_log.clone(),
        }
    }

    /// Prepares the workspace, and meanwhile (for a task without MCP
    /// servers, whose tools are known before the copy is made) sends the
    /// first turn's request; runs the attempts (until cancelled), stops
    /// the MCP servers and collects the changes.
    async fn work(&mut self, provider: &dyn Provider, sink: &dyn EventSink) -> Outcome {
        let task = self.task;
        let limits = &self.limits();
        // With `network:` rules, commands, hooks and MCP servers reach the
        // network through the task's proxy only (stopped on return).
        let proxy = if self.policy.has_network_rules() {
            let started = crate::net::Proxy::start(
                self.policy.clone(),
                crate::net::Resolver::from_env(),
                self.net_log.clone(),
            )
            .await;
            match started {
                Ok(p) => Some(p),
                Err(e) => return Failure(format!("could not start the network proxy: {e}")).into(),
            }
        } else {
            None
        };
        let proxy_port = proxy.as_ref().map(crate::net::Proxy::port);
        let mut plan = self.copy_plan();
        plan.sandbox.proxy_port = proxy_port;
        let mut copy = tokio::task::spawn_blocking(move || plan.prepare());
        let cancel = self.opts.cancel.clone();
        // A resumed task's first request is its recorded conversation's
        // next: it waits for the copy and the changes applied to it.
        let ahead = task.mcp_servers.is_empty() && self.prior.is_none();
        let mut first = None;
        if ahead {
            self.system = system_prompt(task, &self.registry, &self.policy);
            sink.emit(&Event::AttemptStarted { attempt: 1 });
            first = Some(ask_first(
                provider,
                &self.system,
                &self.registry,
                &mut self.conversation,
                limits,
                sink,
            ));
        }
        let waited = async {
            match first.as_mut() {
                Some(f) => f.alongside(&mut copy).await,
                None => (&mut copy).await,
            }
        };
        let ended = tokio::select! {
            r = tokio::time::timeout(task.timeout.saturating_sub(self.epoch.elapsed()), waited) => {
                r.map_err(|_| self.timed_out())
            }
            why = cancel.cancelled() => Err(cancelled(&why)),
        };
        let prepared = match ended {
            Ok(prepared) => prepared,
            Err(outcome) => {
                // The copy cannot be stopped half-way: it ends, and is
                // removed, before the task does (a second signal exits at
                // once, and its temporary folders are removed then).
                drop(first);
                let _ = copy.await;
                return outcome;
            }
        };
        let p = match prepared {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => return Failure(e.to_string()).into(),
            Err(e) => return Failure(format!("preparing the workspace failed: {e}")).into(),
        };
        if self.prior.is_some()
            && let Err(e) = super::resume::apply_changes(p.iso.path(), &self.prior_diff)
        {
            return Failure(format!("resuming: {e}")).into();
        }
        self.diff_prefix = p.iso.diff_prefix();
        self.credentials_removed = p.credentials_removed();
        self.sandbox_note = p.sandbox_note;
        self.policy = p.policy;
        sink.emit(&Event::WorkspaceReady {
            files: p.iso.snapshot().len(),
        });
        let mut mcp = match McpServers::start_into(
            &task.mcp_servers,
            task.mode == Mode::Plan,
            p.iso.path(),
            &self.task_out,
            &mut self.registry,
            proxy_port
                .map(|proxy_port| crate::mcp::McpNetwork {
                    policy: self.policy.clone(),
                    log: self.net_log.clone(),
                    proxy_port,
                })
                .as_ref(),
        )
        .await
        {
            Ok((servers, w)) => {
                self.warnings.extend(w);
                servers
            }
            Err(e) => {
                return Outcome {
                    status: OutcomeStatus::Error,
                    reason: e.to_string(),
                    error_class: None,
                };
            }
        };
        // A resumed task sends its recorded system prompt: the same bytes,
        // which the vendor's prompt cache matches on.
        if !ahead && self.prior.is_none() {
            self.system = system_prompt(task, &self.registry, &self.policy);
        }
        let registry = self.registry.clone();
        let policy = self.policy.clone();
        // The task's hooks, then every policy layer's.
        let mut all_hooks = task.hooks.clone();
        for layer in policy.layers() {
            all_hooks.extend(&layer.hooks);
        }
        let hooks = TaskHooks::new(&task.name, all_hooks.clone());
        let system = self.system.clone();
        // Children: the task's agent may start them (`agents:`).
        let mut limits = limits.clone();
        let ctx = match &task.agents {
            None => p.ctx.clone(),
            Some(agents) => {
                let account = Arc::new(super::agents::account::Account::new(
                    task.max_turns,
                    task.max_cost,
                    self.epoch + task.timeout,
                ));
                limits.spending = Some(account.clone());
                self.agents_account = Some(account.clone());
                let tree = Arc::new(super::agents::Tree {
                    task: Arc::new(task.clone()),
                    agents: agents.clone(),
                    reporter: self.opts.reporter.clone(),
                    epoch: self.epoch,
                    max_parallel_calls: self.opts.max_parallel_calls,
                    proxy_port,
                    spill_dir: self.task_out.join("tool-results"),
                    hidden: p.hidden.clone(),
                });
                let root = super::agents::Delegator::new(
                    tree,
                    None,
                    0,
                    agents.profiles.keys().cloned().collect(),
                    policy.clone(),
                    registry.clone(),
                    p.ctx.clone(),
                    all_hooks,
                    account,
                );
                Arc::new(p.ctx.with_delegate(Arc::new(root)))
            }
        };
        let env = AgentEnv {
            provider,
            system: &system,
            tools: ToolEnv {
                registry: &registry,
                policy: &policy,
                ctx,
                sink,
                epoch: self.epoch,
                hooks: &hooks,
            },
        };
        // Dropping the agent on cancellation kills what it runs.
        let outcome = tokio::select! {
            o = self.attempts(&env, &p.iso, &limits, first) => o,
            why = cancel.cancelled() => cancelled(&why),
        };
        self.mcp_sandbox = mcp.sandbox_notes();
        mcp.shutdown().await;
        drop(proxy);
        // Whatever ended the agent (a timeout, a cancellation), nothing the
        // policy denies editing leaves the copy: the changes compared are
        // the others.
        match revert_denied_changes(&p.iso, &self.policy, &mut self.violations) {
            Ok(c) => {
                self.changes = c;
                outcome
            }
            Err(e) => Outcome {
                status: OutcomeStatus::Error,
                reason: format!(
                    "could not compare the workspace with the original, or put back a change the policy denies (nothing of it is in the diff): {e}"
                ),
                error_class: None,
            },
        }
    }

    /// The agent's limits, from the task and the run.
    fn limits(&self) -> AgentLimits {
        let task = self.task;
        AgentLimits {
            max_turns: task.max_turns,
            max_parallel: self.opts.max_parallel_calls,
            max_tokens_total: task.max_tokens_total,
            context: ContextLimits {
                window: task.context_window,
                compact_at: task.compact_at,
            },
            pricing: task.pricing,
            max_cost: task.max_cost,
            output: task.output_schema.clone(),
            tool_choice: task.model_options.tool_choice.clone(),
            spending: None,
        }
    }

    fn timed_out(&self) -> Outcome {
        Outcome {
            status: OutcomeStatus::Timeout,
            reason: format!("timed out after {}", humanize(self.task.timeout)),
            error_class: None,
        }
    }

    /// Attempts until the agent finishes and the checks pass, the retries
    /// are spent, or a limit is reached.
    /// `first`: the first turn's answer, when it was asked for while the
    /// workspace was prepared (its attempt announced then).
    async fn attempts(
        &mut self,
        env: &AgentEnv<'_>,
        iso: &IsolatedWorkspace,
        limits: &AgentLimits,
        mut first: Option<FirstTurn<'_>>,
    ) -> Outcome {
        let workdir = iso.path();
        let task = self.task;
        loop {
            self.attempts += 1;
            let attempt = self.attempts;
            let answered = first.take();
            if answered.is_none() {
                env.tools.sink.emit(&Event::AttemptStarted { attempt });
            }
            let remaining = task.timeout.saturating_sub(self.epoch.elapsed());
            let agent = run_agent(
                env,
                &mut self.conversation,
                limits,
                &mut self.usage,
                answered,
                std::mem::take(&mut self.start_turn),
            );
            let Ok(stop) = tokio::time::timeout(remaining, agent).await else {
                return self.timed_out();
            };
            if let Some(stopped) = self.agent_stopped(stop) {
                return stopped;
            }
            if task.checks.is_empty() {
                return Outcome {
                    status: OutcomeStatus::Passed,
                    reason: "the agent finished".into(),
                    error_class: None,
                };
            }
            // Before any check sees the copy: what the policy denies
            // editing is put back.
            // (The built-in credentials layer's files are reverted with
            // the result: no tree walk here for it alone.)
            if self.policy.rules_deny_paths()
                && let Err(e) = revert_denied_changes(iso, &self.policy, &mut self.violations)
            {
                return Outcome {
                    status: OutcomeStatus::Error,
                    reason: format!("could not revert a change the policy denies: {e}"),
                    error_class: None,
                };
            }
            // The checks see the workspace as it is: what the policy hid
            // from the agent is back until they end (however they end).
            let shown = match iso.reveal_hidden() {
                Ok(g) => g,
                Err(e) => {
                    return Outcome {
                        status: OutcomeStatus::Error,
                        reason: format!(
                            "could not put back the files the policy hid from the agent for the checks: {e}"
                        ),
                        error_class: None,
                    };
                }
            };
            // The checks are bounded by what is left of the task's time too.
            let remaining = task.timeout.saturating_sub(self.epoch.elapsed());
            let checks = run_checks(
                &task.checks,
                workdir,
                env.tools.ctx.env.as_deref(),
                env.tools.ctx.confine.as_ref(),
                attempt,
                self.epoch,
            );
            let results = tokio::time::timeout(remaining, checks).await;
            drop(shown);
            let Ok(results) = results else {
                return self.timed_out();
            };
            let failed: Vec<&CheckRecord> = results.iter().filter(|c| !c.passed).collect();
            if failed.is_empty() {
                self.checks.extend(results);
                return Outcome {
                    status: OutcomeStatus::Passed,
                    reason: format!(
                        "the agent finished and {} check(s) passed",
                        task.checks.len()
                    ),
                    error_class: None,
                };
            }
            if attempt > task.retries {
                let names: Vec<String> = failed.iter().map(|c| format!("`{}`", c.name)).collect();
                let reason = format!("check(s) failed: {}", names.join(", "));
                self.checks.extend(results);
                return Outcome {
                    status: OutcomeStatus::Failed,
                    reason,
                    error_class: None,
                };
            }
            let content = feedback(&failed);
            self.checks.extend(results);
            self.conversation.push(Message::User { content });
            if self.epoch.elapsed() >= task.timeout {
                return self.timed_out();
            }
        }
    }

    /// The outcome when the agent stopped for good; `None` when it
    /// finished and the checks come next.
    fn agent_stopped(&mut self, stop: AgentStop) -> Option<Outcome> {
        let error_class = match &stop {
            AgentStop::ProviderFailed(e) | AgentStop::ContextOverflow(e) => Some(e.class),
            _ => None,
        };
        let (status, reason) = match stop {
            AgentStop::Finished { text, output } => {
                self.final_answer = text;
                self.output = output;
                return None;
            }
            AgentStop::NoValidOutput(first) => (
                OutcomeStatus::Failed,
                format!("ran out of turns without an answer valid against output_schema: {first}"),
            ),
            AgentStop::MaxTurns => (
                OutcomeStatus::Failed,
                format!("ran out of turns (max_turns: {})", self.task.max_turns),
            ),
            AgentStop::TokenBudget => (
                OutcomeStatus::Failed,
                "the token budget (max_tokens_total) is spent".into(),
            ),
            AgentStop::HookFailed(why) => (OutcomeStatus::Failed, why),
            AgentStop::CostBudget(cost) => (
                OutcomeStatus::Failed,
                format!(
                    "the cost budget is spent: ${cost:.4} passed max_cost ${}",
                    self.task.max_cost.unwrap_or_default()
                ),
            ),
            AgentStop::ContextOverflow(e) => (
                OutcomeStatus::Failed,
                format!(
                    "the conversation does not fit the model's context window ({} tokens) even after compacting it: {e}",
                    self.task.context_window
                ),
            ),
            AgentStop::ProviderFailed(e) => (
                OutcomeStatus::Error,
                format!("the model provider failed: {e}"),
            ),
        };
        Some(Outcome {
            status,
            reason,
            error_class,
        })
    }

    /// The transcript, the diff and the changes.
    fn finish(self, outcome: Outcome, recorder: &TranscriptRecorder) -> TaskResult {
        let task = self.task;
        let (mut turns, mut tool_calls) = recorder.take();
        let mut compactions = recorder.take_compactions();
        let mut switches = recorder.take_switches();
        let mut connections = recorder.take_connections();
        // A resumed task's records are the earlier runs' and this one's.
        let (resumes, earlier_ms) = match &self.prior {
            Some(p) => {
                turns.splice(0..0, p.turns.iter().cloned());
                tool_calls.splice(0..0, p.tool_calls.iter().cloned());
                compactions.splice(0..0, p.compactions.iter().cloned());
                switches.splice(0..0, p.model_switches.iter().cloned());
                connections.splice(0..0, p.connections.iter().cloned());
                (p.resumes + 1, p.duration_ms)
            }
            None => (0, 0),
        };
        let mut counts = Counts::from(self.attempts, &turns, &tool_calls);
        counts.denied_connections = connections.iter().filter(|c| !c.allowed).count() as u32;
        let outcome = if outcome.status == OutcomeStatus::Passed
            && task.fail_on_denial
            && counts.denied_calls > 0
        {
            Outcome {
                status: OutcomeStatus::Failed,
                reason: format!(
                    "{} call(s) were denied and fail_on_denial is set",
                    counts.denied_calls
                ),
                error_class: None,
            }
        } else {
            outcome
        };
        let outcome = match self.violations.first() {
            Some(v) if outcome.status == OutcomeStatus::Passed => Outcome {
                status: OutcomeStatus::Failed,
                reason: format!(
                    "the agent changed {} path(s) the policy denies editing (`{}`: {}, {}); the change(s) were dropped",
                    self.violations.len(),
                    v.path,
                    v.rule,
                    v.policy
                ),
                error_class: None,
            },
            _ => outcome,
        };
        let diff = render_git_diff(&self.changes, &self.diff_prefix);
        let transcript = Transcript {
            version: TRANSCRIPT_VERSION,
            task: task.name.clone(),
            task_file: task.file.display().to_string(),
            model: task.model.to_string(),
            workspace: task.workspace.display().to_string(),
            mode: task.mode,
            trace: self.opts.telemetry.as_ref().map(|t| t.task_ids(&task.name)),
            parameters: task.params.clone(),
            sandbox: self.sandbox_note,
            mcp_sandbox: self.mcp_sandbox,
            credentials_removed: self.credentials_removed,
            backstops: self.policy.backstops(),
            server_adaptations: self.server_adaptations,
            warnings: self.warnings,
            started_at: self.started_at,
            duration_ms: earlier_ms + self.epoch.elapsed().as_millis() as u64,
            resumes,
            policies: self
                .policy
                .layers()
                .iter()
                .map(|l| l.source.clone())
                .collect(),
            system_prompt: self.system,
            messages: self.conversation.into_log(),
            compactions,
            model_switches: switches,
            connections,
            turns,
            tool_calls,
            checks: self.checks,
            usage: self.usage,
            counts,
            changes: self
                .changes
                .iter()
                .map(|c| ChangedFile {
                    path: c.path.clone(),
                    change: c.kind,
                })
                .collect(),
            violations: self.violations,
            final_answer: self.final_answer,
            output: self.output,
            outcome,
        };
        TaskResult {
            transcript,
            diff,
            changes: self.changes,
            workspace: task.workspace.clone(),
        }
    }
}

fn humanize(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else if s > 0 {
        format!("{s}s")
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn cancelled(why: &str) -> Outcome {
    Outcome {
        status: OutcomeStatus::Cancelled,
        reason: format!("cancelled ({why})"),
        error_class: None,
    }
}
