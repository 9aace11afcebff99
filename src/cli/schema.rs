//! `runner schema task|policy|transcript|events|agent|doctor|compare`

use schemars::JsonSchema;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SchemaKind {
    Task,
    Policy,
    Transcript,
    /// The lines of `runner run --format json`.
    Events,
    /// A child agent's run: the `metadata.agent` of a `task` call.
    Agent,
    /// What `runner doctor --format json` prints.
    Doctor,
    /// What `runner compare --format json` prints.
    Compare,
}

fn schema<T: JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default()
}

pub fn print_schema(kind: SchemaKind) -> super::CliResult {
    let v = match kind {
        SchemaKind::Task => schema::<crate::task::TaskFile>(),
        SchemaKind::Policy => schema::<runner_policy::PolicyFile>(),
        SchemaKind::Transcript => schema::<crate::report::Transcript>(),
        SchemaKind::Events => schema::<crate::report::events::EventLine>(),
        SchemaKind::Agent => schema::<runner_output::AgentRun>(),
        SchemaKind::Doctor => schema::<runner_output::DoctorReport>(),
        SchemaKind::Compare => schema::<runner_output::Comparison>(),
    };
    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    Ok(super::Exit::Passed)
}
