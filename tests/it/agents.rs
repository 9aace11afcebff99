//! Subagents (issue 32): the `task` tool starts children by profile, whose
//! authority and budget can only shrink. Scripted parents and children.

use std::path::Path;

use crate::common::{read_json, runner, stderr, write};
use serde_json::Value;

fn run(dir: &Path, extra: &[&str]) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .args(["run", "--format", "json", "--out", "out"])
        .args(extra)
        .arg("task.yaml")
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

/// The `task` calls of a transcript (or of a child's record), with the
/// child each holds.
fn children(calls: &Value) -> Vec<(Value, Option<Value>)> {
    calls
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tool"] == "task")
        .map(|c| (c.clone(), c["metadata"].get("agent").cloned()))
        .collect()
}

const WORKER: &str = r#"  worker:
    description: does one part of the work
    model: scripted
    script:
      - tool_calls:
          - {name: probe, args: {label: part, sleep_ms: 400}}
      - text: part done
"#;

#[test]
fn three_children_in_one_turn_run_in_parallel_and_answer_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: split the work
workspace: ws
policy:
  rules:
    - allow: ["Agent(worker)", "Tool(probe)"]
agents:
{WORKER}script:
  - tool_calls:
      - {{name: task, args: {{agent: worker, prompt: "part 1"}}}}
      - {{name: task, args: {{agent: worker, prompt: "part 2"}}}}
      - {{name: task, args: {{agent: worker, prompt: "part 3"}}}}
  - text: all done
"#
        ),
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kids = children(&t["tool_calls"]);
    assert_eq!(kids.len(), 3);
    let mut spans = Vec::new();
    for (call, child) in &kids {
        assert_eq!(call["status"], "ok", "{call}");
        assert!(call["content"].as_str().unwrap().contains("part done"));
        let child = child
            .as_ref()
            .expect("the child is recorded under its call");
        assert_eq!(child["profile"], "worker");
        assert_eq!(child["depth"], 1);
        assert_eq!(child["outcome"]["status"], "passed");
        assert_eq!(child["tool_calls"][0]["tool"], "probe");
        let start = child["started_ms"].as_u64().unwrap();
        spans.push((start, start + child["duration_ms"].as_u64().unwrap()));
        // The child's prompt is all it was told.
        assert!(
            child["messages"][0]["content"]
                .as_str()
                .unwrap()
                .starts_with("part ")
        );
    }
    // In parallel: every child started before any ended.
    let last_start = spans.iter().map(|s| s.0).max().unwrap();
    let first_end = spans.iter().map(|s| s.1).min().unwrap();
    assert!(last_start < first_end, "{spans:?}");
    let ids: Vec<&str> = kids
        .iter()
        .map(|(_, c)| c.as_ref().unwrap()["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        {
            let mut s = ids.clone();
            s.sort();
            s
        },
        vec!["worker#1", "worker#2", "worker#3"]
    );
    // The events of the children carry their place in the tree.
    let events = crate::common::events(&out);
    let child_calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool_finished" && e.get("agent").is_some())
        .collect();
    assert_eq!(child_calls.len(), 3, "{events:?}");
    for e in child_calls {
        assert!(e["agent"].as_str().unwrap().starts_with("worker#"));
        assert!(e.get("parent").is_none(), "{e}");
        assert!(!e["parent_call"].as_str().unwrap().is_empty(), "{e}");
    }
    assert!(
        stderr(&out).contains("[t/worker#1] probe ok"),
        "{}",
        stderr(&out)
    );
    // report.html: a folded entry per child.
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("<h3>Child agents</h3>"), "report.html");
    for id in ["worker#1", "worker#2", "worker#3"] {
        assert!(
            html.contains(&format!("<summary><code>{id}</code>")),
            "{id}"
        );
    }
}

#[test]
fn a_profile_cannot_allow_what_the_parent_denies() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Bash(rm:*)", "Edit(a.txt)"]
      reason: not here
agents:
  cleaner:
    model: scripted
    policy:
      default: allow
      rules:
        - allow: ["Bash(rm:*)", "Edit(a.txt)", "Bash(*)"]
    script:
      - tool_calls:
          - {name: bash, args: {command: "rm -f a.txt"}}
          - {name: write_file, args: {file_path: a.txt, content: "gone\n"}}
      - text: tried
script:
  - tool_calls:
      - {name: task, args: {agent: cleaner, prompt: "remove a.txt"}}
  - text: done
