//! A closed standard output (`avrow head f | head -1`) ends avrow quietly: exit status 0,
//! nothing on stderr.

use crate::harness::generated;
use std::io::Read;
use std::process::{Command, Stdio};

/// Runs avrow with `args`, reads `keep` bytes of its output (0: none), closes the pipe, and
/// returns the exit status and standard error.
fn close_early(args: &[&std::ffi::OsStr], keep: usize) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_avrow"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    if keep > 0 {
        let mut buf = vec![0u8; keep];
        stdout.read_exact(&mut buf).unwrap();
    }
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn head_into_a_closed_pipe_exits_quietly() {
    let g = generated();
    for (args, keep) in [
        (vec!["head", "-n", "8000"], 100),
        (vec!["head", "-n", "8000", "--json"], 0),
    ] {
        let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        all.push(g.telemetry.as_os_str());
        let (status, stderr) = close_early(&all, keep);
        assert!(status.success(), "{args:?}: {status} {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}

#[test]
fn convert_into_a_closed_pipe_exits_quietly() {
    let g = generated();
    for format in ["ndjson", "csv", "arrows", "arrow", "parquet"] {
        let args: Vec<&std::ffi::OsStr> = vec![
            "convert".as_ref(),
            g.order.as_os_str(),
            "-o".as_ref(),
            "-".as_ref(),
            "--format".as_ref(),
            format.as_ref(),
        ];
        let (status, stderr) = close_early(&args, 10);
        assert!(status.success(), "{format}: {status} {stderr}");
        // No error and no summary: the conversion did not complete.
        assert_eq!(stderr, "", "{format}");
    }
}

#[test]
fn inspection_into_a_closed_pipe_exits_quietly() {
    let g = generated();
    for sub in [
        &["schema"][..],
        &["schema", "--arrow"],
        &["info"],
        &["count"],
        &["validate"],
    ] {
        let mut args: Vec<&std::ffi::OsStr> = sub.iter().map(|a| a.as_ref()).collect();
        args.push(g.order.as_os_str());
        let (status, stderr) = close_early(&args, 0);
        assert!(status.success(), "{sub:?}: {status} {stderr}");
        assert_eq!(stderr, "", "{sub:?}");
    }
    let (status, stderr) = close_early(&["completions".as_ref(), "bash".as_ref()], 0);
    assert!(status.success() && stderr.is_empty(), "{stderr}");
}
