//! moto's S3 server for tests (`../moto_s3.py`), shared by this crate's S3 tests
//! and the CLI's (included with `#[path]`): started with buckets and uploads, stopped when
//! dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// moto's S3 server, stopped when dropped (its standard input closes; killed as well).
pub struct Moto {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
}

impl Moto {
    /// Start a server with `args` as `moto_s3.py` takes them: buckets to create, then
    /// `BUCKET/KEY=PATH` files to upload.
    pub fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Moto {
        // Both crates that include this file sit beside `datafusion/` in the workspace.
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datafusion/tests/moto_s3.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 must be installed, with moto[server] (scripts/test installs it)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("a piped stdout"))
            .read_line(&mut line)
            .expect("moto's first line");
        let endpoint = line.trim().to_string();
        assert!(
            endpoint.starts_with("http://127.0.0.1:"),
            "moto did not start (is moto[server] installed? scripts/test installs it): {line:?}"
        );
        Moto { child, endpoint }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