"#,
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, child) = &children(&t["tool_calls"])[0];
    let child = child.as_ref().unwrap();
    for c in child["tool_calls"].as_array().unwrap() {
        assert_eq!(c["status"], "denied", "{c}");
        assert!(c["content"].as_str().unwrap().contains("not here"), "{c}");
    }
    assert_eq!(
        child["policies"].as_array().unwrap().len(),
        2,
        "{}",
        child["policies"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/a.txt")).unwrap(),
        "a\n"
    );
    assert!(t["changes"].as_array().unwrap().is_empty());
}

#[test]
fn a_child_past_its_budget_stops_while_the_parent_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy: {default: allow}
agents:
  looper:
    model: scripted
    max_turns: 2
    script:
      - tool_calls: [{name: ls, args: {}}]
      - tool_calls: [{name: ls, args: {}}]
      - tool_calls: [{name: ls, args: {}}]
      - text: never
script:
  - tool_calls:
      - {name: task, args: {agent: looper, prompt: "loop"}}
  - tool_calls:
      - {name: read_file, args: {file_path: a.txt}}
  - text: the parent finished
"#,
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t["final_answer"], "the parent finished");
    let (call, child) = &children(&t["tool_calls"])[0];
    assert_eq!(call["status"], "error", "{call}");
    assert!(
        call["content"]
            .as_str()
            .unwrap()
            .contains("2 turn(s) reserved"),
        "{call}"
    );
    let child = child.as_ref().unwrap();
    assert_eq!(child["reserved"]["turns"], 2);
    assert_eq!(child["turns"].as_array().unwrap().len(), 2);
    assert_eq!(child["outcome"]["status"], "failed");
}

#[test]
fn max_cost_holds_for_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", &"word ".repeat(4000));
    // A priced scripted model: about 5,000 tokens a read at $10 per
    // million, so each child turn costs about $0.05.
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy: {default: allow}
model_options:
  pricing: {input: 10, cached_input: 10, output: 10}
max_cost: 0.2
agents:
  reader:
    model: scripted
    script:
      - tool_calls: [{name: read_file, args: {file_path: a.txt}}]
      - tool_calls: [{name: read_file, args: {file_path: a.txt, offset: 1}}]
      - tool_calls: [{name: read_file, args: {file_path: a.txt, offset: 1}}]
      - tool_calls: [{name: read_file, args: {file_path: a.txt, offset: 1}}]
      - text: read
script:
  - tool_calls:
      - {name: task, args: {agent: reader, prompt: "one"}}
      - {name: task, args: {agent: reader, prompt: "two"}}
      - {name: task, args: {agent: reader, prompt: "three"}}
      - {name: task, args: {agent: reader, prompt: "four"}}
      - {name: task, args: {agent: reader, prompt: "five"}}
  - text: done
"#,
    );
    let (_, t) = run(dir.path(), &[]);
    let cost = t["usage"]["cost_usd"].as_f64().unwrap();
    // Each child got a share reserved up front; together they cannot pass
    // the task's max_cost by more than a turn each.
    let (mut reserved, mut spent, mut started) = (0.0, 0.0, 0);
    for (_, child) in children(&t["tool_calls"]) {
        if let Some(c) = child {
            reserved += c["reserved"]["cost_usd"].as_f64().unwrap();
            spent += c["usage"]["cost_usd"].as_f64().unwrap();
            started += 1;
        }
    }
    assert!(reserved <= 0.2 + 1e-9, "reserved {reserved}");
    assert!(started > 0);
    // The task's usage is the tree's: the children's cost is in it.
    assert!(spent > 0.0, "the children spent ${spent}");
    assert!(
        cost > spent,
        "the task's ${cost} leaves out its children's ${spent}"
    );
    assert!(cost < 0.2 * 1.5, "the tree spent ${cost}");
}

/// The `task` call is decided like any other: without an `Agent(name)`
/// rule, a default-deny policy refuses it and no child starts.
#[test]
fn starting_a_child_needs_a_rule_for_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: p
workspace: ws
policy:
  rules:
    - allow: ["Agent(other)"]
agents:
{WORKER}  other:
    model: scripted
    script: [{{text: hi}}]
script:
  - tool_calls:
      - {{name: task, args: {{agent: worker, prompt: "part 1"}}}}
  - text: done
"#
        ),
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (call, child) = &children(&t["tool_calls"])[0];
    assert_eq!(call["status"], "denied", "{call}");
    assert!(
        call["content"].as_str().unwrap().contains("Agent(worker)"),
        "{call}"
    );
    assert!(child.is_none());
}

#[test]
fn children_nest_only_as_deep_as_allowed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy: {default: allow}
agent_limits: {depth: 1}
agents:
  lead:
    model: scripted
    agents: [helper]
    script:
      - tool_calls:
          - {name: task, args: {agent: helper, prompt: "help"}}
      - text: lead done
  helper:
    model: scripted
    script:
      - text: helped
  plain:
    model: scripted
    script:
      - tool_calls:
          - {name: task, args: {agent: helper, prompt: "help"}}
      - text: plain done
