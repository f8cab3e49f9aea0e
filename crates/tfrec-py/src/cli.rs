//! The `tfrec` command of the Python package (`tfrec ...` and `python -m tfrec ...`): the Rust
//! CLI itself, run in this process, so `pip install` is the only step for Python users.

use pyo3::prelude::*;

/// Runs the `tfrec` command line `argv` (the program's name first) and returns its exit
/// status. The GIL is released meanwhile.
#[pyfunction]
pub fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| tfrec_cli::run(argv))
}
