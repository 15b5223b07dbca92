//! `warpsight`: static GPU kernel performance analysis from the command line, and the
//! language server (`warpsight lsp`).
//!
//! Exit codes (docs/cli.md): 0 success, 1 the input has errors (or, for `occupancy`, the
//! configuration cannot launch), 2 usage or IO error.

// The CLI's job is to print: this binary is the one place where stdout is not the LSP
// wire (the `lsp` subcommand never prints; it hands stdout to the server).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cmd;
mod input;
mod nvml;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "warpsight",
    version,
    about = "Static GPU kernel performance analysis: occupancy, bounds, time, power",
    after_help = "Exit codes: 0 success; 1 the input has errors (PTX syntax or compiler errors, a launch configuration that cannot run: `occupancy` with 0 blocks per SM), the results were still printed; 2 usage or IO error. docs/cli.md, \"Exit codes\"."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse PTX or CUDA files: instruction mix, loops, resources, occupancy, predictions.
    Analyze(cmd::analyze::Args),
    /// The static profile of one kernel as JSON (the models' input; docs/profile.md).
    Profile(cmd::profile::Args),
    /// Run the execution-time models on a profile JSON.
    Predict(cmd::predict::Args),
    /// List the GPUs in the database with their key facts.
    Gpus(cmd::gpus::Args),
    /// NVIDIA's occupancy calculation for one configuration.
    Occupancy(cmd::occupancy::Args),
    /// Run the language server on stdin/stdout.
    Lsp(cmd::lsp::Args),
    /// Install a CUDA compiler (nvcc from PyPI, no GPU needed).
    SetupCuda(cmd::setup_cuda::Args),
    /// Compare the models' predictions with measured kernel times (docs/validation.md).
    Validate(Box<cmd::validate::Args>),
    /// Fit the bottleneck model to measured kernel times of one GPU and write a GPU file.
    Calibrate(Box<cmd::calibrate::CalibrateArgs>),
}

fn main() -> ExitCode {
    // A CLI whose output is piped into `head` must end quietly when the pipe closes, as
    // Unix tools do, instead of panicking in `println!`. Rust ignores SIGPIPE by default;
    // restore the default action. (`warpsight lsp` never sees a closed stdout while the
    // client is alive; when the client dies, ending is the right thing to do too.)
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; `signal` with
    // `SIG_DFL` has no other precondition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Logs go to stderr; stdout carries results (or, for `lsp`, the protocol).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WARPSIGHT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                _ => ExitCode::from(2),
            };
        }
    };
    let res = match cli.command {
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Profile(args) => cmd::profile::run(args),
        Command::Predict(args) => cmd::predict::run(args),
        Command::Gpus(args) => cmd::gpus::run(args),
        Command::Occupancy(args) => cmd::occupancy::run(args),
        Command::Lsp(args) => cmd::lsp::run(args),
        Command::SetupCuda(args) => cmd::setup_cuda::run(args),
        Command::Validate(args) => cmd::validate::run(*args),
        Command::Calibrate(args) => cmd::calibrate::run(*args),
    };
    match res {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