script:
  - tool_calls:
      - {name: task, args: {agent: lead, prompt: "lead"}}
      - {name: task, args: {agent: plain, prompt: "plain"}}
  - text: done
"#,
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kids = children(&t["tool_calls"]);
    let of = |name: &str| {
        kids.iter()
            .find(|(c, _)| c["arguments"]["agent"] == name)
            .and_then(|(_, a)| a.clone())
            .unwrap()
    };
    // Depth 1: the lead's own child is refused with a reason, not a wait.
    let lead = of("lead");
    let grand = &lead["tool_calls"][0];
    assert_eq!(grand["tool"], "task");
    assert_ne!(grand["status"], "ok", "{grand}");
    assert!(
        grand["content"].as_str().unwrap().contains("nest 1 deep"),
        "{grand}"
    );
    // A profile without agents: has no task tool at all.
    let plain = of("plain");
    let call = &plain["tool_calls"][0];
    assert_ne!(call["status"], "ok", "{call}");
    assert!(
        call["content"].as_str().unwrap().contains("unknown tool"),
        "{call}"
    );
}

/// Two children in copies of their own change the same line: the first
/// to finish merges, the second gets the conflict as its call's result;
/// a third one's new file merges beside them.
#[test]
fn an_isolated_childs_conflicting_change_comes_back_as_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "one\ntwo\nthree\n");
    let editor = |name: &str, text: &str, wait: u64| {
        format!(
            r#"  {name}:
    model: scripted
    isolation: copy
    script:
      - tool_calls:
          - {{name: read_file, args: {{file_path: a.txt}}}}
      - tool_calls:
          - {{name: edit_file, args: {{file_path: a.txt, old_string: two, new_string: {text}}}}}
      - tool_calls:
          - {{name: probe, args: {{label: wait, sleep_ms: {wait}}}}}
      - text: edited
"#
        )
    };
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: p
workspace: ws
policy: {{default: allow}}
agents:
{}{}  adder:
    model: scripted
    isolation: copy
    script:
      - tool_calls:
          - {{name: write_file, args: {{file_path: b.txt, content: "new\n"}}}}
      - text: added b
script:
  - tool_calls:
      - {{name: task, args: {{agent: first, prompt: "edit"}}}}
      - {{name: task, args: {{agent: second, prompt: "edit"}}}}
      - {{name: task, args: {{agent: adder, prompt: "add"}}}}
  - text: done
"#,
            editor("first", "TWO-first", 50),
            editor("second", "TWO-second", 800)
        ),
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kids = children(&t["tool_calls"]);
    let of = |name: &str| {
        kids.iter()
            .find(|(c, _)| c["arguments"]["agent"] == name)
            .cloned()
            .unwrap()
    };
    let (first, _) = of("first");
    assert_eq!(first["status"], "ok", "{first}");
    let (second, rec) = of("second");
    assert_eq!(second["status"], "error", "{second}");
    assert!(
        second["content"].as_str().unwrap().contains("conflict"),
        "{second}"
    );
    assert!(
        rec.unwrap()["merge"]
            .as_str()
            .unwrap()
            .starts_with("conflict")
    );
    // The first child's edit and the adder's file came back; not the second's.
    let diff = std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("+TWO-first") && !diff.contains("TWO-second"),
        "{diff}"
    );
    assert!(diff.contains("b.txt"), "{diff}");
}

#[test]
fn replay_decides_the_childrens_calls_too() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy: {default: allow}
agents:
  writer:
    model: scripted
    script:
      - tool_calls:
          - {name: write_file, args: {file_path: b.txt, content: "b\n"}}
      - text: wrote
script:
  - tool_calls:
      - {name: task, args: {agent: writer, prompt: "write"}}
  - text: done
"#,
    );
    let (out, _) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    write(
        dir.path(),
        "strict.yaml",
        "rules:\n  - allow: [\"Agent(writer)\"]\n",
    );
    let o = runner()
        .current_dir(dir.path())
        .args(["replay", "--policy", "strict.yaml", "out/t/transcript.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("agent writer#1") && text.contains("write_file Edit(b.txt)"),
        "{text}"
    );
    assert!(
        text.contains("2 call(s) decided again: 1 changed"),
        "{text}"
    );
}

