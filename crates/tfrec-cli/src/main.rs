//! The `tfrec` binary: the CLI of [`tfrec_cli::run`] with the allocator it is fastest with.

use std::process::ExitCode;

// The application picks the allocator: mimalloc reuses freed batch buffers instead of returning
// them to the kernel, which otherwise costs page faults on every batch (see the parse bench).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ExitCode::from(tfrec_cli::run(std::env::args_os()))
}
