use serde_json::json;

use super::*;

/// A record of a call of `tool` in `turn`: denied by `rule` of `policy`
/// when given, else allowed; `metadata` as the tool left it.
fn call(
    tool: &str,
    turn: u32,
    denied: Option<(&str, &str)>,
    sig: &str,
    metadata: serde_json::Value,
) -> ToolCallRecord {
    let (decision, status) = match denied {
        Some((rule, policy)) => ("deny", json!({"rule": rule, "policy": policy})),
        None => ("allow", json!({"rule": null, "policy": "task"})),
    };
    let (family, spec) = sig.split_once('(').unwrap();
    serde_json::from_value(json!({
        "id": format!("c{turn}"),
        "tool": tool,
        "turn": turn,
        "batch": 0,
        "arguments": {},
        "decision": {
            "decision": decision,
            "signatures": [{"family": family, "specifier": spec.trim_end_matches(')')}],
            "rule": status["rule"],
            "reason": "why",
            "policy": status["policy"],
        },
        "status": if denied.is_some() { "denied" } else { "ok" },
        "content": "",
        "display": "",
        "metadata": metadata,
        "started_ms": 0,
        "duration_ms": 0,
    }))
    .unwrap()
}

fn denied(turn: u32) -> ToolCallRecord {
    call(
        "bash",
        turn,
        Some(("deny Bash(rm:*)", "policies/ci.yaml")),
        "Bash(rm -rf x)",
        json!(null),
    )
}

fn allowed(turn: u32) -> ToolCallRecord {
    call("read_file", turn, None, "Read(a.txt)", json!(null))
}

#[test]
fn the_budget_trips_at_the_nth_denied_call_across_turns() {
    let wires = Tripwires::new(Some(2), vec![]);
    assert_eq!(wires.observe(&[denied(1), allowed(1)], &[]), None);
    assert_eq!(wires.observe(&[allowed(2)], &[]), None);
    let t = wires
        .observe(&[denied(3)], &[])
        .expect("the second denial trips");
    assert_eq!(t.wire, Tripwire::Denials);
    assert!(t.reason.starts_with("denials: 2 call(s)"), "{}", t.reason);
    assert!(t.reason.contains("deny Bash(rm:*)"), "{}", t.reason);
}

#[test]
fn without_wires_nothing_trips_however_many_denials() {
    let wires = Tripwires::default();
    let many: Vec<_> = (1..50).map(denied).collect();
    assert_eq!(wires.observe(&many, &[]), None);
}

#[test]
fn a_credentials_denial_trips_only_that_class() {
    let cred = call(
        "read_file",
        1,
        Some(("deny Read(**/.npmrc)", CREDENTIALS_LAYER)),
        "Read(.npmrc)",
        json!(null),
    );
    let other = Tripwires::new(None, vec![Tripwire::Exec, Tripwire::Network]);
    assert_eq!(other.observe(std::slice::from_ref(&cred), &[]), None);
    let wires = Tripwires::new(None, vec![Tripwire::Credentials]);
    assert_eq!(wires.observe(&[denied(1)], &[]), None, "an ordinary denial");
    let t = wires.observe(&[cred], &[]).unwrap();
    assert_eq!(t.wire, Tripwire::Credentials);
    assert!(t.reason.starts_with("fail_fast credentials: read_file"));
}

#[test]
fn a_fetch_denial_or_a_refused_connection_is_network() {
    let wires = Tripwires::new(None, vec![Tripwire::Network]);
    let fetch = call(
        "web_fetch",
        1,
        Some(("deny Fetch(evil.test)", "task")),
        "Fetch(evil.test/x)",
        json!(null),
    );
    assert_eq!(
        wires.observe(&[fetch], &[]).unwrap().wire,
        Tripwire::Network
    );
    let refused: Connection = serde_json::from_value(json!({
        "time_ms": 1, "via": "proxy", "host": "evil.test", "port": 443,
        "allowed": false, "rule": "default deny", "reason": "no rule allows it",
        "bytes_sent": 0, "bytes_received": 0, "duration_ms": 0,
    }))
    .unwrap();
    let mut made = refused.clone();
    made.allowed = true;
    // Fresh wires: tripped ones stay tripped (see below).
    let wires = Tripwires::new(None, vec![Tripwire::Network]);
    assert_eq!(wires.observe(&[allowed(1)], &[made]), None);
    let t = wires.observe(&[allowed(2)], &[refused]).unwrap();
    assert_eq!(t.wire, Tripwire::Network);
    assert!(t.reason.contains("evil.test:443"), "{}", t.reason);
}

#[test]
fn an_exec_the_wall_refused_is_exec_and_counts_as_a_denial() {
    let walled = call(
        "bash",
        1,
        None,
        "Bash(./build.sh)",
        json!({"sandbox_refusals": [{"argv": ["git", "push"], "rule": "deny Bash(git push:*)"}]}),
    );
    let wires = Tripwires::new(None, vec![Tripwire::Exec]);
    let t = wires.observe(std::slice::from_ref(&walled), &[]).unwrap();
    assert_eq!(t.wire, Tripwire::Exec);
    assert!(t.reason.contains("git push"), "{}", t.reason);
    let budget = Tripwires::new(Some(1), vec![]);
    assert_eq!(
        budget.observe(&[walled], &[]).unwrap().wire,
        Tripwire::Denials
    );
}

/// A tripped wire stays tripped for every agent that shares it: a
/// child's trip ends its parent at the parent's next look, whatever the
/// parent's own calls were.
#[test]
fn a_tripped_wire_stays_tripped_for_those_sharing_it() {
    let wires = Tripwires::new(Some(1), vec![]);
    let t = wires.observe(&[denied(1)], &[]).unwrap();
    assert_eq!(t.wire, Tripwire::Denials);
    assert_eq!(wires.observe(&[allowed(2)], &[]), Some(t));
}