/// The task's declaration of a vendor's request, by name.
fn declared(v: crate::common::wire::Vendor, body: &Value, name: &str) -> Value {
    use crate::common::wire::Vendor;
    let tools = match v {
        Vendor::OpenAi => body["tools"].as_array().unwrap().clone(),
        Vendor::Anthropic => body["tools"].as_array().unwrap().clone(),
        Vendor::Gemini => body["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .clone(),
    };
    tools
        .into_iter()
        .find(|t| t["name"] == name || t["function"]["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {body}"))
}

/// A parent on each vendor's fake (over real HTTP) starts two scripted
/// children in one turn: the `task` tool is declared in the vendor's
/// dialect and the children's answers come back as its tool results.
#[test]
fn the_same_flow_against_the_three_vendor_fakes() {
    use crate::common::fake_llm::FakeServer;
    use crate::common::wire::{self, Vendor, call, turn};
    for v in [Vendor::OpenAi, Vendor::Anthropic, Vendor::Gemini] {
        let server = FakeServer::queue(vec![
            wire::reply(
                v,
                &turn(
                    "splitting",
                    vec![
                        call(
                            "c1",
                            "task",
                            serde_json::json!({"agent": "worker", "prompt": "part 1"}),
                        ),
                        call(
                            "c2",
                            "task",
                            serde_json::json!({"agent": "worker", "prompt": "part 2"}),
                        ),
                    ],
                ),
            ),
            wire::reply(v, &turn("both parts done", vec![])),
        ]);
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        write(
            dir.path(),
            "task.yaml",
            &format!(
                "name: t\nprompt: split\nmodel: {}\nworkspace: ws\ntools: [read_file]\npolicy:\n  rules:\n    - allow: [\"Agent(worker)\", \"Tool(probe)\"]\nagents:\n{WORKER}",
                v.model()
            ),
        );
        let out = wire::runner_for(v, &server.url(), "sk-test-agents")
            .current_dir(dir.path())
            .args(["run", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{v:?}");
        let decl = declared(v, &reqs[0].body, "task");
        let schema = match v {
            Vendor::OpenAi => &decl["function"]["parameters"],
            Vendor::Anthropic => &decl["input_schema"],
            Vendor::Gemini => &decl["parameters"],
        };
        let props = schema["properties"].as_object().unwrap();
        assert!(
            props.contains_key("agent") && props.contains_key("prompt"),
            "{v:?}: {schema}"
        );
        let description = decl["description"]
            .as_str()
            .or(decl["function"]["description"].as_str())
            .unwrap();
        assert!(
            description.contains("`worker`: does one part"),
            "{v:?}: {description}"
        );
        let results = wire::tool_results(v, &reqs[1].body);
        assert_eq!(results.len(), 2, "{v:?}: {results:?}");
        for (_, content, is_error) in &results {
            assert!(
                !is_error && content.contains("part done"),
                "{v:?}: {content}"
            );
        }
        let t = read_json(dir.path().join("out/t/transcript.json"));
        assert_eq!(t["final_answer"], "both parts done");
        assert_eq!(children(&t["tool_calls"]).len(), 2);
    }
}

#[test]
fn bad_profiles_are_errors_that_name_file_line_and_field() {
    use crate::common::{validate_accepts, validate_refuses};
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
agents:
  a:
    model: scripted
    tools: [read_file, no_such_tool]
    agents: [ghost]
  b:
    max_turns: 3
    colour: blue
script: []
"#,
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(err.contains("unknown field `colour`"), "{err}");
    // Once the unknown field is gone, every other mistake at its line.
    let text = std::fs::read_to_string(dir.path().join("task.yaml"))
        .unwrap()
        .replace("    colour: blue\n", "");
    write(dir.path(), "task.yaml", &text);
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains("task.yaml:7:") && err.contains("agents.a.tools: unknown tool `no_such_tool`"),
        "{err}"
    );
    assert!(
        err.contains("task.yaml:8:") && err.contains("agents.a.agents: no profile `ghost`"),
        "{err}"
    );
    assert!(err.contains("agents.a.script: required"), "{err}");
    // A shared file of profiles, errors located in it.
    write(dir.path(), "agents.yaml", "helper:\n  model: nope\n");
    write(
        dir.path(),
        "task2.yaml",
        "name: t2\nprompt: p\nworkspace: ws\nagents: agents.yaml\nscript: []\n",
    );
    let err = validate_refuses(dir.path(), "task2.yaml");
    assert!(
        err.contains("agents.yaml:2:") && err.contains("agents.helper.model"),
        "{err}"
    );
    write(
        dir.path(),
        "agents.yaml",
        "helper:\n  model: scripted\n  script: [{text: hi}]\n",
    );
    validate_accepts(dir.path(), "task2.yaml");
}

/// An isolated child's commands cannot read what the policy denies
/// reading: the file is not in its copy, and the original stays hidden
/// from its sandbox as from its parent's.
#[test]
fn an_isolated_child_cannot_read_around_a_read_deny() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(dir.path(), "ws/secret.txt", "TOP-SECRET-4711\n");
    let original = dir.path().join("ws/secret.txt").canonicalize().unwrap();
    let code = format!(
        "python3 -c \"import glob; print([open(p).read() for p in glob.glob('**/secret.txt', recursive=True)]); print(open('{}').read())\"",
        original.display()
    );
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: p
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Read(secret.txt)"]
agents:
  snoop:
    model: scripted
    isolation: copy
    script:
      - tool_calls:
          - {{name: bash, args: {{command: {}}}}}
      - text: looked
script:
  - tool_calls:
      - {{name: task, args: {{agent: snoop, prompt: "look"}}}}
  - text: done
"#,
            serde_json::to_string(&code).unwrap()
        ),
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("out/t/transcript.json")).unwrap();
    assert!(!text.contains("TOP-SECRET-4711"), "the secret leaked");
    let (_, child) = &children(&t["tool_calls"])[0];
    let call = &child.as_ref().unwrap()["tool_calls"][0];
    assert_eq!(call["tool"], "bash");
    // The code ran (the backstops let the gate allow it), and the sandbox
    // refused the read: neither the copy nor the original gave the file.
    assert_eq!(call["decision"]["decision"], "allow", "{call}");
    let content = call["content"].as_str().unwrap();
    // Landlock refuses it, or (the machine's /tmp holding the test's
    // folder, where commands have a /tmp of their own) the original is
    // masked: an empty folder in its place.
    let refused = |e: &str| content.contains(e);
    assert!(
        refused("PermissionError") || refused("FileNotFoundError"),
        "{content}"
    );
    assert!(content.contains("[]"), "the copy held it: {content}");
    assert!(
        refused("Permission denied") || refused("No such file"),
        "{content}"
    );
}

