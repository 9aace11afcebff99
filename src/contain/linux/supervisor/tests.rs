//! The supervisor's filter on its own: what it refuses outright, with no
//! supervisor to ask (the calls it hands the supervisor are tested
//! through runs: `exec_wall`, `signals`, `containment`, `network`).

use super::*;

/// What python3 gets from the calls the filter refuses outright, under
/// the filter of a task whose signals are decided, where no supervisor
/// serves it.
#[test]
fn the_filter_refuses_outright_with_eperm() {
    use std::os::unix::process::CommandExt;
    let script = "import ctypes, os, socket\n\
        c = ctypes.CDLL(None, use_errno=True)\n\
        def err(f):\n\
        \x20   try:\n\
        \x20       f(); return 'ok'\n\
        \x20   except OSError as e:\n\
        \x20       return str(e.errno)\n\
        print('dgram', err(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)))\n\
        print('stream', err(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()))\n\
        print('uring', c.syscall(425, 1, None), ctypes.get_errno())\n\
        print('x32', c.syscall(0x40000000 + 39), ctypes.get_errno())\n\
        r, w = os.pipe()\n\
        owner = (ctypes.c_int * 2)(0, os.getpid())\n\
        print('setown_ex', c.fcntl(r, 15, owner), ctypes.get_errno())\n";
    // No supervisor serves it here: what it would hand over to be refused
    // and recorded, it refuses itself.
    let rules = Rules::new(IpRule::Any, &[], true).without_groups();
    let confinement = crate::contain::Confinement::with_filter(filter(&rules));
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", script]);
    // SAFETY: `apply` makes system calls only.
    unsafe { cmd.pre_exec(move || confinement.apply()) };
    let out = cmd.output().expect("python3 runs");
    let e = libc::EPERM;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("dgram {e}\nstream ok\nuring -1 {e}\nx32 -1 {e}\nsetown_ex -1 {e}\n"),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
