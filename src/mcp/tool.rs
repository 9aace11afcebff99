//! An MCP server's tool as a runner tool: named `SERVER__TOOL`, signature
//! `Mcp(SERVER/TOOL)`, risk medium (the policy's `risk:` may change it),
//! never run in parallel (a server's annotations are hints from an
//! untrusted party, so nothing is inferred from them).

use std::sync::Arc;

use serde_json::Value;

use super::render::render;
use super::server::{CallError, McpServer, ServerTool};
use crate::tools::{
    CallFuture, DynTool, PreparedCall, Risk, ToolContext, ToolError, ToolKind, ToolOutput,
};
use runner_policy::{Family, Signature};

pub struct McpTool {
    full_name: String,
    tool: ServerTool,
    server: Arc<McpServer>,
}

impl McpTool {
    pub fn new(server: Arc<McpServer>, tool: ServerTool) -> Self {
        Self {
            full_name: format!("{}__{}", server.name, tool.name),
            tool,
            server,
        }
    }
}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.full_name
    }
    fn description(&self) -> String {
        let d = if self.tool.description.is_empty() {
            format!("The `{}` tool", self.tool.name)
        } else {
            self.tool.description.clone()
        };
        format!("{d}\n\n(From the MCP server `{}`.)", self.server.name)
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }
    fn risk(&self) -> Risk {
        Risk::Medium
    }
    fn input_schema(&self) -> Value {
        let mut s = self.tool.input_schema.clone();
        if let Some(o) = s.as_object_mut() {
            o.entry("type")
                .or_insert_with(|| Value::String("object".into()));
            o.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        }
        s
    }
    fn max_result_chars(&self) -> Option<usize> {
        Some(crate::tools::DEFAULT_MAX_RESULT_CHARS)
    }
    fn prepare(
        &self,
        args: &Value,
        _ctx: &ToolContext,
    ) -> Result<Box<dyn PreparedCall>, ToolError> {
        let Value::Object(args) = args else {
            return Err(ToolError::validation(format!(
                "the arguments of {} must be a JSON object",
                self.full_name
            )));
        };
        Ok(Box::new(McpCall {
            server: self.server.clone(),
            tool: self.tool.name.clone(),
            args: args.clone(),
        }))
    }
}

struct McpCall {
    server: Arc<McpServer>,
    tool: String,
    args: serde_json::Map<String, Value>,
}

impl PreparedCall for McpCall {
    fn is_concurrency_safe(&self) -> bool {
        false
    }
    fn signatures(&self, _ctx: &ToolContext) -> Vec<Signature> {
        vec![Signature::new(
            Family::Mcp,
            format!("{}/{}", self.server.name, self.tool),
        )]
    }
    fn run(self: Box<Self>, ctx: Arc<ToolContext>) -> CallFuture {
        Box::pin(async move {
            let server = &self.server.name;
            if let Some(k) = &ctx.canaries {
                let args = serde_json::to_vec(&self.args).unwrap_or_default();
                let call = || format!("the arguments of the MCP call {server}__{}", self.tool);
                if let Some(why) = k.refuse(&args, call) {
                    return Err(ToolError::permission(format!(
                        "the call was refused: {why}"
                    )));
                }
            }
            match self.server.call(&self.tool, self.args).await {
                Ok(result) => {
                    let text = render(&result);
                    let display = format!("{server}/{}", self.tool);
                    if result["isError"].as_bool() == Some(true) {
                        Err(ToolError::execution(text).with_metadata(result))
                    } else {
                        Ok(ToolOutput::new(text, display).with_metadata(result))
                    }
                }
                Err(CallError::Timeout(d)) => Err(ToolError::timeout(format!(
                    "the MCP server `{server}` did not answer within {} s",
                    d.as_secs_f64()
                ))),
                Err(CallError::Gone(e)) => Err(ToolError::execution(format!(
                    "the MCP server `{server}` is no longer running ({e}); its tools cannot be used"
                ))),
                Err(CallError::Failed(e)) => Err(ToolError::execution(format!(
                    "the MCP server `{server}` failed the call: {e}"
                ))),
            }
        })
    }
}
