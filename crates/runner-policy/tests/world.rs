//! One readable world and a private `/tmp` (issue 73, items 3 and 5), as
//! the gate decides them: visible reads of system and toolchain paths
//! under `default: allow`; the home folder, the machine's secrets and
//! other processes' `/proc` only by an absolute rule; writes to `/tmp`
//! only where the task has a private one.

mod support;

use runner_policy::{Backstops, Verdict};

const TEAM: &str = "default: allow\nrules:\n  - deny: [\"Read(./.env)\", \"Bash(git push:*)\"]\n";

fn decide(backstops: Backstops, cmd: &str) -> (Verdict, String) {
    support::decide_bash(TEAM, backstops, cmd)
}

#[test]
fn visible_reads_of_the_world_are_allowed_and_the_rest_outside_is_not() {
    for b in [Backstops::default(), Backstops::all()] {
        for cmd in [
            "nl -ba /usr/local/lib/python3.13/site-packages/fasttext/FastText.py | sed -n '540,565p'",
            "cat /usr/lib/python3/dist-packages/x.py",
            "cat /etc/os-release",
            "cat /etc/nginx/nginx.conf",
            "find /usr -name ffmpeg",
            "head -c 100 /dev/zero",
        ] {
            let (v, why) = decide(b, cmd);
            assert_eq!(v, Verdict::Allow, "{cmd} under {b:?}: {why}");
        }
        for cmd in [
            "cat ~/.ssh/id_rsa",
            "cat ~/.aws/credentials",
            "cd src && cat ~/.netrc",
            "cat /proc/1/environ",
            "cat /etc/shadow",
            "cat /etc/ssh/ssh_host_ed25519_key",
            "grep -r password /etc",
            "cat /home/other/notes.txt",
        ] {
            let (v, why) = decide(b, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {b:?}: {why}");
        }
    }
    // A home path with `..` in it could lead anywhere: no path to decide,
    // refused without backstops.
    let (v, why) = decide(Backstops::default(), "cat ~/../../etc/shadow");
    assert_eq!(v, Verdict::Deny, "{why}");
}

#[test]
fn a_scratch_file_in_tmp_is_the_tasks_own_only_with_a_private_tmp() {
    let cmd = "cat <<'PY' > /tmp/fix.py && python3 /tmp/fix.py\nprint(1)\nPY";
    let without = Backstops {
        private_tmp: false,
        ..Backstops::all()
    };
    let (v, why) = decide(without, cmd);
    assert_eq!(v, Verdict::Deny, "{why}");
    assert!(why.contains("outside the workspace"), "{why}");
    let (v, why) = decide(Backstops::all(), cmd);
    assert_eq!(v, Verdict::Allow, "{why}");
    // Under an allow list too, but a deny rule naming the path holds.
    let list = "default: deny\nrules:\n  - allow: [\"Bash(cat:*)\", \"Bash(python3:*)\"]\n  - deny: [\"Edit(/tmp/keep/**)\"]\n";
    let (v, why) = support::decide_bash(list, Backstops::all(), cmd);
    assert_eq!(v, Verdict::Allow, "{why}");
    let (v, why) = support::decide_bash(list, Backstops::all(), "cat a > /tmp/keep/x");
    assert_eq!(v, Verdict::Deny, "{why}");
    // Not a path that only starts alike.
    let (v, _) = decide(Backstops::all(), "echo x > /tmpfoo/a");
    assert_eq!(v, Verdict::Deny);
}