/// A child's answer is checked against its profile's `output_schema`: a
/// wrong one goes back to the child, a valid one is the call's result
/// and its record's `output`.
#[test]
fn a_childs_answer_is_validated_against_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: p
workspace: ws
policy: {default: allow}
agents:
  counter:
    model: scripted
    output_schema:
      type: object
      required: [count]
      properties: {count: {type: integer}}
    script:
      - text: "three, I think"
      - text: '{"count": 3}'
script:
  - tool_calls:
      - {name: task, args: {agent: counter, prompt: "count"}}
  - text: done
"#,
    );
    let (out, t) = run(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (call, child) = &children(&t["tool_calls"])[0];
    assert_eq!(call["status"], "ok", "{call}");
    assert!(
        call["content"]
            .as_str()
            .unwrap()
            .contains(r#"{"count": 3}"#),
        "{call}"
    );
    let child = child.as_ref().unwrap();
    assert_eq!(child["output"]["count"], 3);
    assert_eq!(child["turns"].as_array().unwrap().len(), 2);
}

/// A child's denied calls are the task's (issue 76): under `max_denials:
/// 2`, a child denied twice ends the task at the parent's next step, the
/// parent not asked again. Without the budget the task goes on (the
/// control).
#[test]
fn a_childs_denied_calls_count_toward_the_tasks_max_denials() {
    let task = |budget: &str| {
        format!(
            r#"name: t
prompt: p
workspace: ws
{budget}policy:
  default: allow
  rules:
    - deny: ["Bash(rm:*)"]
      reason: not here
agents:
  cleaner:
    model: scripted
    script:
      - tool_calls:
          - {{name: bash, args: {{command: "rm -f a.txt"}}}}
      - tool_calls:
          - {{name: bash, args: {{command: "rm -rf ."}}}}
      - text: tried
script:
  - tool_calls:
      - {{name: task, args: {{agent: cleaner, prompt: "remove a.txt"}}}}
  - tool_calls:
      - {{name: ls, args: {{path: .}}}}
  - text: done
"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(dir.path(), "task.yaml", &task("max_denials: 2\n"));
    let (out, t) = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(t["outcome"]["tripwire"], "denials", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("denials: 2 call(s) were denied"),
        "{reason}"
    );
    // The parent was not asked again: its `ls` never ran.
    assert!(
        !t["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["tool"] == "ls"),
        "{}",
        t["tool_calls"]
    );
    // The control: no budget, the parent goes on.
    write(dir.path(), "task.yaml", &task(""));
    let (out, t) = run(dir.path(), &["--force-out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t["outcome"]["tripwire"].is_null());
}
