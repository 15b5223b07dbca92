//! Running compiler processes with a timeout and cancellation.
//!
//! An editor recompiles on every edit, so a compile in flight must stop as soon as a newer
//! edit arrives, and a hung compiler must not hold the server forever. Commands are always
//! built as an argument vector ([`std::process::Command`]), never through a shell, so file
//! names with spaces or quotes are safe. On Unix the child gets its own process group and
//! the whole group is killed: `nvcc` runs `cicc`, `ptxas` and the host compiler as
//! grandchildren, and killing only `nvcc` would leave them running (and holding the output
//! pipes open, which would block the readers).

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A shared flag that asks a compile to stop. Cloning shares the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The captured result of a finished process.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Why a process gave no result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`{program}` did not finish within {} s and was stopped", timeout.as_secs_f64())]
    Timeout { program: String, timeout: Duration },
    #[error("cancelled by a newer edit")]
    Cancelled,
}

/// Runs `cmd` to completion, or until `timeout` passes or `cancel` is set (then the process
/// group is killed).
pub fn run(
    mut cmd: Command,
    timeout: Duration,
    cancel: &CancelToken,
) -> Result<RunOutput, RunError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    if cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    // Read both pipes on threads so a chatty compiler never blocks on a full pipe.
    let out_reader = child.stdout.take().map(spawn_reader);
    let err_reader = child.stderr.take().map(spawn_reader);
    let mut poll = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let stop = if cancel.is_cancelled() {
            Some(RunError::Cancelled)
        } else if start.elapsed() >= timeout {
            Some(RunError::Timeout {
                program: program.clone(),
                timeout,
            })
        } else {
            None
        };
        if let Some(err) = stop {
            kill_group(&mut child);
            // The reader threads end when the last process holding the pipes is gone;
            // they are detached so a stray grandchild can never block us.
            drop(out_reader);
            drop(err_reader);
            return Err(err);
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(20));
    };
    let stdout = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(RunOutput {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
        elapsed: start.elapsed(),
    })
}

fn spawn_reader<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: `kill` has no memory-safety preconditions; a negative pid addresses
            // the process group created with `process_group(0)` above, which holds only
            // this child and its descendants.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run(cmd, Duration::from_secs(10), &CancelToken::new()).map_err(|e| e.to_string());
        let out = out
            .as_ref()
            .map(|o| (o.code, o.stdout.as_str(), o.stderr.as_str()));
        assert_eq!(out, Ok((Some(3), "out\n", "err\n")));
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        // `sh` starts `sleep` as a child that inherits the pipes: only a group kill lets
        // this return promptly.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30; echo never"]);
        let t = Instant::now();
        let res = run(cmd, Duration::from_millis(300), &CancelToken::new());
        assert!(matches!(res, Err(RunError::Timeout { .. })), "{res:?}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn cancellation_stops_the_process() {
        let cancel = CancelToken::new();
        let c2 = cancel.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            c2.cancel();
        });
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30"]);
        let t = Instant::now();
        let res = run(cmd, Duration::from_secs(60), &cancel);
        let _ = stopper.join();
        assert!(matches!(res, Err(RunError::Cancelled)), "{res:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let res = run(
            Command::new("/nonexistent/warpsight-nvcc"),
            Duration::from_secs(1),
            &CancelToken::new(),
        );
        assert!(matches!(res, Err(RunError::Spawn { .. })));
    }
}
