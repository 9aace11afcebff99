//! The `Tool` trait and its object-safe form.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::context::ToolContext;
use super::output::{ToolError, ToolOutput};
use runner_policy::Signature;

/// What a tool does to the world. `plan` mode keeps only
/// read-only tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    ReadOnly,
    Write,
    Execute,
}

/// How much a call may hurt: the permission engine's risk levels.
pub use runner_policy::Risk;

/// An example call shown to the model.
#[derive(Debug, Clone)]
pub struct Example {
    pub description: &'static str,
    pub args: Value,
}

/// A description in parts (short, long, usage notes, examples, important),
/// rendered into one text for the model.
#[derive(Debug, Clone, Default)]
pub struct Description {
    pub short: String,
    pub long: Option<String>,
    pub usage_notes: Vec<String>,
    pub examples: Vec<Example>,
    pub important: Vec<String>,
}

impl Description {
    pub fn new(short: impl Into<String>) -> Self {
        Self {
            short: short.into(),
            ..Default::default()
        }
    }
    pub fn long(mut self, s: impl Into<String>) -> Self {
        self.long = Some(s.into());
        self
    }
    pub fn note(mut self, s: impl Into<String>) -> Self {
        self.usage_notes.push(s.into());
        self
    }
    pub fn example(mut self, description: &'static str, args: Value) -> Self {
        self.examples.push(Example { description, args });
        self
    }
    pub fn important(mut self, s: impl Into<String>) -> Self {
        self.important.push(s.into());
        self
    }

    /// The one text the model reads.
    pub fn render(&self) -> String {
        let mut out = self.short.clone();
        if let Some(long) = &self.long {
            out.push_str("\n\n");
            out.push_str(long);
        }
        if !self.usage_notes.is_empty() {
            out.push_str("\n\nUsage notes:");
            for n in &self.usage_notes {
                out.push_str("\n- ");
                out.push_str(n);
            }
        }
        if !self.examples.is_empty() {
            out.push_str("\n\nExamples:");
            for e in &self.examples {
                out.push_str(&format!("\n- {}: {}", e.description, e.args));
            }
        }
        if !self.important.is_empty() {
            out.push_str("\n\nIMPORTANT:");
            for n in &self.important {
                out.push_str("\n- ");
                out.push_str(n);
            }
        }
        out
    }
}

/// A tool with typed arguments.
pub trait Tool: Send + Sync + 'static {
    /// The arguments: the Rust type, the validator and the JSON Schema.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    fn name(&self) -> &str;
    fn description(&self) -> Description;
    fn kind(&self) -> ToolKind;
    fn risk(&self) -> Risk {
        match self.kind() {
            ToolKind::ReadOnly => Risk::Low,
            ToolKind::Write => Risk::Medium,
            ToolKind::Execute => Risk::High,
        }
    }
    /// Above this many characters a result is spilled to a file; `None`
    /// exempts the tool (read_file pages itself).
    fn max_result_chars(&self) -> Option<usize> {
        Some(super::spill::DEFAULT_MAX_RESULT_CHARS)
    }
    /// Checks argument values against the workspace (paths, ranges) before
    /// the permission decision.
    fn validate(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }
    /// Whether this call may run alongside other safe calls of its turn.
    fn is_concurrency_safe(&self, args: &Self::Args) -> bool;
    /// The permission signatures of this call: what the policy decides on.
    fn signatures(&self, args: &Self::Args, ctx: &ToolContext) -> Vec<Signature>;
    /// Runs the call.
    fn call(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// A boxed future of a call.
pub type CallFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

/// A call whose arguments passed validation, ready to be decided and run.
pub trait PreparedCall: Send + Sync {
    fn is_concurrency_safe(&self) -> bool;
    fn signatures(&self, ctx: &ToolContext) -> Vec<Signature>;
    fn run(self: Box<Self>, ctx: Arc<ToolContext>) -> CallFuture;
}

/// The object-safe face of a tool, as the registry and the engine see it.
pub trait DynTool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> String;
    fn kind(&self) -> ToolKind;
    fn risk(&self) -> Risk;
    fn input_schema(&self) -> Value;
    fn max_result_chars(&self) -> Option<usize>;
    /// Argument validation and input validation (paths).
    /// Reads the arguments without taking them: the call keeps them for its
    /// record.
    fn prepare(&self, args: &Value, ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError>;
}

/// Wraps a typed tool for the registry.
pub fn typed<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    Arc::new(Typed(Arc::new(tool), std::sync::OnceLock::new()))
}

/// A typed tool and its arguments' schema, made on first use (the schema
/// is generated from the type: some tens of microseconds a tool, asked
/// for by every request's declarations).
struct Typed<T>(Arc<T>, std::sync::OnceLock<Value>);

struct TypedCall<T: Tool> {
    tool: Arc<T>,
    args: T::Args,
}

impl<T: Tool> PreparedCall for TypedCall<T> {
    fn is_concurrency_safe(&self) -> bool {
        self.tool.is_concurrency_safe(&self.args)
    }
    fn signatures(&self, ctx: &ToolContext) -> Vec<Signature> {
        self.tool.signatures(&self.args, ctx)
    }
    fn run(self: Box<Self>, ctx: Arc<ToolContext>) -> CallFuture {
        let TypedCall { tool, args } = *self;
        Box::pin(async move { tool.call(args, &ctx).await })
    }
}

/// The JSON Schema of an argument type, inlined (no `$ref`).
pub fn schema_of<A: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<A>();
    let mut v = serde_json::to_value(schema).unwrap_or(Value::Null);
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    v
}

impl<T: Tool> DynTool for Typed<T> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> String {
        self.0.description().render()
    }
    fn kind(&self) -> ToolKind {
        self.0.kind()
    }
    fn risk(&self) -> Risk {
        self.0.risk()
    }
    fn input_schema(&self) -> Value {
        self.1.get_or_init(schema_of::<T::Args>).clone()
    }
    fn max_result_chars(&self) -> Option<usize> {
        self.0.max_result_chars()
    }
    fn prepare(&self, args: &Value, ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, ToolError> {
        let empty = Value::Object(Default::default());
        let args = match args {
            Value::Null => &empty,
            other => other,
        };
        let args = T::Args::deserialize(args).map_err(|e| {
            ToolError::validation(format!("invalid arguments for {}: {e}", self.0.name()))
        })?;
        self.0.validate(&args, ctx)?;
        Ok(Box::new(TypedCall {
            tool: self.0.clone(),
            args,
        }))
    }
}
