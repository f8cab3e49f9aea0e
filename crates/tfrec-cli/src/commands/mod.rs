//! One module per subcommand.

pub mod cat;
pub mod count;
pub mod index;
pub mod verify;
